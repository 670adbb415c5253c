package transport

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpkit/mcpkit/mcp"
)

// Conn carries whole JSON-RPC messages, one JSON value each, in both
// directions between two MCP peers. Implementations frame and unframe bytes;
// they never parse or rewrite a message. What a carrier needs to know
// about an outgoing message beyond its bytes — the peer request it belongs
// to, per-message headers — comes with it as data, in Message: never
// through the Write's context.
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

	// Write sends one message. Neither msg.Data nor msg.Header (nor the
	// bytes they refer to) may be retained after Write returns: a carrier
	// that keeps a message copies it, unless msg.Owned hands Data over. Write honours ctx cancellation where
	// the carrier allows it; ctx carries nothing else a carrier reads.
	Write(ctx context.Context, msg Message) error

	// Close ends the connection and releases its resources. It is
	// idempotent.
	Close() error
}

// Message is one outgoing message: its bytes and where it belongs. It is
// passed by value. A carrier with one stream in each direction (stdio,
// command, memory) sends Data and ignores the rest.
type Message struct {
	// Data is the message: one whole JSON value.
	Data []byte

	// Owned hands Data over to the carrier: the writer made it for this
	// message alone and neither changes nor reuses its bytes, so a
	// carrier that keeps the message (to send it again) may keep Data
	// itself instead of a copy. jsonrpc.Conn sets it on the requests it
	// encodes. Nobody may change the bytes afterwards, the carrier
	// included; a wrapper that replaces Data keeps Owned only if it hands
	// its new bytes over in the same way.
	Owned bool

	// Related is the id of the peer request the message belongs to: its
	// response, or a request or notification sent on its behalf while it
	// is handled (progress, logging, server→client requests, the
	// cancellation of such a request). The zero ID relates it to none. A
	// carrier with several streams (the Streamable HTTP server) puts the
	// message on the stream of that request; unrelated messages go to the
	// standalone stream.
	Related mcp.ID

	// Final marks Data as the response to Related: nothing about that
	// request follows, and its stream may end once Data is delivered.
	Final bool

	// Local marks a message every instance of a deployment sends itself
	// (a list change or resource update, announced to all of them): a
	// carrier that forwards unrelated messages to the instance holding a
	// session's stream must not forward this one.
	Local bool

	// Header lists request headers to send alongside Data, in order; the
	// same name twice sends both values. The client uses it for the
	// 2026-07-28 Mcp-Param-{Name} headers (SEP-2243), which mirror tool
	// arguments only it can find: the carrier does not know tool schemas.
	// Values are text. A carrier that puts them in an HTTP header
	// (transport/streamable) sends a value as is when it is visible ASCII
	// without leading or trailing space, and otherwise in the SEP-2243
	// form "=?base64?{base64 of the UTF-8 text}?=" (so does a value that
	// itself looks like that form). Carriers without per-message headers
	// (stdio, command, memory) ignore Header.
	Header []Header

	// Modern is what the writer of a 2026-07-28 request knows of it
	// (the client, which built its envelope): a carrier that sends it
	// as HTTP headers (transport/streamable) takes the revision and the
	// Mcp-Name value from here instead of decoding Data. The zero Modern
	// tells nothing: the carrier reads Data, as for any message.
	Modern Modern
}

// Modern describes a 2026-07-28 request for the carrier that sends it.
type Modern struct {
	// Version is the envelope's revision (its MCP-Protocol-Version
	// header); empty means the writer said nothing (see Message.Modern).
	Version string
	// Name is the value of the request's Mcp-Name header (params.name,
	// params.uri or params.taskId) when HasName is set.
	Name    string
	HasName bool
	// ID and Method are the request's id and method. jsonrpc.Conn fills
	// them in for every request it writes, of either era (Version alone
	// says whether it is a 2026-07-28 request); a carrier given both may
	// route the request without decoding Data at all, which is then a
	// request jsonrpc.Conn encoded itself.
	ID     mcp.ID
	Method string
}

// LostAnswerData is the "data" member of the JSON-RPC error response
// (-32603) a carrier queues itself for a request whose answer can no
// longer arrive on the connection although the peer may have sent it or
// may still: the request's stream broke for good (transport/streamable:
// no event id to resume from, resumes exhausted or refused). The error is
// the connection's, not the peer's answer; a caller for which sending the
// request again is safe (the client waiting for a task's result) may do
// so.
const LostAnswerData = `{"mcpkit":"lostAnswer"}`

var (
	// ErrClosed is returned by Read and Write after Close.
	ErrClosed = errors.New("transport: connection closed")

	// ErrMessageTooLarge is wrapped by Read errors that report a message
	// over the transport's size limit. The message was discarded; the
	// connection is still usable.
	ErrMessageTooLarge = errors.New("transport: message too large")
)

// Header is one request header sent with a message (Message.Header).
type Header struct {
	Name  string
	Value string
}

// TooLargeError is the error a carrier's Read returns for a message over
// its size limit, with the message's first and last bytes (at most
// TooLargeEdge each) so that its owner can still tell whose message it was:
// the jsonrpc layer reads the id from them and fails the call the answer
// belonged to, or answers the request, instead of leaving either waiting.
// It wraps ErrMessageTooLarge.
type TooLargeError struct {
	Limit int    // the limit that was passed, in bytes
	Head  []byte // the message's first bytes
	Tail  []byte // the message's last bytes (without its line ending)
}

// TooLargeEdge is the most bytes of each end of an oversized message a
// TooLargeError keeps.
const TooLargeEdge = 512

// Edges returns the first and the last TooLargeEdge bytes of msg (all of
// it when it is shorter), as sub-slices of msg: what a TooLargeError
// keeps of a message.
func Edges(msg []byte) (head, tail []byte) {
	if len(msg) <= TooLargeEdge {
		return msg, msg
	}
	return msg[:TooLargeEdge], msg[len(msg)-TooLargeEdge:]
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%v: a message over %d bytes", ErrMessageTooLarge, e.Limit)
}

// Unwrap returns ErrMessageTooLarge.
func (e *TooLargeError) Unwrap() error { return ErrMessageTooLarge }
