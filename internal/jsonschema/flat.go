package jsonschema

import (
	"bytes"
	"io"
)

// flatSchema is the shape of a "type-only" schema: an object with
// additionalProperties false whose properties are scalars constrained by
// their type alone, some of them required. It is what inference produces
// for a struct of strings, booleans and numbers without jsonschema tags
// that assert anything. For such a schema a single token scan of the
// instance decides validity, without building a generic value.
type flatSchema struct {
	props    []flatProp
	required uint64 // bit i: props[i] is required
}

type flatProp struct {
	name []byte
	kind byte // '"' string, 'b' boolean, 'n' number, 'i' integer
}

// annotationKeywords are keywords that never make an instance invalid.
var annotationKeywords = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "format": true,
	"$comment": true,
}

// flatten returns the flat form of a decoded schema document, or nil when
// the document carries any keyword beyond types, required and
// additionalProperties:false (plus annotations), or uses another shape.
func flatten(doc any) *flatSchema {
	root, ok := doc.(map[string]any)
	if !ok || root["type"] != "object" || root["additionalProperties"] != false {
		return nil
	}
	var props map[string]any
	var required []any
	for k, v := range root {
		switch k {
		case "type", "additionalProperties":
		case "properties":
			if props, ok = v.(map[string]any); !ok {
				return nil
			}
		case "required":
			if required, ok = v.([]any); !ok {
				return nil
			}
		default:
			if !annotationKeywords[k] || k == "default" || k == "format" {
				return nil
			}
		}
	}
	if len(props) > 64 {
		return nil
	}
	f := &flatSchema{}
	for name, ps := range props {
		p, ok := ps.(map[string]any)
		if !ok {
			return nil
		}
		fp := flatProp{name: []byte(name)}
		for k, v := range p {
			if k == "type" {
				switch v {
				case "string":
					fp.kind = '"'
				case "boolean":
					fp.kind = 'b'
				case "number":
					fp.kind = 'n'
				case "integer":
					fp.kind = 'i'
				default:
					return nil
				}
			} else if !annotationKeywords[k] {
				return nil
			}
		}
		if fp.kind == 0 {
			return nil
		}
		f.props = append(f.props, fp)
	}
	for _, r := range required {
		name, ok := r.(string)
		if !ok {
			return nil
		}
		i := f.index([]byte(name))
		if i < 0 {
			return nil // a required member that may not appear: leave it to the validator
		}
		f.required |= 1 << i
	}
	return f
}

func (f *flatSchema) index(name []byte) int {
	for i := range f.props {
		if bytes.Equal(f.props[i].name, name) {
			return i
		}
	}
	return -1
}

// valid reports whether instance is certainly valid against f. False
// means "not known": the caller runs the full validator, which also
// produces the error message, so results never differ.
func (f *flatSchema) valid(instance []byte) bool {
	st := decodePool.Get().(*decodeState)
	defer func() {
		st.buf = bytes.Buffer{}
		st.dec.Reset(&st.buf)
		decodePool.Put(st)
	}()
	st.buf = *bytes.NewBuffer(instance)
	st.dec.Reset(&st.buf)
	d := &st.dec
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	var seen uint64
	for d.PeekKind() == '"' {
		name, err := d.ReadValue()
		if err != nil || len(name) < 2 || bytes.IndexByte(name, '\\') >= 0 {
			return false
		}
		i := f.index(name[1 : len(name)-1])
		if i < 0 || seen&(1<<i) != 0 {
			return false
		}
		seen |= 1 << i
		kind := d.PeekKind()
		v, err := d.ReadValue()
		if err != nil {
			return false
		}
		switch f.props[i].kind {
		case '"':
			if kind != '"' {
				return false
			}
		case 'b':
			if kind != 't' && kind != 'f' {
				return false
			}
		case 'n':
			if kind != '0' {
				return false
			}
		case 'i':
			if kind != '0' || bytes.ContainsAny(v, ".eE") {
				return false
			}
		}
	}
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '}' {
		return false
	}
	if _, err := d.ReadToken(); err != io.EOF {
		return false
	}
	return seen&f.required == f.required
}
