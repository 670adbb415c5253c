package server

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonwalk"

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
	w := jsonwalk.Walker{B: b}
	w.Space()
	if w.Peek() != '{' {
		return false
	}
	if w.Open('}') {
		return true
	}
	for more := true; more; {
		key, ok := w.Plain()
		if !ok || !w.Colon() {
			return false
		}
		start := w.I
		if !w.Skip() || !member(key, jsontext.Value(b[start:w.I:w.I])) {
			return false
		}
		if more, ok = w.Next('}'); !ok {
			return false
		}
	}
	return true
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
	w := jsonwalk.Walker{B: val}
	str, ok := w.Plain()
	if !ok || w.I != len(val) {
		return false
	}
	*dst = string(str)
	return true
}
