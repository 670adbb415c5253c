package jsonrpc

import (
	"errors"
	"fmt"

	"github.com/mcpkit/mcpkit/internal/rpccodec"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

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
// answers fails with cause; anything else is answered with rpcErr under
// answerID, as JSON-RPC 2.0 §5 asks of a message that is not a valid
// request.
func (c *Conn) unreadable(id mcp.ID, answer bool, answerID mcp.ID, rpcErr *Error, cause error) {
	if id.IsValid() && answer && c.fail(id, cause) {
		c.log.Warn("jsonrpc: an answer could not be read", "id", id.String(), "err", cause)
		return
	}
	_ = c.write(c.base, transport.Message{Data: encodeError(answerID, rpcErr)})
}

// tooLarge handles a message the transport dropped for its size, by
// what its ends say of it: a request is answered -32600 under its id; a
// response fails the call it answers (or is dropped: JSON-RPC 2.0 answers
// no response); a notification is dropped, as it gets no answer. One whose
// ends name neither a method nor a result or error (a "method" after a
// member that did not fit) is answered -32600 without an id, as JSON-RPC
// 2.0 §5 asks of a request whose id could not be read, and never taken for
// the answer to our call of the same id.
func (c *Conn) tooLarge(err error) {
	var e *transport.TooLargeError
	var id mcp.ID
	var method, response bool
	if errors.As(err, &e) {
		id, method, response = rpccodec.Identity(e.Head, e.Tail)
	}
	rpcErr := NewError(mcp.CodeInvalidRequest, "Invalid Request: "+err.Error())
	switch {
	case method && id.IsValid():
		c.log.Warn("jsonrpc: answered a request over the size limit", "id", id.String(), "err", err)
		_ = c.write(c.base, transport.Message{Data: encodeError(id, rpcErr)})
	case response && id.IsValid() && c.fail(id, fmt.Errorf("jsonrpc: the answer was dropped: %w", err)):
		c.log.Warn("jsonrpc: an answer could not be read", "id", id.String(), "err", err)
	case method, response:
		c.log.Warn("jsonrpc: dropped a notification, or an answer no call waits for, over the size limit", "id", id.String(), "err", err)
	default:
		c.log.Warn("jsonrpc: a message over the size limit names no method first", "err", err)
		_ = c.write(c.base, transport.Message{Data: encodeError(mcp.ID{}, rpcErr)})
	}
}

// rejected handles a message decodeIn refused (derr): msg, when not nil,
// holds the id it read.
func (c *Conn) rejected(data []byte, msg *Message, derr *Error) {
	c.log.Debug("jsonrpc: rejected message", "code", derr.Code, "err", derr.Message)
	id, method, response := rpccodec.Identity(transport.Edges(data))
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
	// An answer: a result or an error was seen, or the message is valid
	// JSON and has no method. Not one whose JSON broke before a method
	// could be seen: a request of the peer's must not end our call of
	// the same id.
	answer := response || !method && derr.Code != mcp.CodeParseError
	c.unreadable(id, answer, answerID, derr, cause)
}
