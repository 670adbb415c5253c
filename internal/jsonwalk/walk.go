package jsonwalk

import (
	"bytes"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Walker is a position in a JSON text.
type Walker struct {
	B []byte // the text
	I int    // the position: the next byte to read
}

// Peek is the byte at the position, 0 at the end.
func (w *Walker) Peek() byte {
	if w.I < len(w.B) {
		return w.B[w.I]
	}
	return 0
}

// Space skips JSON whitespace: space, tab, line feed, carriage return.
func (w *Walker) Space() {
	for w.I < len(w.B) {
		switch w.B[w.I] {
		case ' ', '\t', '\n', '\r':
			w.I++
		default:
			return
		}
	}
}

// End reports whether only whitespace is left.
func (w *Walker) End() bool {
	w.Space()
	return w.I == len(w.B)
}

// Open reads the opening bracket at the position and the whitespace after
// it, and reports whether the closing one, close, follows at once (then
// read too): an empty object or array.
func (w *Walker) Open(close byte) (empty bool) {
	w.I++
	w.Space()
	if w.Peek() == close {
		w.I++
		return true
	}
	return false
}

// Next reads what follows a member or an element, whitespace around it:
// a comma (more: true) or the closing bracket close (more: false). ok is
// false for anything else.
func (w *Walker) Next(close byte) (more, ok bool) {
	w.Space()
	switch w.Peek() {
	case ',':
		w.I++
		w.Space()
		return true, true
	case close:
		w.I++
		return false, true
	}
	return false, false
}

// Colon reads the colon after a member name, whitespace around it.
func (w *Walker) Colon() bool {
	w.Space()
	if w.Peek() != ':' {
		return false
	}
	w.I++
	w.Space()
	return true
}

// Plain reads a string without escapes at the position (its opening
// quote) and returns its contents: valid UTF-8, no control characters.
// A string with an escape is not read (false).
func (w *Walker) Plain() ([]byte, bool) {
	if w.Peek() != '"' {
		return nil, false
	}
	start := w.I + 1
	high := false
	for j := start; j < len(w.B); j++ {
		switch c := w.B[j]; {
		case c == '"':
			s := w.B[start:j]
			if high && !utf8.Valid(s) {
				return nil, false
			}
			w.I = j + 1
			return s, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			high = true
		}
	}
	return nil, false
}

// Text reads a string at the position (its opening quote), checked as
// String checks it, and returns its value: the contents of one without
// escapes (a slice of B, as Plain), else a new copy with its escapes
// decoded by jsontext.
func (w *Walker) Text() ([]byte, bool) {
	if s, ok := w.Plain(); ok {
		return s, true
	}
	start := w.I
	if w.Peek() != '"' || !w.String() {
		return nil, false
	}
	v, err := jsontext.AppendUnquote(nil, w.B[start:w.I])
	if err != nil {
		return nil, false
	}
	return v, true
}

// String reads a string at the position (its opening quote): valid
// escapes (a \u escape of a surrogate only as the first of a pair, as
// jsontext wants), valid UTF-8, no control characters.
func (w *Walker) String() bool {
	start := w.I + 1
	high := false
	for j := start; j < len(w.B); j++ {
		switch c := w.B[j]; {
		case c == '"':
			if high && !utf8.Valid(w.B[start:j]) {
				return false
			}
			w.I = j + 1
			return true
		case c == '\\':
			j++
			if j == len(w.B) {
				return false
			}
			switch w.B[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				r, ok := hex4(w.B[j+1:])
				switch {
				case !ok || r >= 0xdc00 && r <= 0xdfff:
					return false // not an escape, or a lone low surrogate
				case r >= 0xd800 && r < 0xdc00:
					// A high surrogate: a low one must follow.
					rest := w.B[j+5:]
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

// Literal reads true, false or null at the position, the one its first
// byte names.
func (w *Walker) Literal() bool {
	var word string
	switch w.Peek() {
	case 't':
		word = "true"
	case 'f':
		word = "false"
	case 'n':
		word = "null"
	default:
		return false
	}
	if len(w.B)-w.I < len(word) || string(w.B[w.I:w.I+len(word)]) != word {
		return false
	}
	w.I += len(word)
	return true
}

// Number reads a number by the JSON grammar,
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, and returns its text.
func (w *Walker) Number() ([]byte, bool) {
	start := w.I
	if w.Peek() == '-' {
		w.I++
	}
	switch c := w.Peek(); {
	case c == '0':
		w.I++
	case c >= '1' && c <= '9':
		w.digits()
	default:
		return nil, false
	}
	if w.Peek() == '.' {
		w.I++
		if !w.digits() {
			return nil, false
		}
	}
	if c := w.Peek(); c == 'e' || c == 'E' {
		w.I++
		if c := w.Peek(); c == '+' || c == '-' {
			w.I++
		}
		if !w.digits() {
			return nil, false
		}
	}
	return w.B[start:w.I], true
}

// digits reads one or more decimal digits.
func (w *Walker) digits() bool {
	start := w.I
	for w.I < len(w.B) && w.B[w.I] >= '0' && w.B[w.I] <= '9' {
		w.I++
	}
	return w.I > start
}

// Skip passes over one value of text already known to be valid (checked
// by a walk or by the decoder before): it checks nothing, so it must not
// be given text from anywhere else. False when the text ends first.
func (w *Walker) Skip() bool {
	b, i := w.B, w.I
	if i >= len(b) {
		return false
	}
	switch b[i] {
	case '"':
		return w.skipString()
	case '{', '[':
		depth := 0
		for ; w.I < len(b); w.I++ {
			switch b[w.I] {
			case '"':
				if !w.skipString() {
					return false
				}
				w.I--
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					w.I++
					return true
				}
			}
		}
		return false
	}
	for ; w.I < len(b); w.I++ { // a number or a literal
		switch b[w.I] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return true
		}
	}
	return true
}

// skipString passes over a string of valid text: to the first quote not
// escaped by an odd run of backslashes.
func (w *Walker) skipString() bool {
	b, start := w.B, w.I
	for j := start + 1; ; j++ {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return false
		}
		j += k
		n := 0
		for p := j - 1; p > start && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			w.I = j + 1
			return true
		}
	}
}
