package jsonschema

import (
	"fmt"

	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func TestScannable(t *testing.T) {
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
		E    echo     `json:"e"`
		Tags []string `json:"tags"`
	}
	infer := func(f func() (jsontext.Value, error)) string {
		v, err := f()
		if err != nil {
			t.Fatal(err)
		}
		return string(v)
	}
	const obj = `{"type":"object","additionalProperties":false,"properties":{"a":%s}}`
	for _, c := range []struct {
		schema string
		want   bool
	}{
		{infer(For[echo]), true},
		{infer(For[scalars]), true},
		{infer(For[tagged]), true},
		{infer(For[enum]), true},
		{infer(For[pattern]), true},
		{infer(For[unsigned]), true},
		{infer(For[nested]), true},
		{infer(For[map[string]string]), false}, // additionalProperties is a schema
		{`{"type":"object","additionalProperties":false}`, true},
		{`{"type":"object"}`, true},
		{fmt.Sprintf(obj, `{"type":["string","null"]}`), true},
		{fmt.Sprintf(obj, `{"type":"string","maxLength":3,"minLength":1}`), true},
		{fmt.Sprintf(obj, `{"type":"array","items":{"type":"integer","minimum":0,"exclusiveMaximum":10},"minItems":1,"maxItems":3}`), true},
		{fmt.Sprintf(obj, `{"type":"string","const":"x"}`), false},
		{fmt.Sprintf(obj, `{"type":"integer","minimum":0,"exclusiveMinimum":0}`), false},
		{fmt.Sprintf(obj, `{"type":"number","minimum":0.1234567890123456}`), false}, // 16 digits
		{fmt.Sprintf(obj, `{"type":"number","multipleOf":2}`), false},
		{fmt.Sprintf(obj, `{"enum":["a",1]}`), false},
		{fmt.Sprintf(obj, `{"type":"array","uniqueItems":true}`), false},
		{fmt.Sprintf(obj, `{"type":"array","items":true}`), false},
		{fmt.Sprintf(obj, `{"anyOf":[{"type":"string"}]}`), false},
		{`{"$defs":{"x":{"type":"string"}},"type":"object","properties":{"a":{"$ref":"#/$defs/x"}}}`, false},
		{fmt.Sprintf(obj, `true`), false},
		{`{"type":"object","additionalProperties":false,"required":["zz"]}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false}`, false},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, true},
		{`{"type":"object","additionalProperties":false,"minProperties":1}`, false},
		{`{"type":"object","patternProperties":{"^x":{"type":"string"}}}`, false},
	} {
		s, err := Compile(jsontext.Value(c.schema))
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		if got := s.Scannable(); got != c.want {
			t.Errorf("Scannable(%s) = %v, want %v", c.schema, got, c.want)
		}
	}
}

// scanSchemas are scannable schemas used by the tests below.
var scanSchemas = []string{
	`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`,
	`{"type":"object","properties":{"s":{"type":"string","description":"d"},"b":{"type":"boolean"},"f":{"type":"number"},"i":{"type":"integer","title":"t"}},"required":["s","f"],"additionalProperties":false}`,
	`{"type":"object","additionalProperties":false}`,
	`{"type":"object","properties":{"text":{"type":"string"}}}`,
	`{"type":"object","properties":{
		"id":{"type":"string","pattern":"^[a-z0-9-]{1,8}$"},
		"t":{"type":"string","minLength":2,"maxLength":4},
		"n":{"type":"integer","minimum":-3,"maximum":1000},
		"r":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
		"m":{"type":"string","enum":["fast","safe","é"]},
		"e":{"enum":["x","y"]},
		"o":{"type":["object","null"],"properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0}},"required":["name"],"additionalProperties":false},
		"tags":{"type":"array","items":{"type":"string","maxLength":3},"minItems":1,"maxItems":3},
		"any":{},
		"free":{"type":"array"},
		"big":{"type":"number","maximum":1e300,"minimum":-1e-5}
	},"required":["id"],"additionalProperties":false}`,
}

// scanInstances exercise every branch of the scan, valid and invalid.
var scanInstances = []string{
	`{}`, ` { } `, `{"text":"hi"}`, `{"text":"hi","x":1}`, `{"text":1}`, `{"text":null}`,
	`{"text":true}`, `{"text":["a"]}`, `{"text":{}}`, `{"te\u0078t":"hi"}`, `{"text":"a","text":"b"}`,
	`{"text":"\u00e9\ud83d\ude00"}`, "{\"text\":\"\xff\"}", `{"text":"hi"} x`, `{"text":"hi"}{}`, `[]`, `"s"`, `null`, ``,
	`{"text":"hi"`, `{"s":"a","f":1}`, `{"s":"a","f":1.5,"b":false,"i":3}`, `{"s":"a","f":1,"i":3.0}`,
	`{"s":"a","f":1,"i":1e2}`, `{"s":"a","f":1,"i":-0}`, `{"s":"a","f":1e400}`, `{"s":"a","f":"1"}`,
	`{"s":"a","b":"true","f":1}`, `{"s":"a","f":1,"i":null}`, `{"f":1}`, `{"s":"a"}`, `{"s":"a","f":1,"z":0}`,
	`{"s":"a","f":01}`, `{"s":"a","f":NaN}`, `{"text":"hi","x":{"y":1}}`, `{"text":"hi","x":[1]}`,
	`{"id":"ab-1"}`, `{"id":"AB"}`, `{"id":"abcdefghi"}`, `{"id":"a\u0062"}`, `{"id":1}`,
	`{"id":"a","t":"ab"}`, `{"id":"a","t":"a"}`, `{"id":"a","t":"abcde"}`, `{"id":"a","t":"éé"}`, `{"id":"a","t":"😀😀😀😀😀"}`,
	`{"id":"a","n":-3}`, `{"id":"a","n":-4}`, `{"id":"a","n":1000}`, `{"id":"a","n":1001}`, `{"id":"a","n":5.0}`, `{"id":"a","n":1e3}`,
	`{"id":"a","n":99999999999999999999}`, `{"id":"a","r":0}`, `{"id":"a","r":0.5}`, `{"id":"a","r":1}`, `{"id":"a","r":1e-400}`,
	`{"id":"a","r":0.9999999999999999999}`, `{"id":"a","m":"fast"}`, `{"id":"a","m":"slow"}`, `{"id":"a","m":"é"}`, `{"id":"a","m":"\u00e9"}`,
	`{"id":"a","m":null}`, `{"id":"a","e":"x"}`, `{"id":"a","e":1}`, `{"id":"a","e":"z"}`,
	`{"id":"a","o":null}`, `{"id":"a","o":{"name":"n"}}`, `{"id":"a","o":{"name":"n","age":-1}}`, `{"id":"a","o":{"age":1}}`,
	`{"id":"a","o":{"name":"n","x":1}}`, `{"id":"a","o":[]}`, `{"id":"a","tags":[]}`, `{"id":"a","tags":["a"]}`,
	`{"id":"a","tags":["a","b","c","d"]}`, `{"id":"a","tags":["abcd"]}`, `{"id":"a","tags":[1]}`, `{"id":"a","tags":"a"}`,
	`{"id":"a","any":{"x":[1,{"y":null}]}}`, `{"id":"a","any":3}`, `{"id":"a","free":[1,"a",null]}`, `{"id":"a","free":[[1]]}`,
	`{"id":"a","big":1e300}`, `{"id":"a","big":1.0000000000001e300}`, `{"id":"a","big":-0.00001}`, `{"id":"a","big":-0.000011}`,
	`{"id":"a","zz":1}`,
}

// TestScanSameResults checks that the scan never changes a result: every
// instance gets the same answer and error text with and without it.
func TestScanSameResults(t *testing.T) {
	for _, sc := range scanSchemas {
		fast, err := Compile(jsontext.Value(sc))
		if err != nil {
			t.Fatal(err)
		}
		if !fast.Scannable() {
			t.Fatalf("%s: not scannable", sc)
		}
		slow := &Schema{s: fast.s}
		for _, in := range scanInstances {
			got, want := fmt.Sprint(fast.Validate(jsontext.Value(in))), fmt.Sprint(slow.Validate(jsontext.Value(in)))
			if got != want {
				t.Errorf("schema %s, instance %q: scan %q, validator %q", sc, in, got, want)
			}
		}
	}
}

// FuzzScan: for any instance, the scans' "valid" is the validator's, and
// the byte walk (quick) accepts nothing the token scan does not.
func FuzzScan(f *testing.F) {
	for _, in := range scanInstances {
		f.Add(in)
	}
	var schemas []*Schema
	for _, sc := range scanSchemas {
		s, err := Compile(jsontext.Value(sc))
		if err != nil {
			f.Fatal(err)
		}
		schemas = append(schemas, s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for i, s := range schemas {
			quick, scan := s.scan.quick([]byte(in)), s.scan.valid([]byte(in))
			if quick && !scan {
				t.Fatalf("schema %d: the byte walk accepts %q, the token scan does not", i, in)
			}
			if quick || scan {
				if err := (&Schema{s: s.s}).Validate(jsontext.Value(in)); err != nil {
					t.Fatalf("schema %d: the scan accepts %q, the validator says %v", i, in, err)
				}
			}
		}
	})
}

// TestQuickTakes: the byte walk decides the everyday instances itself
// (else it would be a cost, not a shortcut) and leaves the rest to the
// token scan.
func TestQuickTakes(t *testing.T) {
	for _, c := range []struct {
		schema int
		in     string
		want   bool
	}{
		{0, `{"text":"hello, world"}`, true},
		{0, " {\n\t\"text\" : \"é\" } ", true},
		{1, `{"s":"a","f":-1.5e+3,"b":false,"i":0}`, true},
		{4, `{"id":"ab-1","t":"abc","n":7,"r":0.25,"m":"safe","o":{"name":"n","age":30},"tags":["a","bc"],"big":12.5}`, true},
		{4, `{"id":"a","o":null,"e":"y","any":{}}`, true},
		{0, `{"text":"a\u0062"}`, false},      // an escape
		{3, `{"text":"hi","x":1}`, false},     // a member the schema does not name
		{4, `{"id":"a","free":[1]}`, false},   // an array without items
		{0, `{"text":"hi"`, false},            // cut short
		{0, `{"text":"hi",}`, false},          // a trailing comma
		{0, "{\"text\":\"\xff\"}", false},     // invalid UTF-8
		{0, "{\"text\":\"a\tb\"}", false},     // a control character
		{1, `{"s":"a","f":01}`, false},        // a leading zero
		{1, `{"s":"a","f":1.}`, false},        // no fraction digits
		{1, `{"s":"a","f":1,"b":tru}`, false}, // a cut literal
		{0, `{"text":"hi"} {}`, false},        // a second value
	} {
		s, err := Compile(jsontext.Value(scanSchemas[c.schema]))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.scan.quick([]byte(c.in)); got != c.want {
			t.Errorf("schema %d, %q: quick %v, want %v", c.schema, c.in, got, c.want)
		}
	}
}

func BenchmarkValidateScan(b *testing.B) {
	for _, c := range []struct{ name, schema, in string }{
		{"flat", scanSchemas[0], `{"text":"hello, world"}`},
		{"nested", scanSchemas[4], `{"id":"ab-1","t":"abc","n":7,"r":0.25,"m":"safe","o":{"name":"n","age":30},"tags":["a","bc"],"big":12.5}`},
	} {
		s, err := Compile(jsontext.Value(c.schema))
		if err != nil {
			b.Fatal(err)
		}
		in := jsontext.Value(c.in)
		if err := s.Validate(in); err != nil || !s.scan.valid(in) {
			b.Fatalf("%s: %v (scan %v)", c.name, err, s.scan.valid(in))
		}
		b.Run(c.name+"/scan", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Validate(in); err != nil {
					b.Fatal(err)
				}
			}
		})
		slow := &Schema{s: s.s}
		b.Run(c.name+"/validator", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := slow.Validate(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
