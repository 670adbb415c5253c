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
