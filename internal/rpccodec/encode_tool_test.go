package rpccodec

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonwalk"
	"github.com/mcpkit/mcpkit/mcp"
)

// toolResultOf builds a result from fuzz inputs; structured and meta are
// left out when empty.
func toolResultOf(resultType, text, text2 string, structured, meta []byte, isError bool) *mcp.CallToolResult {
	r := &mcp.CallToolResult{ResultType: mcp.ResultType(resultType), IsError: isError}
	if text != "" {
		r.Content = append(r.Content, &mcp.TextContent{Text: text})
	}
	if text2 != "" {
		r.Content = append(r.Content, &mcp.TextContent{Text: text2})
	}
	if len(structured) > 0 {
		r.StructuredContent = jsontext.Value(structured)
	}
	if len(meta) > 0 {
		r.Meta = mcp.Meta{mcp.MetaKeyServerInfo: jsontext.Value(meta)}
	}
	return r
}

// checkToolResult: whenever the fast path writes, it writes the encoder's
// bytes; and it never writes what the encoder refuses.
func checkToolResult(t *testing.T, r *mcp.CallToolResult) (fast bool) {
	t.Helper()
	var want bytes.Buffer
	werr := json.MarshalWrite(&want, r, marshalOpts)
	got, ok := appendToolResult(nil, r)
	if !ok {
		return false
	}
	if werr != nil {
		t.Fatalf("the fast path wrote %s where the encoder fails: %v", got, werr)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("fast path:\n%s\nencoder:\n%s", got, want.Bytes())
	}
	return true
}

func TestAppendToolResult(t *testing.T) {
	fast := []*mcp.CallToolResult{
		{},
		{ResultType: mcp.ResultComplete, Content: mcp.Contents{&mcp.TextContent{Text: `{"text":"hi"}`}}, StructuredContent: jsontext.Value(`{"text":"hi"}`), Meta: mcp.Meta{mcp.MetaKeyServerInfo: jsontext.Value(`{"name":"x","version":"1"}`)}},
		{Content: mcp.Contents{&mcp.TextContent{Text: "a\n\"b\"\x01\u2028<&>é"}, &mcp.TextContent{Text: ""}}, IsError: true},
		{StructuredContent: jsontext.Value(`{"a":"q\"\\\n","b":[1,-0.0,1E+2,true,null]}`)},
	}
	// Past jsonwalk.Minimal's limits, still verbatim: 33 names, 17 levels.
	var wide, deep strings.Builder
	wide.WriteByte('{')
	for i := range jsonwalk.MinimalMaxNames + 1 {
		if i > 0 {
			wide.WriteByte(',')
		}
		fmt.Fprintf(&wide, `"k%d":%d`, i, i)
	}
	wide.WriteByte('}')
	deep.WriteString(strings.Repeat(`{"a":`, jsonwalk.MinimalMaxDepth+1) + "1" + strings.Repeat("}", jsonwalk.MinimalMaxDepth+1))
	fast = append(fast,
		&mcp.CallToolResult{StructuredContent: jsontext.Value(wide.String())},
		&mcp.CallToolResult{StructuredContent: jsontext.Value(deep.String())},
		&mcp.CallToolResult{StructuredContent: jsontext.Value(strings.Repeat("[", 5000) + strings.Repeat("]", 5000))},
	)
	for _, r := range fast {
		if !checkToolResult(t, r) {
			t.Errorf("%+v: not written by the fast path", r)
		}
	}
	slow := []*mcp.CallToolResult{
		{Content: mcp.Contents{&mcp.ImageContent{Data: []byte("x"), MIMEType: "image/png"}}},
		{Content: mcp.Contents{&mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}}}}},
		{Content: mcp.Contents{nil}},
		{Content: mcp.Contents{&mcp.TextContent{Text: "\xff"}}},
		{StructuredContent: jsontext.Value(`{ "a": 1 }`)},
		{StructuredContent: jsontext.Value(`{"a":"\u0041"}`)},
		{StructuredContent: jsontext.Value(`{"a":"\/"}`)},
		{StructuredContent: jsontext.Value(`{"a":1,"a":2}`)},
		{StructuredContent: jsontext.Value(`{"a":`)},
		{StructuredContent: jsontext.Value{}},
		{Meta: mcp.Meta{"k": 1}},
		{Meta: mcp.Meta{"k": nil}},
		// Deeper than the encoder allows below a result: never verbatim.
		{StructuredContent: jsontext.Value(strings.Repeat("[", 10000) + strings.Repeat("]", 10000))},
	}
	for _, r := range slow {
		if checkToolResult(t, r) {
			t.Errorf("%+v: written by the fast path", r)
		}
	}
}

func FuzzAppendToolResult(f *testing.F) {
	f.Add("complete", `{"text":"hi"}`, "", []byte(`{"text":"hi"}`), []byte(`{"name":"x","version":"1"}`), false)
	f.Add("", "a\n\"b\"", "\x01", []byte(`["\t",1.5e3]`), []byte(`null`), true)
	f.Add("x\xff", "é\u2028", "\\", []byte(`{"a":"\u00e9"}`), []byte(` 1`), false)
	f.Fuzz(func(t *testing.T, resultType, text, text2 string, structured, meta []byte, isError bool) {
		checkToolResult(t, toolResultOf(resultType, text, text2, structured, meta, isError))
	})
}

// TestUnquoteMethod: a method without escapes is its bytes (an MCP
// method its constant); one with escapes is decoded.
func TestUnquoteMethod(t *testing.T) {
	for raw, want := range map[string]string{
		`"tools/call"`:     "tools/call",
		`"tools\/call"`:    "tools/call",
		`"x/\u00e9\"q"`:    "x/é\"q",
		`"vendor/thing é"`: "vendor/thing é",
		`""`:               "",
	} {
		if got, err := unquote(jsontext.Value(raw)); err != nil || got != want {
			t.Errorf("unquote(%s) = %q, %v; want %q", raw, got, err, want)
		}
	}
	m, fail := Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`), 1<<20, 64, true)
	if fail != nil || m.Method != mcp.MethodToolsCall {
		t.Fatalf("%v %v", m, fail)
	}
}
