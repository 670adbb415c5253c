package streamable

import (
	"fmt"

	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// An SSE event over Options.MaxEventBytes is dropped and its stream read
// on (internal/sse reads the rest of the event and keeps both ends of its
// data). Read returns, in the message's place, an error that is a
// *transport.TooLargeError with those ends (and wraps ErrEventTooLarge):
// the jsonrpc layer reads the id from them as it does for any carrier,
// failing our call when the message was its response and answering
// -32600 under the id when it was the server's request, so that neither
// side waits for ever.

// inbound is one entry of the Read queue: a message, or the error Read
// returns in place of one that was dropped.
type inbound struct {
	data []byte
	err  error
}

// oversizedMethod stands for the method of an oversized request in the
// stub message the stream's bookkeeping sees (the method's value itself
// is not read).
const oversizedMethod = "(over MaxEventBytes)"

// tooLarge is what the Conn queues for a message event over
// MaxEventBytes, and a stub message with what its ends say of it (its
// id; a method when it named one) for the stream that carried it. An
// event of another type carries no message: ok is false, and it is
// skipped.
func (c *Conn) tooLarge(ev sse.Event) (in inbound, m *jsonrpc.Message, ok bool) {
	if ev.Type != "" && ev.Type != "message" {
		c.log.Debug("streamable: skipped an oversized event of another type", "type", ev.Type)
		return inbound{}, nil, false
	}
	e := &transport.TooLargeError{Limit: c.opts.MaxEventBytes, Head: ev.Data, Tail: ev.Tail}
	id, method, response := wire.Identity(e.Head, e.Tail)
	m = &jsonrpc.Message{}
	switch {
	case method:
		m.ID, m.Method = id, oversizedMethod
	case response:
		m.ID = id
	}
	// The jsonrpc layer logs it, once it knows what it was.
	c.log.Debug("streamable: an SSE event over MaxEventBytes", "limit", c.opts.MaxEventBytes, "id", id.String(), "request", method, "response", response)
	return inbound{err: eventTooLargeError{e}}, m, true
}

// eventTooLargeError is Read's error for an SSE event over MaxEventBytes:
// a *transport.TooLargeError that is also ErrEventTooLarge.
type eventTooLargeError struct{ *transport.TooLargeError }

func (e eventTooLargeError) Error() string {
	return fmt.Sprintf("%v: an SSE event over %d bytes", ErrEventTooLarge, e.Limit)
}

func (e eventTooLargeError) Unwrap() []error {
	return []error{e.TooLargeError, ErrEventTooLarge}
}
