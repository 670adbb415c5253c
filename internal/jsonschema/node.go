package jsonschema

import (
	"bytes"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// node is an inferred schema under construction. encode writes its keywords
// in a fixed order, so inference output is deterministic.
type node struct {
	ref              string
	typ              string
	title            string
	description      string
	format           string
	contentEncoding  string
	enum             []jsontext.Value
	dflt             jsontext.Value
	minimum          jsontext.Value
	exclusiveMinimum jsontext.Value
	maximum          jsontext.Value
	exclusiveMaximum jsontext.Value
	minLength        *uint64
	maxLength        *uint64
	pattern          string
	items            *node
	minItems         *uint64
	maxItems         *uint64
	object           bool // emit "properties" (even when empty)
	properties       []property
	required         []string
	closed           bool  // "additionalProperties": false
	additional       *node // "additionalProperties": schema
	propertyNames    *node
	defs             []*definition
}

type property struct {
	name   string
	schema *node
}

// definition is a recursive named type emitted under "$defs".
type definition struct {
	name   string
	schema *node
}

func uintPtr(n uint64) *uint64 { return &n }

// encode returns the compact JSON text of n.
func (n *node) encode() (jsontext.Value, error) {
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf)
	if err := n.write(enc); err != nil {
		return nil, err
	}
	return jsontext.Value(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

func (n *node) write(enc *jsontext.Encoder) error {
	w := nodeWriter{enc: enc}
	w.tok(jsontext.BeginObject)
	w.str("$ref", n.ref)
	w.str("type", n.typ)
	w.str("title", n.title)
	w.str("description", n.description)
	w.str("format", n.format)
	w.str("contentEncoding", n.contentEncoding)
	if n.enum != nil {
		w.name("enum")
		w.tok(jsontext.BeginArray)
		for _, v := range n.enum {
			w.val(v)
		}
		w.tok(jsontext.EndArray)
	}
	w.raw("default", n.dflt)
	w.raw("minimum", n.minimum)
	w.raw("exclusiveMinimum", n.exclusiveMinimum)
	w.raw("maximum", n.maximum)
	w.raw("exclusiveMaximum", n.exclusiveMaximum)
	w.uint("minLength", n.minLength)
	w.uint("maxLength", n.maxLength)
	w.str("pattern", n.pattern)
	w.sub("items", n.items)
	w.uint("minItems", n.minItems)
	w.uint("maxItems", n.maxItems)
	if n.object {
		w.name("properties")
		w.tok(jsontext.BeginObject)
		for _, p := range n.properties {
			w.sub(p.name, p.schema)
		}
		w.tok(jsontext.EndObject)
	}
	if len(n.required) > 0 {
		w.name("required")
		w.tok(jsontext.BeginArray)
		for _, r := range n.required {
			w.tok(jsontext.String(r))
		}
		w.tok(jsontext.EndArray)
	}
	if n.closed {
		w.name("additionalProperties")
		w.tok(jsontext.False)
	} else {
		w.sub("additionalProperties", n.additional)
	}
	w.sub("propertyNames", n.propertyNames)
	if len(n.defs) > 0 {
		w.name("$defs")
		w.tok(jsontext.BeginObject)
		for _, d := range n.defs {
			w.sub(d.name, d.schema)
		}
		w.tok(jsontext.EndObject)
	}
	w.tok(jsontext.EndObject)
	return w.err
}

// nodeWriter remembers the first encoding error so write stays linear.
type nodeWriter struct {
	enc *jsontext.Encoder
	err error
}

func (w *nodeWriter) tok(t jsontext.Token) {
	if w.err == nil {
		w.err = w.enc.WriteToken(t)
	}
}

func (w *nodeWriter) val(v jsontext.Value) {
	if w.err == nil {
		w.err = w.enc.WriteValue(v)
	}
}

func (w *nodeWriter) name(k string) { w.tok(jsontext.String(k)) }

func (w *nodeWriter) str(k, v string) {
	if v != "" {
		w.name(k)
		w.tok(jsontext.String(v))
	}
}

func (w *nodeWriter) raw(k string, v jsontext.Value) {
	if v != nil {
		w.name(k)
		w.val(v)
	}
}

func (w *nodeWriter) uint(k string, v *uint64) {
	if v != nil {
		w.name(k)
		w.val(jsontext.Value(strconv.FormatUint(*v, 10)))
	}
}

func (w *nodeWriter) sub(k string, n *node) {
	if n == nil || w.err != nil {
		return
	}
	w.name(k)
	w.err = n.write(w.enc)
}
