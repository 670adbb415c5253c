package jsonschema

import "github.com/mcpkit/mcpkit/internal/jsonwalk"

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
	w := jsonwalk.Walker{B: instance}
	w.Space()
	return s.walk(&w) && w.End()
}

// walk reads one value against s; the position is at its first byte.
func (s *scanSchema) walk(w *jsonwalk.Walker) bool {
	switch w.Peek() {
	case '{':
		return s.kinds&kindObject != 0 && s.enum == nil && s.walkObject(w)
	case '[':
		return s.kinds&kindArray != 0 && s.enum == nil && s.walkArray(w)
	case '"':
		v, ok := w.Plain()
		return ok && s.kinds&kindString != 0 && s.str(v)
	case 't', 'f':
		return w.Literal() && s.kinds&kindBoolean != 0 && s.enum == nil
	case 'n':
		return w.Literal() && s.kinds&kindNull != 0 && s.enum == nil
	default:
		lit, ok := w.Number()
		return ok && s.enum == nil && s.number(lit)
	}
}

func (s *scanSchema) walkObject(w *jsonwalk.Walker) bool {
	var seen uint64
	if !w.Open('}') {
		for more := true; more; {
			name, ok := w.Plain()
			if !ok {
				return false
			}
			k := s.index(name)
			if k < 0 || seen&(1<<k) != 0 {
				return false // a member the schema does not name, or a repeated one
			}
			seen |= 1 << k
			if !w.Colon() || !s.props[k].schema.walk(w) {
				return false
			}
			if more, ok = w.Next('}'); !ok {
				return false
			}
		}
	}
	return seen&s.required == s.required
}

func (s *scanSchema) walkArray(w *jsonwalk.Walker) bool {
	if s.items == nil {
		return false
	}
	n := 0
	if !w.Open(']') {
		for more := true; more; {
			n++
			if s.maxItems >= 0 && n > s.maxItems {
				return false
			}
			var ok bool
			if !s.items.walk(w) {
				return false
			}
			if more, ok = w.Next(']'); !ok {
				return false
			}
		}
	}
	return s.minItems < 0 || n >= s.minItems
}
