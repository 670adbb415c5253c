package mcp

import (
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

func allBlocks() Contents {
	ann := &Annotations{Audience: []Role{RoleUser}, Priority: new(0.0), LastModified: "2025-01-12T15:00:58Z"}
	return Contents{
		&TextContent{Text: "hi", Annotations: ann, Meta: Meta{"com.example/k": "v"}},
		&ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
		&AudioContent{Data: []byte("RIFF"), MIMEType: "audio/wav", Annotations: ann},
		&ResourceLink{Resource{URI: "file:///a.txt", Name: "a.txt", Size: new(int64(0))}},
		&EmbeddedResource{Resource: &TextResourceContents{URI: "file:///a.txt", Text: ""}},
		&EmbeddedResource{Resource: &BlobResourceContents{URI: "file:///b.bin", Blob: []byte{}}},
		&ToolUseContent{ID: "call_1", Name: "get_weather", Input: jsontext.Value(`{"city":"Paris"}`)},
		&ToolResultContent{ToolUseID: "call_1", Content: Contents{&TextContent{Text: "18°C"}}, IsError: true},
	}
}

func TestContentsRoundTrip(t *testing.T) {
	in := allBlocks()
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	var generic []map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	for _, g := range generic {
		types = append(types, g["type"].(string))
	}
	want := []string{"text", "image", "audio", "resource_link", "resource", "resource", "tool_use", "tool_result"}
	if !reflect.DeepEqual(types, want) {
		t.Errorf("types = %v, want %v", types, want)
	}
	var out Contents
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	for i := range in {
		if in[i].ContentType() != out[i].ContentType() {
			t.Errorf("block %d: type %s, want %s", i, out[i].ContentType(), in[i].ContentType())
		}
	}
	raw2, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != string(raw2) {
		t.Errorf("re-encoding differs:\n%s\n%s", raw, raw2)
	}
	// Empty text and empty blob stay distinct.
	if _, ok := out[4].(*EmbeddedResource).Resource.(*TextResourceContents); !ok {
		t.Errorf("empty text decoded as %T", out[4].(*EmbeddedResource).Resource)
	}
	if _, ok := out[5].(*EmbeddedResource).Resource.(*BlobResourceContents); !ok {
		t.Errorf("empty blob decoded as %T", out[5].(*EmbeddedResource).Resource)
	}
	if got := out[0].(*TextContent).Meta.ProtocolVersion(); got != "" {
		t.Errorf("unexpected protocol version %q", got)
	}
}

func TestContentsErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`[{"type":"video","url":"x"}]`, `"video"`},
		{`[{"text":"no type"}]`, `without "type"`},
		{`{"type":"text","text":"x"}`, "array"},
		{`[{"type":"resource","resource":{"uri":"x"}}]`, `without "text" or "blob"`},
		{`[{"type":"resource","resource":{"uri":"x","text":"","blob":""}}]`, `both`},
	} {
		var cs Contents
		err := json.Unmarshal([]byte(tc.in), &cs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want mention of %s", tc.in, err, tc.want)
		}
	}
	var tc TextContent
	if err := json.Unmarshal([]byte(`{"type":"image","text":"x"}`), &tc); err == nil {
		t.Error("TextContent accepted type image")
	}
	if _, err := json.Marshal(Contents{nil}); err == nil {
		t.Error("nil block marshaled")
	}
	if raw, err := json.Marshal(CallToolResult{}); err != nil || string(raw) != `{"content":[]}` {
		t.Errorf("empty CallToolResult = %s, %v", raw, err)
	}
	var nilList Contents
	if err := json.Unmarshal([]byte(`null`), &nilList); err != nil || nilList != nil {
		t.Errorf("null = %v, %v", nilList, err)
	}
}

func TestPromptMessageSingleBlock(t *testing.T) {
	raw := []byte(`{"role":"user","content":{"type":"image","data":"aGk=","mimeType":"image/png"}}`)
	var m PromptMessage
	out := roundTrip(t, raw, &m)
	img, ok := m.Content.(*ImageContent)
	if !ok || string(img.Data) != "hi" {
		t.Fatalf("content = %#v", m.Content)
	}
	if string(out) != string(raw) {
		t.Errorf("got %s", out)
	}
	if err := json.Unmarshal([]byte(`{"role":"user","content":[{"type":"text","text":"x"}]}`), &m); err == nil {
		t.Error("array accepted as prompt content")
	}
	if err := json.Unmarshal([]byte(`{"role":"user"}`), &m); err == nil {
		t.Error("missing content accepted")
	}
	if _, err := json.Marshal(PromptMessage{Role: RoleUser}); err == nil {
		t.Error("nil content marshaled")
	}
}

func TestSamplingContentShape(t *testing.T) {
	for _, tc := range []struct {
		in      string
		isArray bool
	}{
		{`{"role":"user","content":{"type":"text","text":"a"}}`, false},
		{`{"role":"user","content":[{"type":"text","text":"a"}]}`, true},
		{`{"role":"assistant","content":[{"type":"tool_use","id":"1","name":"f","input":{}},{"type":"text","text":"b"}]}`, true},
		{`{"role":"user","content":[]}`, true},
	} {
		var m SamplingMessage
		out := roundTrip(t, []byte(tc.in), &m)
		if m.Content.IsArray != tc.isArray || string(out) != tc.in {
			t.Errorf("%s: IsArray=%v, re-encoded %s", tc.in, m.Content.IsArray, out)
		}
	}
	one := NewSamplingContent(&TextContent{Text: "a"})
	if raw, _ := json.Marshal(one); string(raw) != `{"type":"text","text":"a"}` {
		t.Errorf("single = %s", raw)
	}
	two := NewSamplingContent(&TextContent{Text: "a"}, &TextContent{Text: "b"})
	if raw, _ := json.Marshal(two); !strings.HasPrefix(string(raw), "[") {
		t.Errorf("pair = %s", raw)
	}
	var m SamplingMessage
	if err := json.Unmarshal([]byte(`{"role":"user","content":{"type":"resource_link","uri":"x","name":"y"}}`), &m); err != nil {
		t.Errorf("resource_link: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"role":"user","content":{"type":"nope"}}`), &m); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown type: %v", err)
	}
}

func TestResourceContentsList(t *testing.T) {
	raw := []byte(`{"contents":[{"uri":"a","text":"x"},{"uri":"b","mimeType":"image/png","blob":"aGk="}],"resultType":"complete","ttlMs":0,"cacheScope":"private"}`)
	var r ReadResourceResult
	roundTrip(t, raw, &r)
	if r.Contents[0].ResourceURI() != "a" || string(r.Contents[1].(*BlobResourceContents).Blob) != "hi" {
		t.Errorf("contents = %#v", r.Contents)
	}
	if r.TTLMs == nil || *r.TTLMs != 0 {
		t.Error("ttlMs 0 lost")
	}
}
