package rpccodec

import (
	"bytes"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonwalk"
	"github.com/mcpkit/mcpkit/mcp"
)

// DecodeToolResult decodes raw, a tools/call result, into *r as
// json.Unmarshal with json's default options does, but without the
// reflective struct decoder: a byte walk reads the object's members and
// each member's value is decoded on its own (the content blocks by
// mcp.DecodeContent). It takes only the everyday shape: r zero, raw an
// object of the five members of mcp.CallToolResult, each at most once,
// their names without escapes, resultType a plain string, isError true or
// false; meta decodes the top-level _meta (nil: json.Unmarshal). For
// anything else, or any error, ok is false, *r is untouched and the
// caller decodes raw with the decoder, whose answer and error stand
// (TestDecodeToolResult and FuzzDecodeToolResult hold the two to the
// same value).
func DecodeToolResult(raw []byte, r *mcp.CallToolResult, meta func(raw []byte, m *mcp.Meta) error) (ok bool) {
	if r.ResultType != "" || r.Content != nil || r.StructuredContent != nil || r.IsError || r.Meta != nil {
		return false
	}
	f := jsonwalk.Walker{B: raw}
	f.Space()
	if f.Peek() != '{' {
		return false
	}
	if f.Open('}') {
		return f.End() // the decoder leaves an empty object's result zero
	}
	// r is written member by member (a result of its own would escape
	// to the heap through meta): on failure it is zeroed again, as it
	// was on entry.
	defer func() {
		if !ok {
			*r = mcp.CallToolResult{}
		}
	}()
	var seen uint8
	for more := true; more; {
		name, ok := f.Plain()
		if !ok || !f.Colon() {
			return false
		}
		start := f.I
		if !fastValue(&f, 1) {
			return false
		}
		val := raw[start:f.I]
		bit, ok := toolResultMember(name)
		if !ok || seen&bit != 0 || !decodeToolMember(r, bit, val, meta) {
			return false
		}
		seen |= bit
		if more, ok = f.Next('}'); !ok {
			return false
		}
	}
	return f.End()
}

// The members of a tools/call result, as bits.
const (
	memberResultType uint8 = 1 << iota
	memberContent
	memberStructured
	memberIsError
	memberMeta
)

func toolResultMember(name []byte) (uint8, bool) {
	switch string(name) {
	case "resultType":
		return memberResultType, true
	case "content":
		return memberContent, true
	case "structuredContent":
		return memberStructured, true
	case "isError":
		return memberIsError, true
	case "_meta":
		return memberMeta, true
	}
	return 0, false
}

// decodeToolMember decodes one member's value, val (valid JSON), into out.
func decodeToolMember(out *mcp.CallToolResult, bit uint8, val []byte, meta func([]byte, *mcp.Meta) error) bool {
	switch bit {
	case memberResultType:
		w := jsonwalk.Walker{B: val}
		s, ok := w.Plain()
		if !ok {
			return false
		}
		if string(s) == string(mcp.ResultComplete) {
			out.ResultType = mcp.ResultComplete // the everyday one, without a new string
		} else {
			out.ResultType = mcp.ResultType(s)
		}
	case memberContent:
		cs, ok := decodeContents(val)
		if !ok {
			return false
		}
		out.Content = cs
	case memberStructured:
		out.StructuredContent = bytes.Clone(val)
	case memberIsError:
		switch string(val) {
		case "true":
			out.IsError = true
		case "false":
		default:
			return false
		}
	case memberMeta:
		if val[0] != '{' {
			return false
		}
		var err error
		if meta != nil {
			err = meta(val, &out.Meta)
		} else {
			err = json.Unmarshal(val, &out.Meta)
		}
		if err != nil {
			return false
		}
	}
	return true
}

// decodeContents decodes the content array as mcp.Contents'
// UnmarshalJSONFrom does (null: nil; [] an empty, non-nil list).
func decodeContents(val []byte) (mcp.Contents, bool) {
	if string(val) == "null" {
		return nil, true
	}
	f := jsonwalk.Walker{B: val}
	if f.Peek() != '[' {
		return nil, false
	}
	out := mcp.Contents{}
	if f.Open(']') {
		return out, true
	}
	for more := true; more; {
		start := f.I
		if !fastValue(&f, 2) {
			return nil, false
		}
		c, err := mcp.DecodeContent(jsontext.Value(val[start:f.I]))
		if err != nil {
			return nil, false
		}
		out = append(out, c)
		var ok bool
		if more, ok = f.Next(']'); !ok {
			return nil, false
		}
	}
	return out, true
}
