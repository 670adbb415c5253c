package mcp

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The hand-written encoders must write what the reflective encoding of
// the same struct tags writes, byte for byte.

// callToolResultReflect has CallToolResult's fields and tags but not its
// MarshalJSONTo.
type callToolResultReflect CallToolResult

func fastResults() []CallToolResult {
	return []CallToolResult{
		{},
		{Content: Contents{}},
		{Content: Contents{&TextContent{Text: "hi"}}},
		{Content: Contents{&TextContent{Text: "<a & \"b\">\n\u2028é😀"}}, StructuredContent: jsontext.Value(`{"text":"hi"}`)},
		{ResultType: ResultComplete, Content: Contents{&TextContent{Text: "x", Annotations: &Annotations{Audience: []Role{"user"}}}}, IsError: true},
		{Content: Contents{&TextContent{Text: "x", Meta: Meta{"k": jsontext.Value(`1`)}}, &ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}}},
		{Content: Contents{&TextContent{Text: "value"}}, Meta: Meta{}},
		{Content: Contents{&TextContent{Text: ""}}, Meta: Meta{"a": jsontext.Value(`{"b":[1,2]}`)}, StructuredContent: jsontext.Value(`[1, 2 ,3]`)},
	}
}

func TestCallToolResultEncoding(t *testing.T) {
	for _, r := range fastResults() {
		fast, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		slow, err := json.Marshal((*callToolResultReflect)(&r))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fast, slow) {
			t.Errorf("hand-written %s\nreflective   %s", fast, slow)
		}
	}
	// Errors stay errors: invalid UTF-8 and invalid raw JSON.
	for _, r := range []CallToolResult{
		{Content: Contents{&TextContent{Text: "\xff"}}},
		{StructuredContent: jsontext.Value(`{`)},
		{Content: Contents{nil}},
		{Content: Contents{(*TextContent)(nil)}},
	} {
		if b, err := json.Marshal(&r); err == nil {
			t.Errorf("%+v encoded as %s, want an error", r, b)
		}
	}
}

func FuzzTextContentEncoding(f *testing.F) {
	f.Add("hi")
	f.Add("\u2028<>&\"\\\x00\x1f\xff")
	f.Fuzz(func(t *testing.T, s string) {
		fast, ferr := json.Marshal(TextContent{Text: s})
		slow, serr := json.Marshal(typed[wireText]{ContentTypeText, (*wireText)(&TextContent{Text: s})})
		if (ferr == nil) != (serr == nil) || !bytes.Equal(fast, slow) {
			t.Fatalf("%q: hand-written %s (%v), reflective %s (%v)", s, fast, ferr, slow, serr)
		}
	})
}

func TestMetaEncoding(t *testing.T) {
	for _, m := range []Meta{
		nil, {}, {"a": jsontext.Value(`{"x": [1, 2]}`)}, {"b": "s"}, {"c": 1.5}, {"d": map[string]any{"e": true}},
		{"f": jsontext.Value(`"<&>"`)}, {"g": nil}, {"h": struct {
			N int `json:"n"`
		}{3}},
	} {
		fast, ferr := json.Marshal(m)
		slow, serr := json.Marshal(map[string]any(m))
		if ferr != nil || serr != nil || !bytes.Equal(fast, slow) {
			t.Errorf("%v: hand-written %s (%v), reflective %s (%v)", m, fast, ferr, slow, serr)
		}
	}
	for _, m := range []Meta{{"a": jsontext.Value(`{`)}, {"k": func() {}}, {"s": "\xff"}} {
		if b, err := json.Marshal(m); err == nil {
			t.Errorf("%v encoded as %s, want an error", m, b)
		}
	}
}

func TestMetaDecodingNames(t *testing.T) {
	var m Meta
	if err := json.Unmarshal([]byte(`{"progress\u0054oken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","x\"y":true}`), &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 3 || m["progressToken"] == nil || m[MetaKeyProtocolVersion] == nil || m[`x"y`] == nil {
		t.Fatalf("decoded %v", m)
	}
	if err := json.Unmarshal([]byte(`{"a":1,"\u0061":2}`), &m); err == nil {
		t.Fatal("duplicate names (one escaped) accepted")
	}
}
