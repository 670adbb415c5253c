package jsonrpc

import (
	"errors"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

type idKind uint8

const (
	idNone idKind = iota
	idString
	idInt
)

// ID is a JSON-RPC request id. It keeps its JSON type: a string id and an
// integer id with the same digits are different ids, and each is echoed
// exactly as received. The zero ID means "no id" (a notification, or an
// error response to a request whose id could not be read). IDs are
// comparable and may be used as map keys.
type ID struct {
	kind idKind
	s    string
	n    int64
}

// StringID returns a string id. The empty string is a valid id.
func StringID(s string) ID { return ID{kind: idString, s: s} }

// IntID returns an integer id. Zero is a valid id.
func IntID(n int64) ID { return ID{kind: idInt, n: n} }

// IsValid reports whether the id is present.
func (id ID) IsValid() bool { return id.kind != idNone }

// IsString reports whether the id is a JSON string.
func (id ID) IsString() bool { return id.kind == idString }

// Str returns the id's string value; meaningful when IsString.
func (id ID) Str() string { return id.s }

// Int returns the id's integer value; meaningful for integer ids.
func (id ID) Int() int64 { return id.n }

// String renders the id as its JSON text, or "null" when absent.
func (id ID) String() string { return string(id.AppendJSON(nil)) }

// AppendJSON appends the id's JSON text to dst.
func (id ID) AppendJSON(dst []byte) []byte {
	switch id.kind {
	case idString:
		// Only invalid UTF-8 fails (ids decoded from JSON are valid; an id
		// built from arbitrary bytes may not be). The output is then still
		// valid JSON, each invalid byte replaced by U+FFFD: a lossy quote.
		out, _ := jsontext.AppendQuote(dst, id.s)
		return out
	case idInt:
		return strconv.AppendInt(dst, id.n, 10)
	default:
		return append(dst, "null"...)
	}
}

// MarshalJSON encodes the id.
func (id ID) MarshalJSON() ([]byte, error) { return id.AppendJSON(nil), nil }

// UnmarshalJSON decodes a string or integer id. null and other JSON types
// are errors.
func (id *ID) UnmarshalJSON(b []byte) error {
	v, err := parseID(jsontext.Value(b))
	if err != nil {
		return err
	}
	*id = v
	return nil
}

var errBadID = errors.New("id must be a string or an integer")

// parseID reads an id from its raw JSON. It accepts strings and integers
// that fit in int64 (written without fraction or exponent).
func parseID(raw jsontext.Value) (ID, error) {
	switch raw.Kind() {
	case '"':
		var s string
		if err := unquote(raw, &s); err != nil {
			return ID{}, err
		}
		return StringID(s), nil
	case '0':
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return ID{}, errBadID
		}
		return IntID(n), nil
	default:
		return ID{}, errBadID
	}
}
