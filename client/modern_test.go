package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// modernServer answers every method of a modern server with a small
// complete result; server/discover names 2026-07-28.
func modernServer(ctx context.Context, msg *jsonrpc.Message) (any, error) {
	switch msg.Method {
	case mcp.MethodServerDiscover:
		return discoverResult(mcp.Version20260728), nil
	case mcp.MethodToolsList:
		return toolsResult(ttl(0), mcp.CachePrivate, mcp.Tool{Name: "t", InputSchema: jsontext.Value(`{"type":"object"}`)}), nil
	case mcp.MethodToolsCall:
		return &mcp.CallToolResult{ResultType: mcp.ResultComplete, Content: mcp.Contents{&mcp.TextContent{Text: "ok"}}, Meta: withServerInfo()}, nil
	case mcp.MethodPromptsList:
		return &mcp.ListPromptsResult{ResultType: mcp.ResultComplete, Prompts: []mcp.Prompt{}, TTLMs: ttl(0), CacheScope: mcp.CachePrivate}, nil
	case mcp.MethodPromptsGet:
		return &mcp.GetPromptResult{ResultType: mcp.ResultComplete, Messages: []mcp.PromptMessage{}}, nil
	case mcp.MethodResourcesList:
		return &mcp.ListResourcesResult{ResultType: mcp.ResultComplete, Resources: []mcp.Resource{}, TTLMs: ttl(0), CacheScope: mcp.CachePrivate}, nil
	case mcp.MethodResourcesTemplatesList:
		return &mcp.ListResourceTemplatesResult{ResultType: mcp.ResultComplete, ResourceTemplates: []mcp.ResourceTemplate{}, TTLMs: ttl(0), CacheScope: mcp.CachePrivate}, nil
	case mcp.MethodResourcesRead:
		return &mcp.ReadResourceResult{ResultType: mcp.ResultComplete, Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: "x://a", Text: "a"}}, TTLMs: ttl(0), CacheScope: mcp.CachePrivate}, nil
	case mcp.MethodCompletionComplete:
		return &mcp.CompleteResult{ResultType: mcp.ResultComplete, Completion: mcp.Completion{Values: []string{}}}, nil
	}
	return nil, jsonrpc.ErrMethodNotFound
}

// TestEnvelopeOnEveryRequest: every modern request carries the protocol
// version, the client capabilities derived from the registered handlers
// (objects, in their 2026 form) and the client identity; other _meta keys
// are kept and the caller's params are never changed.
func TestEnvelopeOnEveryRequest(t *testing.T) {
	tr, f := startFake(t, modernServer)
	c := connect(t, tr, &client.Options{
		Info:                 mcp.Implementation{Name: "envelope-test", Version: "3"},
		Observe:              modernWire(t),
		ElicitHandler:        func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) { return nil, nil },
		ElicitationURL:       true,
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) { return nil, nil },
		SamplingTools:        true,
		ListRootsHandler:     func(context.Context) (*mcp.ListRootsResult, error) { return nil, nil },
		OnToolsListChanged:   func(context.Context) {},
		ElicitationDefaults:  true,
	})
	ctx := testCtx(t)
	callerMeta := mcp.Meta{"com.example/trace": "abc"}
	p := &mcp.CallToolParams{Meta: callerMeta, Name: "t", Arguments: jsontext.Value(`{}`)}
	progressCtx := client.WithProgress(ctx, func(*mcp.ProgressParams) {})
	if _, err := c.CallTool(progressCtx, p); err != nil {
		t.Fatal(err)
	}
	if len(callerMeta) != 1 || p.Meta["com.example/trace"] != "abc" || len(p.Meta) != 1 {
		t.Errorf("the caller's params changed: %v", p.Meta)
	}
	calls := []func() error{
		func() error { _, err := c.ListTools(ctx, nil); return err },
		func() error { _, err := c.ListPrompts(ctx, nil); return err },
		func() error { _, err := c.GetPrompt(ctx, &mcp.GetPromptParams{Name: "p"}); return err },
		func() error { _, err := c.ListResources(ctx, nil); return err },
		func() error { _, err := c.ListResourceTemplates(ctx, nil); return err },
		func() error { _, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "x://a"}); return err },
		func() error {
			_, err := c.Complete(ctx, &mcp.CompleteParams{Ref: mcp.CompleteReference{Type: mcp.RefPrompt, Name: "p"}, Argument: mcp.CompleteArgument{Name: "a", Value: "b"}})
			return err
		},
		func() error { _, err := c.Discover(ctx); return err },
	}
	for _, call := range calls {
		if err := call(); err != nil {
			t.Fatal(err)
		}
	}
	reqs := f.requests()
	if len(reqs) != 1+1+len(calls) { // the probe, tools/call, the rest
		t.Fatalf("%d requests", len(reqs))
	}
	wantCaps := `{"roots":{},"sampling":{"tools":{}},"elicitation":{"form":{"applyDefaults":true},"url":{}}}`
	for _, r := range reqs {
		meta := envelopeOf(t, r)
		if v := meta.ProtocolVersion(); v != mcp.Version20260728 {
			t.Errorf("%s: protocolVersion %q", r.Method, v)
		}
		var caps jsontext.Value
		if ok, _ := meta.Get(mcp.MetaKeyClientCapabilities, &caps); !ok || !sameJSON(t, caps, wantCaps) {
			t.Errorf("%s: clientCapabilities %s, want %s", r.Method, caps, wantCaps)
		}
		if info, err := meta.ClientInfo(); err != nil || info == nil || info.Name != "envelope-test" || info.Version != "3" {
			t.Errorf("%s: clientInfo %+v %v", r.Method, info, err)
		}
		if _, ok := meta.LogLevel(); ok {
			t.Errorf("%s: a logLevel without SetLoggingLevel", r.Method)
		}
	}
	call := envelopeOf(t, reqs[1])
	if _, ok := call.ProgressToken(); !ok || call["com.example/trace"] == nil {
		t.Errorf("tools/call _meta lost the caller's keys: %v", call)
	}
}

func sameJSON(t testing.TB, a jsontext.Value, b string) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x, json.Deterministic(true))
	ya, _ := json.Marshal(y, json.Deterministic(true))
	return string(xa) == string(ya)
}

// TestLogLevel: on a modern connection SetLoggingLevel sends nothing and
// every later request carries the level; the request's own level wins.
func TestLogLevel(t *testing.T) {
	tr, f := startFake(t, modernServer)
	c := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20260728, Observe: modernWire(t)})
	ctx := testCtx(t)
	if err := c.SetLoggingLevel(ctx, mcp.LevelWarning); err != nil {
		t.Fatal(err)
	}
	if err := c.SetLoggingLevel(ctx, "loud"); err == nil {
		t.Error("an invalid level was accepted")
	}
	if _, err := c.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "t", Meta: mcp.Meta{mcp.MetaKeyLogLevel: mcp.LevelDebug}}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetLoggingLevel(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListPrompts(ctx, nil); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if len(reqs) != 3 {
		t.Fatalf("requests %v", f.methods())
	}
	for i, want := range []mcp.LoggingLevel{mcp.LevelWarning, mcp.LevelDebug, ""} {
		got, _ := envelopeOf(t, reqs[i]).LogLevel()
		if got != want {
			t.Errorf("%s: logLevel %q, want %q", reqs[i].Method, got, want)
		}
	}
}

// TestRetryOn32022: a request refused with -32022 is retried once, in a
// revision the error names (even the same one), with a new id; a second
// refusal is the caller's error.
func TestRetryOn32022(t *testing.T) {
	refusals := 1
	tr, f := startFake(t, func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
		if msg.Method == mcp.MethodToolsList && refusals > 0 {
			refusals--
			return nil, unsupported(mcp.Version20260728, mcp.Version20260728)
		}
		return modernServer(ctx, msg)
	})
	c := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20260728, Observe: modernWire(t)})
	ctx := testCtx(t)
	if _, err := c.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if len(reqs) != 2 || reqs[0].ID == reqs[1].ID {
		t.Fatalf("requests %v (ids %v %v)", f.methods(), reqs[0].ID, reqs[len(reqs)-1].ID)
	}
	for _, r := range reqs {
		if v := envelopeOf(t, r).ProtocolVersion(); v != mcp.Version20260728 {
			t.Errorf("claims %q", v)
		}
	}
	refusals = 5
	_, err := c.ListTools(ctx, nil)
	if e, ok := jsonrpc.AsError(err); !ok || e.Code != mcp.CodeUnsupportedProtocolVersion {
		t.Fatalf("err %v, want the -32022 of the retry", err)
	}
	if n := len(f.requests()); n != 4 {
		t.Errorf("%d requests, want 4 (one retry per call)", n)
	}
	// A refusal that names no revision this client speaks is not retried.
	tr2, f2 := startFake(t, func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
		return nil, unsupported(mcp.Version20260728, "2099-01-01")
	})
	c2 := connect(t, tr2, &client.Options{ProtocolVersion: mcp.Version20260728})
	if _, err := c2.ListTools(ctx, nil); err == nil || len(f2.requests()) != 1 {
		t.Errorf("err %v after %d requests", err, len(f2.requests()))
	}
}

// TestResultType: an absent resultType is complete; input_required is an
// *InputRequiredError carrying the result; an unknown one is an error.
func TestResultType(t *testing.T) {
	results := map[string]jsontext.Value{
		"absent":   jsontext.Value(`{"content":[{"type":"text","text":"old server"}]}`),
		"complete": jsontext.Value(`{"resultType":"complete","content":[{"type":"text","text":"new server"}]}`),
		"input":    jsontext.Value(`{"resultType":"input_required","inputRequests":{"name":{"method":"elicitation/create","params":{"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"s1"}`),
		"task":     jsontext.Value(`{"resultType":"task","task":{"taskId":"t1"}}`),
		"weird":    jsontext.Value(`{"resultType":"later","content":[]}`),
	}
	tr, _ := startFake(t, func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
		var p mcp.CallToolParams
		_ = json.Unmarshal(msg.Params, &p)
		if msg.Method == mcp.MethodToolsList {
			return jsontext.Value(`{"resultType":"input_required","inputRequests":{}}`), nil
		}
		return results[p.Name], nil
	})
	c := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20260728})
	ctx := testCtx(t)
	for _, name := range []string{"absent", "complete"} {
		res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: name})
		if err != nil || len(res.Content) != 1 {
			t.Errorf("%s: %+v, %v", name, res, err)
		}
	}
	_, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "input"})
	var ir *client.InputRequiredError
	if !errors.As(err, &ir) {
		t.Fatalf("input_required: err %v, want *InputRequiredError", err)
	}
	if ir.Method != mcp.MethodToolsCall || ir.Result.RequestState != "s1" || len(ir.Result.InputRequests) != 1 || !sameJSON(t, ir.Raw, string(results["input"])) {
		t.Errorf("InputRequiredError %+v", ir)
	}
	for _, name := range []string{"task", "weird"} {
		if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: name}); !errors.Is(err, client.ErrResultType) {
			t.Errorf("%s: err %v, want ErrResultType", name, err)
		}
	}
	// input_required is not a valid answer to tools/list.
	if _, err := c.ListTools(ctx, nil); !errors.Is(err, client.ErrResultType) {
		t.Errorf("tools/list input_required: err %v, want ErrResultType", err)
	}
}

// TestRemovedMethods: the requests the modern era removed are refused
// locally, and the modern-only ones on legacy connections.
func TestRemovedMethods(t *testing.T) {
	tr, f := startFake(t, modernServer)
	c := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20260728})
	ctx := testCtx(t)
	for name, err := range map[string]error{
		"ping":          c.Ping(ctx),
		"subscribe":     c.Subscribe(ctx, "x://a"),
		"unsubscribe":   c.Unsubscribe(ctx, "x://a"),
		"roots changed": c.RootsChanged(ctx),
	} {
		if !errors.Is(err, client.ErrModern) {
			t.Errorf("%s: %v, want ErrModern", name, err)
		}
	}
	if n := len(f.requests()) + len(f.notifications()); n != 0 {
		t.Errorf("%d messages reached the server", n)
	}

	ltr, _ := startFake(t, legacyServer(nil))
	lc := connect(t, ltr, &client.Options{ProtocolVersion: mcp.LatestLegacy})
	if _, err := lc.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true}); !errors.Is(err, client.ErrLegacy) {
		t.Errorf("Listen on legacy: %v", err)
	}
	if _, err := lc.Discover(ctx); !errors.Is(err, client.ErrLegacy) {
		t.Errorf("Discover on legacy: %v", err)
	}
}
