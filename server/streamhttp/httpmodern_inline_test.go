package streamhttp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestModernHTTPSilentHandlerTurnsIntoStream checks the inline path of
// postModern: a handler that stays silent past SSEAfter, while running on
// the POST's own goroutine, still gets its answer turned into an event
// stream (the headers arrive before the handler returns), and a quick one
// is answered as JSON.
func TestModernHTTPSilentHandlerTurnsIntoStream(t *testing.T) {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "inline", Version: "1"}})
	release := make(chan struct{})
	server.AddTool(s, &mcp.Tool{Name: "wait"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		select {
		case <-release:
			return "released", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	server.AddTool(s, &mcp.Tool{Name: "quick"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		return "quick", nil
	})
	m := newModernEnv(t, s, &Options{SSEAfter: 20 * time.Millisecond})
	id := m.ID()
	st := m.Stream(httpenv.Req26(id, mcp.MethodToolsCall, map[string]any{"name": "wait", "arguments": map[string]any{}}), httpenv.H26(mcp.MethodToolsCall, "wait")...)
	close(release)
	notes, resp := m.Rest(st, id)
	if len(notes) != 0 {
		t.Errorf("%d messages before the response", len(notes))
	}
	res := httpenv.CheckModernResult(t, httpenv.ParseWire(t, []byte(resp.Raw)), id, "inline")
	if text, _ := httpenv.ResultText(t, res); text != "released" {
		t.Errorf("answered %q", text)
	}
	// A quick handler is answered as JSON — on a handler whose SSEAfter
	// no scheduler delay can reach (20 ms could pass under load).
	q := newModernEnv(t, s, nil)
	res = q.Call(q.ID(), mcp.MethodToolsCall, "quick", map[string]any{"name": "quick", "arguments": map[string]any{}})
	if text, _ := httpenv.ResultText(t, res); text != "quick" {
		t.Errorf("answered %q", text)
	}
}

// TestStatelessLegacySilentHandlerTurnsIntoStream is the same for a
// session-less 2025-11-25 request: a silent handler on the POST's
// goroutine still gets an event stream after SSEAfter, a quick one JSON.
func TestStatelessLegacySilentHandlerTurnsIntoStream(t *testing.T) {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "inline", Version: "1"}})
	release := make(chan struct{})
	server.AddTool(s, &mcp.Tool{Name: "wait"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		select {
		case <-release:
			return "released", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	h := NewHandler(s, &Options{Stateless: true, SSEAfter: 20 * time.Millisecond})
	defer h.Close()
	ts := httptest.NewServer(h)
	defer ts.Close()
	post := func(name string) *http.Response {
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`
		r, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("MCP-Protocol-Version", mcp.Version20251125)
		resp, err := ts.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("wait") // returns with the headers, while the handler waits
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q, want an event stream", ct)
	}
	close(release)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "data: ") || !strings.Contains(string(b), `"released"`) {
		t.Errorf("stream %q", b)
	}
	// A quick answer is JSON — on a handler whose SSEAfter no scheduler
	// delay can reach (20 ms could pass under load).
	hq := NewHandler(s, &Options{Stateless: true})
	defer hq.Close()
	tq := httptest.NewServer(hq)
	defer tq.Close()
	ts = tq
	resp = post("nope")
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" || !strings.Contains(string(b), `"error"`) {
		t.Errorf("Content-Type %q: %s", ct, b)
	}
}
