package server

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// DefaultMaxToolResultBytes is Options.MaxToolResultBytes when it is
// zero: 4 MiB less 64 KiB, so that the whole message — the result, its
// JSON-RPC envelope and the _meta the server adds — fits the 4 MiB a
// client of this SDK reads by default (jsonrpc.DefaultMaxMessageBytes;
// the stdio and Streamable HTTP clients' own defaults are the same). A
// larger result would be lost by such a client anyway, with its
// connection or stream; refused here, it becomes a tool error the model
// can act on.
const DefaultMaxToolResultBytes = 4<<20 - 64<<10

// maxToolResult is the cap in force; negative: none.
func (s *Server) maxToolResult() int {
	if n := s.opts.MaxToolResultBytes; n != 0 {
		return n
	}
	return DefaultMaxToolResultBytes
}

// capToolResult returns res, or, when its encoding is larger than
// Options.MaxToolResultBytes, a tool error (isError) saying so: the
// spec's tool execution errors are results the model sees, and a result
// too large for the caller is one the model can fix by asking for less.
// Most results are far below the cap: a bound computed from their sizes
// (resultBound) settles them without encoding anything; only the others
// are encoded, to count their bytes.
func (s *Server) capToolResult(ctx context.Context, name string, res *mcp.CallToolResult) *mcp.CallToolResult {
	max := s.maxToolResult()
	if max < 0 || res == nil {
		return res
	}
	// The quick bound settles almost every result; a large text result
	// gets a tighter one, a scan of its bytes, before being encoded.
	if bound, ok := resultBound(res, false); ok && bound <= max {
		return res
	} else if ok {
		if bound, _ := resultBound(res, true); bound <= max {
			return res
		}
	}
	var n countWriter
	if err := json.MarshalWrite(&n, res); err != nil {
		return res // the transport reports an unencodable result as it does today
	}
	if int(n) <= max {
		return res
	}
	return s.oversizedResult(ctx, name, int(n), max)
}

// capEncodedToolResult is capToolResult for a result already encoded (a
// task's): it returns raw, or the encoded tool error that replaces it.
func (s *Server) capEncodedToolResult(ctx context.Context, name string, raw []byte) []byte {
	max := s.maxToolResult()
	if max < 0 || len(raw) <= max {
		return raw
	}
	out, err := json.Marshal(s.oversizedResult(ctx, name, len(raw), max))
	if err != nil {
		return raw
	}
	return out
}

func (s *Server) oversizedResult(ctx context.Context, name string, size, max int) *mcp.CallToolResult {
	s.log.WarnContext(ctx, "server: a tool result is larger than Options.MaxToolResultBytes; the caller gets a tool error instead",
		"tool", name, "bytes", size, "max", max)
	return errorResult(fmt.Sprintf("the result of tool %q is %d bytes encoded, more than this server's limit of %d bytes (MaxToolResultBytes); ask for less, e.g. a narrower query or one page at a time",
		name, size, max))
}

// countWriter counts the bytes written to it.
type countWriter int

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

// The bound of resultBound: any byte of a string or of raw JSON encodes
// to at most escapeMax bytes (\u00XX), binary data to 4 per 3 (base64),
// and the fixed parts of an item take at most itemOverhead.
const (
	escapeMax    = 6
	itemOverhead = 128
)

// resultBound is an upper bound of res's encoded size, from the sizes of
// its parts; ok is false when res holds a kind of content it does not
// bound (then the result is encoded to be measured). With tight, text
// content is bounded byte by byte (textBound) rather than at escapeMax
// per byte: a scan, much cheaper than an encoding, which spares a large
// text result of mostly plain characters being encoded to be measured.
func resultBound(res *mcp.CallToolResult, tight bool) (n int, ok bool) {
	if n, ok = metaBound(res.Meta); !ok {
		return 0, false
	}
	n += itemOverhead + escapeMax*len(res.StructuredContent)
	for _, c := range res.Content {
		var item int
		var meta mcp.Meta
		switch v := c.(type) {
		case *mcp.TextContent:
			item, meta = escapeMax*len(v.Text), v.Meta
			if tight {
				item = textBound(v.Text)
			}
			item += annotationsBound(v.Annotations)
		case *mcp.ImageContent:
			item, meta = 4*((len(v.Data)+2)/3)+escapeMax*len(v.MIMEType)+annotationsBound(v.Annotations), v.Meta
		case *mcp.AudioContent:
			item, meta = 4*((len(v.Data)+2)/3)+escapeMax*len(v.MIMEType)+annotationsBound(v.Annotations), v.Meta
		default:
			return 0, false
		}
		m, ok := metaBound(meta)
		if !ok {
			return 0, false
		}
		n += itemOverhead + item + m
	}
	return n, true
}

// metaBound bounds the encoding of _meta whose values are raw JSON or
// strings; any other value is not bounded (ok false).
func metaBound(m mcp.Meta) (n int, ok bool) {
	for k, v := range m {
		var size int
		switch v := v.(type) {
		case jsontext.Value:
			size = len(v)
		case string:
			size = len(v)
		default:
			return 0, false
		}
		n += itemOverhead + escapeMax*(len(k)+size)
	}
	return n, true
}

func annotationsBound(a *mcp.Annotations) int {
	if a == nil {
		return 0
	}
	n := itemOverhead + escapeMax*len(a.LastModified)
	for _, r := range a.Audience {
		n += itemOverhead + escapeMax*len(r)
	}
	return n
}

// byteBound is, per byte of a string, the most bytes the encoder can
// write for it: 1 for a plain ASCII character; 2 for '"' and '\\'; 6
// (\u00XX) for a control character and for the characters an HTML-safe
// encoding escapes; 3 for a byte of a multi-byte character (U+2028 and
// U+2029, escaped, take 6 for 3 bytes; an invalid byte becomes U+FFFD,
// 3 bytes, when invalid UTF-8 is allowed).
var byteBound = func() (t [256]uint8) {
	for b := range 256 {
		switch {
		case b < 0x20 || b == 0x7f || b == '<' || b == '>' || b == '&':
			t[b] = escapeMax
		case b == '"' || b == '\\':
			t[b] = 2
		case b >= 0x80:
			t[b] = 3
		default:
			t[b] = 1
		}
	}
	return t
}()

// textBound bounds the encoded size of s, quotes included.
func textBound(s string) int {
	n := 2
	for i := 0; i < len(s); i++ {
		n += int(byteBound[s[i]])
	}
	return n
}
