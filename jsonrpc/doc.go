// Package jsonrpc is mcpkit's JSON-RPC 2.0 layer: strict decoding of one
// message (Decode: UTF-8, duplicate and case-sensitive member names,
// size and depth limits, the exact -32700/-32600 errors), encoding into
// pooled buffers, the Error type, and Conn — one peer over a
// transport.Conn with calls in flight in both directions, cancellation
// both ways (notifications/cancelled ↔ context), bounded concurrency,
// routes for multi-stream transports, and an ordered shutdown that
// unblocks every waiter.
//
// Routes travel as data: the Conn fills in the transport.Message of every
// write. A response relates to its request and is final; a request or
// notification relates to the peer request CallOptions.Related names
// (CallWith, NotifyWith), or else to the request whose handler's context
// it was sent with; the cancellation of a call follows the call. Headers
// a sender wants on a message (the client's SEP-2243 Mcp-Param-*) go in
// CallOptions.Header. Nothing reaches the transport through a context.
//
// It imports transport (the byte seam), mcp (for the one ID type, the
// error codes, the method names it interns, and mcp.CallToolResult, the
// hottest payload, which it appends without the encoder when it can:
// encode_tool.go) and internal/jsontok (the pooled token decoder). It must not import server, client or any concrete
// transport.
package jsonrpc
