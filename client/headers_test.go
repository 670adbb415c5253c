package client_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// headerTools are the tools of the conformance scenario
// http-invalid-tool-headers (valid_tool and one tool per invalid kind),
// plus a tool annotated in every legal way.
var headerTools = []mcp.Tool{
	{Name: "valid_tool", InputSchema: jsontext.Value(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`)},
	{Name: "invalid_empty_header", InputSchema: jsontext.Value(`{"type":"object","properties":{"value":{"type":"string","x-mcp-header":""}}}`)},
	{Name: "invalid_object_header", InputSchema: jsontext.Value(`{"type":"object","properties":{"data":{"type":"object","x-mcp-header":"Data"}}}`)},
	{Name: "invalid_array_header", InputSchema: jsontext.Value(`{"type":"object","properties":{"items":{"type":"array","items":{"type":"string"},"x-mcp-header":"Items"}}}`)},
	{Name: "invalid_null_header", InputSchema: jsontext.Value(`{"type":"object","properties":{"nil":{"type":"null","x-mcp-header":"Nil"}}}`)},
	{Name: "invalid_number_header", InputSchema: jsontext.Value(`{"type":"object","properties":{"score":{"type":"number","x-mcp-header":"Score"}}}`)},
	{Name: "invalid_duplicate_same_case", InputSchema: jsontext.Value(`{"type":"object","properties":{"field1":{"type":"string","x-mcp-header":"Region"},"field2":{"type":"string","x-mcp-header":"Region"}}}`)},
	{Name: "invalid_duplicate_diff_case", InputSchema: jsontext.Value(`{"type":"object","properties":{"field1":{"type":"string","x-mcp-header":"MyField"},"field2":{"type":"string","x-mcp-header":"myfield"}}}`)},
	{Name: "invalid_space_in_name", InputSchema: jsontext.Value(`{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"My Region"}}}`)},
	{Name: "invalid_colon_in_name", InputSchema: jsontext.Value(`{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Region:Primary"}}}`)},
	{Name: "invalid_non_ascii_name", InputSchema: jsontext.Value(`{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Région"}}}`)},
	{Name: "invalid_control_char_name", InputSchema: jsontext.Value(`{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Region\t1"}}}`)},
	{Name: "invalid_in_items", InputSchema: jsontext.Value(`{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"L"}}}}`)},
	{Name: "all_kinds", InputSchema: jsontext.Value(`{"type":"object","properties":{` +
		`"region":{"type":"string","x-mcp-header":"Region"},"priority":{"type":"integer","x-mcp-header":"Priority"},` +
		`"verbose":{"type":"boolean","x-mcp-header":"Verbose"},"greeting":{"type":"string","x-mcp-header":"Greeting"},` +
		`"float_val":{"type":"number"},"query":{"type":"string"},` +
		`"nested":{"type":"object","properties":{"id":{"type":"string","x-mcp-header":"Id"}}},` +
		`"profile":{"$ref":"http://127.0.0.1:1/canary.json"}}}`)},
}

// TestInvalidToolsDropped: tools with invalid annotations are left out of
// the client's view (and the cache keeps the raw page: they are dropped
// again when it is served from there), and are never called.
func TestInvalidToolsDropped(t *testing.T) {
	tr, f := startFake(t, func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
		switch msg.Method {
		case mcp.MethodToolsList:
			return toolsResult(ttl(60_000), mcp.CachePrivate, headerTools...), nil
		case mcp.MethodToolsCall:
			return modernServer(ctx, msg)
		}
		return nil, jsonrpc.ErrMethodNotFound
	})
	c := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20260728, Observe: modernWire(t)})
	ctx := testCtx(t)
	for range 2 { // from the server, then from the cache
		var names []string
		for tool, err := range c.Tools(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tool.Name)
		}
		if !slices.Equal(names, []string{"valid_tool", "all_kinds"}) {
			t.Errorf("tools %v, want valid_tool and all_kinds", names)
		}
	}
	if got := f.methods(); !slices.Equal(got, []string{mcp.MethodToolsList}) {
		t.Errorf("requests %v, want one tools/list", got)
	}
	for _, tool := range headerTools[1:13] {
		if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: jsontext.Value(`{}`)}); !errors.Is(err, client.ErrInvalidTool) {
			t.Errorf("calling %s: %v, want ErrInvalidTool", tool.Name, err)
		}
	}
	if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "valid_tool", Arguments: jsontext.Value(`{"region":"us-west1"}`)}); err != nil {
		t.Fatal(err)
	}
	if got := f.methods(); !slices.Equal(got, []string{mcp.MethodToolsList, mcp.MethodToolsCall}) {
		t.Errorf("requests %v: an invalid tool reached the server", got)
	}
}

// TestParamHeadersAttached: tools/call attaches Mcp-Param-{Name} for each
// annotated argument present and not null, as text (strings as they are,
// integers in decimal, booleans true/false), and nothing for unannotated
// arguments or tools not listed yet.
func TestParamHeadersAttached(t *testing.T) {
	a, f := startFake(t, func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
		if msg.Method == mcp.MethodToolsList {
			return toolsResult(ttl(0), mcp.CachePrivate, headerTools...), nil
		}
		return modernServer(ctx, msg)
	})
	tap := &headerTap{Conn: a}
	c := connect(t, tap, &client.Options{ProtocolVersion: mcp.Version20260728})
	ctx := testCtx(t)
	if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "all_kinds", Arguments: jsontext.Value(`{"region":"us-west1"}`)}); err != nil {
		t.Fatal(err)
	}
	if hs := tap.of(mcp.MethodToolsCall); len(hs) != 0 {
		t.Errorf("headers %v for a tool not listed yet", hs)
	}
	if _, err := c.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args string
		want []transport.Header
	}{
		{`{"region":"us-west1","priority":42,"verbose":false,"greeting":"Hello, 世界","float_val":3.14,"query":"SELECT 1","nested":{"id":"n-1"},"profile":{}}`,
			[]transport.Header{{Name: "Mcp-Param-Region", Value: "us-west1"}, {Name: "Mcp-Param-Priority", Value: "42"}, {Name: "Mcp-Param-Verbose", Value: "false"}, {Name: "Mcp-Param-Greeting", Value: "Hello, 世界"}, {Name: "Mcp-Param-Id", Value: "n-1"}}},
		{`{"region":"","priority":-1,"verbose":true}`,
			[]transport.Header{{Name: "Mcp-Param-Region", Value: ""}, {Name: "Mcp-Param-Priority", Value: "-1"}, {Name: "Mcp-Param-Verbose", Value: "true"}}},
		{`{"region":"us-east1","priority":1,"verbose":null,"nested":null}`,
			[]transport.Header{{Name: "Mcp-Param-Region", Value: "us-east1"}, {Name: "Mcp-Param-Priority", Value: "1"}}},
		{`{}`, nil},
	} {
		if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "all_kinds", Arguments: jsontext.Value(tc.args)}); err != nil {
			t.Fatal(err)
		}
		got := tap.of(mcp.MethodToolsCall)
		slices.SortFunc(got, func(a, b transport.Header) int { return compare(a.Name, b.Name) })
		want := slices.Clone(tc.want)
		slices.SortFunc(want, func(a, b transport.Header) int { return compare(a.Name, b.Name) })
		if !slices.Equal(got, want) {
			t.Errorf("args %s: headers %v, want %v", tc.args, got, want)
		}
	}
	_ = f
}

// TestParamHeadersOnRetry: the retry of a tools/call that required input
// (SEP-2322) carries the call's Mcp-Param-* headers again, while what an
// input handler sends with the context it is given carries none: the
// headers belong to the message, not to the context.
func TestParamHeadersOnRetry(t *testing.T) {
	s := &script{method: mcp.MethodToolsCall, answers: []jsontext.Value{
		inputRequired(map[string]string{"who": elicitName}, []string{"who"}, `"st"`),
		jsontext.Value(doneResult),
	}}
	a, _ := startFake(t, func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
		if msg.Method == mcp.MethodToolsList {
			return toolsResult(ttl(0), mcp.CachePrivate, headerTools...), nil
		}
		return s.handle(ctx, msg)
	})
	tap := &headerTap{Conn: a}
	var c *client.Client
	c = connect(t, tap, &client.Options{
		ProtocolVersion: mcp.Version20260728,
		ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			if _, err := c.ListTools(ctx, nil); err != nil {
				return nil, err
			}
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "n"}}, nil
		},
	})
	ctx := testCtx(t)
	if _, err := c.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "valid_tool", Arguments: jsontext.Value(`{"region":"eu"}`)}); err != nil {
		t.Fatal(err)
	}
	want := []transport.Header{{Name: "Mcp-Param-Region", Value: "eu"}}
	calls := tap.all(mcp.MethodToolsCall)
	if len(calls) != 2 || !slices.Equal(calls[0], want) || !slices.Equal(calls[1], want) {
		t.Errorf("tools/call headers %v, want %v on both legs", calls, want)
	}
	lists := tap.all(mcp.MethodToolsList)
	if len(lists) != 2 || lists[1] != nil {
		t.Errorf("the input handler's tools/list carried headers %v", lists)
	}
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestHeaderMismatchRefreshesTools: a -32020 answer to tools/call makes
// the client list the tools again (bypassing the cache) and retry once.
func TestHeaderMismatchRefreshesTools(t *testing.T) {
	mismatches := 1
	tr, f := startFake(t, func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
		switch msg.Method {
		case mcp.MethodToolsList:
			return toolsResult(ttl(60_000), mcp.CachePrivate, headerTools[0]), nil
		case mcp.MethodToolsCall:
			if mismatches > 0 {
				mismatches--
				return nil, jsonrpc.NewError(mcp.CodeHeaderMismatch, "Header mismatch: the Mcp-Param-Region header is missing")
			}
		}
		return modernServer(ctx, msg)
	})
	c := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20260728})
	ctx := testCtx(t)
	if _, err := c.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "valid_tool", Arguments: jsontext.Value(`{"region":"r"}`)}); err != nil {
		t.Fatal(err)
	}
	want := []string{mcp.MethodToolsList, mcp.MethodToolsCall, mcp.MethodToolsList, mcp.MethodToolsCall}
	if got := f.methods(); !slices.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
	mismatches = 5
	_, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "valid_tool", Arguments: jsontext.Value(`{"region":"r"}`)})
	if e, ok := jsonrpc.AsError(err); !ok || e.Code != mcp.CodeHeaderMismatch {
		t.Errorf("err %v, want the -32020 of the retry", err)
	}
}
