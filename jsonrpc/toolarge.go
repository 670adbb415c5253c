package jsonrpc

import (
	"errors"
	"fmt"

	"github.com/mcpkit/mcpkit/internal/rpccodec"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// identity is what the ends of a message say of it: its id (invalid
// when neither end holds one) and whether a "method" member was seen
// (rpccodec.Identity, which the HTTP transport reads too).
func identity(head, tail []byte) (id mcp.ID, method bool) { return rpccodec.Identity(head, tail) }

// fail ends this side's call id with err, as its answer would have; it
// reports whether a call was waiting.
func (c *Conn) fail(id mcp.ID, err error) bool {
	c.mu.Lock()
	ch, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ok {
		ch <- &Message{ID: id, local: err}
	}
	return ok
}

// unreadable handles a message the reader could not take: the call it
// answers (id, no method) fails with cause; anything else is answered
// with rpcErr under answerID, as JSON-RPC 2.0 §5 asks of a message that is
// not a valid request.
func (c *Conn) unreadable(id mcp.ID, method bool, answerID mcp.ID, rpcErr *Error, cause error) {
	if id.IsValid() && !method && c.fail(id, cause) {
		c.log.Warn("jsonrpc: an answer could not be read", "id", id.String(), "err", cause)
		return
	}
	_ = c.write(c.base, transport.Message{Data: encodeError(answerID, rpcErr)})
}

// tooLarge handles a message the transport dropped for its size: a
// request is answered under its own id.
func (c *Conn) tooLarge(err error) {
	var e *transport.TooLargeError
	var id, answerID mcp.ID
	var method bool
	if errors.As(err, &e) {
		id, method = identity(e.Head, e.Tail)
		if method {
			answerID = id
		}
	}
	c.unreadable(id, method, answerID, NewError(mcp.CodeInvalidRequest, "Invalid Request: "+err.Error()), fmt.Errorf("jsonrpc: the answer was dropped: %w", err))
}

// rejected handles a message decodeIn refused (derr): msg, when not nil,
// holds the id it read.
func (c *Conn) rejected(data []byte, msg *Message, derr *Error) {
	c.log.Debug("jsonrpc: rejected message", "code", derr.Code, "err", derr.Message)
	id, method := identity(transport.Edges(data))
	answerID := mcp.ID{}
	if msg != nil {
		answerID = msg.ID
		if msg.ID.IsValid() {
			id = msg.ID
		}
	}
	cause := fmt.Errorf("jsonrpc: the answer could not be read: %w", derr)
	if len(data) > c.opts.Limits.maxBytes() {
		cause = fmt.Errorf("jsonrpc: the answer was dropped: %w: a message over %d bytes", transport.ErrMessageTooLarge, c.opts.Limits.maxBytes())
	}
	c.unreadable(id, method, answerID, derr, cause)
}
