package rpccodec

import (
	"bytes"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// Encoding writes straight into a pooled buffer: the envelope by hand, the
// payload (params or result) with one MarshalEncode. No intermediate copy
// of the payload is made.

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuf() *bytes.Buffer {
	b := bufPool.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

func putBuf(b *bytes.Buffer) {
	if b.Cap() > 1<<20 { // do not keep huge buffers alive
		return
	}
	bufPool.Put(b)
}

// marshalOpts are used for every payload the SDK writes.
var marshalOpts = json.JoinOptions(
	jsontext.AllowInvalidUTF8(false),
	jsontext.EscapeForHTML(false),
	jsontext.EscapeForJS(false),
)

// Checked is JSON text valid by construction: one object its maker
// assembled from parts that an encoder wrote or that were checked on
// their own, with member names it knows to be distinct (the client's
// 2026-07-28 envelope, written ahead of tools/call params that
// AppendPlainCall wrote). A pointer to one is appended verbatim, without
// the validity check of a jsontext.Value, which would walk the same
// bytes again. Anything else, above all bytes from a caller, is passed
// as a jsontext.Value.
type Checked []byte

// appendPayload appends v as JSON. A jsontext.Value (or a pointer to one,
// which a caller passes to spare boxing the slice) is copied verbatim
// (after a validity check), and so is a *Checked (without it); nil
// becomes the empty object.
func appendPayload(buf *bytes.Buffer, v any) error {
	switch p := v.(type) {
	case nil:
		buf.WriteString("{}")
		return nil
	case *Checked:
		if p != nil && len(*p) > 0 {
			buf.Write(*p)
			return nil
		}
		buf.WriteString("{}")
		return nil
	case jsontext.Value:
		return appendRaw(buf, p)
	case *jsontext.Value:
		if p != nil {
			return appendRaw(buf, *p)
		}
	case *mcp.CallToolResult:
		if p != nil {
			if b, ok := appendToolResult(buf.AvailableBuffer(), p); ok {
				buf.Write(b)
				return nil
			}
		}
	case *mcp.CallToolParams:
		if p != nil {
			if b, ok := AppendPlainCall(buf.AvailableBuffer(), p); ok {
				buf.Write(b)
				return nil
			}
		}
	}
	return json.MarshalWrite(buf, v, marshalOpts)
}

// appendRaw appends raw JSON verbatim, after a validity check; empty is
// the empty object.
func appendRaw(buf *bytes.Buffer, p jsontext.Value) error {
	if len(p) == 0 {
		buf.WriteString("{}")
		return nil
	}
	if !isValid(p) {
		return &jsontext.SyntacticError{}
	}
	buf.Write(p)
	return nil
}

// EncodeRequest returns the bytes of a request (or, with a zero id, a
// notification) carrying params. params may be nil (omitted), a
// jsontext.Value or a pointer to one (sent verbatim), or any value json
// can marshal.
func EncodeRequest(id mcp.ID, method string, params any) ([]byte, error) {
	buf := getBuf()
	defer putBuf(buf)
	b := append(buf.AvailableBuffer(), `{"jsonrpc":"2.0"`...)
	if id.IsValid() {
		b = append(b, `,"id":`...)
		b = id.AppendJSON(b)
	}
	b = append(b, `,"method":`...)
	var err error
	if b, err = jsontext.AppendQuote(b, method); err != nil {
		return nil, err
	}
	buf.Write(b)
	if params != nil {
		buf.WriteString(`,"params":`)
		if err := appendPayload(buf, params); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	return bytes.Clone(buf.Bytes()), nil
}

// EncodeResult returns the bytes of a successful response: result as
// EncodeRequest takes params.
func EncodeResult(id mcp.ID, result any) ([]byte, error) {
	buf := getBuf()
	defer putBuf(buf)
	b := append(buf.AvailableBuffer(), `{"jsonrpc":"2.0","id":`...)
	b = id.AppendJSON(b)
	b = append(b, `,"result":`...)
	buf.Write(b)
	if err := appendPayload(buf, result); err != nil {
		return nil, err
	}
	buf.WriteByte('}')
	return bytes.Clone(buf.Bytes()), nil
}

// EncodeError returns the bytes of an error response. A zero id (the
// request's id could not be read) is left out: MCP's schemas type the id
// of an error response as optional and never null, although bare
// JSON-RPC 2.0 would write null.
func EncodeError(id mcp.ID, e *Error) []byte {
	buf := getBuf()
	defer putBuf(buf)
	b := append(buf.AvailableBuffer(), `{"jsonrpc":"2.0",`...)
	if id.IsValid() {
		b = append(b, `"id":`...)
		b = id.AppendJSON(b)
		b = append(b, ',')
	}
	b = append(b, `"error":{"code":`...)
	b = strconv.AppendInt(b, e.Code, 10)
	b = append(b, `,"message":`...)
	if q, err := jsontext.AppendQuote(b, e.Message); err == nil {
		b = q
	} else {
		b = append(b, `"invalid error message"`...)
	}
	if len(e.Data) > 0 && e.Data.IsValid() {
		b = append(b, `,"data":`...)
		b = append(b, e.Data...)
	}
	b = append(b, "}}"...)
	buf.Write(b)
	return bytes.Clone(buf.Bytes())
}
