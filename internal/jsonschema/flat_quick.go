package jsonschema

import "unicode/utf8"

// quick reports whether instance is certainly valid against s, reading
// its bytes directly instead of through a token decoder. It is the scan
// for the everyday instance: members the schema names, strings without
// escapes, arrays whose items the schema describes. Anything else (an
// unknown member, an escape, a byte the JSON grammar does not allow
// there, an array without an items schema) answers false, "not known",
// and the instance goes on to the token scan (valid) and then, if need
// be, to the validator. The walk checks the grammar itself, so it never
// calls invalid JSON valid: instances from anywhere may be given to it.
//
// Its depth is that of the schema it follows (a member or item the
// schema does not describe is not entered), so it needs no bound of its
// own.
func (s *scanSchema) quick(instance []byte) bool {
	w := walker{b: instance}
	w.space()
	if !s.walk(&w) {
		return false
	}
	w.space()
	return w.i == len(w.b)
}

// walker is a position in an instance's bytes.
type walker struct {
	b []byte
	i int
}

func (w *walker) space() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// peek is the byte at the position, 0 at the end.
func (w *walker) peek() byte {
	if w.i < len(w.b) {
		return w.b[w.i]
	}
	return 0
}

// str reads a string without escapes at the position (its opening
// quote) and returns its contents: valid UTF-8, no control characters.
func (w *walker) str() ([]byte, bool) {
	start := w.i + 1
	high := false
	for j := start; j < len(w.b); j++ {
		switch c := w.b[j]; {
		case c == '"':
			w.i = j + 1
			s := w.b[start:j]
			return s, !high || utf8.Valid(s)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			high = true
		}
	}
	return nil, false
}

// number reads a number by the JSON grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (w *walker) number() ([]byte, bool) {
	start := w.i
	if w.peek() == '-' {
		w.i++
	}
	switch c := w.peek(); {
	case c == '0':
		w.i++
	case c >= '1' && c <= '9':
		w.digits()
	default:
		return nil, false
	}
	if w.peek() == '.' {
		w.i++
		if !w.digits() {
			return nil, false
		}
	}
	if c := w.peek(); c == 'e' || c == 'E' {
		w.i++
		if c := w.peek(); c == '+' || c == '-' {
			w.i++
		}
		if !w.digits() {
			return nil, false
		}
	}
	return w.b[start:w.i], true
}

// digits reads one or more decimal digits.
func (w *walker) digits() bool {
	start := w.i
	for w.i < len(w.b) && w.b[w.i] >= '0' && w.b[w.i] <= '9' {
		w.i++
	}
	return w.i > start
}

// literal reads the literal word at the position.
func (w *walker) literal(word string) bool {
	if len(w.b)-w.i < len(word) || string(w.b[w.i:w.i+len(word)]) != word {
		return false
	}
	w.i += len(word)
	return true
}

// walk reads one value against s; the position is at its first byte.
func (s *scanSchema) walk(w *walker) bool {
	switch c := w.peek(); c {
	case '{':
		return s.kinds&kindObject != 0 && s.enum == nil && s.walkObject(w)
	case '[':
		return s.kinds&kindArray != 0 && s.enum == nil && s.walkArray(w)
	case '"':
		v, ok := w.str()
		return ok && s.kinds&kindString != 0 && s.str(v)
	case 't', 'f':
		word := "true"
		if c == 'f' {
			word = "false"
		}
		return w.literal(word) && s.kinds&kindBoolean != 0 && s.enum == nil
	case 'n':
		return w.literal("null") && s.kinds&kindNull != 0 && s.enum == nil
	default:
		lit, ok := w.number()
		return ok && s.enum == nil && s.number(lit)
	}
}

func (s *scanSchema) walkObject(w *walker) bool {
	w.i++ // '{'
	w.space()
	var seen uint64
	if w.peek() != '}' {
		for {
			if w.peek() != '"' {
				return false
			}
			name, ok := w.str()
			if !ok {
				return false
			}
			k := s.index(name)
			if k < 0 || seen&(1<<k) != 0 {
				return false // a member the schema does not name, or a repeated one
			}
			seen |= 1 << k
			w.space()
			if w.peek() != ':' {
				return false
			}
			w.i++
			w.space()
			if !s.props[k].schema.walk(w) {
				return false
			}
			w.space()
			if w.peek() != ',' {
				break
			}
			w.i++
			w.space()
		}
		if w.peek() != '}' {
			return false
		}
	}
	w.i++ // '}'
	return seen&s.required == s.required
}

func (s *scanSchema) walkArray(w *walker) bool {
	if s.items == nil {
		return false
	}
	w.i++ // '['
	w.space()
	n := 0
	if w.peek() != ']' {
		for {
			n++
			if s.maxItems >= 0 && n > s.maxItems {
				return false
			}
			if !s.items.walk(w) {
				return false
			}
			w.space()
			if w.peek() != ',' {
				break
			}
			w.i++
			w.space()
		}
		if w.peek() != ']' {
			return false
		}
	}
	w.i++ // ']'
	return s.minItems < 0 || n >= s.minItems
}
