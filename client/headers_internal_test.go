package client

import (
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// TestParamHeadersInvalid: every kind of invalid x-mcp-header annotation
// (those of the conformance scenario http-invalid-tool-headers, and the
// reachability rule) makes the schema invalid.
func TestParamHeadersInvalid(t *testing.T) {
	for name, schema := range map[string]string{
		"empty":                `{"type":"object","properties":{"value":{"type":"string","x-mcp-header":""}}}`,
		"object":               `{"type":"object","properties":{"data":{"type":"object","x-mcp-header":"Data"}}}`,
		"array":                `{"type":"object","properties":{"items":{"type":"array","items":{"type":"string"},"x-mcp-header":"Items"}}}`,
		"null":                 `{"type":"object","properties":{"nil":{"type":"null","x-mcp-header":"Nil"}}}`,
		"number":               `{"type":"object","properties":{"score":{"type":"number","x-mcp-header":"Score"}}}`,
		"no type":              `{"type":"object","properties":{"v":{"x-mcp-header":"V"}}}`,
		"type list":            `{"type":"object","properties":{"v":{"type":["string","null"],"x-mcp-header":"V"}}}`,
		"duplicate":            `{"type":"object","properties":{"field1":{"type":"string","x-mcp-header":"Region"},"field2":{"type":"string","x-mcp-header":"Region"}}}`,
		"duplicate any case":   `{"type":"object","properties":{"field1":{"type":"string","x-mcp-header":"MyField"},"field2":{"type":"string","x-mcp-header":"myfield"}}}`,
		"space":                `{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"My Region"}}}`,
		"colon":                `{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Region:Primary"}}}`,
		"non-ASCII":            `{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Région"}}}`,
		"control character":    `{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Region\t1"}}}`,
		"CR LF":                `{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Region\r\nX-Evil: 1"}}}`,
		"not a string":         `{"type":"object","properties":{"value":{"type":"string","x-mcp-header":7}}}`,
		"root":                 `{"type":"object","x-mcp-header":"Root"}`,
		"items":                `{"type":"object","properties":{"list":{"type":"array","items":{"type":"string","x-mcp-header":"Item"}}}}`,
		"prefixItems":          `{"type":"object","properties":{"t":{"type":"array","prefixItems":[{"type":"string","x-mcp-header":"First"}]}}}`,
		"oneOf":                `{"type":"object","oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`,
		"anyOf":                `{"type":"object","properties":{"a":{"anyOf":[{"type":"string","x-mcp-header":"A"}]}}}`,
		"allOf":                `{"type":"object","allOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`,
		"not":                  `{"type":"object","properties":{"a":{"type":"string","not":{"type":"string","x-mcp-header":"A"}}}}`,
		"if then else":         `{"type":"object","if":{"properties":{"a":{"type":"string"}}},"then":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}`,
		"$ref target":          `{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string","x-mcp-header":"A"}}}`,
		"additionalProperties": `{"type":"object","additionalProperties":{"type":"string","x-mcp-header":"Extra"}}`,
		"patternProperties":    `{"type":"object","patternProperties":{"^x":{"type":"string","x-mcp-header":"X"}}}`,
		// The keyword spelled with escapes is still the keyword.
		"escaped keyword": `{"type":"object","x-mcp-\u0068eader":"Root"}`,
	} {
		if hs, err := paramHeaders(jsontext.Value(schema)); err == nil {
			t.Errorf("%s: accepted %v", name, hs)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// TestParamHeadersWithoutKeyword: a schema whose bytes cannot spell
// x-mcp-header is not walked (mayAnnotate), one with the keyword escaped
// is; the escaped keyword is found.
func TestParamHeadersWithoutKeyword(t *testing.T) {
	for schema, want := range map[string]bool{
		`{"type":"object","properties":{"text":{"type":"string"}}}`:                         false,
		`{"type":"object","properties":{"text":{"type":"string","x-mcp-header":"Text"}}}`:   true,
		`{"type":"object","properties":{"text":{"type":"string","x-mcp-h\u0065ader":"T"}}}`: true,
		`{"type":"object","description":"\u00e9"}`:                                          true,
	} {
		if got := mayAnnotate(jsontext.Value(schema)); got != want {
			t.Errorf("mayAnnotate(%s) = %v, want %v", schema, got, want)
		}
	}
	hs, err := paramHeaders(jsontext.Value(`{"type":"object","properties":{"text":{"type":"string","x-mcp-h\u0065ader":"Text"}}}`))
	if err != nil || len(hs) != 1 || hs[0].name != "Text" {
		t.Errorf("escaped keyword: %v %v", hs, err)
	}
}

// TestParamHeadersValid: annotations on string, integer and boolean
// properties reachable through properties chains are found with their
// paths; $refs are left alone (never fetched, never resolved), unknown
// keywords ignored.
func TestParamHeadersValid(t *testing.T) {
	schema := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","x-unknown":{"x-mcp-header":"Ignored"},
		"properties":{
			"region":{"type":"string","x-mcp-header":"Region"},
			"priority":{"type":"integer","x-mcp-header":"Priority"},
			"verbose":{"type":"boolean","x-mcp-header":"Verbose"},
			"float":{"type":"number"},
			"profile":{"$ref":"https://example.com/canary.json"},
			"nested":{"type":"object","properties":{"id":{"type":"string","x-mcp-header":"Nested-Id"}}},
			"const":{"type":"string","default":{"x-mcp-header":"NotASchema"},"enum":[{"x-mcp-header":"No"}]}
		}}`
	hs, err := paramHeaders(jsontext.Value(schema))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hs {
		got = append(got, h.name+"="+strings.Join(h.path, ".")+":"+h.kind)
	}
	slices.Sort(got)
	want := []string{"Nested-Id=nested.id:string", "Priority=priority:integer", "Region=region:string", "Verbose=verbose:boolean"}
	if !slices.Equal(got, want) {
		t.Errorf("headers %v, want %v", got, want)
	}
	for _, s := range []string{`{"type":"object"}`, `{}`, `true`, ``, `{"type":"object","properties":{"a":{"type":"string"}}}`} {
		if hs, err := paramHeaders(jsontext.Value(s)); err != nil || len(hs) != 0 {
			t.Errorf("%s: %v %v", s, hs, err)
		}
	}
}

// TestHeaderText: the text of a mirrored value: strings as they are (the
// transport encodes them), integers in decimal, booleans as true/false;
// null, objects and arrays have no header.
func TestHeaderText(t *testing.T) {
	for in, want := range map[string]string{
		`"us-west1"`: "us-west1", `""`: "", `"Hello, 世界"`: "Hello, 世界", `42`: "42", `-7`: "-7",
		`4.0`: "4", `1e3`: "1000", `9007199254740991`: "9007199254740991", `true`: "true", `false`: "false",
	} {
		if got, ok := headerText(jsontext.Value(in)); !ok || got != want {
			t.Errorf("%s: %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{`null`, `{}`, `[1]`} {
		if got, ok := headerText(jsontext.Value(in)); ok {
			t.Errorf("%s: %q, want no header", in, got)
		}
	}
}
