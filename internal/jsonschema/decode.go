package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// decodeState is a pooled decoder reading from an in-memory buffer.
type decodeState struct {
	buf   bytes.Buffer
	dec   jsontext.Decoder
	names [64]string // lossy cache of object member names, to save allocations
}

var decodePool = sync.Pool{New: func() any { return new(decodeState) }}

// decodeInstance decodes an instance for validation.
func decodeInstance(instance jsontext.Value) (any, error) {
	v, err := decode(instance, MaxInstanceDepth, 0)
	if err != nil {
		return nil, fmt.Errorf("invalid instance: %w", err)
	}
	return v, nil
}

// decode decodes one JSON value into the shapes the validator expects:
// map[string]any, []any, string, bool, nil and, for numbers, json.Number,
// which keeps every digit. It rejects invalid UTF-8, duplicate object
// names, nesting deeper than maxDepth and (when maxNodes > 0) more than
// maxNodes objects and arrays.
func decode(b []byte, maxDepth, maxNodes int) (any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("empty JSON")
	}
	st := decodePool.Get().(*decodeState)
	defer func() {
		st.buf = bytes.Buffer{} // do not pin b: neither here nor in dec
		st.dec.Reset(&st.buf)
		decodePool.Put(st)
	}()
	st.buf = *bytes.NewBuffer(b)
	st.dec.Reset(&st.buf)
	d := valueDecoder{dec: &st.dec, names: &st.names, maxDepth: maxDepth, maxNodes: maxNodes}
	v, err := d.value(0)
	if err == nil {
		if _, err = st.dec.ReadToken(); err == io.EOF {
			return v, nil
		}
		if err == nil {
			err = errors.New("unexpected data after the top-level value")
		}
	}
	return nil, err
}

type valueDecoder struct {
	dec      *jsontext.Decoder
	names    *[64]string
	maxDepth int
	maxNodes int
	nodes    int
}

func (d *valueDecoder) value(depth int) (any, error) {
	tok, err := d.dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 't', 'f':
		return tok.Bool(), nil
	case '"':
		return tok.String(), nil
	case '0':
		return json.Number(tok.String()), nil
	case '{', '[':
		if depth++; depth > d.maxDepth {
			return nil, fmt.Errorf("nesting deeper than %d levels", d.maxDepth)
		}
		if d.nodes++; d.maxNodes > 0 && d.nodes > d.maxNodes {
			return nil, fmt.Errorf("more than %d objects and arrays", d.maxNodes)
		}
		if tok.Kind() == '[' {
			return d.array(depth)
		}
		return d.object(depth)
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

func (d *valueDecoder) object(depth int) (any, error) {
	m := map[string]any{}
	for d.dec.PeekKind() != '}' {
		name, err := d.name()
		if err != nil {
			return nil, err
		}
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		m[name] = v
	}
	_, err := d.dec.ReadToken()
	return m, err
}

func (d *valueDecoder) array(depth int) (any, error) {
	a := []any{}
	for d.dec.PeekKind() != ']' {
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
	}
	_, err := d.dec.ReadToken()
	return a, err
}

// name reads an object member name, reusing a cached string when the same
// name was seen recently (tool arguments repeat the same few names).
func (d *valueDecoder) name() (string, error) {
	raw, err := d.dec.ReadValue()
	if err != nil {
		return "", err
	}
	b := raw[1 : len(raw)-1]
	if bytes.IndexByte(b, '\\') >= 0 {
		u, err := jsontext.AppendUnquote(nil, raw)
		return string(u), err
	}
	h := uint32(2166136261) // FNV-1a
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	slot := &d.names[h%uint32(len(d.names))]
	if *slot != string(b) {
		*slot = string(b)
	}
	return *slot, nil
}
