package transport

import (
	"context"
	"errors"
)

// Conn carries whole JSON-RPC messages, one JSON value each, in both
// directions between two MCP peers. Implementations frame and unframe bytes;
// they never parse or rewrite a message.
//
// Concurrency contract:
//   - Read is called by one goroutine at a time (the owner's reader loop).
//   - Write may be called from many goroutines at once; each message is
//     written whole, never interleaved with another.
//   - Close may be called at any time, from any goroutine, more than once.
//     It must unblock a pending Read and a pending Write; after it returns,
//     Read and Write fail with ErrClosed.
type Conn interface {
	// Read returns the next message. The returned slice belongs to the
	// caller. It returns io.EOF when the peer ended the stream cleanly and
	// ErrClosed after Close. An error that wraps ErrMessageTooLarge means the
	// transport discarded one oversized message and the next Read goes on
	// with the following one; every other error is final. Implementations
	// may observe ctx only between messages: Close is the way to interrupt a
	// blocked Read.
	Read(ctx context.Context) ([]byte, error)

	// Write sends one message. msg must not be retained after Write
	// returns. Write honours ctx cancellation where the carrier allows it.
	Write(ctx context.Context, msg []byte) error

	// Close ends the connection and releases its resources. It is
	// idempotent.
	Close() error
}

var (
	// ErrClosed is returned by Read and Write after Close.
	ErrClosed = errors.New("transport: connection closed")

	// ErrMessageTooLarge is wrapped by Read errors that report a message
	// over the transport's size limit. The message was discarded; the
	// connection is still usable.
	ErrMessageTooLarge = errors.New("transport: message too large")
)

// Header is one request header attached to a message with WithHeader.
type Header struct {
	Name  string
	Value string
}

type headersKey struct{}

// WithHeader returns a copy of ctx that asks the transport to send the
// header name with the value value alongside the message written with
// that context (the ctx given to Write). The client uses it for the
// 2026-07-28 Mcp-Param-{Name} headers (SEP-2243), which mirror tool
// arguments only it can find: the transport does not know tool schemas.
//
// value is text. A transport that puts it in an HTTP header
// (transport/streamable) sends it as is when it is visible ASCII without
// leading or trailing space, and otherwise in the SEP-2243 form
// "=?base64?{base64 of the UTF-8 text}?=" (so does a value that itself
// looks like that form). Transports without per-message headers (stdio,
// command, memory) ignore it. Attaching the same name twice sends both
// values.
func WithHeader(ctx context.Context, name, value string) context.Context {
	prev := HeadersFrom(ctx)
	hs := make([]Header, len(prev), len(prev)+1)
	copy(hs, prev)
	return context.WithValue(ctx, headersKey{}, append(hs, Header{Name: name, Value: value}))
}

// HeadersFrom returns the headers attached to ctx with WithHeader, in the
// order they were attached; nil when there are none. The slice must not
// be modified.
func HeadersFrom(ctx context.Context) []Header {
	hs, _ := ctx.Value(headersKey{}).([]Header)
	return hs
}
