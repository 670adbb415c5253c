package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// A message the reader could not take whole (over a size limit, or a
// response that does not parse as one) still names its request, and
// whoever waits for it must hear: a call whose answer was dropped would
// otherwise wait until its context ends, and a peer's request would get
// an answer with no id. identity reads the id from what is left of the
// message: the top-level members at its start, in order, until the
// first that does not fit, and else the last member, when the message
// ends with `"id": <number or plain string>}` (in a JSON object that
// is a top-level member: the final brace closes the object).

// identity is what the ends of a message say of it: its id (invalid
// when neither end holds one) and whether a "method" member was seen.
func identity(head, tail []byte) (id mcp.ID, method bool) {
	d := jsontext.NewDecoder(bytes.NewReader(head))
	if tok, err := d.ReadToken(); err == nil && tok.Kind() == '{' {
	members:
		for d.PeekKind() == '"' {
			name, err := d.ReadToken()
			if err != nil {
				break members
			}
			switch name.String() {
			case "id":
				v, err := d.ReadValue()
				if err != nil {
					break members
				}
				if got, err := mcp.ParseID(v); err == nil {
					id = got
				}
				continue
			case "method":
				method = true
			}
			if d.SkipValue() != nil {
				break members
			}
		}
	}
	if !id.IsValid() {
		id = tailID(tail)
	}
	return id, method
}

// tailID reads a last member `"id": 7}` or `"id": "x"}` (a string with
// no escapes) from the end of a message.
func tailID(tail []byte) mcp.ID {
	b := bytes.TrimRight(tail, " \t\r\n")
	if len(b) == 0 || b[len(b)-1] != '}' {
		return mcp.ID{}
	}
	b = bytes.TrimRight(b[:len(b)-1], " \t\r\n")
	var start int
	switch {
	case len(b) > 0 && b[len(b)-1] == '"':
		q := bytes.LastIndexByte(b[:len(b)-1], '"')
		if q < 0 || bytes.IndexByte(b[q:], '\\') >= 0 {
			return mcp.ID{}
		}
		start = q
	default:
		start = len(b)
		for start > 0 && (b[start-1] >= '0' && b[start-1] <= '9' || b[start-1] == '-') {
			start--
		}
		if start == len(b) {
			return mcp.ID{}
		}
	}
	value := b[start:]
	rest := bytes.TrimRight(b[:start], " \t\r\n")
	if len(rest) == 0 || rest[len(rest)-1] != ':' {
		return mcp.ID{}
	}
	rest = bytes.TrimRight(rest[:len(rest)-1], " \t\r\n")
	if !bytes.HasSuffix(rest, []byte(`"id"`)) {
		return mcp.ID{}
	}
	rest = bytes.TrimRight(rest[:len(rest)-len(`"id"`)], " \t\r\n")
	if len(rest) == 0 || (rest[len(rest)-1] != ',' && rest[len(rest)-1] != '{') {
		return mcp.ID{}
	}
	id, err := mcp.ParseID(value)
	if err != nil {
		return mcp.ID{}
	}
	return id
}

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
