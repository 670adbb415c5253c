package server

import (
	"bytes"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// fastParse is parse for params that jsonrpc's decode has checked whole
// (well-formed, valid UTF-8, no duplicate names): with validity known,
// finding the members is a walk over the bytes, with none of the token
// decoder's bookkeeping. It reports false, leaving wp to be reset and
// parsed by parse, when the params hold anything it does not read the
// way parse does: a name or string value with escapes, a member of the
// wrong type (parse writes the error), inputResponses (decoded into
// their type). A fuzz test holds the two to the same result.
func (wp *wireParams) fastParse(raw []byte) bool {
	return walkObject(raw, func(key []byte, val jsontext.Value) bool {
		switch string(key) {
		case "_meta":
			return wp.fastMeta(val)
		case "cursor":
			if val[0] == 'n' {
				wp.Cursor = nil
				return true
			}
			var c string
			if val[0] != '"' || !stringMember(val, &c) {
				return false
			}
			wp.Cursor = &c
		case "inputResponses":
			return false
		default:
			if _, str := wp.stringField(key); str != nil {
				return stringMember(val, str)
			}
			if dst := wp.rawField(key); dst != nil {
				*dst = val
			}
		}
		return true
	})
}

// fastMeta reads _meta as parseMeta does.
func (wp *wireParams) fastMeta(val []byte) bool {
	switch val[0] {
	case 'n':
		wp.Meta = nil
		return true
	case '{':
	default:
		return false // parse writes the error
	}
	var m mcp.Meta
	ok := walkObject(val, func(key []byte, v jsontext.Value) bool {
		name := knownMetaName(key)
		if dst := envelopeMember(&wp.env, name); dst != nil {
			*dst = v
			return true
		}
		if m == nil {
			m = make(mcp.Meta, 2)
		}
		m[name] = v
		return true
	})
	wp.Meta = m
	return ok
}

// walkObject calls member for each member of the object b holds (valid
// JSON), with its name and its raw value (a slice of b); false when b is
// no object, a name has an escape, or member says so.
func walkObject(b []byte, member func(key []byte, val jsontext.Value) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i++
	for {
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			return true
		}
		key, next, ok := plainString(b, i)
		if !ok {
			return false
		}
		i = skipSpace(b, next)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		end := skipValue(b, i)
		if end < 0 || !member(key, jsontext.Value(b[i:end:end])) {
			return false
		}
		i = end
	}
}

// knownMetaName is a _meta name as a string: a reserved key (metaKeys)
// as its constant, found by a switch rather than a comparison with each.
func knownMetaName(b []byte) string {
	switch string(b) {
	case mcp.MetaKeyProgressToken:
		return mcp.MetaKeyProgressToken
	case mcp.MetaKeyProtocolVersion:
		return mcp.MetaKeyProtocolVersion
	case mcp.MetaKeyClientCapabilities:
		return mcp.MetaKeyClientCapabilities
	case mcp.MetaKeyClientInfo:
		return mcp.MetaKeyClientInfo
	case mcp.MetaKeyLogLevel:
		return mcp.MetaKeyLogLevel
	case mcp.MetaKeyServerInfo:
		return mcp.MetaKeyServerInfo
	case mcp.MetaKeySubscriptionID:
		return mcp.MetaKeySubscriptionID
	case mcp.MetaKeyRelatedTask:
		return mcp.MetaKeyRelatedTask
	case mcp.MetaKeyModelImmediateResponse:
		return mcp.MetaKeyModelImmediateResponse
	case mcp.MetaKeyTraceParent:
		return mcp.MetaKeyTraceParent
	case mcp.MetaKeyTraceState:
		return mcp.MetaKeyTraceState
	case mcp.MetaKeyBaggage:
		return mcp.MetaKeyBaggage
	}
	return string(b)
}

// stringMember sets *dst from a string value without escapes, or to ""
// for null (readString); false for anything else.
func stringMember(val []byte, dst *string) bool {
	if val[0] == 'n' {
		*dst = ""
		return true
	}
	s, end, ok := plainString(val, 0)
	if !ok || end != len(val) {
		return false
	}
	*dst = string(s)
	return true
}

// plainString returns the contents of the string starting at b[i] and
// the index after it; false when b[i] starts no string or the string
// has an escape.
func plainString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	rest := b[i+1:]
	j := bytes.IndexByte(rest, '"')
	if j < 0 || bytes.IndexByte(rest[:j], '\\') >= 0 {
		return nil, 0, false
	}
	return rest[:j], i + 1 + j + 1, true
}

// skipValue returns the index just after the value starting at b[i] (of
// valid JSON), or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				if i < 0 {
					return -1
				}
				i--
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	for j := i; j < len(b); j++ { // a number or a literal
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
	}
	return len(b)
}

// skipString returns the index just after the string starting at b[i].
func skipString(b []byte, i int) int {
	for j := i + 1; ; j++ {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		n := 0 // the backslashes before it: an odd run escapes it
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}
