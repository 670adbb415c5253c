package server

// Options.MaxToolResultBytes: a result larger than the cap, measured on
// its encoding, becomes a tool error naming the size and the cap — for
// raw and typed tools, a kind of content the fast bound does not cover,
// and a task's result, in both eras on both transports; a result of
// exactly the cap passes; the default and "no cap"; and the fast bound
// never under-estimates.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

const testResultCap = 2000

func xResult(n int) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: strings.Repeat("x", n)}}}
}

func encodedSize(t *testing.T, v any) int {
	t.Helper()
	b, err := jsonv2.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// toolResultOf decodes a tools/call result (or a 2025 tasks/result).
func toolResultOf(t *testing.T, raw json.RawMessage) (text string, isError bool) {
	t.Helper()
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("tools/call answered %s", raw)
	}
	return r.Content[0].Text, r.IsError
}

func wantCapped(t *testing.T, what, text string, isError bool, size int) {
	t.Helper()
	want := fmt.Sprintf("is %d bytes encoded, more than this server's limit of %d bytes", size, testResultCap)
	if !isError || !strings.Contains(text, want) {
		t.Errorf("%s: answered isError=%v %.200q, want a tool error containing %q", what, isError, text, want)
	}
}

func TestToolResultCap(t *testing.T) {
	// The largest text result that fits, measured as the server encodes it.
	fits := testResultCap - encodedSize(t, xResult(0))
	big := xResult(3 * testResultCap)
	bigSize := encodedSize(t, big)
	type blob struct {
		Blob string `json:"blob"`
	}
	typedOut := blob{Blob: strings.Repeat("y", testResultCap)}
	raw, _ := jsonv2.Marshal(typedOut)
	typedSize := encodedSize(t, &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: string(raw)}}, StructuredContent: raw})
	link := &mcp.CallToolResult{Content: mcp.Contents{&mcp.ResourceLink{Resource: mcp.Resource{URI: "file:///big", Name: "big", Description: strings.Repeat("d", testResultCap)}}}}
	linkSize := encodedSize(t, link)

	eachPeer(t, &Options{MaxToolResultBytes: testResultCap}, func(t *testing.T, fx *taskFixture, p taskPeer) {
		s := fx.srv
		raw := func(name string, res *mcp.CallToolResult) {
			if err := s.AddRawTool(&mcp.Tool{Name: name}, func(context.Context, *CallToolRequest) (*mcp.CallToolResult, error) { return res, nil }); err != nil {
				t.Fatal(err)
			}
		}
		raw("fits", xResult(fits))
		raw("over", xResult(fits+1))
		raw("big", big)
		raw("link", link)
		if err := AddTool(s, &mcp.Tool{Name: "typed"}, func(context.Context, *CallToolRequest, struct{}) (blob, error) { return typedOut, nil }); err != nil {
			t.Fatal(err)
		}
		if err := AddTool(s, &mcp.Tool{Name: "bigtask", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
			func(context.Context, *CallToolRequest, struct{}) (*mcp.CallToolResult, error) { return big, nil }); err != nil {
			t.Fatal(err)
		}
		call := func(name string) (string, bool) {
			t.Helper()
			res, e := p.call(t, mcp.MethodToolsCall, map[string]any{"name": name, "arguments": map[string]any{}})
			if e != nil {
				t.Fatalf("tools/call %s: %v", name, e)
			}
			return toolResultOf(t, res)
		}
		if text, isErr := call("fits"); isErr || len(text) != fits {
			t.Errorf("a result of exactly the cap: isError=%v, %d bytes of text, want it whole", isErr, len(text))
		}
		text, isErr := call("over")
		wantCapped(t, "one byte over", text, isErr, testResultCap+1)
		text, isErr = call("big")
		wantCapped(t, "raw tool", text, isErr, bigSize)
		text, isErr = call("typed")
		wantCapped(t, "typed tool", text, isErr, typedSize)
		text, isErr = call("link")
		wantCapped(t, "resource link", text, isErr, linkSize)

		id := startTask(t, p, "bigtask", nil)
		w := waitStatus(t, p, id, "completed")
		if p.modern() {
			if w.Result == nil || len(w.Result.Content) != 1 {
				t.Fatalf("completed task = %+v", w)
			}
			wantCapped(t, "task", w.Result.Content[0].Text, w.Result.IsError, bigSize)
			return
		}
		res, e := p.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id})
		if e != nil {
			t.Fatalf("tasks/result: %v", e)
		}
		text, isErr = toolResultOf(t, res)
		wantCapped(t, "task", text, isErr, bigSize)
	})
}

func TestToolResultCapDefault(t *testing.T) {
	ctx := context.Background()
	over := xResult(DefaultMaxToolResultBytes) // its encoding is larger than its text
	res := New(nil).capToolResult(ctx, "t", over)
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, fmt.Sprintf("limit of %d bytes", DefaultMaxToolResultBytes)) {
		t.Errorf("default cap: a result over %d bytes passed", DefaultMaxToolResultBytes)
	}
	under := xResult(DefaultMaxToolResultBytes - 100)
	if res := New(nil).capToolResult(ctx, "t", under); res != under {
		t.Error("default cap: a result under it was replaced")
	}
	if res := New(&Options{MaxToolResultBytes: -1}).capToolResult(ctx, "t", over); res != over {
		t.Error("MaxToolResultBytes -1: the result was replaced")
	}
}

// TestToolResultBound: the bound that spares most results an encoding is
// never below the encoded size, whatever needs escaping.
func TestToolResultBound(t *testing.T) {
	nasty := "\x00\x01\"\\<>&\u2028\u2029\x7f" + "é" + "\xff"
	prio := 0.5
	cases := []*mcp.CallToolResult{
		{},
		xResult(10),
		{Content: mcp.Contents{&mcp.TextContent{Text: strings.Repeat("\x01", 5000)}}, StructuredContent: jsontext.Value(`"` + strings.Repeat(`\u0001`, 500) + `"`)},
		{Content: mcp.Contents{&mcp.TextContent{Text: strings.Repeat(nasty, 50), Annotations: &mcp.Annotations{Audience: []mcp.Role{"user", mcp.Role(nasty)}, Priority: &prio, LastModified: nasty},
			Meta: mcp.Meta{nasty: nasty, "raw": jsontext.Value(`{"a":"\u0001"}`)}}}},
		{Content: mcp.Contents{&mcp.ImageContent{Data: []byte(nasty), MIMEType: nasty}, &mcp.AudioContent{Data: make([]byte, 1001), MIMEType: "audio/wav"}},
			StructuredContent: jsontext.Value(`{"k":"` + strings.Repeat(`\u0000`, 20) + `","<":"</script>"}`), IsError: true,
			Meta: mcp.Meta{"x": jsontext.Value(`[1,2,3]`)}},
	}
	for i, res := range cases {
		for _, tight := range []bool{false, true} {
			bound, ok := resultBound(res, tight)
			if !ok {
				t.Errorf("case %d: not bounded", i)
				continue
			}
			for _, opts := range [][]jsonv2.Options{
				{jsontext.AllowInvalidUTF8(true)},
				{jsontext.AllowInvalidUTF8(true), jsontext.EscapeForHTML(true), jsontext.EscapeForJS(true)},
			} {
				b, err := jsonv2.Marshal(res, opts...)
				if err != nil {
					t.Fatalf("case %d: %v", i, err)
				}
				if bound < len(b) {
					t.Errorf("case %d (tight %v): bound %d below the encoded size %d", i, tight, bound, len(b))
				}
			}
		}
	}
	if _, ok := resultBound(&mcp.CallToolResult{Meta: mcp.Meta{"n": 1}}, false); ok {
		t.Error("a _meta value of another type was bounded")
	}
}

// TestToolResultCapLargeTextNotEncoded: a large text result of plain
// characters under the cap is settled by the tight bound, a scan of its
// bytes, and not encoded once more just to be measured (the quick bound,
// six bytes a byte, put any text over about 680 KiB past the default
// cap). Encoding it allocates; the scan does not.
func TestToolResultCapLargeTextNotEncoded(t *testing.T) {
	s := New(nil)
	ctx := context.Background()
	res := &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: strings.Repeat("plain text, line after line\n", 3<<20/28)}}}
	if quick, _ := resultBound(res, false); quick <= DefaultMaxToolResultBytes {
		t.Fatalf("the quick bound %d is under the cap: the case tests nothing", quick)
	}
	var got *mcp.CallToolResult
	allocs := testing.AllocsPerRun(5, func() { got = s.capToolResult(ctx, "big", res) })
	if got != res {
		t.Fatal("a 3 MiB text result under the cap was replaced")
	}
	if allocs != 0 {
		t.Errorf("capToolResult allocated %v times for a text result the scan settles; want 0 (no encoding)", allocs)
	}
}
