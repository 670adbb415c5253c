// Package mcpotel traces and meters an mcpkit server or client with
// OpenTelemetry, as an interceptor (package intercept), following the
// semantic conventions for MCP (semconv v1.41.0, mcpconv):
//
//   - a span per request and per notification, inbound and outbound:
//     server requests are SERVER spans, client requests CLIENT spans,
//     notifications PRODUCER (sent) and CONSUMER (received) spans. The
//     span is named "{mcp.method.name} {target}" (the tool, prompt or
//     resource when there is one) and carries mcp.method.name,
//     mcp.session.id, mcp.protocol.version, jsonrpc.request.id,
//     gen_ai.tool.name and gen_ai.operation.name ("execute_tool") for
//     tools/call, gen_ai.prompt.name, mcp.resource.uri,
//     network.transport (Options.Transport), and on failure error.type
//     and rpc.response.status_code (the JSON-RPC error code);
//   - the histograms mcp.server.operation.duration and
//     mcp.client.operation.duration (seconds), and
//     mcp.server.session.duration, recorded when a legacy session that
//     began with initialize ends (WatchClient records
//     mcp.client.session.duration for a client);
//   - the counter mcpkit.server.requests (RequestsMetric): every request
//     a server received, by mcp.protocol.version, mcpkit.protocol.era
//     ("legacy", "modern") and mcpkit.client.name (clientInfo.name), so
//     that an operator sees who still speaks the legacy era before
//     narrowing server.Options.ProtocolVersions. A peer chooses both
//     values, so both are bounded: a revision this SDK does not know
//     counts as OtherValue ("_OTHER"), and so does every client name
//     after the first Options.MaxClientNames (DefaultMaxClientNames,
//     100) distinct ones;
//   - trace context in params._meta ("traceparent", "tracestate", with
//     the configured propagator): injected into every outbound message and
//     extracted from every inbound one. So a server span is the child of
//     the client span that sent the request; a legacy shim's
//     server→client request (and a handler's progress and log messages)
//     carries the server span's context, so the client's span answering
//     it is its child; each multi round-trip retry is a client span of
//     its own under the caller's span, and its server span is that
//     retry's child whichever instance serves it.
//
// Every value a peer chooses (method, tool and prompt names, resource
// URIs, session and request ids, protocol versions) is cut to
// Options.MaxNameLength bytes (DefaultMaxNameLength, 256) before it
// becomes part of a span name or an attribute, and a failed span's
// status description to Options.MaxStatusLength (DefaultMaxStatusLength,
// 1024): the cut falls on a UTF-8 character boundary and is marked by
// TruncationMark ("…"); invalid UTF-8 becomes U+FFFD. The histograms
// keep a tool or prompt name, and a method that is not one of MCP's,
// only for a request that succeeded (a failed one is counted under no
// name, and its method as "_OTHER"), so that a client sending names at
// random cannot make new time series.
//
// The package is its own Go module, so that the core SDK does not depend
// on OpenTelemetry.
package mcpotel
