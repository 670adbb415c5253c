package jsonschema

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// scanSchema is the part of a schema that one token scan of an instance
// can decide: JSON types (one or several), properties, required members
// and additionalProperties true or false; items, minItems, maxItems;
// minLength, maxLength, pattern and an enum of strings; minimum, maximum
// and the exclusive bounds. Annotations are ignored, as the validator
// ignores them. It is built once, at compile time, for a schema that uses
// nothing else; tool schemas, inferred or written by hand, mostly do.
//
// The scan only ever answers "certainly valid" or "not known". Not known
// sends the instance to the full validator, which also writes the error
// message, so the scan can never change a result: whatever it cannot
// decide exactly (strings with escapes, numbers with more than 15
// significant digits, integers written as 1.0, containers where the
// schema says nothing) is left to the validator.
type scanSchema struct {
	kinds uint8 // allowed JSON kinds (kindString…); all when "type" is absent

	// strings
	minLen, maxLen int // -1: none
	pattern        *regexp.Regexp
	enum           [][]byte // the allowed strings; nil: no enum
	// numbers
	min, max     float64
	minOp, maxOp byte // 0 none, '=' inclusive, '<' exclusive
	// objects
	props    []scanProp
	required uint64 // bit i: props[i] is required
	closed   bool   // additionalProperties false
	// arrays
	items              *scanSchema // nil: no items schema
	minItems, maxItems int         // -1: none
}

type scanProp struct {
	name   []byte
	schema *scanSchema
}

// JSON kinds, as bits of scanSchema.kinds. An integer-valued literal is
// both kindInteger and kindNumber.
const (
	kindString uint8 = 1 << iota
	kindNumber
	kindInteger
	kindBoolean
	kindNull
	kindObject
	kindArray
	kindAll = kindString | kindNumber | kindInteger | kindBoolean | kindNull | kindObject | kindArray
)

// annotationKeywords are keywords that never make an instance invalid
// ("format" included: it is registered as an annotation in every
// dialect, see assertedFormats).
var annotationKeywords = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "format": true,
	"$comment": true,
}

// scannable returns the scan form of a decoded schema document, or nil
// when it uses a keyword or a shape the scan does not decide. Only the
// default dialect (2020-12) is scanned.
func scannable(doc any) *scanSchema {
	root, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	if v, ok := root["$schema"]; ok {
		s, _ := v.(string)
		if s != "https://json-schema.org/draft/2020-12/schema" && s != "http://json-schema.org/draft/2020-12/schema" {
			return nil
		}
	}
	return scanOf(root, 0)
}

func scanOf(v any, depth int) *scanSchema {
	m, ok := v.(map[string]any)
	if !ok || depth > MaxSchemaDepth {
		return nil
	}
	s := &scanSchema{kinds: kindAll, minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}
	var props map[string]any
	var required []any
	for k, v := range m {
		switch k {
		case "$schema":
			if depth > 0 {
				return nil
			}
		case "type":
			if s.kinds = kindsOf(v); s.kinds == 0 {
				return nil
			}
		case "properties":
			if props, ok = v.(map[string]any); !ok {
				return nil
			}
		case "required":
			if required, ok = v.([]any); !ok {
				return nil
			}
		case "additionalProperties":
			switch v {
			case false:
				s.closed = true
			case true:
			default:
				return nil
			}
		case "items":
			if s.items = scanOf(v, depth+1); s.items == nil {
				return nil
			}
		default:
			if !s.valueKeyword(k, v) {
				return nil
			}
		}
	}
	if !s.addMembers(props, required, depth) {
		return nil
	}
	return s
}

// valueKeyword reads one keyword of a scanned schema other than the
// structural ones: the bounds, pattern, enum and the annotations. It
// reports false for a keyword, or a value, the scan does not take.
func (s *scanSchema) valueKeyword(k string, v any) bool {
	switch k {
	case "minItems", "maxItems", "minLength", "maxLength":
		n, ok := count(v)
		if !ok {
			return false
		}
		switch k {
		case "minItems":
			s.minItems = n
		case "maxItems":
			s.maxItems = n
		case "minLength":
			s.minLen = n
		case "maxLength":
			s.maxLen = n
		}
	case "pattern":
		p, ok := v.(string)
		if !ok {
			return false
		}
		re, err := regexp.Compile(p) // the validator's engine too
		if err != nil {
			return false
		}
		s.pattern = re
	case "enum":
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return false
		}
		s.enum = make([][]byte, len(list))
		for i, e := range list {
			str, ok := e.(string)
			if !ok {
				return false
			}
			s.enum[i] = []byte(str)
		}
	case "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum":
		return s.bound(k, v)
	default:
		return annotationKeywords[k]
	}
	return true
}

// bound reads one of the numeric bounds; a schema with two lower (or two
// upper) bounds is left to the validator.
func (s *scanSchema) bound(k string, v any) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	f, ok := exactFloat(string(n))
	if !ok {
		return false
	}
	op := byte('=')
	if k == "exclusiveMinimum" || k == "exclusiveMaximum" {
		op = '<'
	}
	if k == "minimum" || k == "exclusiveMinimum" {
		if s.minOp != 0 {
			return false // both bounds: leave it to the validator
		}
		s.min, s.minOp = f, op
	} else {
		if s.maxOp != 0 {
			return false
		}
		s.max, s.maxOp = f, op
	}
	return true
}

// addMembers scans the properties of an object schema and marks the
// required ones; it reports false when the scan cannot take them.
func (s *scanSchema) addMembers(props map[string]any, required []any, depth int) bool {
	if len(props) > 64 {
		return false
	}
	for name, ps := range props {
		sub := scanOf(ps, depth+1)
		if sub == nil {
			return false
		}
		s.props = append(s.props, scanProp{name: []byte(name), schema: sub})
	}
	for _, r := range required {
		name, ok := r.(string)
		if !ok {
			return false
		}
		i := s.index([]byte(name))
		if i < 0 {
			return false // a required member without a schema: leave it to the validator
		}
		s.required |= 1 << i
	}
	return true
}

// kindsOf reads "type": one name or a list of names.
func kindsOf(v any) uint8 {
	one := func(v any) uint8 {
		switch v {
		case "string":
			return kindString
		case "number":
			return kindNumber | kindInteger
		case "integer":
			return kindInteger
		case "boolean":
			return kindBoolean
		case "null":
			return kindNull
		case "object":
			return kindObject
		case "array":
			return kindArray
		}
		return 0
	}
	if list, ok := v.([]any); ok {
		var k uint8
		for _, e := range list {
			x := one(e)
			if x == 0 {
				return 0
			}
			k |= x
		}
		return k
	}
	return one(v)
}

// count reads a non-negative integer keyword value.
func count(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 32)
	return int(i), err == nil && i >= 0
}

// exactFloat parses a JSON number whose float64 value orders exactly
// like the decimal it writes: at most 15 significant digits (so distinct
// decimals stay distinct and in order), no overflow, no subnormal.
func exactFloat(lit string) (float64, bool) {
	mant := lit
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		mant = lit[:i]
	}
	digits := 0
	lead := true
	trailingZeros := 0
	for i := 0; i < len(mant); i++ {
		c := mant[i]
		if c < '0' || c > '9' {
			continue
		}
		if lead && c == '0' {
			continue
		}
		lead = false
		digits++
		if c == '0' {
			trailingZeros++
		} else {
			trailingZeros = 0
		}
	}
	if digits-trailingZeros > 15 {
		return 0, false
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) || (f != 0 && math.Abs(f) < 1e-300) {
		return 0, false
	}
	return f, true
}

func (s *scanSchema) index(name []byte) int {
	for i := range s.props {
		if bytes.Equal(s.props[i].name, name) {
			return i
		}
	}
	return -1
}

// valid reports whether instance is certainly valid against s. False
// means "not known": the caller runs the full validator.
func (s *scanSchema) valid(instance []byte) bool {
	st := decodePool.Get().(*decodeState)
	defer func() {
		st.buf = bytes.Buffer{}
		st.dec.Reset(&st.buf)
		decodePool.Put(st)
	}()
	st.buf = *bytes.NewBuffer(instance)
	st.dec.Reset(&st.buf)
	if !s.value(&st.dec) {
		return false
	}
	_, err := st.dec.ReadToken()
	return err == io.EOF
}

// value scans one value against s.
func (s *scanSchema) value(d *jsontext.Decoder) bool {
	switch d.PeekKind() {
	case '{':
		return s.kinds&kindObject != 0 && s.enum == nil && s.object(d)
	case '[':
		return s.kinds&kindArray != 0 && s.enum == nil && s.array(d)
	}
	kind := d.PeekKind()
	v, err := d.ReadValue()
	if err != nil {
		return false
	}
	switch kind {
	case '"':
		return s.kinds&kindString != 0 && s.str(v[1:len(v)-1])
	case '0':
		return s.enum == nil && s.number(v)
	case 't', 'f':
		return s.kinds&kindBoolean != 0 && s.enum == nil
	case 'n':
		return s.kinds&kindNull != 0 && s.enum == nil
	}
	return false
}

func (s *scanSchema) str(b []byte) bool {
	if bytes.IndexByte(b, '\\') >= 0 {
		return false // escaped: the validator decides
	}
	if s.minLen >= 0 || s.maxLen >= 0 {
		n := utf8.RuneCount(b)
		if (s.minLen >= 0 && n < s.minLen) || (s.maxLen >= 0 && n > s.maxLen) {
			return false
		}
	}
	if s.pattern != nil && !s.pattern.Match(b) {
		return false
	}
	if s.enum != nil {
		for _, e := range s.enum {
			if bytes.Equal(e, b) {
				return true
			}
		}
		return false
	}
	return true
}

func (s *scanSchema) number(lit []byte) bool {
	integer := !bytes.ContainsAny(lit, ".eE")
	if s.kinds&kindNumber == 0 && !(integer && s.kinds&kindInteger != 0) {
		return false // 1.0 against "integer" included: the validator decides
	}
	if s.minOp == 0 && s.maxOp == 0 {
		return true
	}
	f, ok := exactFloat(string(lit))
	if !ok {
		return false
	}
	switch s.minOp {
	case '=':
		ok = f >= s.min
	case '<':
		ok = f > s.min
	}
	if !ok {
		return false
	}
	switch s.maxOp {
	case '=':
		ok = f <= s.max
	case '<':
		ok = f < s.max
	}
	return ok
}

func (s *scanSchema) object(d *jsontext.Decoder) bool {
	if _, err := d.ReadToken(); err != nil {
		return false
	}
	var seen uint64
	for d.PeekKind() == '"' {
		name, err := d.ReadValue()
		if err != nil || bytes.IndexByte(name, '\\') >= 0 {
			return false
		}
		i := s.index(name[1 : len(name)-1])
		if i < 0 {
			// Allowed if the object is open, but its value must be a
			// scalar: the scan does not follow what the schema leaves
			// free (nor check its depth).
			if k := d.PeekKind(); s.closed || k == '{' || k == '[' {
				return false
			}
			if _, err := d.ReadValue(); err != nil {
				return false
			}
			continue
		}
		if seen&(1<<i) != 0 {
			return false
		}
		seen |= 1 << i
		if !s.props[i].schema.value(d) {
			return false
		}
	}
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '}' {
		return false
	}
	return seen&s.required == s.required
}

func (s *scanSchema) array(d *jsontext.Decoder) bool {
	if _, err := d.ReadToken(); err != nil {
		return false
	}
	n := 0
	for d.PeekKind() != ']' {
		n++
		if s.maxItems >= 0 && n > s.maxItems {
			return false
		}
		if s.items != nil {
			if !s.items.value(d) {
				return false
			}
			continue
		}
		if k := d.PeekKind(); k == '{' || k == '[' || k == 0 {
			return false
		}
		if _, err := d.ReadValue(); err != nil {
			return false
		}
	}
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != ']' {
		return false
	}
	return s.minItems < 0 || n >= s.minItems
}
