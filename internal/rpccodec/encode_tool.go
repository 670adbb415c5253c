package rpccodec

import (
	"bytes"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonwalk"
	"github.com/mcpkit/mcpkit/mcp"
)

// appendToolResult appends r exactly as json.MarshalWrite with marshalOpts
// writes it (mcp.CallToolResult.MarshalJSONTo), but by appending bytes
// instead of through an encoder: a tools/call result is the hottest
// payload of all, and the encoder's bookkeeping (its name sets, its
// reformatting of raw values) cost more than the bytes. ok is false when r
// holds something only the encoder writes the same way (a content block
// other than plain text, a _meta value that is not raw JSON, a raw value
// that is not already compact and minimally escaped, a string that is not
// valid UTF-8); the caller then discards b's new bytes and uses the
// encoder, so that the output, and every error, stays the encoder's. A
// fuzz test holds the two to the same bytes.
func appendToolResult(b []byte, r *mcp.CallToolResult) (_ []byte, ok bool) {
	b = append(b, '{')
	if r.ResultType != "" {
		b = append(b, `"resultType":`...)
		if b, ok = appendString(b, string(r.ResultType)); !ok {
			return b, false
		}
		b = append(b, ',')
	}
	b = append(b, `"content":[`...)
	for i, c := range r.Content {
		t, isText := c.(*mcp.TextContent)
		if !isText || t == nil || t.Annotations != nil || t.Meta != nil {
			return b, false
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"text","text":`...)
		if b, ok = appendString(b, t.Text); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	if r.StructuredContent != nil {
		b = append(b, `,"structuredContent":`...)
		if b, ok = appendCompact(b, r.StructuredContent); !ok {
			return b, false
		}
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	if r.Meta != nil {
		b = append(b, `,"_meta":{`...)
		first := true
		for k, v := range r.Meta {
			raw, isRaw := v.(jsontext.Value)
			if !isRaw {
				return b, false
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			if b, ok = appendString(b, k); !ok {
				return b, false
			}
			b = append(b, ':')
			if b, ok = appendCompact(b, raw); !ok {
				return b, false
			}
		}
		b = append(b, '}')
	}
	return append(b, '}'), true
}

// appendString appends s quoted as the encoder quotes it; ok is false for
// invalid UTF-8 (which the encoder refuses).
func appendString(b []byte, s string) ([]byte, bool) {
	out, err := jsontext.AppendQuote(b, s)
	return out, err == nil
}

// appendCompact appends raw verbatim when the encoder's WriteValue would
// write it unchanged: valid JSON (UTF-8, no duplicate names) in its
// minimal form, no whitespace outside strings and no escape the encoder
// would rewrite (it keeps \" \\ \b \f \n \r \t and rewrites \/ and most
// \u escapes). jsonwalk.Minimal answers most values in one pass; one past
// its limits (nesting, names open at once) is checked by compactMinimal
// and isValid, when it cannot nest deeper than the encoder allows
// (shallow); anything else is left to the encoder.
func appendCompact(b []byte, raw jsontext.Value) ([]byte, bool) {
	if !jsonwalk.Minimal(raw) && (!compactMinimal(raw) || !shallow(raw) || !isValid(raw)) {
		return b, false
	}
	return append(b, raw...), true
}

// maxValueDepth bounds the nesting of a value appendCompact writes
// verbatim when jsonwalk.Minimal declined it: the encoder refuses a
// document nested past 10000, counted from the result it encodes, and a
// value sits a few levels inside that.
const maxValueDepth = 9900

// shallow reports whether raw cannot nest past maxValueDepth: it is too
// short to, or holds fewer brackets that open (counted in strings too: a
// conservative bound).
func shallow(raw []byte) bool {
	return len(raw) < 2*maxValueDepth || bytes.Count(raw, []byte{'['})+bytes.Count(raw, []byte{'{'}) < maxValueDepth
}

// compactMinimal reports whether raw has no whitespace outside strings
// and only the two-character escapes the encoder keeps. It does not
// check validity.
func compactMinimal(raw []byte) bool {
	in := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case in && c == '\\':
			i++
			if i == len(raw) {
				return false
			}
			switch raw[i] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
			default:
				return false
			}
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return len(raw) > 0
}
