package streamable

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// An SSE event over Options.MaxEventBytes is dropped and the stream read
// on (internal/sse reads the rest of the event and keeps its head). When
// the head shows that the event was the response to one of our requests,
// that request fails with an error response (-32603, ErrEventTooLarge in
// its message) in place of the answer, so that its call does not wait
// for ever; a server request or notification is only logged.

// oversized returns the error response that replaces an oversized event
// whose data began with head, or nil when the event was no response.
func (c *Conn) oversized(head []byte) ([]byte, *jsonrpc.Message) {
	id, ok := responseID(head)
	if !ok {
		c.log.Warn("streamable: dropped an SSE event over MaxEventBytes", "limit", c.opts.MaxEventBytes)
		return nil, nil
	}
	c.log.Warn("streamable: the response to a request is over MaxEventBytes", "id", id.String(), "limit", c.opts.MaxEventBytes)
	e := jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: streamable transport: %v",
		fmt.Errorf("%w: an SSE event over %d bytes", ErrEventTooLarge, c.opts.MaxEventBytes))
	return wire.EncodeError(id, e), &jsonrpc.Message{ID: id, Error: e}
}

// responseID reads the top-level members at the start of a message until
// it knows its id and whether it is a response (a "result" or "error"
// member before any "method").
func responseID(head []byte) (mcp.ID, bool) {
	d := jsontext.NewDecoder(bytes.NewReader(head))
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return mcp.ID{}, false
	}
	var id mcp.ID
	response := false
	for d.PeekKind() == '"' {
		name, err := d.ReadToken()
		if err != nil {
			break
		}
		switch name.String() {
		case "method":
			return mcp.ID{}, false
		case "result", "error":
			response = true
		case "id":
			v, err := d.ReadValue()
			if err != nil {
				return mcp.ID{}, false
			}
			if id, err = mcp.ParseID(v); err != nil {
				return mcp.ID{}, false
			}
			if response {
				return id, true
			}
			continue
		}
		if response && id.IsValid() {
			return id, true
		}
		if response {
			// The result comes before the id: read past it if it fits.
			if d.SkipValue() != nil {
				return mcp.ID{}, false
			}
			continue
		}
		if d.SkipValue() != nil {
			break
		}
	}
	return id, response && id.IsValid()
}
