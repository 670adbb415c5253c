package mcp

import (
	"errors"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// ID is a JSON string-or-integer identifier: a JSON-RPC request id, the
// requestId of CancelledParams, a progress token or a subscription id.
// It keeps its JSON type — the string "1" and the integer 1 are different
// ids — and is written back exactly as read. The zero ID is absent.
// IDs are comparable and may be map keys.
type ID struct {
	str   string
	num   int64
	isStr bool
	valid bool
}

// StringID returns an ID that encodes as a JSON string. "" is valid.
func StringID(s string) ID { return ID{str: s, isStr: true, valid: true} }

// IntID returns an ID that encodes as a JSON integer. 0 is valid.
func IntID(n int64) ID { return ID{num: n, valid: true} }

// IsValid reports whether the ID is present.
func (id ID) IsValid() bool { return id.valid }

// IsZero reports whether the ID is absent; omitzero fields use it.
func (id ID) IsZero() bool { return !id.valid }

// IsString reports whether the ID is a JSON string.
func (id ID) IsString() bool { return id.isStr }

// Str returns the value of a string ID ("" otherwise).
func (id ID) Str() string { return id.str }

// Int returns the value of an integer ID and whether the ID is one.
func (id ID) Int() (int64, bool) { return id.num, id.valid && !id.isStr }

// Value returns the ID as a string, an int64, or nil if absent.
func (id ID) Value() any {
	switch {
	case !id.valid:
		return nil
	case id.isStr:
		return id.str
	}
	return id.num
}

// String returns the ID's JSON text ("null" when absent): "\"a\"" for the
// string a, "1" for the integer 1, so that the two stay distinguishable
// in logs and messages.
func (id ID) String() string { return string(id.AppendJSON(nil)) }

// AppendJSON appends the ID's JSON text to dst.
func (id ID) AppendJSON(dst []byte) []byte {
	switch {
	case !id.valid:
		return append(dst, "null"...)
	case id.isStr:
		// Invalid UTF-8 (only possible for ids built in Go) is replaced
		// with U+FFFD, keeping the output valid JSON.
		out, _ := jsontext.AppendQuote(dst, id.str)
		return out
	}
	return strconv.AppendInt(dst, id.num, 10)
}

// MarshalJSON encodes the ID (absent: null).
func (id ID) MarshalJSON() ([]byte, error) { return id.AppendJSON(nil), nil }

// MarshalJSONTo encodes the ID (absent: null).
func (id ID) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(id.AppendJSON(nil))
}

// UnmarshalJSONFrom reads a JSON string or integer; null yields the zero
// ID; other values are errors.
func (id *ID) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	if raw.Kind() == 'n' {
		*id = ID{}
		return nil
	}
	v, err := ParseID(raw)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

var errBadID = errors.New("mcp: an id must be a string or an integer")

// ParseID reads an ID from its JSON text: a string, or an integer that
// fits in 64 bits written without fraction or exponent. null and every
// other value are errors.
func ParseID(raw jsontext.Value) (ID, error) {
	switch raw.Kind() {
	case '"':
		var s string
		if err := jsonUnquote(raw, &s); err != nil {
			return ID{}, err
		}
		return StringID(s), nil
	case '0':
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return ID{}, errBadID
		}
		return IntID(n), nil
	}
	return ID{}, errBadID
}

func jsonUnquote(raw jsontext.Value, dst *string) error {
	s, err := jsontext.AppendUnquote(nil, raw)
	if err != nil {
		return err
	}
	*dst = string(s)
	return nil
}
