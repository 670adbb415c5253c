package e2e

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// fixtureTools are the fixture's tool names in the order tools/list must
// give them: sorted.
var fixtureTools = []string{
	"add", "ask", "ask_url", "capture", "defs", "fail", "greet", "log",
	"panic", "progress", "protocol_error", "roots", "sample", "wait",
}

func TestToolsPagination(t *testing.T) {
	t.Parallel()
	s := newFixture(nil).connect(t, "", nil)
	ctx := testCtx(t)

	var names []string
	for tool, err := range s.c.Tools(ctx) {
		if err != nil {
			t.Fatalf("Tools: %v", err)
		}
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, fixtureTools) {
		t.Fatalf("Tools yielded %v, want %v", names, fixtureTools)
	}

	// Page by page: PageSize 2, a cursor on every page but the last.
	var paged []string
	var cursor *string
	pages := 0
	for {
		res, err := s.c.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("tools/list page %d: %v", pages, err)
		}
		pages++
		if len(res.Tools) == 0 || len(res.Tools) > 2 {
			t.Fatalf("page %d has %d tools, want 1 or 2", pages, len(res.Tools))
		}
		for _, tool := range res.Tools {
			paged = append(paged, tool.Name)
		}
		if res.NextCursor == nil {
			break
		}
		cursor = res.NextCursor
	}
	if want := (len(fixtureTools) + 1) / 2; pages != want {
		t.Errorf("%d pages, want %d", pages, want)
	}
	if !slices.Equal(paged, fixtureTools) {
		t.Errorf("pages gave %v", paged)
	}

	// The order is stable from one listing to the next.
	var again []string
	for tool, err := range s.c.Tools(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		again = append(again, tool.Name)
	}
	if !slices.Equal(again, names) {
		t.Errorf("second listing %v differs from the first %v", again, names)
	}
}

// TestToolSchemaSurvives: a hand-written 2020-12 input schema reaches the
// client unchanged, and the server validates arguments against it.
func TestToolSchemaSurvives(t *testing.T) {
	t.Parallel()
	s := newFixture(nil).connect(t, "", nil)
	ctx := testCtx(t)
	var defs *mcp.Tool
	for tool, err := range s.c.Tools(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name == "defs" {
			defs = &tool
		}
	}
	if defs == nil {
		t.Fatal("no defs tool")
	}
	var got, want map[string]any
	if err := json.Unmarshal(defs.InputSchema, &got); err != nil {
		t.Fatalf("inputSchema %s: %v", defs.InputSchema, err)
	}
	if err := json.Unmarshal([]byte(defsSchema), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("inputSchema changed on the way:\n got %s\nwant %s", defs.InputSchema, defsSchema)
	}
	for _, key := range []string{"$defs", "allOf", "if", "then", "else"} {
		if _, ok := got[key]; !ok {
			t.Errorf("inputSchema lost %q", key)
		}
	}
	if pos, _ := got["$defs"].(map[string]any)["pos"].(map[string]any); pos["$anchor"] != "pos" {
		t.Errorf("inputSchema lost $defs.pos.$anchor: %v", got["$defs"])
	}

	// The schema is enforced: n is required (allOf) and must be >= 0
	// through the anchor; mode "strict" is fine with n present.
	// The tool echoes its arguments as the server received them.
	s.wantText(t, "defs", jsontext.Value(`{"n":3,"mode":"strict"}`), `{"n":3,"mode":"strict"}`)
	s.wantToolError(t, "defs", map[string]any{"mode": "loose"}, "invalid arguments")
	s.wantToolError(t, "defs", map[string]any{"n": -1}, "invalid arguments")
}

func TestTypedTool(t *testing.T) {
	t.Parallel()
	s := newFixture(nil).connect(t, "", nil)
	res := s.mustCall(t, "add", map[string]int{"a": 2, "b": 40})
	if res.IsError {
		t.Fatalf("add failed: %s", text(res))
	}
	var structured, fromText addOut
	if err := json.Unmarshal(res.StructuredContent, &structured); err != nil || structured.Sum != 42 {
		t.Errorf("structuredContent %s (%v), want sum 42", res.StructuredContent, err)
	}
	if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil || fromText != structured {
		t.Errorf("text %q does not carry the structured result", text(res))
	}
	// The output schema was inferred and published.
	res2, err := s.c.ListTools(testCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res2.Tools[0].Name != "add" || len(res2.Tools[0].OutputSchema) == 0 {
		t.Errorf("add has no outputSchema: %+v", res2.Tools[0])
	}
}

func TestToolErrors(t *testing.T) {
	t.Parallel()
	s := newFixture(nil).connect(t, "", nil)
	ctx := testCtx(t)

	t.Run("invalid arguments", func(t *testing.T) {
		// The message names the argument and what is wrong with it.
		msg := s.wantToolError(t, "add", map[string]any{"a": "two", "b": 2}, "invalid arguments", "/a", "integer")
		t.Logf("wrong type: %s", msg)
		msg = s.wantToolError(t, "add", map[string]any{"a": 1}, "invalid arguments", `"b"`)
		t.Logf("missing: %s", msg)
		msg = s.wantToolError(t, "add", map[string]any{"a": 1, "b": 2.5}, "invalid arguments", "/b")
		t.Logf("fraction: %s", msg)
	})
	t.Run("handler error", func(t *testing.T) {
		s.wantToolError(t, "fail", nil, "the tool failed on purpose")
	})
	t.Run("jsonrpc error", func(t *testing.T) {
		_, err := s.call(t, ctx, "protocol_error", nil)
		e := wantCode(t, err, -32099)
		if e.Message != "custom protocol error" {
			t.Errorf("message %q", e.Message)
		}
	})
	t.Run("panic", func(t *testing.T) {
		_, err := s.call(t, ctx, "panic", nil)
		wantCode(t, err, mcp.CodeInternalError)
		s.wantText(t, "add", map[string]int{"a": 1, "b": 1}, `{"sum":2}`)
		if err := s.c.Ping(ctx); err != nil {
			t.Errorf("ping after a panic: %v", err)
		}
	})
	t.Run("unknown tool", func(t *testing.T) {
		_, err := s.call(t, ctx, "nope", nil)
		wantCode(t, err, mcp.CodeInvalidParams)
	})
	t.Run("invalid cursor", func(t *testing.T) {
		bogus := "not-a-cursor"
		_, err := s.c.ListTools(ctx, &mcp.ListToolsParams{Cursor: &bogus})
		wantCode(t, err, mcp.CodeInvalidParams)
		_, err = s.c.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: &bogus})
		wantCode(t, err, mcp.CodeInvalidParams)
		_, err = s.c.ListResources(ctx, &mcp.ListResourcesParams{Cursor: &bogus})
		wantCode(t, err, mcp.CodeInvalidParams)
	})
}

// TestProgress: three increasing notifications reach the caller before
// CallTool returns (they precede the response on the wire, and progress is
// delivered on the reader).
func TestProgress(t *testing.T) {
	t.Parallel()
	s := newFixture(nil).connect(t, "", nil)
	var mu sync.Mutex
	var got []mcp.ProgressParams
	ctx := client.WithProgress(testCtx(t), func(p *mcp.ProgressParams) {
		mu.Lock()
		got = append(got, *p)
		mu.Unlock()
	})
	res, err := s.call(t, ctx, "progress", nil)
	if err != nil || res.IsError {
		t.Fatalf("progress tool: %v %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 {
		t.Fatalf("got %d progress notifications before CallTool returned, want 3: %+v", len(got), got)
	}
	for i, p := range got {
		if !p.ProgressToken.IsValid() || p.ProgressToken != got[0].ProgressToken {
			t.Errorf("notification %d has token %v", i, p.ProgressToken)
		}
		if i > 0 && p.Progress <= got[i-1].Progress {
			t.Errorf("progress did not increase: %v after %v", p.Progress, got[i-1].Progress)
		}
		if p.Total == nil || *p.Total != 3 {
			t.Errorf("notification %d total %v", i, p.Total)
		}
	}
	if got[2].Message != "step 3" {
		t.Errorf("last message %q", got[2].Message)
	}

	// Without WithProgress no token is sent and nothing is reported.
	s.wantText(t, "progress", nil, "done")
}

// TestLogging: info and above by default, debug after setLevel(debug);
// an unknown level is -32602.
func TestLogging(t *testing.T) {
	t.Parallel()
	logs := make(chan *mcp.LoggingMessageParams, 16)
	s := newFixture(nil).connect(t, "", &client.Options{
		OnLog: func(ctx context.Context, p *mcp.LoggingMessageParams) { logs <- p },
	})
	next := func() *mcp.LoggingMessageParams { return recv(t, logs, "a log message") }

	// The progress tool logs info then debug; the log tool then logs a
	// warning. Notifications arrive in order, so if debug had been sent it
	// would come between the two.
	s.wantText(t, "progress", nil, "done")
	s.wantText(t, "log", logIn{Level: "warning", Message: "marker"}, "logged")
	if m := next(); m.Level != mcp.LevelInfo || m.Logger != "fixture" {
		t.Errorf("first log %+v, want info from fixture", m)
	}
	if m := next(); m.Level != mcp.LevelWarning || m.Data != "marker" {
		t.Errorf("second log %+v, want the warning marker (no debug by default)", m)
	}

	if err := s.c.SetLoggingLevel(testCtx(t), mcp.LevelDebug); err != nil {
		t.Fatalf("setLevel debug: %v", err)
	}
	s.wantText(t, "progress", nil, "done")
	if m := next(); m.Level != mcp.LevelInfo {
		t.Errorf("got %+v, want info", m)
	}
	if m := next(); m.Level != mcp.LevelDebug || m.Data != "debug detail" {
		t.Errorf("got %+v, want debug after setLevel(debug)", m)
	}

	if err := s.c.SetLoggingLevel(testCtx(t), mcp.LevelError); err != nil {
		t.Fatalf("setLevel error: %v", err)
	}
	s.wantText(t, "log", logIn{Level: "warning", Message: "hidden"}, "logged")
	s.wantText(t, "log", logIn{Level: "critical", Message: "shown"}, "logged")
	if m := next(); m.Level != mcp.LevelCritical || m.Data != "shown" {
		t.Errorf("got %+v, want only critical at level error", m)
	}

	// An unknown level: sent on purpose, so the wire check must reject it.
	s.wire.allowInvalid(mcp.MethodLoggingSetLevel)
	wantCode(t, s.c.SetLoggingLevel(testCtx(t), "verbose"), mcp.CodeInvalidParams)
	if s.wire.checker != nil && s.wire.rejectedCount() != 1 { // nil: no schemas (wirecheck.For)
		t.Errorf("the schema did not reject level \"verbose\"")
	}
	// The level in force is unchanged.
	s.wantText(t, "log", logIn{Level: "warning", Message: "hidden"}, "logged")
	s.wantText(t, "log", logIn{Level: "error", Message: "still error"}, "logged")
	if m := next(); m.Data != "still error" {
		t.Errorf("got %+v after a refused setLevel", m)
	}

	// A handler's invalid level is its own error, and nothing is sent.
	s.wantToolError(t, "log", logIn{Level: "loud", Message: "x"}, "loud")
}
