package client_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// typedFake is a legacy fake server for the typed call: tools/list
// answers tools (counting the listings), tools/call answers result with
// the arguments it received recorded.
type typedFake struct {
	tools    atomic.Pointer[[]mcp.Tool]
	result   atomic.Pointer[mcp.CallToolResult]
	listErr  atomic.Pointer[jsonrpc.Error]
	listings atomic.Int32
	args     atomic.Pointer[jsontext.Value]
}

func (tf *typedFake) handle(_ context.Context, m *jsonrpc.Message) (any, error) {
	switch m.Method {
	case mcp.MethodInitialize:
		return initializeResult(), nil
	case mcp.MethodToolsList:
		tf.listings.Add(1)
		if e := tf.listErr.Load(); e != nil {
			return nil, e
		}
		return &mcp.ListToolsResult{Tools: *tf.tools.Load()}, nil
	case mcp.MethodToolsCall:
		var p mcp.CallToolParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return nil, err
		}
		args := p.Arguments
		tf.args.Store(&args)
		if r := tf.result.Load(); r != nil {
			return r, nil
		}
		return nil, jsonrpc.NewError(mcp.CodeInternalError, "no result today")
	}
	return nil, jsonrpc.ErrMethodNotFound
}

func newTypedFake(t *testing.T, tools ...mcp.Tool) (*client.Client, *typedFake) {
	tf := &typedFake{}
	tf.tools.Store(&tools)
	tf.result.Store(&mcp.CallToolResult{Content: []mcp.Content{}})
	tr, _ := startFake(t, tf.handle)
	return connect(t, tr, &client.Options{ProtocolVersion: mcp.LatestLegacy}), tf
}

type sumOut struct {
	Sum int `json:"sum"`
}

const sumSchema = `{"type":"object","properties":{"sum":{"type":"integer"}},"required":["sum"]}`

// TestCallToolArgs: what a typed call's arguments may be, and the error
// (before anything is sent) for what they may not.
func TestCallToolArgs(t *testing.T) {
	c, tf := newTypedFake(t, mcp.Tool{Name: "t"})
	tf.result.Store(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}})
	type in struct {
		A int    `json:"a"`
		B string `json:"b,omitzero"`
	}
	var nilPtr *in
	var nilMap map[string]any
	for _, c2 := range []struct {
		name string
		args any
		want string // the arguments sent; "" for none
	}{
		{"nil", nil, ""},
		{"nil pointer", nilPtr, ""},
		{"nil map", nilMap, ""},
		{"struct", in{A: 1}, `{"a":1}`},
		{"pointer", &in{A: 2, B: "x"}, `{"a":2,"b":"x"}`},
		{"map", map[string]int{"a": 3}, `{"a":3}`},
		{"raw", jsontext.Value(`{"a":4}`), `{"a":4}`},
	} {
		tf.args.Store(nil)
		got, _, err := client.CallTool[string](testCtx(t), c, "t", c2.args)
		if err != nil || got != "ok" {
			t.Fatalf("%s: CallTool = %q, %v", c2.name, got, err)
		}
		sent := string(*tf.args.Load())
		if sent != c2.want {
			t.Errorf("%s: sent arguments %q, want %q", c2.name, sent, c2.want)
		}
	}
	for _, c2 := range []struct {
		name string
		args any
		want string
	}{
		{"slice", []int{1}, "not an array"},
		{"string", "a", "not a string"},
		{"number", 3, "not a number"},
		{"bool", true, "not a boolean"},
		{"raw null", jsontext.Value(`null`), "not null"},
		{"raw array", jsontext.Value(`[1]`), "not an array"},
		{"raw garbage", jsontext.Value(`{`), "not valid JSON"},
		{"unencodable", map[string]any{"c": make(chan int)}, "encoding the arguments"},
	} {
		tf.args.Store(nil)
		_, res, err := client.CallTool[string](testCtx(t), c, "t", c2.args)
		if err == nil || res != nil || !strings.HasPrefix(err.Error(), `client: CallTool "t": `) || !strings.Contains(err.Error(), c2.want) {
			t.Errorf("%s: CallTool = (%v, %v), want an error containing %q and no result", c2.name, res, err, c2.want)
		}
		if tf.args.Load() != nil {
			t.Errorf("%s: the call was sent", c2.name)
		}
	}
}

// TestCallToolResults: how results decode into Out.
func TestCallToolResults(t *testing.T) {
	c, tf := newTypedFake(t, mcp.Tool{Name: "sum", OutputSchema: jsontext.Value(sumSchema)}, mcp.Tool{Name: "free"})
	ctx := testCtx(t)
	set := func(res *mcp.CallToolResult) { tf.result.Store(res) }

	// A string Out joins the text blocks when there is no structured
	// content; other blocks are skipped.
	set(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}, &mcp.TextContent{Text: "b"}}})
	if s, _, err := client.CallTool[string](ctx, c, "free", nil); err != nil || s != "ab" {
		t.Errorf("string Out = %q, %v; want the joined text", s, err)
	}
	// A string Out with structured content decodes it (a JSON string).
	set(&mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: jsontext.Value(`"structured"`)})
	if s, _, err := client.CallTool[string](ctx, c, "free", nil); err != nil || s != "structured" {
		t.Errorf("string Out from structuredContent = %q, %v", s, err)
	}
	// Any other Out needs structured content.
	set(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "7"}}})
	if _, res, err := client.CallTool[sumOut](ctx, c, "sum", nil); err == nil || res == nil || !strings.Contains(err.Error(), "no structuredContent") {
		t.Errorf("no structuredContent: (%v, %v), want an error and the result", res, err)
	}
	// Valid against the schema: decoded.
	set(&mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: jsontext.Value(`{"sum":7}`)})
	if out, _, err := client.CallTool[sumOut](ctx, c, "sum", nil); err != nil || out.Sum != 7 {
		t.Errorf("valid result: %+v, %v", out, err)
	}
	// Against the schema: an *OutputSchemaError, with the result.
	set(&mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: jsontext.Value(`{"sum":"seven"}`)})
	_, res, err := client.CallTool[sumOut](ctx, c, "sum", nil)
	var se *client.OutputSchemaError
	if !errors.As(err, &se) || se.Tool != "sum" || res == nil {
		t.Errorf("schema mismatch: (%v, %v), want *OutputSchemaError and the result", res, err)
	}
	// A tool without an outputSchema is decoded without validation; a
	// content that does not decode into Out is an error naming Out.
	set(&mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: jsontext.Value(`{"sum":"seven"}`)})
	if _, _, err := client.CallTool[sumOut](ctx, c, "free", nil); err == nil || errors.As(err, &se) || !strings.Contains(err.Error(), "client_test.sumOut") {
		t.Errorf("undecodable content without a schema: %v, want a decoding error naming the type", err)
	}
	// isError: a *ToolError with the text, and the result.
	set(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "boom"}}})
	var te *client.ToolError
	if _, res, err := client.CallTool[sumOut](ctx, c, "sum", nil); !errors.As(err, &te) || te.Text != "boom" || te.Tool != "sum" || res == nil {
		t.Errorf("isError: (%v, %v), want *ToolError boom and the result", res, err)
	}
	// A protocol error is the method's, as is, with no result.
	tf.result.Store(nil)
	if _, res, err := client.CallTool[sumOut](ctx, c, "sum", nil); res != nil || !strings.Contains(err.Error(), "no result today") {
		t.Errorf("a JSON-RPC error: (%v, %v), want it and no result", res, err)
	} else if e, ok := jsonrpc.AsError(err); !ok || e.Code != mcp.CodeInternalError {
		t.Errorf("the JSON-RPC error is not returned as a *jsonrpc.Error: %v", err)
	}
}

// TestCallToolSchemaListing: the output schemas come from one listing;
// an unknown tool does not list again until the tools change; a schema
// that does not compile and a listing that fails are errors.
func TestCallToolSchemaListing(t *testing.T) {
	c, tf := newTypedFake(t, mcp.Tool{Name: "sum", OutputSchema: jsontext.Value(sumSchema)})
	ctx := testCtx(t)
	tf.result.Store(&mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: jsontext.Value(`{"sum":1}`)})
	for range 3 {
		if _, _, err := client.CallTool[sumOut](ctx, c, "sum", nil); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if _, _, err := client.CallTool[sumOut](ctx, c, "unknown", nil); err != nil {
			t.Fatalf("unknown tool: %v (decoded without a schema)", err)
		}
	}
	if n := tf.listings.Load(); n != 1 {
		t.Errorf("%d tools/list for five typed calls, want 1", n)
	}

	// A new schema is seen after the tools change (the client forgets on
	// notifications/tools/list_changed; an explicit listing records it).
	tf.tools.Store(&[]mcp.Tool{{Name: "sum", OutputSchema: jsontext.Value(`{"type":"object","properties":{"sum":{"type":"string"}}}`)}})
	if _, err := c.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var se *client.OutputSchemaError
	if _, _, err := client.CallTool[sumOut](ctx, c, "sum", nil); !errors.As(err, &se) {
		t.Errorf("after the schema changed: %v, want *OutputSchemaError", err)
	}

	// A schema that does not compile is an error naming the tool.
	tf.tools.Store(&[]mcp.Tool{{Name: "sum", OutputSchema: jsontext.Value(`{"type":12}`)}})
	if _, err := c.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := client.CallTool[sumOut](ctx, c, "sum", nil); err == nil || !strings.Contains(err.Error(), `tool "sum": its outputSchema does not compile`) {
		t.Errorf("uncompilable schema: %v", err)
	}
}

// TestCallToolListingFails: a listing error fails the typed call with a
// message that says why the client listed.
func TestCallToolListingFails(t *testing.T) {
	c, tf := newTypedFake(t)
	tf.listErr.Store(jsonrpc.NewError(mcp.CodeInternalError, "no listing today"))
	tf.result.Store(&mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: jsontext.Value(`{"sum":1}`)})
	_, res, err := client.CallTool[sumOut](testCtx(t), c, "sum", nil)
	if err == nil || res == nil || !strings.Contains(err.Error(), "listing the tools to learn the outputSchema") || !strings.Contains(err.Error(), "no listing today") {
		t.Errorf("(%v, %v), want the listing error and the result", res, err)
	}
}
