package jsonwalk

import (
	"math"
	"unicode/utf8"
)

// Limits of Minimal: past them it answers false, and the caller checks
// the value the general way. They keep its frame small (under 200
// bytes): the fast paths that call it run on goroutines whose stacks a
// larger frame would grow, which costs more than the check.
const (
	MinimalMaxDepth = 16 // nesting of objects and arrays
	MinimalMaxNames = 32 // member names of the objects open at once
)

// Minimal reports whether v is one JSON value that jsontext's
// Value.IsValid accepts and that json.Marshal writes unchanged (a
// jsontext.Value in its minimal form): no whitespace, in strings no
// escape but \" \\ \b \f \n \r \t and only valid UTF-8, no object with
// a name twice. It is a conservative check without recursion: false
// means only that the caller must check v the general way.
func Minimal(v []byte) bool {
	w := Walker{B: v}
	return w.Minimal() && w.I == len(v)
}

// Minimal reads one value in the form Minimal accepts at the position
// and reports whether it did; the position is then after it. The value's
// depth counts from the position: a caller inside a larger document
// stays within the decoder's own limit as long as that document is not
// nested deeper than MinimalMaxDepth below it.
func (w *Walker) Minimal() bool {
	type open struct {
		obj   bool
		names uint8 // where this object's names start in names
	}
	v, start := w.B, w.I
	if uint64(len(v)) > math.MaxUint32 { // names holds offsets into v
		return false
	}
	var stack [MinimalMaxDepth]open
	var names [MinimalMaxNames]uint32 // offsets of the open objects' names
	depth, n, i := 0, 0, start
	// name reads a member name and its colon at i, false for a duplicate
	// in the innermost object. Two names are the same literal when their
	// bytes agree over the new one's length: the same bytes end a string
	// at the same quote.
	name := func() bool {
		end, ok := minimalString(v, i)
		if !ok || end >= len(v) || v[end] != ':' || n == MinimalMaxNames {
			return false
		}
		lit := v[i:end]
		for _, o := range names[stack[depth-1].names:n] {
			if string(v[o:int(o)+len(lit)]) == string(lit) {
				return false
			}
		}
		names[n] = uint32(i)
		n++
		i = end + 1
		return true
	}
	for {
		// A value at i.
		if i >= len(v) {
			return false
		}
		switch c := v[i]; {
		case c == '{' || c == '[':
			if depth == MinimalMaxDepth {
				return false
			}
			stack[depth] = open{obj: c == '{', names: uint8(n)}
			depth++
			i++
			if i < len(v) && (v[i] == '}' || v[i] == ']') {
				break // closed below
			}
			if c == '{' && !name() {
				return false
			}
			continue
		default:
			end, ok := minimalScalar(v, i)
			if !ok {
				return false
			}
			i = end
		}
		// After a value: a comma, or the end of containers.
		for {
			if depth == 0 {
				w.I = i
				return true
			}
			if i >= len(v) {
				return false
			}
			top := stack[depth-1]
			if c := v[i]; (c == '}' && top.obj) || (c == ']' && !top.obj) {
				depth--
				n = int(top.names)
				i++
				continue
			}
			if v[i] != ',' {
				return false
			}
			i++
			if top.obj && !name() {
				return false
			}
			break
		}
	}
}

// minimalScalar reads a string in minimal form, a literal or a number
// at v[i]: the offset after it.
func minimalScalar(v []byte, i int) (int, bool) {
	if v[i] == '"' {
		return minimalString(v, i)
	}
	s := Walker{B: v, I: i}
	if !s.Literal() {
		if _, ok := s.Number(); !ok {
			return 0, false
		}
	}
	return s.I, true
}

// minimalString reads a string in minimal form at v[i] (a quote): the
// offset after it.
func minimalString(v []byte, i int) (int, bool) {
	if i >= len(v) || v[i] != '"' {
		return 0, false
	}
	start, ascii := i+1, true
	for i++; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			return i + 1, ascii || utf8.Valid(v[start:i])
		case c == '\\':
			i++
			if i == len(v) {
				return 0, false
			}
			switch v[i] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
			default:
				return 0, false
			}
		case c < 0x20:
			return 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return 0, false
}
