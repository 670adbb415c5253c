package rpccodec

import (
	"bytes"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonwalk"
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
	f := jsonwalk.Walker{B: data}
	f.Space()
	if f.Peek() != '{' {
		return false
	}
	var m wireMessage
	if !f.Open('}') {
		var names [fastMaxNames][]byte
		n := 0
		for more := true; more; {
			name, ok := fastName(&f, names[:n])
			if !ok || n == fastMaxNames || !f.Colon() {
				return false
			}
			names[n] = name
			n++
			start := f.I
			if !fastValue(&f, 1) {
				return false
			}
			if slot := m.member(name); slot != nil {
				*slot = data[start:f.I:f.I]
			}
			if more, ok = f.Next('}'); !ok {
				return false
			}
		}
	}
	if !f.End() {
		return false
	}
	*w = m
	return true
}

// isValid reports whether raw is one valid JSON value, as
// jsontext.Value.IsValid does (UTF-8, no duplicate names), by the walk
// when it decides and by IsValid when it does not.
func isValid(raw []byte) bool {
	f := jsonwalk.Walker{B: raw}
	f.Space()
	if fastValue(&f, 1) && f.End() {
		return true
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

// fastName reads a member name without escapes and checks it against
// the names before it in its object.
func fastName(f *jsonwalk.Walker, before [][]byte) ([]byte, bool) {
	name, ok := f.Plain()
	if !ok {
		return nil, false
	}
	for _, b := range before {
		if bytes.Equal(b, name) {
			return nil, false
		}
	}
	return name, true
}

// fastValue reads one value at nesting depth (1 for the envelope's
// members).
func fastValue(f *jsonwalk.Walker, depth int) bool {
	switch f.Peek() {
	case '{':
		return depth < fastMaxDepth && fastObject(f, depth+1)
	case '[':
		return depth < fastMaxDepth && fastArray(f, depth+1)
	case '"':
		return f.String()
	case 't', 'f', 'n':
		return f.Literal()
	default:
		_, ok := f.Number()
		return ok
	}
}

func fastObject(f *jsonwalk.Walker, depth int) bool {
	if f.Open('}') {
		return true
	}
	var names [fastMaxNames][]byte
	n := 0
	for more := true; more; {
		name, ok := fastName(f, names[:n])
		if !ok || n == fastMaxNames || !f.Colon() || !fastValue(f, depth) {
			return false
		}
		names[n] = name
		n++
		if more, ok = f.Next('}'); !ok {
			return false
		}
	}
	return true
}

func fastArray(f *jsonwalk.Walker, depth int) bool {
	if f.Open(']') {
		return true
	}
	for more := true; more; {
		var ok bool
		if !fastValue(f, depth) {
			return false
		}
		if more, ok = f.Next(']'); !ok {
			return false
		}
	}
	return true
}
