// Package jsonrpc is mcpkit's JSON-RPC 2.0 layer: the Message and Error
// types, the Limits of strict decoding (UTF-8, duplicate and
// case-sensitive member names, size and depth, the exact -32700/-32600
// errors), and Conn — one peer over a transport.Conn with calls in flight
// in both directions, cancellation both ways (notifications/cancelled ↔
// context), bounded concurrency, routes for multi-stream transports, and
// an ordered shutdown that unblocks every waiter. The single-message codec
// under them is internal/rpccodec (codec.go is this package's entry into
// it); the rest of mcpkit reaches it through internal/wire.
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
// error codes and the method names) and internal/rpccodec. It must not
// import server, client or any concrete transport.
package jsonrpc
