// Package client is the MCP client: it connects to a server over a
// transport.Conn, selects the protocol era and revision, and offers every
// client→server method with typed parameters and results, iterators over
// paginated lists, handlers for the server's notifications, and handlers
// for the server's requests (elicitation, sampling, roots), each of which
// declares its capability.
//
// Typical use (the runnable programs are in examples/, the guide in
// docs/guide):
//
//	conn, err := command.Start(ctx, exec.Command("./calc"), nil) // or streamable.New(url, nil)
//	c, err := client.Connect(ctx, conn, nil)                     // detects the server's era
//	defer c.Close()
//	for tool, err := range c.Tools(ctx) { … }
//	out, _, err := client.CallTool[AddOut](ctx, c, "add", AddIn{A: 2, B: 40})
//
// Eras. By default Connect probes the server with server/discover and
// speaks the modern era (2026-07-28: no handshake, an envelope with the
// protocol version, client capabilities and client identity in every
// request's _meta) when the server answers as a modern server, and the
// legacy era (initialize, 2025-11-25 and older) otherwise;
// Options.ProtocolVersion pins either. On a modern connection the client
// also checks each result's resultType and answers input-required
// results (SEP-2322, multi round-trip requests) with the same Elicitation,
// Sampling and Roots handlers that answer a legacy server's requests,
// repeating the call with the answers (see Options.ManualInput for the
// manual path and InputRequiredError), retries once on -32022 in a
// revision the server names, caches cacheable results for their ttlMs (Cache), validates the x-mcp-header
// annotations of listed tools and mirrors annotated arguments into
// Mcp-Param-* headers (passed to the transport as data, in
// transport.Message.Header), and opens change
// subscriptions with Listen (subscriptions/listen).
//
// Result Meta. A 2026-07-28 server SHOULD put its identity
// (io.modelcontextprotocol/serverInfo) in the _meta of every result. The
// client keeps it once, from server/discover or, when it made none, from
// the first result that carries it, and reports it with
// Client.ServerInfo; a result's Meta leaves out an identity that is byte
// for byte that one (nil when nothing else is there), so that a call does
// not pay for a map it rarely reads. A different identity, every other
// key, the server/discover result and the _meta of content blocks are
// kept as sent.
//
// Typed calls. CallTool[Out] is the client's side of server.AddTool[In,
// Out]: it takes the arguments as any Go value (a struct or a map),
// validates the result's structuredContent against the tool's listed
// outputSchema (listing the tools once when the tool is unknown) and
// decodes it into Out; a result with isError set is a *ToolError. The
// CallTool method remains for raw parameters.
//
//	out, _, err := client.CallTool[AddOut](ctx, c, "add", AddIn{A: 2, B: 40})
//
// Tasks (long-running tool calls, in both eras: the 2025-11-25 core tasks
// and the 2026-07-28 extension io.modelcontextprotocol/tasks).
// StartToolTask starts one, GetTask, CancelTask and TaskResult follow
// it (TaskResult waits: tasks/result on a legacy server, tasks/get polling
// at the server's interval on a modern one, answering an input_required
// task's input requests with the same handlers through tasks/update), and
// RunToolTask does both. With Options.Tasks, a modern server may turn
// any CallTool into a task, which CallTool then waits for. A tasks/result
// or tasks/get that fails on the way (a cut connection, an HTTP 5xx, the
// server's "try again later") is sent again with a bounded backoff
// (Options.TaskRetryBackoff) until the caller's context ends: only the
// server's answer fails a task.
//
// Extensions (SEP-2133). Options.Extensions declares the extensions the
// client supports in capabilities.extensions (initialize, or every modern
// envelope); ServerExtension reads the server's. CallMethod[Out] calls an
// extension's request (server.AddMethod on an mcpkit server) and Notify
// sends its notifications; the server's arrive at OnNotification. MCP
// Apps is built on these, in package ext/apps.
//
// Sessions. Options.Resume continues a stored legacy session over
// Streamable HTTP (SessionState, from Client.SessionState) with a ping
// instead of initialize, and opens a new session when the server no
// longer has it (Resumed tells which); docs/design/client-resume.md.
//
// Options.Interceptors wrap every request and notification the client
// sends and receives, in both eras, and each answer to an input request
// (package intercept). Options.KeepAlive pings a legacy server and
// closes the connection when a ping goes unanswered (ErrKeepAlive).
//
// Package client imports mcp, jsonrpc, transport, intercept,
// internal/jsonschema and internal/mcpheader (the header-name rule),
// among the internal helpers ARCHITECTURE.md lists.
// It must not import
// server or any concrete transport.
package client
