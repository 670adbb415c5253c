package streamable

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/streamhttp"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// realServer serves a server.Server with the real HTTP handler; getReady
// receives once each time the handler flushes the headers of a GET
// stream (the server's standalone stream is then registered).
type realServer struct {
	*httptest.Server
	h        *streamhttp.Handler
	srv      *server.Server
	getReady chan struct{}
	mu       sync.Mutex
	methods  []string
}

func newRealServer(t *testing.T, opts *streamhttp.Options) *realServer {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "real", Version: "1"}, Logging: true})
	resumed := make(chan struct{}, 10)
	server.AddTool(s, &mcp.Tool{Name: "add"}, func(ctx context.Context, req *server.CallToolRequest, in struct{ A, B int }) (int, error) {
		return in.A + in.B, nil
	})
	server.AddTool(s, &mcp.Tool{Name: "progress"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
		for i := 1; i <= 3; i++ {
			if err := req.Progress(ctx, float64(i), 3, ""); err != nil {
				return "", err
			}
		}
		if err := req.Log(ctx, mcp.LevelInfo, "real", "logged"); err != nil {
			return "", err
		}
		return "progressed", nil
	})
	server.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
		res, err := req.Elicit(ctx, &mcp.ElicitParams{
			Message:         "Name?",
			RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		})
		if err != nil {
			return "", err
		}
		return res.Action + ":" + res.Content["name"].(string), nil
	})
	server.AddTool(s, &mcp.Tool{Name: "askbig"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
		_, err := req.Elicit(ctx, &mcp.ElicitParams{
			Message:         strings.Repeat("m", 8<<10), // over the client's MaxEventBytes in TestRealServerOversizedRequest
			RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}}}`),
		})
		if err == nil {
			return "", errors.New("the client answered an elicitation it could not read")
		}
		return "refused: " + err.Error(), nil
	})
	server.AddTool(s, &mcp.Tool{Name: "poll"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
		if err := req.Progress(ctx, 1, 2, "before the close"); err != nil {
			return "", err
		}
		req.CloseStream()
		select { // until the client resumed the stream with GET
		case <-resumed:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if err := req.Progress(ctx, 2, 2, "after the resumption"); err != nil {
			return "", err
		}
		return "polled", nil
	})
	if opts == nil {
		opts = &streamhttp.Options{}
	}
	opts.RetryInterval = 100 * time.Millisecond
	rs := &realServer{h: streamhttp.NewHandler(s, opts), srv: s, getReady: make(chan struct{}, 10)}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		rs.methods = append(rs.methods, r.Method)
		rs.mu.Unlock()
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") == "" {
			w = &flushSignal{ResponseWriter: w, ch: rs.getReady}
		}
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			resumed <- struct{}{}
		}
		rs.h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		rs.Close()
		_ = rs.h.Close()
	})
	return rs
}

func (rs *realServer) count(method string) int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	n := 0
	for _, m := range rs.methods {
		if m == method {
			n++
		}
	}
	return n
}

// flushSignal signals the first flush of a response.
type flushSignal struct {
	http.ResponseWriter
	ch   chan struct{}
	once sync.Once
}

func (f *flushSignal) Flush() {
	if fl, ok := f.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
	f.once.Do(func() { f.ch <- struct{}{} })
}

func (f *flushSignal) Unwrap() http.ResponseWriter { return f.ResponseWriter }

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestRealServer: client.Connect over the transport against the real
// server handler: JSON and SSE answers, progress and log notifications,
// an elicitation on the POST stream, a stream the server closes
// (SEP-1699 polling) and the client resumes, and the session ended by
// Close.
func TestRealServer(t *testing.T) {
	rs := newRealServer(t, nil)
	conn := New(rs.URL, nil)
	ctx := testCtx(t)
	logs := make(chan string, 4)
	cl, err := client.Connect(ctx, conn, legacy(&client.Options{
		ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
		OnLog: func(ctx context.Context, p *mcp.LoggingMessageParams) { s, _ := p.Data.(string); logs <- s },
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if conn.SessionID() == "" || conn.ProtocolVersion() != mcp.LatestLegacy {
		t.Errorf("session %q version %q", conn.SessionID(), conn.ProtocolVersion())
	}
	if rs.h.SessionCount() != 1 {
		t.Errorf("%d server sessions", rs.h.SessionCount())
	}
	call := func(ctx context.Context, name string, args string) string {
		t.Helper()
		p := &mcp.CallToolParams{Name: name}
		if args != "" {
			p.Arguments = jsontext.Value(args)
		}
		res, err := cl.CallTool(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			t.Fatalf("%s failed: %s", name, text(res))
		}
		return text(res)
	}
	if got := call(ctx, "add", `{"A":2,"B":3}`); got != "5" {
		t.Errorf("add = %q", got)
	}
	var mu sync.Mutex
	var progress []float64
	pctx := client.WithProgress(ctx, func(p *mcp.ProgressParams) {
		mu.Lock()
		progress = append(progress, p.Progress)
		mu.Unlock()
	})
	if got := call(pctx, "progress", ""); got != "progressed" {
		t.Errorf("progress = %q", got)
	}
	mu.Lock()
	if len(progress) != 3 {
		t.Errorf("progress notifications %v", progress)
	}
	progress = nil
	mu.Unlock()
	if l := recv(t, logs, "the log notification"); l != "logged" {
		t.Errorf("log %s", l)
	}
	if got := call(ctx, "ask", ""); got != "accept:Ada" {
		t.Errorf("ask = %q", got)
	}
	getsBefore := rs.count(http.MethodGet)
	if got := call(pctx, "poll", ""); got != "polled" {
		t.Errorf("poll = %q", got)
	}
	if rs.count(http.MethodGet) <= getsBefore {
		t.Error("the closed stream was not resumed with GET")
	}
	mu.Lock()
	if len(progress) != 2 {
		t.Errorf("progress across the resumption %v, want both", progress)
	}
	mu.Unlock()
	if err := cl.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if rs.count(http.MethodDelete) != 1 || rs.h.SessionCount() != 0 {
		t.Errorf("%d DELETEs, %d sessions left", rs.count(http.MethodDelete), rs.h.SessionCount())
	}
}

// TestRealServerListener: the listener receives what the server sends
// outside any request (tools/list_changed).
func TestRealServerListener(t *testing.T) {
	rs := newRealServer(t, nil)
	conn := New(rs.URL, nil)
	changed := make(chan struct{}, 4)
	cl, err := client.Connect(testCtx(t), conn, legacy(&client.Options{
		ListRootsHandler:   func(context.Context) (*mcp.ListRootsResult, error) { return &mcp.ListRootsResult{}, nil },
		OnToolsListChanged: func(context.Context) { changed <- struct{}{} },
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recv(t, rs.getReady, "the GET stream to open")
	server.AddTool(rs.srv, &mcp.Tool{Name: "late"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
		return "", nil
	})
	recv(t, changed, "tools/list_changed on the GET stream")
	if running, stopped := conn.ListenerStatus(); !running || stopped != nil {
		t.Errorf("ListenerStatus %v %v", running, stopped)
	}
}

// TestRealServerNoStandaloneStream: a server without a GET stream
// answers 405 and the listener stops.
func TestRealServerNoStandaloneStream(t *testing.T) {
	rs := newRealServer(t, &streamhttp.Options{NoStandaloneStream: true})
	conn := New(rs.URL, nil)
	cl, err := client.Connect(testCtx(t), conn, legacy(&client.Options{CreateMessageHandler: samplingHandler}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if stopped := waitListener(t, conn); !errors.Is(stopped, ErrListen405) {
		t.Errorf("stopped = %v", stopped)
	}
	if err := cl.Ping(testCtx(t)); err != nil {
		t.Error(err)
	}
}

// TestRealServerSessionLoss: the server ends the session (here: another
// party DELETEs it); the next call re-initializes transparently.
func TestRealServerSessionLoss(t *testing.T) {
	rs := newRealServer(t, nil)
	conn := New(rs.URL, nil)
	ctx := testCtx(t)
	cl, err := client.Connect(ctx, conn, legacy(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	old := conn.SessionID()
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, rs.URL, nil)
	req.Header.Set("Mcp-Session-Id", old)
	resp, err := rs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || rs.h.SessionCount() != 0 {
		t.Fatalf("DELETE: %s, %d sessions", resp.Status, rs.h.SessionCount())
	}
	res, err := cl.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("ListTools after the session ended: %v", err)
	}
	if len(res.Tools) == 0 {
		t.Error("no tools")
	}
	if s := conn.SessionID(); s == "" || s == old {
		t.Errorf("session %q after re-initialize (was %q)", s, old)
	}
	if rs.h.SessionCount() != 1 {
		t.Errorf("%d server sessions", rs.h.SessionCount())
	}
}

// TestRealServerOversizedRequest: the real server's elicitation, over the
// client's MaxEventBytes on the stream of the call that asked, is
// answered with an error (-32600) at once, so the tool's handler goes on
// and the call returns, instead of both waiting for ever.
func TestRealServerOversizedRequest(t *testing.T) {
	rs := newRealServer(t, nil)
	conn := New(rs.URL, &Options{MaxEventBytes: 4 << 10})
	ctx := testCtx(t)
	cl, err := client.Connect(ctx, conn, legacy(&client.Options{
		ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			t.Error("the oversized elicitation reached the handler")
			return &mcp.ElicitResult{Action: mcp.ElicitActionDecline}, nil
		},
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	res, err := cl.CallTool(ctx, &mcp.CallToolParams{Name: "askbig"})
	if err != nil || res.IsError {
		t.Fatalf("askbig: %v %+v", err, res)
	}
	if got := text(res); !strings.HasPrefix(got, "refused: ") || !strings.Contains(got, "-32600") && !strings.Contains(got, "Invalid Request") {
		t.Errorf("askbig = %q, want the elicitation refused with -32600", got)
	}
}
