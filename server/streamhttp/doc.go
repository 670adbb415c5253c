// Package streamhttp serves an MCP server (package server) over the
// Streamable HTTP transport, both eras on one endpoint, decided per
// request: legacy sessions (2025-11-25 and older, entered through
// initialize) whose messages go on the SSE stream of the request they
// belong to, with resumption (Last-Event-ID) over a store.EventStore; and
// stateless 2026-07-28 requests with their SEP-2243 header checks. With
// Options.LegacySSE the same endpoint also serves the deprecated HTTP+SSE
// transport of 2024-11-05 (sse.go, docs/design/legacy-sse.md), whose
// sessions are capped apart (MaxLegacySSESessions) and whose stream
// queues are bounded and never waited on (ssequeue.go): a client that
// does not read its stream has its POSTs refused (429), not held.
//
// With Options.CORS (off by default) the handler answers browsers'
// preflights for the origins it lists and exposes the MCP response
// headers to their pages (cors.go, docs/design/cors.md); those origins
// are accepted by the Origin check, and Handler.CORS wraps middleware
// placed in front of the handler.
//
// NewHandler returns an http.Handler. Its Options hold every limit of the
// HTTP entry (body size and read time, session caps and idle TTL, Host
// and Origin checks), each with a safe default (docs/design/hardening.md),
// and the deployment seams for several instances: a store.SessionStore,
// a store.EventStore and a store.Broker (docs/design/multi-instance.md).
//
// An error answer that is (or wraps) jsonrpc.ErrUnavailable, such as a
// rate limiter's whose store is down, or a failed SessionStore write,
// gets status 503 in both eras (unavailable.go).
//
// The package reaches the protocol server only through
// server/internal/seam: it classifies a request, hands it to the server
// in its era, and puts each message the server writes on the stream its
// transport.Message names. It knows nothing of dispatch, registries or
// the era rules.
//
// Package streamhttp imports server, server/internal/seam, store,
// jsonrpc, mcp, transport and internal packages; never client.
package streamhttp
