package jsonschema

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func mustCompile(t testing.TB, schema string) *Schema {
	t.Helper()
	s, err := Compile(jsontext.Value(schema))
	if err != nil {
		t.Fatalf("Compile(%s): %v", schema, err)
	}
	return s
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name, schema string
		instances    map[string]string // instance → error ("" = valid)
	}{
		{
			name:   "object",
			schema: `{"type":"object","properties":{"name":{"type":"string","minLength":1},"age":{"type":"integer","minimum":0}},"required":["name"],"additionalProperties":false}`,
			instances: map[string]string{
				`{"name":"x","age":3}`:    "",
				`{"name":"x","age":-1}`:   "/age: must be >= 0",
				`{"name":"x","age":1.5}`:  "/age: must be integer, got number",
				`{"name":"x","age":2.0}`:  "",
				`{"age":1}`:               `missing required property "name"`,
				`{"name":""}`:             "/name: must be at least 1 characters long",
				`{"name":"x","extra":1}`:  `unexpected property "extra"`,
				`{"name":3,"age":"3"}`:    "/age: must be integer, got string; /name: must be string, got number",
				`[]`:                      "must be object, got array",
				`{"name":"x","age":null}`: "/age: must be integer, got null",
			},
		},
		{
			name:   "2020-12 $defs and $ref",
			schema: `{"$defs":{"pos":{"type":"integer","exclusiveMinimum":0}},"type":"array","items":{"$ref":"#/$defs/pos"},"maxItems":2}`,
			instances: map[string]string{
				`[1,2]`:   "",
				`[1,0]`:   "/1: must be > 0",
				`[1,2,3]`: "must have at most 2 items",
			},
		},
		{
			name:   "$anchor",
			schema: `{"$defs":{"s":{"$anchor":"short","type":"string","maxLength":3}},"properties":{"code":{"$ref":"#short"}}}`,
			instances: map[string]string{
				`{"code":"abc"}`:  "",
				`{"code":"abcd"}`: "/code: must be at most 3 characters long",
			},
		},
		{
			name:   "allOf",
			schema: `{"allOf":[{"type":"number","minimum":1},{"maximum":10},{"multipleOf":2}]}`,
			instances: map[string]string{
				`4`:  "",
				`12`: "must be <= 10",
				`3`:  "must be a multiple of 2",
			},
		},
		{
			name:   "if-then-else",
			schema: `{"type":"object","if":{"properties":{"kind":{"const":"circle"}},"required":["kind"]},"then":{"required":["radius"]},"else":{"required":["side"]}}`,
			instances: map[string]string{
				`{"kind":"circle","radius":1}`: "",
				`{"kind":"square","side":1}`:   "",
				`{"kind":"circle","side":1}`:   `missing required property "radius"`,
				`{"kind":"square"}`:            `missing required property "side"`,
			},
		},
		{
			name:   "dependentRequired",
			schema: `{"dependentRequired":{"card":["cvv","expiry"]}}`,
			instances: map[string]string{
				`{"card":"1"}`:                    `property "card" requires properties "cvv", "expiry"`,
				`{"card":"1","cvv":1,"expiry":2}`: "",
				`{"cvv":1}`:                       "",
			},
		},
		{
			name:   "unevaluatedProperties",
			schema: `{"allOf":[{"properties":{"a":{"type":"string"}}}],"properties":{"b":{"type":"string"}},"unevaluatedProperties":false}`,
			instances: map[string]string{
				`{"a":"x","b":"y"}`: "",
				`{"a":"x","c":1}`:   "/c: unexpected property",
			},
		},
		{
			name:   "anyOf discriminated by const",
			schema: `{"type":"array","items":{"anyOf":[{"properties":{"type":{"const":"text"},"text":{"type":"string"}},"required":["type","text"]},{"properties":{"type":{"const":"image"},"data":{"type":"string"}},"required":["type","data"]}]}}`,
			instances: map[string]string{
				`[{"type":"text","text":"hi"},{"type":"image","data":"AA=="}]`: "",
				`[{"type":"text","text":3}]`:                                   "/0/text: must be string, got number",
				`[{"type":"image"}]`:                                           `/0: missing required property "data"`,
				`[{"type":"video"}]`:                                           `/0/type: must be one of "text", "image"`,
			},
		},
		{
			name:   "oneOf",
			schema: `{"oneOf":[{"type":"integer"},{"type":"number","minimum":10}]}`,
			instances: map[string]string{
				`1`:   "",
				`2.5`: `must be >= 10`, // the integer branch is a type mismatch
				`20`:  `must match exactly one schema in "oneOf" (matches 0 and 1)`,
			},
		},
		{
			name:   "enum const pattern not",
			schema: `{"properties":{"e":{"enum":["a","b",1]},"c":{"const":"x"},"p":{"pattern":"^[a-z]+$"},"n":{"not":{"type":"null"}}}}`,
			instances: map[string]string{
				`{"e":"a","c":"x","p":"abc","n":1}`: "",
				`{"e":"z"}`:                         `/e: must be one of "a", "b", 1`,
				`{"c":"y"}`:                         `/c: must be "x"`,
				`{"p":"ABC"}`:                       `/p: must match pattern "^[a-z]+$"`,
				`{"n":null}`:                        `/n: must not match the schema in "not"`,
			},
		},
		{
			name:   "draft-07 declared",
			schema: `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"id":{"type":["string","integer"]}},"properties":{"id":{"$ref":"#/definitions/id"},"uri":{"type":"string","format":"uri"}},"dependencies":{"a":["b"]}}`,
			instances: map[string]string{
				`{"id":"x"}`:        "",
				`{"id":1}`:          "",
				`{"id":true}`:       "/id: must be integer or string, got boolean",
				`{"a":1}`:           `property "a" requires property "b"`,
				`{"uri":"not uri"}`: "", // format is an annotation in every dialect
			},
		},
		{
			name:   "boolean schema",
			schema: `false`,
			instances: map[string]string{
				`1`: "is not allowed",
			},
		},
		{
			name:   "number fidelity",
			schema: `{"type":"integer","maximum":9007199254740992}`,
			instances: map[string]string{
				`9007199254740992`: "",
				`9007199254740993`: "must be <= 9007199254740992", // equal as float64
				`1e2`:              "",
			},
		},
		{
			name:   "propertyNames",
			schema: `{"properties":{"a":{"propertyNames":{"maxLength":2}},"b":{"propertyNames":{"maxLength":2}},"c":{"type":"object"}}}`,
			instances: map[string]string{
				`{"a":{"ok":1},"b":{"xyz":1},"c":{"d":1,"e":2}}`: `/b: invalid property name "xyz": must be at most 2 characters long`,
				`{"a":{"ok":1},"b":{"ok":1}}`:                    "",
			},
		},
		{
			name:   "locations are escaped JSON pointers",
			schema: `{"properties":{"a/b":{"properties":{"c~d":{"type":"string"}}}}}`,
			instances: map[string]string{
				`{"a/b":{"c~d":1}}`: "/a~1b/c~0d: must be string, got number",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, tt.schema)
			for in, want := range tt.instances {
				err := s.Validate(jsontext.Value(in))
				got := ""
				if err != nil {
					got = err.Error()
					var verr *ValidationError
					if !errors.As(err, &verr) {
						t.Errorf("Validate(%s) = %T, want *ValidationError", in, err)
					}
				}
				if got != want {
					t.Errorf("Validate(%s) = %q, want %q", in, got, want)
				}
				if strings.Contains(got, "\n") {
					t.Errorf("Validate(%s): message is not one line: %q", in, got)
				}
			}
		})
	}
}

func TestValidationErrorFields(t *testing.T) {
	s := mustCompile(t, `{"properties":{"age":{"minimum":0}}}`)
	err := s.Validate(jsontext.Value(`{"age":-3}`))
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("Validate = %v, want *ValidationError", err)
	}
	if verr.Location != "/age" || verr.Message != "must be >= 0" || verr.More != 0 {
		t.Errorf("got %+v", verr)
	}
	if got := fmt.Sprintf("invalid arguments: %v", err); got != "invalid arguments: /age: must be >= 0" {
		t.Errorf("got %q", got)
	}
	if !strings.Contains(verr.Detail(), "minimum") || errors.Unwrap(err) == nil {
		t.Errorf("Detail() = %q, Unwrap = %v", verr.Detail(), errors.Unwrap(err))
	}
}

func TestValidateMalformedInstance(t *testing.T) {
	s := mustCompile(t, `{}`)
	deep := strings.Repeat("[", MaxInstanceDepth+1) + strings.Repeat("]", MaxInstanceDepth+1)
	ok := strings.Repeat("[", MaxInstanceDepth) + strings.Repeat("]", MaxInstanceDepth)
	for in, want := range map[string]string{
		``:              "empty JSON",
		`{`:             "unexpected EOF",
		`{"a":1,"a":2}`: "duplicate object member name",
		`1 2`:           "unexpected data after the top-level value",
		"\"\xff\"":      "invalid UTF-8",
		deep:            fmt.Sprintf("nesting deeper than %d levels", MaxInstanceDepth),
	} {
		err := s.Validate(jsontext.Value(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate(%.20q) = %v, want error containing %q", in, err, want)
		}
		var verr *ValidationError
		if errors.As(err, &verr) {
			t.Errorf("Validate(%.20q) returned a *ValidationError for malformed JSON", in)
		}
	}
	if err := s.Validate(jsontext.Value(ok)); err != nil {
		t.Errorf("Validate(depth %d) = %v", MaxInstanceDepth, err)
	}
}

func TestCompileErrors(t *testing.T) {
	nested := func(depth int) string {
		return strings.Repeat(`{"items":`, depth-1) + `{}` + strings.Repeat(`}`, depth-1)
	}
	many := `{"anyOf":[` + strings.Repeat(`{},`, MaxSchemaNodes) + `{}]}`
	huge := `{"description":"` + strings.Repeat("x", MaxSchemaBytes) + `"}`
	tests := []struct{ schema, want string }{
		{`{"$ref":"https://example.com/schema.json"}`, `external reference "https://example.com/schema.json" refused`},
		{`{"$ref":"other.json#/$defs/x"}`, `external reference "other.json" refused`},
		{`{"properties":{"a":{"$ref":"file:///etc/passwd"}}}`, `external reference "file:///etc/passwd" refused`},
		{`{"$id":"https://example.com/a.json","$ref":"b.json"}`, `external reference "https://example.com/b.json" refused`},
		{`{"$schema":"https://example.com/my-meta"}`, "unsupported dialect"},
		{`{"$schema":"http://json-schema.org/draft-04/schema#"}`, "unsupported dialect"},
		{`{"$ref":"#/$defs/missing"}`, `"#/$defs/missing" not found`},
		{`{"$ref":"#nowhere"}`, `nowhere`},
		{`{"type":"strin"}`, "invalid schema: /type:"},
		{`{"minimum":"0"}`, "invalid schema: /minimum: must be number, got string"},
		{`{"pattern":"("}`, "pattern"},
		{`[]`, "must be a JSON object or boolean"},
		{`{"type":`, "schema:"},
		{nested(MaxSchemaDepth + 1), fmt.Sprintf("nesting deeper than %d levels", MaxSchemaDepth)},
		{many, fmt.Sprintf("more than %d objects and arrays", MaxSchemaNodes)},
		{huge, "more than the limit"},
	}
	for _, tt := range tests {
		_, err := Compile(jsontext.Value(tt.schema))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Compile(%.60s) = %v, want error containing %q", tt.schema, err, tt.want)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("Compile(%.60s): error is not one line: %q", tt.schema, err)
		}
	}
	if _, err := Compile(jsontext.Value(nested(MaxSchemaDepth))); err != nil {
		t.Errorf("Compile(depth %d) = %v", MaxSchemaDepth, err)
	}
}

func TestCompileDialects(t *testing.T) {
	for _, d := range []string{
		"https://json-schema.org/draft/2020-12/schema",
		"http://json-schema.org/draft/2020-12/schema#",
		"https://json-schema.org/draft/2019-09/schema",
		"http://json-schema.org/draft-07/schema#",
		"http://json-schema.org/draft-07/schema",
	} {
		if _, err := Compile(jsontext.Value(`{"$schema":"` + d + `","type":"object"}`)); err != nil {
			t.Errorf("Compile($schema %s) = %v", d, err)
		}
	}
	// Without $schema the dialect is 2020-12: prefixItems is a keyword
	// (draft-07 would ignore it).
	s := mustCompile(t, `{"prefixItems":[{"type":"string"}]}`)
	if err := s.Validate(jsontext.Value(`[1]`)); err == nil || err.Error() != "/0: must be string, got number" {
		t.Errorf("2020-12 default: Validate = %v", err)
	}
	s = mustCompile(t, `{"$schema":"http://json-schema.org/draft-07/schema#","prefixItems":[{"type":"string"}]}`)
	if err := s.Validate(jsontext.Value(`[1]`)); err != nil {
		t.Errorf("draft-07: Validate = %v", err)
	}
}

func TestCompileDefinitions(t *testing.T) {
	defs, err := CompileDefinitions(jsontext.Value(`{"$defs":{"A":{"type":"string"},"B":{"type":"array","items":{"$ref":"#/$defs/A"}},"a/b":{"const":1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 3 {
		t.Fatalf("got %d definitions", len(defs))
	}
	if err := defs["B"].Validate(jsontext.Value(`["x",2]`)); err == nil || err.Error() != "/1: must be string, got number" {
		t.Errorf("B: %v", err)
	}
	if err := defs["a/b"].Validate(jsontext.Value(`1`)); err != nil {
		t.Errorf("a/b: %v", err)
	}
	defs, err = CompileDefinitions(jsontext.Value(`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"A":{"type":"string"}}}`))
	if err != nil || defs["A"] == nil {
		t.Fatalf("draft-07 definitions: %v %v", defs, err)
	}
	if _, err := CompileDefinitions(jsontext.Value(`{"type":"string"}`)); err == nil {
		t.Error("CompileDefinitions without definitions succeeded")
	}
	if _, err := CompileDefinitions(jsontext.Value(`{"$defs":{"A":{"$ref":"http://x/y"}}}`)); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("external ref: %v", err)
	}
}

func TestValidateConcurrent(t *testing.T) {
	s := mustCompile(t, benchSchema)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				in, want := benchInstance, ""
				if (i+j)%2 == 1 {
					in, want = strings.Replace(benchInstance, `"age":42`, `"age":-1`, 1), "/age: must be >= 0"
				}
				got := ""
				if err := s.Validate(jsontext.Value(in)); err != nil {
					got = err.Error()
				}
				if got != want {
					t.Errorf("Validate = %q, want %q", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

const benchSchema = `{"type":"object","properties":{"name":{"type":"string","minLength":1},"age":{"type":"integer","minimum":0,"maximum":150},"email":{"type":"string","format":"email"},"tags":{"type":"array","items":{"type":"string"},"maxItems":10},"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"},"zip":{"type":"string","pattern":"^[0-9]{5}$"}},"required":["city"],"additionalProperties":false},"active":{"type":"boolean"},"score":{"type":"number","exclusiveMinimum":0},"kind":{"enum":["a","b","c"]}},"required":["name","age"],"additionalProperties":false}`

const benchInstance = `{"name":"Ada Lovelace","age":42,"email":"ada@example.com","tags":["math","engines","poetry"],"address":{"street":"1 Main St","city":"London","zip":"12345"},"active":true,"score":99.5,"kind":"b"}`

func BenchmarkValidate(b *testing.B) {
	s := mustCompile(b, benchSchema)
	in := jsontext.Value(benchInstance)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if err := s.Validate(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateInvalid(b *testing.B) {
	s := mustCompile(b, benchSchema)
	in := jsontext.Value(strings.Replace(benchInstance, `"age":42`, `"age":-1`, 1))
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Validate(in); err == nil {
			b.Fatal("valid")
		}
	}
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		mustCompile(b, benchSchema)
	}
}
