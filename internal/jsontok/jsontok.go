package jsontok

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Decoder reads one in-memory JSON text. Get one with New, give it back
// with Release.
type Decoder struct {
	jsontext.Decoder
	buf  bytes.Buffer
	data []byte
}

var pool = sync.Pool{New: func() any { return new(Decoder) }}

// New returns a pooled decoder reading data with opts.
func New(data []byte, opts ...jsontext.Options) *Decoder {
	d := pool.Get().(*Decoder)
	d.data = data
	d.buf = *bytes.NewBuffer(data)
	d.Reset(&d.buf, opts...)
	return d
}

// Release returns d to the pool; it must not be used after.
func (d *Decoder) Release() {
	d.data = nil
	d.buf = bytes.Buffer{} // do not pin data
	d.Reset(&d.buf)
	pool.Put(d)
}

// Name reads an object member name and returns it unescaped. A name
// without escapes is a slice of the input: no allocation.
func (d *Decoder) Name() ([]byte, error) {
	quoted, err := d.ReadValue()
	if err != nil {
		return nil, err
	}
	name := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		return jsontext.AppendUnquote(nil, quoted)
	}
	return name, nil
}

// Raw reads the next value and returns it as a slice of the input (its
// capacity clipped), valid as long as the input is.
func (d *Decoder) Raw() (jsontext.Value, error) {
	v, err := d.ReadValue()
	if err != nil {
		return nil, err
	}
	end := int(d.InputOffset())
	return jsontext.Value(d.data[end-len(v) : end : end]), nil
}

// End reads the closing token of the top-level object or array and
// checks that nothing but whitespace follows it.
func (d *Decoder) End() error {
	if _, err := d.ReadToken(); err != nil {
		return err
	}
	if _, err := d.ReadToken(); err != io.EOF {
		if err == nil {
			err = errors.New("unexpected data after the top-level value")
		}
		return err
	}
	return nil
}

// WriteMembers writes the members of the JSON object obj (already
// checked, such as the output of json.Marshal) to enc, which must be
// inside an object: the caller writes the braces and may add members of
// its own around them.
func WriteMembers(enc *jsontext.Encoder, obj []byte) error {
	d := jsontext.NewDecoder(bytes.NewReader(obj))
	if _, err := d.ReadToken(); err != nil {
		return err
	}
	for d.PeekKind() != '}' {
		tok, err := d.ReadToken()
		if err != nil {
			return err
		}
		name := tok.Clone() // the next read reuses the token's buffer
		val, err := d.ReadValue()
		if err != nil {
			return err
		}
		if err := enc.WriteToken(name); err != nil {
			return err
		}
		if err := enc.WriteValue(val); err != nil {
			return err
		}
	}
	return nil
}

// Transcode puts v into the value result points to, through its JSON
// encoding (a *jsontext.Value gets the bytes themselves); nothing happens
// when result is nil or v itself. Interceptors that answer a call
// without the handler use it to fill the caller's result.
func Transcode(v, result any) error {
	if v == result || result == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if raw, ok := result.(*jsontext.Value); ok {
		*raw = b
		return nil
	}
	return json.Unmarshal(b, result)
}
