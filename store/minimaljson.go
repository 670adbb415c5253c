package store

import "unicode/utf8"

// Limits of minimalValid: past them it answers false, and the caller
// checks the value the general way.
// They keep its frame small (under 200 bytes): a larger one grows the
// stack of the goroutine that settles a task, which costs more than the
// check.
const (
	minimalMaxDepth = 16        // nesting of objects and arrays
	minimalMaxNames = 32        // member names of the objects open at once
	minimalMaxLen   = 1<<16 - 1 // bytes (names' offsets are uint16)
)

// minimalValid reports whether v is one JSON value that jsontext's
// Value.IsValid accepts and that json.Marshal writes unchanged: no
// whitespace, in strings no escape but \" \\ \b \f \n \r \t and only
// valid UTF-8, no object with a name twice. It is a conservative check
// without the decoder's recursion (and the stack it grows): false means
// only that the caller must check v the general way.
func minimalValid(v []byte) bool {
	type open struct {
		obj   bool
		names uint8 // where this object's names start in names
	}
	if len(v) > minimalMaxLen {
		return false
	}
	var stack [minimalMaxDepth]open
	var names [minimalMaxNames][2]uint16 // offsets of the open objects' names
	depth, n, i := 0, 0, 0
	// name reads a member name and its colon at i, false for a duplicate
	// in the innermost object.
	name := func() bool {
		end, ok := minimalString(v, i)
		if !ok || end >= len(v) || v[end] != ':' || n == minimalMaxNames {
			return false
		}
		for _, o := range names[stack[depth-1].names:n] {
			if string(v[o[0]:o[1]]) == string(v[i:end]) {
				return false
			}
		}
		names[n] = [2]uint16{uint16(i), uint16(end)}
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
			if depth == minimalMaxDepth {
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
				return i == len(v)
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

// minimalScalar reads a string, literal or number at v[i]: the offset
// after it.
func minimalScalar(v []byte, i int) (int, bool) {
	switch v[i] {
	case '"':
		return minimalString(v, i)
	case 't', 'f', 'n':
		return minimalLiteral(v, i)
	}
	return minimalNumber(v, i)
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

// minimalLiteral reads true, false or null at v[i].
func minimalLiteral(v []byte, i int) (int, bool) {
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(v)-i >= len(lit) && string(v[i:i+len(lit)]) == lit {
			return i + len(lit), true
		}
	}
	return 0, false
}

// minimalNumber reads a JSON number at v[i].
func minimalNumber(v []byte, i int) (int, bool) {
	digits := func() bool {
		start := i
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(v) && v[i] == '-' {
		i++
	}
	if i < len(v) && v[i] == '0' {
		i++
	} else if !digits() {
		return 0, false
	}
	if i < len(v) && v[i] == '.' {
		i++
		if !digits() {
			return 0, false
		}
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		if !digits() {
			return 0, false
		}
	}
	return i, true
}
