package jsonrpc

import (
	"bytes"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// parseFast reads the members of a message envelope as parse does, for
// the everyday message, by one strict walk over its bytes instead of the
// token decoder. It returns false, "not taken", for anything it does not
// decide itself, and then w is left as it found it (zero) for parse's
// token decoder, which also writes the error of a message that is not
// valid. What it takes, it has checked as the decoder would: the JSON
// grammar, valid UTF-8, no duplicate member names in any object, nothing
// after the object. It leaves to the decoder: a member name with an
// escape or more than fastMaxNames members in one object (duplicates
// are then a matter of unescaped names or of a larger set), and nesting
// deeper than fastMaxDepth.
// FuzzParseFast holds it to the decoder's result.
func (w *wireMessage) parseFast(data []byte) bool {
	f := fastWalker{b: data}
	f.space()
	if f.peek() != '{' {
		return false
	}
	f.i++
	f.space()
	var m wireMessage
	var names [fastMaxNames][]byte
	n := 0
	if f.peek() != '}' {
		for {
			name, ok := f.name(names[:n])
			if !ok || n == fastMaxNames {
				return false
			}
			names[n] = name
			n++
			f.space()
			if f.peek() != ':' {
				return false
			}
			f.i++
			f.space()
			start := f.i
			if !f.value(1) {
				return false
			}
			raw := data[start:f.i:f.i]
			switch string(name) {
			case "jsonrpc":
				m.JSONRPC = raw
			case "id":
				m.ID = raw
			case "method":
				m.Method = raw
			case "params":
				m.Params = raw
			case "result":
				m.Result = raw
			case "error":
				m.Error = raw
			}
			f.space()
			if f.peek() != ',' {
				break
			}
			f.i++
			f.space()
		}
		if f.peek() != '}' {
			return false
		}
	}
	f.i++
	f.space()
	if f.i != len(data) {
		return false
	}
	*w = m
	return true
}

// isValid reports whether raw is one valid JSON value, as
// jsontext.Value.IsValid does (UTF-8, no duplicate names), by the walk
// when it decides and by IsValid when it does not.
func isValid(raw []byte) bool {
	f := fastWalker{b: raw}
	f.space()
	if f.value(1) {
		f.space()
		if f.i == len(raw) {
			return true
		}
	}
	return jsontext.Value(raw).IsValid()
}

// fastMaxNames is the most members parseFast checks for duplicates in
// one object (pairwise); fastMaxDepth the deepest nesting it walks
// (recursively) before leaving a message to the token decoder.
const (
	fastMaxNames = 16
	fastMaxDepth = 32
)

// fastWalker is a position in a message's bytes.
type fastWalker struct {
	b []byte
	i int
}

func (f *fastWalker) peek() byte {
	if f.i < len(f.b) {
		return f.b[f.i]
	}
	return 0
}

func (f *fastWalker) space() {
	for f.i < len(f.b) {
		switch f.b[f.i] {
		case ' ', '\t', '\n', '\r':
			f.i++
		default:
			return
		}
	}
}

// name reads a member name without escapes (valid UTF-8, no control
// characters) and checks it against the names before it in its object.
func (f *fastWalker) name(before [][]byte) ([]byte, bool) {
	if f.peek() != '"' {
		return nil, false
	}
	start := f.i + 1
	high := false
	for j := start; j < len(f.b); j++ {
		switch c := f.b[j]; {
		case c == '"':
			name := f.b[start:j]
			if high && !utf8.Valid(name) {
				return nil, false
			}
			for _, b := range before {
				if bytes.Equal(b, name) {
					return nil, false
				}
			}
			f.i = j + 1
			return name, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			high = true
		}
	}
	return nil, false
}

// str reads a string: valid escapes (a \u escape of a surrogate only
// as the first of a pair), valid UTF-8, no control characters.
func (f *fastWalker) str() bool {
	start := f.i + 1
	high := false
	for j := start; j < len(f.b); j++ {
		switch c := f.b[j]; {
		case c == '"':
			if high && !utf8.Valid(f.b[start:j]) {
				return false
			}
			f.i = j + 1
			return true
		case c == '\\':
			j++
			if j == len(f.b) {
				return false
			}
			switch f.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				r, ok := hex4(f.b[j+1:])
				switch {
				case !ok || r >= 0xdc00 && r <= 0xdfff:
					return false // not an escape, or a lone low surrogate
				case r >= 0xd800 && r < 0xdc00:
					// A high surrogate: a low one must follow.
					rest := f.b[j+5:]
					if len(rest) < 2 || rest[0] != '\\' || rest[1] != 'u' {
						return false
					}
					if lo, ok := hex4(rest[2:]); !ok || lo < 0xdc00 || lo > 0xdfff {
						return false
					}
					j += 10
				default:
					j += 4
				}
			default:
				return false
			}
		case c < 0x20:
			return false
		case c >= 0x80:
			high = true
		}
	}
	return false
}

// hex4 reads the four hex digits of a \u escape from the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// value reads one value at nesting depth (1 for the envelope's members).
func (f *fastWalker) value(depth int) bool {
	switch c := f.peek(); c {
	case '{':
		if depth >= fastMaxDepth {
			return false
		}
		return f.object(depth + 1)
	case '[':
		if depth >= fastMaxDepth {
			return false
		}
		return f.array(depth + 1)
	case '"':
		return f.str()
	case 't':
		return f.literal("true")
	case 'f':
		return f.literal("false")
	case 'n':
		return f.literal("null")
	default:
		return f.number()
	}
}

func (f *fastWalker) object(depth int) bool {
	f.i++ // '{'
	f.space()
	if f.peek() == '}' {
		f.i++
		return true
	}
	var names [fastMaxNames][]byte
	n := 0
	for {
		name, ok := f.name(names[:n])
		if !ok || n == fastMaxNames {
			return false
		}
		names[n] = name
		n++
		f.space()
		if f.peek() != ':' {
			return false
		}
		f.i++
		f.space()
		if !f.value(depth) {
			return false
		}
		f.space()
		switch f.peek() {
		case ',':
			f.i++
			f.space()
		case '}':
			f.i++
			return true
		default:
			return false
		}
	}
}

func (f *fastWalker) array(depth int) bool {
	f.i++ // '['
	f.space()
	if f.peek() == ']' {
		f.i++
		return true
	}
	for {
		if !f.value(depth) {
			return false
		}
		f.space()
		switch f.peek() {
		case ',':
			f.i++
			f.space()
		case ']':
			f.i++
			return true
		default:
			return false
		}
	}
}

func (f *fastWalker) literal(word string) bool {
	if len(f.b)-f.i < len(word) || string(f.b[f.i:f.i+len(word)]) != word {
		return false
	}
	f.i += len(word)
	return true
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (f *fastWalker) number() bool {
	if f.peek() == '-' {
		f.i++
	}
	switch c := f.peek(); {
	case c == '0':
		f.i++
	case c >= '1' && c <= '9':
		f.digits()
	default:
		return false
	}
	if f.peek() == '.' {
		f.i++
		if !f.digits() {
			return false
		}
	}
	if c := f.peek(); c == 'e' || c == 'E' {
		f.i++
		if c := f.peek(); c == '+' || c == '-' {
			f.i++
		}
		if !f.digits() {
			return false
		}
	}
	return true
}

func (f *fastWalker) digits() bool {
	start := f.i
	for f.i < len(f.b) && f.b[f.i] >= '0' && f.b[f.i] <= '9' {
		f.i++
	}
	return f.i > start
}
