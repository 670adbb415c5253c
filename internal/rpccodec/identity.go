package rpccodec

import (
	"bytes"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// A message the reader could not take whole (over a size limit, or a
// response that does not parse as one) still names its request, and
// whoever waits for it must hear: a call whose answer was dropped would
// otherwise wait until its context ends, and a peer's request would get
// an answer with no id. Identity reads the id from what is left of the
// message: the top-level members at its start, in order, until the
// first that does not fit, and else the last member, when the message
// ends with `"id": <number or plain string>}` (in a JSON object that
// is a top-level member: the final brace closes the object).

// Identity is what the ends of a message say of it: its id (invalid
// when neither end holds one), whether a "method" member was seen, and
// whether a "result" or "error" member was seen before any "method"
// (response). A message with an id and neither is unknown: a request
// whose "method" comes after a member that did not fit reads so, and
// must not be taken for the answer to a call of the same id.
func Identity(head, tail []byte) (id mcp.ID, method, response bool) {
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
				method, response = true, false
			case "result", "error":
				response = !method
			}
			if d.SkipValue() != nil {
				break members
			}
		}
	}
	if !id.IsValid() {
		id = tailID(tail)
	}
	return id, method, response
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
