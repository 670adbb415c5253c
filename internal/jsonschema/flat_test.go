package jsonschema

import (
	"fmt"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func TestTypeOnly(t *testing.T) {
	type echo struct {
		Text string `json:"text"`
	}
	type scalars struct {
		S string  `json:"s" jsonschema:"description=a string, with a comma"`
		B bool    `json:"b,omitzero"`
		F float64 `json:"f"`
		I int     `json:"i,omitzero"`
		P *string `json:"p,omitzero"`
	}
	type tagged struct {
		N int `json:"n" jsonschema:"minimum=1"`
	}
	type enum struct {
		K string `json:"k" jsonschema:"enum=a|b"`
	}
	type pattern struct {
		C string `json:"c" jsonschema:"pattern=^[A-Z]+$"`
	}
	type unsigned struct {
		U uint `json:"u"`
	}
	type nested struct {
		E echo `json:"e"`
	}
	infer := func(f func() (jsontext.Value, error)) string {
		v, err := f()
		if err != nil {
			t.Fatal(err)
		}
		return string(v)
	}
	for _, c := range []struct {
		schema string
		want   bool
	}{
		{infer(For[echo]), true},
		{infer(For[scalars]), true},
		{infer(For[tagged]), false},
		{infer(For[enum]), false},
		{infer(For[pattern]), false},
		{infer(For[unsigned]), false}, // minimum 0
		{infer(For[nested]), false},
		{infer(For[map[string]string]), false},
		{`{"type":"object","additionalProperties":false}`, true},
		{`{"type":"object"}`, false},
		{`{"type":"object","additionalProperties":false,"properties":{"a":{"type":["string","null"]}}}`, false},
		{`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","const":"x"}}}`, false},
		{`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","maxLength":3}}}`, false},
		{`{"type":"object","additionalProperties":false,"properties":{"a":true}}`, false},
		{`{"type":"object","additionalProperties":false,"required":["zz"]}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false}`, false},
		{`{"type":"object","additionalProperties":false,"minProperties":1}`, false},
	} {
		s, err := Compile(jsontext.Value(c.schema))
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		if got := s.TypeOnly(); got != c.want {
			t.Errorf("TypeOnly(%s) = %v, want %v", c.schema, got, c.want)
		}
	}
}

// TestTypeOnlySameResults checks that the shortcut never changes a result:
// every instance gets the same answer and error text with and without it.
func TestTypeOnlySameResults(t *testing.T) {
	schemas := []string{
		`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`,
		`{"type":"object","properties":{"s":{"type":"string","description":"d"},"b":{"type":"boolean"},"f":{"type":"number"},"i":{"type":"integer","title":"t"}},"required":["s","f"],"additionalProperties":false}`,
		`{"type":"object","additionalProperties":false}`,
	}
	instances := []string{
		`{}`, ` { } `, `{"text":"hi"}`, `{"text":"hi","x":1}`, `{"text":1}`, `{"text":null}`,
		`{"text":true}`, `{"text":["a"]}`, `{"text":{}}`, `{"te\u0078t":"hi"}`, `{"text":"a","text":"b"}`,
		`{"text":"\u00e9\ud83d\ude00"}`, "{\"text\":\"\xff\"}", `{"text":"hi"} x`, `{"text":"hi"}{}`, `[]`, `"s"`, `null`, ``,
		`{"text":"hi"`, `{"s":"a","f":1}`, `{"s":"a","f":1.5,"b":false,"i":3}`, `{"s":"a","f":1,"i":3.0}`,
		`{"s":"a","f":1,"i":1e2}`, `{"s":"a","f":1,"i":-0}`, `{"s":"a","f":1e400}`, `{"s":"a","f":"1"}`,
		`{"s":"a","b":"true","f":1}`, `{"s":"a","f":1,"i":null}`, `{"f":1}`, `{"s":"a"}`, `{"s":"a","f":1,"z":0}`,
		`{"s":"a","f":01}`, `{"s":"a","f":NaN}`,
	}
	for _, sc := range schemas {
		fast, err := Compile(jsontext.Value(sc))
		if err != nil {
			t.Fatal(err)
		}
		if !fast.TypeOnly() {
			t.Fatalf("%s: not type-only", sc)
		}
		slow := &Schema{s: fast.s}
		for _, in := range instances {
			got, want := fmt.Sprint(fast.Validate(jsontext.Value(in))), fmt.Sprint(slow.Validate(jsontext.Value(in)))
			if got != want {
				t.Errorf("schema %s, instance %q: shortcut %q, validator %q", sc, in, got, want)
			}
		}
	}
}

func BenchmarkValidateTypeOnly(b *testing.B) {
	s, err := Compile(jsontext.Value(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`))
	if err != nil {
		b.Fatal(err)
	}
	in := jsontext.Value(`{"text":"hello, world"}`)
	b.Run("shortcut", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.Validate(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	slow := &Schema{s: s.s}
	b.Run("validator", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := slow.Validate(in); err != nil {
				b.Fatal(err)
			}
		}
	})
}
