package streamhttp

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/mcp"
)

// stuckTool is a tool whose handler ignores cancellation: it returns only
// when the test closes release. entered receives once per call, after the
// handler sent progress when the call asked for it (so that its answer is
// an event stream).
type stuckTool struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func addStuckTool(s *server.Server) *stuckTool {
	st := &stuckTool{entered: make(chan struct{}, 1024), release: make(chan struct{})}
	s.AddRawTool(&mcp.Tool{Name: "stuck"}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		_ = req.Progress(ctx, 1, 0, "") // sent only when the call asked for progress
		st.entered <- struct{}{}
		<-st.release // deliberately deaf to ctx
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "late"}}}, nil
	})
	return st
}

// free lets every stuck handler return; safe to call more than once.
func (st *stuckTool) free() { st.once.Do(func() { close(st.release) }) }

// expectEnded checks the answer a request in flight gets when its session
// ends: a JSON-RPC error for its id, code -32603, as a JSON body.
func expectEnded(t testing.TB, e *httpEnv, a httpenv.AsyncAnswer, id int64) {
	t.Helper()
	if a.Err != nil {
		t.Fatalf("request: %v", a.Err)
	}
	if a.Resp.StatusCode != http.StatusOK || a.Resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("answer: status %d, Content-Type %q, body %q; want 200 application/json", a.Resp.StatusCode, a.Resp.Header.Get("Content-Type"), a.Body)
	}
	if err := e.WC.Check(a.Body); err != nil {
		t.Errorf("answer does not conform: %v\n%s", err, a.Body)
	}
	m := httpenv.ParseMsg(t, a.Body)
	if m.Error == nil || m.Error.Code != mcp.CodeInternalError || string(m.ID) != httpenv.IDJSON(id) {
		t.Errorf("answer %s; want a -32603 error for id %d", a.Body, id)
	}
}

// TestHTTPShutdownStuckHandlers: with many sessions whose handlers ignore
// cancellation, Shutdown ends every session at once — each request in
// flight gets its error answer while the handlers are still blocked — and
// returns when its context ends, with the context's error.
func TestHTTPShutdownStuckHandlers(t *testing.T) {
	const n = 40 // one after another, 5 s each, this would take 200 s
	s := echoServer()
	tool := addStuckTool(s)
	e := newHTTPEnv(t, s, nil)
	defer tool.free() // before the env's cleanup checks for leaks
	ids := make([]int64, n)
	answers := make([]<-chan httpenv.AsyncAnswer, n)
	for i := range n {
		sid := e.Initialize("{}")
		ids[i] = e.ID()
		answers[i] = e.PostAsync(sid, httpenv.ToolCall(ids[i], "stuck", "", ""))
	}
	for range n {
		httpenv.RecvT(t, tool.entered, "a handler to start")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- e.h.Shutdown(ctx) }()
	for i := range n {
		expectEnded(t, e, httpenv.RecvT(t, answers[i], "the answer of a request in flight"), ids[i])
	}
	if n := e.h.SessionCount(); n != 0 {
		t.Errorf("SessionCount during Shutdown = %d, want 0", n)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v while handlers still run", err)
	default:
	}
	cancel()
	if err := httpenv.RecvT(t, shut, "Shutdown to return at the end of its context"); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown = %v, want context.Canceled", err)
	}
	e.ExpectStatus(e.Do(http.MethodPost, "", httpenv.InitBody(1, "{}")), http.StatusServiceUnavailable)
	tool.free()
	// Once the handlers return, Shutdown (and Close) finish cleanly; the
	// env's cleanup then checks that no goroutine is left.
	if err := e.h.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown after the handlers returned: %v", err)
	}
}

// TestHTTPCloseIsBounded: Close ends sessions concurrently too, and
// returns at its bound with handlers that never return.
func TestHTTPCloseIsBounded(t *testing.T) {
	s := echoServer()
	tool := addStuckTool(s)
	e := newHTTPEnv(t, s, nil)
	e.h.closeAfter = time.Millisecond // the bound is what is tested, not its value
	defer tool.free()
	defer func() { e.h.closeAfter = 0 }() // the env's own Close waits for the freed handlers
	for range 3 {
		sid := e.Initialize("{}")
		id := e.ID()
		ch := e.PostAsync(sid, httpenv.ToolCall(id, "stuck", "", ""))
		httpenv.RecvT(t, tool.entered, "the handler to start")
		defer func() { expectEnded(t, e, httpenv.RecvT(t, ch, "the answer"), id) }()
	}
	closed := make(chan error, 1)
	go func() { closed <- e.h.Close() }()
	if err := httpenv.RecvT(t, closed, "Close to return"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close with handlers still running = %v, want context.DeadlineExceeded", err)
	}
}

// TestHTTPDeleteDoesNotWait: DELETE ends the session at once, while its
// handler is still blocked; the request in flight gets its error (as
// JSON, or as an event when its answer is already a stream), later
// requests 404, and the handler's late result is dropped.
func TestHTTPDeleteDoesNotWait(t *testing.T) {
	for _, sse := range []bool{false, true} {
		name := "json"
		if sse {
			name = "sse"
		}
		t.Run(name, func(t *testing.T) {
			s := echoServer()
			tool := addStuckTool(s)
			e := newHTTPEnv(t, s, nil).sub(t)
			defer tool.free()
			sid := e.Initialize("{}")
			id := e.ID()
			token := ""
			if sse {
				token = "tok"
			}
			var post *httpenv.SSEStream
			var answer <-chan httpenv.AsyncAnswer
			if sse {
				post = e.OpenSSE(e.Post(sid, httpenv.ToolCall(id, "stuck", "", token)))
				post.Prime(0)
				post.Message() // the progress notification
			} else {
				answer = e.PostAsync(sid, httpenv.ToolCall(id, "stuck", "", ""))
			}
			httpenv.RecvT(t, tool.entered, "the handler to start")
			del := e.DoAsync(http.MethodDelete, sid, "")
			if a := httpenv.RecvT(t, del, "the DELETE to be answered while the handler is blocked"); a.Err != nil || a.Resp.StatusCode != http.StatusNoContent {
				t.Fatalf("DELETE: %v %v", a.Err, a.Resp)
			}
			if sse {
				_, m := post.Message()
				if m.Error == nil || m.Error.Code != mcp.CodeInternalError || string(m.ID) != httpenv.IDJSON(id) {
					t.Errorf("event %s; want a -32603 error for id %d", m.Raw, id)
				}
				post.End()
			} else {
				expectEnded(t, e, httpenv.RecvT(t, answer, "the answer of the request in flight"), id)
			}
			e.ExpectStatus(e.Do(http.MethodPost, sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), http.StatusNotFound)
			if n := e.h.SessionCount(); n != 0 {
				t.Errorf("SessionCount after DELETE = %d", n)
			}
			tool.free() // the late result goes nowhere
		})
	}
}
