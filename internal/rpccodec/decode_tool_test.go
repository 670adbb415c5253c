package rpccodec

import (
	"reflect"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/mcp"
)

// checkDecodeToolResult: whenever DecodeToolResult takes raw, its result
// is the decoder's, and it takes nothing the decoder refuses; fast
// reports whether it took raw.
func checkDecodeToolResult(t *testing.T, raw string) (fast bool) {
	t.Helper()
	var want mcp.CallToolResult
	werr := json.Unmarshal([]byte(raw), &want)
	var got mcp.CallToolResult
	if !DecodeToolResult([]byte(raw), &got, nil) {
		if !reflect.DeepEqual(got, mcp.CallToolResult{}) {
			t.Fatalf("%s: declined, but wrote %#v", raw, got)
		}
		return false
	}
	if werr != nil {
		t.Fatalf("%s: decoded %#v where the decoder fails: %v", raw, got, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\nfast    %#v\ndecoder %#v", raw, got, want)
	}
	return true
}

// TestDecodeToolResult holds the fast decode of a tools/call result to
// the decoder's, and checks that it takes the everyday results.
func TestDecodeToolResult(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		fast bool
	}{
		{`{"content":[{"type":"text","text":"{\"text\":\"hi\"}"}],"structuredContent":{"text":"hi"}}`, true},
		{`{"resultType":"complete","content":[{"type":"text","text":"a"}],"structuredContent":{"text":"a"},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}`, true},
		{` { "content" : [ {"type":"text","text":"a"} , {"type":"image","data":"aGk=","mimeType":"image/png"} ] , "isError" : true } `, true},
		{`{"content":[],"isError":false}`, true},
		{`{"content":null}`, true},
		{`{}`, true},
		{`{"content":[{"type":"text","text":"x","annotations":{"priority":0.5}}]}`, true},
		{`{"structuredContent":[1, 2,{"a":null}]}`, true},
		{`{"structuredContent":null}`, true},
		{`{"structuredContent":"s"}`, true},
		{`{"content":[{"type":"text","text":"a"}],"_meta":{"k":[1,"x"],"n":null}}`, true},
		{`{"content":[],"content":[]}`, false},
		{`{"content":[],"isError":true,"isError":false}`, false},
		{`{"content":[],"other":1}`, false},
		{`{"Content":[]}`, false},
		{`{"con\u0074ent":[]}`, false},
		{`{"content":[{"type":"nope"}]}`, false},
		{`{"content":{}}`, false},
		{`{"content":"x"}`, false},
		{`{"isError":null}`, false},
		{`{"isError":1}`, false},
		{`{"resultType":"compl\u0065te"}`, false},
		{`{"resultType":1}`, false},
		{`{"_meta":null}`, false},
		{`{"_meta":[]}`, false},
		{`{"structuredContent":{"a":1,"a":2}}`, false},
		{`{"structuredContent":"\ud800"}`, false},
		{"{\"structuredContent\":\"\xff\"}", false},
		{`{"content":[]} x`, false},
		{`{"content":[],}`, false},
		{`{"content":[`, false},
		{`[]`, false},
		{`null`, false},
		{``, false},
	} {
		if got := checkDecodeToolResult(t, tc.raw); got != tc.fast {
			t.Errorf("%s: taken %v, want %v", tc.raw, got, tc.fast)
		}
	}
}

// TestDecodeToolResultLeavesSet: a result that already holds something
// is left to the decoder, which merges into it.
func TestDecodeToolResultLeavesSet(t *testing.T) {
	for _, r := range []mcp.CallToolResult{
		{ResultType: mcp.ResultComplete}, {Content: mcp.Contents{}}, {StructuredContent: []byte(`1`)}, {IsError: true}, {Meta: mcp.Meta{}},
	} {
		before := r
		if DecodeToolResult([]byte(`{"content":[]}`), &r, nil) {
			t.Errorf("%#v: taken", before)
		}
	}
}

// TestDecodeToolResultMeta: the meta hook decodes the top-level _meta
// (and only it); its error declines the fast path.
func TestDecodeToolResultMeta(t *testing.T) {
	var seen string
	var r mcp.CallToolResult
	raw := `{"content":[{"type":"text","text":"a","_meta":{"b":1}}],"_meta":{"a":1}}`
	ok := DecodeToolResult([]byte(raw), &r, func(b []byte, m *mcp.Meta) error {
		seen = string(b)
		*m = mcp.Meta{"x": true}
		return nil
	})
	if !ok || seen != `{"a":1}` || !reflect.DeepEqual(r.Meta, mcp.Meta{"x": true}) {
		t.Fatalf("taken %v, hook saw %s, meta %#v", ok, seen, r.Meta)
	}
	r = mcp.CallToolResult{}
	if DecodeToolResult([]byte(raw), &r, func([]byte, *mcp.Meta) error { return json.ErrUnknownName }) {
		t.Fatal("taken although the hook failed")
	}
}

// FuzzDecodeToolResult holds the fast decode to the decoder's for any
// text.
func FuzzDecodeToolResult(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"{\"text\":\"hi\"}"}],"structuredContent":{"text":"hi"}}`,
		`{"resultType":"complete","content":[],"_meta":{"k":"v"},"isError":true}`,
		`{"structuredContent":[1,{"a":"b"}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		checkDecodeToolResult(t, raw)
	})
}
