// Package streamable is the client side of the MCP Streamable HTTP
// transport, 2025-11-25 and 2026-07-28 revisions: a transport.Conn that
// POSTs every message to one endpoint and reads what comes back, as one
// JSON body or as a Server-Sent Events stream, plus the optional GET
// listening stream of the legacy era.
//
// The era is per message: a request whose params._meta carries
// io.modelcontextprotocol/protocolVersion (the 2026-07-28 envelope) is
// modern. A modern request goes without session headers, with
// MCP-Protocol-Version equal to the envelope's revision, Mcp-Method, and
// Mcp-Name for tools/call, prompts/get (params.name), resources/read
// (params.uri) and the tasks extension's tasks/get, tasks/update and
// tasks/cancel (params.taskId), encoded as SEP-2243 says (base64 unless plain ASCII); the headers the caller
// puts in the written transport.Message (Header: the client's
// Mcp-Param-* headers) go with the message's own POST, encoded the same
// way. When the writer says what it knows of a modern request
// (transport.Message.Modern, set by the client), the revision and
// Mcp-Name are taken from there and the params are not decoded again;
// when it also gives the id and method (jsonrpc.Conn fills them in), the
// request is not decoded at all; otherwise they are read from the params. A message's route (Related, Final) is the server side's concern
// and is ignored here. The stream of a
// modern request is never resumed; the end of the Write's context closes
// it, which is how the 2026-07-28 wire cancels a request (a
// subscriptions/listen too), and notifications/cancelled for a modern
// request is not POSTed: it closes that request's stream instead.
// Everything below describes the legacy era.
//
// What the Conn does for the layers above it:
//
//   - Sessions. It keeps the Mcp-Session-Id of the initialize response and
//     the negotiated MCP-Protocol-Version and sends both on every later
//     request. When a request that carried the session id is answered
//     404 (the server ended the session), it re-initializes once,
//     transparently (it replays the original initialize with a fresh id,
//     and notifications/initialized), and retries the message; a second
//     404 fails with ErrSessionLost, which also ends the connection.
//   - Streams. Every SSE stream, of a POST or of the GET listener, is read
//     by a goroutine the Conn owns; each message on it (responses, server
//     notifications, server→client requests) is queued for Read, in
//     order. A POST stream that ends before the response to its request
//     is resumed with GET and Last-Event-ID after the server's retry:
//     delay (SEP-1699).
//   - The listener. Listen opens the GET stream for messages unrelated
//     to any request and keeps it open under the rules of the MCP
//     reference behaviour (see Listen).
//   - Close stops every goroutine, then ends the session with DELETE.
//   - Old servers. When the first request is refused 400, 404 or 405
//     without a JSON-RPC error, the Conn GETs the URL and, given the
//     "endpoint" event of the deprecated HTTP+SSE transport (2024-11-05)
//     on the same origin, speaks that transport from then on (Legacy;
//     docs/design/legacy-sse.md): messages are POSTed to the endpoint,
//     everything the server sends comes on that one stream, and its end
//     loses the connection.
//   - Redirects. Only within the endpoint's origin (scheme, host, port),
//     unless Options.AllowCrossOriginRedirects; never with the MCP
//     headers, credentials or Options.Header to another origin
//     (redirect.go, docs/design/client-resume.md).
//   - A stored session. Resume continues a legacy session without
//     initialize; Options.KeepSession leaves it open at Close.
//
// The transport decodes each message's envelope (jsonrpc.Decode) to
// route it, unless its writer described it (above), never rewrites one, and only ever synthesizes one message: the
// error response to a request whose stream failed for good (see
// Conn.Write), so that the call waiting for it fails instead of hanging.
//
// Package streamable imports transport, jsonrpc, mcp and internal/sse. It
// must not import server or client.
package streamable
