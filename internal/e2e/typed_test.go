package e2e

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// Typed both ways: client.CallTool[Out] against server.AddTool[In, Out],
// in both eras.

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

const sumSchema = `{"type":"object","properties":{"sum":{"type":"integer"}},"required":["sum"]}`

// typedServer serves typed and raw tools, some of whose results break
// their output schema; its log goes to the returned buffer.
func typedServer() (*server.Server, *syncBuffer) {
	logs := new(syncBuffer)
	s := server.New(&server.Options{
		Info:   mcp.Implementation{Name: "typed", Version: "1.0.0"},
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	})
	server.AddTool(s, &mcp.Tool{Name: "add"},
		func(ctx context.Context, req *server.CallToolRequest, in addIn) (addOut, error) {
			return addOut{Sum: in.A + in.B}, nil
		})
	server.AddTool(s, &mcp.Tool{Name: "greet"},
		func(ctx context.Context, req *server.CallToolRequest, in greetIn) (string, error) {
			return "hello " + in.Name, nil
		})
	server.AddTool(s, &mcp.Tool{Name: "fail"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (addOut, error) {
			return addOut{}, errors.New("the tool failed on purpose")
		})
	// A raw tool is sent as it is, even when it breaks its schema.
	s.AddRawTool(&mcp.Tool{Name: "bad_raw", OutputSchema: jsontext.Value(sumSchema)},
		func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				Content:           mcp.Contents{&mcp.TextContent{Text: `{"sum":"three"}`}},
				StructuredContent: jsontext.Value(`{"sum":"three"}`),
			}, nil
		})
	// A typed tool whose result breaks its explicit schema: a handler bug.
	server.AddTool(s, &mcp.Tool{Name: "bad_typed", OutputSchema: jsontext.Value(sumSchema)},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (map[string]any, error) {
			return map[string]any{"sum": "three"}, nil
		})
	return s, logs
}

// typedEras connects a client to srv in each era.
func typedEras(t *testing.T, srv *server.Server) map[string]struct {
	c *client.Client
	w *wire
} {
	legacy := (&fixture{srv: srv}).connect(t, mcp.LatestLegacy, nil)
	modern, w := connectModern(t, carriers[0], srv, nil)
	return map[string]struct {
		c *client.Client
		w *wire
	}{
		"legacy": {legacy.c, legacy.wire},
		"modern": {modern, w},
	}
}

// countListings counts the tools/list requests a client sent.
func countListings(w *wire) int {
	n := 0
	for _, m := range w.messages(wirecheck.ClientToServer) {
		if bytes.Contains(m, []byte(`"method":"tools/list"`)) {
			n++
		}
	}
	return n
}

func TestTypedCall(t *testing.T) {
	t.Parallel()
	srv, _ := typedServer()
	for era, s := range typedEras(t, srv) {
		t.Run(era, func(t *testing.T) {
			ctx := testCtx(t)
			c := s.c

			// Struct arguments, decoded into a struct.
			out, res, err := client.CallTool[addOut](ctx, c, "add", addIn{A: 2, B: 3})
			if err != nil || out.Sum != 5 || res == nil {
				t.Fatalf("CallTool add (struct) = %+v, %v, %v; want {Sum:5}", out, res, err)
			}
			// The first typed call listed the tools once to learn the
			// output schema; later calls do not list again.
			if n := countListings(s.w); n != 1 {
				t.Errorf("%d tools/list requests after the first typed call, want 1", n)
			}

			// Map arguments, decoded into a map.
			m, _, err := client.CallTool[map[string]int](ctx, c, "add", map[string]any{"a": 4, "b": 5})
			if err != nil || m["sum"] != 9 {
				t.Fatalf("CallTool add (map) = %v, %v; want sum 9", m, err)
			}
			// Raw JSON arguments still work.
			out, _, err = client.CallTool[addOut](ctx, c, "add", jsontext.Value(`{"a":1,"b":1}`))
			if err != nil || out.Sum != 2 {
				t.Fatalf("CallTool add (jsontext) = %+v, %v", out, err)
			}
			// A string Out gets the text of a string-returning tool.
			greeting, _, err := client.CallTool[string](ctx, c, "greet", greetIn{Name: "Go"})
			if err != nil || greeting != "hello Go" {
				t.Fatalf("CallTool greet = %q, %v", greeting, err)
			}
			if n := countListings(s.w); n != 1 {
				t.Errorf("%d tools/list requests, want still 1", n)
			}

			// Arguments that are not an object are refused before sending.
			if _, _, err := client.CallTool[addOut](ctx, c, "add", []int{1, 2}); err == nil || !strings.HasPrefix(err.Error(), "client: ") || !strings.Contains(err.Error(), "JSON object") {
				t.Errorf("CallTool with array arguments: %v, want a client: error about a JSON object", err)
			}
			// A struct Out for a text-only result is an error; nil
			// arguments are none.
			if _, _, err := client.CallTool[addOut](ctx, c, "greet", nil); err == nil || !strings.Contains(err.Error(), "no structuredContent") {
				t.Errorf("CallTool[addOut] greet: %v, want no structuredContent", err)
			}
		})
	}
}

func TestTypedCallToolError(t *testing.T) {
	t.Parallel()
	srv, _ := typedServer()
	for era, s := range typedEras(t, srv) {
		t.Run(era, func(t *testing.T) {
			_, res, err := client.CallTool[addOut](testCtx(t), s.c, "fail", nil)
			var te *client.ToolError
			if !errors.As(err, &te) {
				t.Fatalf("CallTool fail: %v, want a *client.ToolError", err)
			}
			if te.Tool != "fail" || !strings.Contains(te.Text, "the tool failed on purpose") || !strings.HasPrefix(err.Error(), "client: ") {
				t.Errorf("ToolError = %+v (%q)", te, err)
			}
			if res == nil || !res.IsError {
				t.Errorf("result %+v, want the isError result", res)
			}
		})
	}
}

func TestTypedCallOutputSchemaMismatch(t *testing.T) {
	t.Parallel()
	srv, _ := typedServer()
	for era, s := range typedEras(t, srv) {
		t.Run(era, func(t *testing.T) {
			// The client checks what a raw tool sent.
			_, res, err := client.CallTool[addOut](testCtx(t), s.c, "bad_raw", nil)
			if err == nil || !strings.HasPrefix(err.Error(), `client: tool "bad_raw": structuredContent does not match its outputSchema: /sum:`) {
				t.Fatalf("CallTool bad_raw: %v, want an outputSchema mismatch at /sum", err)
			}
			if res == nil {
				t.Error("the result is not returned with the mismatch")
			}
			var oe *client.OutputSchemaError
			if !errors.As(err, &oe) || oe.Tool != "bad_raw" || !strings.HasPrefix(oe.Reason, "/sum:") {
				t.Errorf("the mismatch is %#v, want a *client.OutputSchemaError for bad_raw at /sum", err)
			}
		})
	}
}

func TestTypedToolResultBreaksSchema(t *testing.T) {
	t.Parallel()
	srv, logs := typedServer()
	for era, s := range typedEras(t, srv) {
		t.Run(era, func(t *testing.T) {
			_, err := s.c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "bad_typed"})
			e := wantCode(t, err, mcp.CodeInternalError)
			if !strings.Contains(e.Message, "bad_typed") || !strings.Contains(e.Message, "output schema") {
				t.Errorf("error message %q does not name the tool and the schema", e.Message)
			}
			// The typed call reports the same protocol error.
			if _, _, err := client.CallTool[map[string]any](testCtx(t), s.c, "bad_typed", nil); err == nil {
				t.Error("client.CallTool bad_typed: no error")
			} else {
				wantCode(t, err, mcp.CodeInternalError)
			}
		})
	}
	if l := logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "bad_typed") || !strings.Contains(l, "output schema") {
		t.Errorf("the server log does not report the mismatch at Error level:\n%s", l)
	}
}

// TestTypedCallRelistsAfterChange: after notifications/tools/list_changed
// the client forgets the output schemas it recorded, so a tool added
// later is listed, and its results checked, on the next typed call.
func TestTypedCallRelistsAfterChange(t *testing.T) {
	t.Parallel()
	srv, _ := typedServer()
	changed := make(chan struct{}, 1)
	s := (&fixture{srv: srv}).connect(t, mcp.LatestLegacy, &client.Options{OnToolsListChanged: func(context.Context) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	ctx := testCtx(t)
	if _, _, err := client.CallTool[addOut](ctx, s.c, "add", addIn{A: 1, B: 1}); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddRawTool(&mcp.Tool{Name: "strict", OutputSchema: jsontext.Value(`{"type":"object","properties":{"v":{"type":"integer"}},"required":["v"]}`)},
		func(context.Context, *server.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: jsontext.Value(`{"v":"x"}`)}, nil
		}); err != nil {
		t.Fatal(err)
	}
	// The server sends change notifications from a goroutine of the
	// session's, so they keep no order with answers: wait for the
	// client's callback, which runs after it forgot the schemas.
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no tools/list_changed")
	}
	_, _, err := client.CallTool[map[string]any](ctx, s.c, "strict", nil)
	if err == nil || !strings.Contains(err.Error(), "outputSchema") {
		t.Fatalf("CallTool strict: %v, want the outputSchema mismatch the new listing reveals", err)
	}
	if n := countListings(s.wire); n != 2 {
		t.Errorf("%d tools/list requests, want 2 (one before the change, one after)", n)
	}
}
