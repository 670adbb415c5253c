package streamhttp

import (
	"context"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/store"

	"github.com/mcpkit/mcpkit/mcp"
)

// waitFor polls cond until it holds. It is for state that changes on the
// server's own clock (the idle sweep); the deadline is a hang guard.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(httpenv.HangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// settleGoroutines waits (up to 5 s) for the goroutine count to fall to
// max, for goroutines that are ending on their own; it returns the last
// count.
func settleGoroutines(max int) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= max || time.Now().After(deadline) {
			return n
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// openSession sends initialize (and, when ready, the initialized
// notification) without the wire observer, for bulk use.
func (e *httpEnv) openSession(ready bool) string {
	e.T.Helper()
	resp := e.Do(http.MethodPost, "", httpenv.InitBody(1, "{}"))
	sid := resp.Header.Get("Mcp-Session-Id")
	if m := e.ReadJSON(resp); m.Error != nil || sid == "" {
		e.T.Fatalf("initialize: %s (session %q)", m.Raw, sid)
	}
	if ready {
		e.Expect202(e.Do(http.MethodPost, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	}
	return sid
}

func (e *httpEnv) hasSession(sid string) bool {
	e.h.mu.Lock()
	defer e.h.mu.Unlock()
	return e.h.sessions[sid] != nil
}

// useManualClock gives e's handler a manual clock: time moves only when
// the test says, and the test runs the sweep itself (sweepOnce), so that
// what is swept never depends on how busy the machine is. Call it before
// the first request. The TTL should be long enough that the handler's own sweeper
// (every TTL/4, at most a minute) never acts on its own; if it does, it
// sees the fake time all the same.
func (e *httpEnv) useManualClock() *sweepClock {
	c := &sweepClock{}
	c.ns.Store(time.Now().UnixNano())
	e.h.now = c.Now
	return c
}

// sweepClock is a manual clock: its time moves only with Advance.
type sweepClock struct{ ns atomic.Int64 }

func (c *sweepClock) Now() time.Time { return time.Unix(0, c.ns.Load()) }

func (c *sweepClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

const sweepTestTTL = time.Hour

func TestHTTPIdleSweep(t *testing.T) {
	const n = 1000
	e := newHTTPEnv(t, echoServer(), &Options{SessionTTL: sweepTestTTL})
	clock := e.useManualClock()
	// Open the client's connection first so that it is in the baseline.
	e.ExpectStatus(e.Do(http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`), http.StatusBadRequest)
	baseG := runtime.NumGoroutine()
	baseHeap := heapAlloc()

	for range n {
		e.openSession(false)
	}
	peakG := runtime.NumGoroutine() // may include handlers finishing
	e.h.sweepOnce()
	if got := e.h.SessionCount(); got != n {
		t.Fatalf("a sweep before the TTL left %d of %d sessions", got, n)
	}
	clock.Advance(sweepTestTTL + time.Nanosecond)
	e.h.sweepOnce()
	// The sweep forgets the sessions at once; each then closes on its own
	// goroutine and leaves the server.
	if got := e.h.SessionCount(); got != 0 {
		t.Fatalf("SessionCount after the sweep = %d", got)
	}
	waitFor(t, "the swept sessions to close", func() bool { return len(e.srv.Sessions()) == 0 })
	waitFor(t, "the swept sessions' events to be purged", func() bool {
		return e.h.store.(*store.MemoryEventStore).SessionCount() == 0
	})
	// Only the sweeper remains (it runs until Close); the goroutines that
	// closed the sessions end shortly after.
	endG := settleGoroutines(baseG + 1)
	endHeap := heapAlloc()
	t.Logf("goroutines: baseline %d, with sessions %d, after the sweep %d (the sweeper runs until Close)", baseG, peakG, endG)
	t.Logf("heap: baseline %d B, after the sweep %d B (%+d B)", baseHeap, endHeap, int64(endHeap)-int64(baseHeap))
	if endG > baseG+1 {
		t.Errorf("goroutines after the sweep: %d, baseline %d (+1 sweeper): the swept sessions left goroutines", endG, baseG)
	}
	// What remains are the grown (never shrinking) session maps: a few
	// tens of bytes per session ever opened, not the sessions.
	const margin = 256 << 10
	if endHeap > baseHeap+margin {
		t.Errorf("heap after the sweep %d B, baseline %d B: %d B more than the %d B margin", endHeap, baseHeap, endHeap-baseHeap-margin, margin)
	}
}

func TestHTTPSweepSparesBusySessions(t *testing.T) {
	s := elicitServer()
	release := make(chan struct{})
	s.AddRawTool(&mcp.Tool{Name: "wait"}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "waited"}}}, nil
	})
	e := newHTTPEnv(t, s, &Options{SessionTTL: sweepTestTTL, SSEAfter: -1, KeepAlive: -1})
	clock := e.useManualClock()
	withGET := e.Initialize("{}")
	e.Subscribe(withGET, "file:///marker")
	var getAddr string
	get := e.OpenSSE(e.Do(http.MethodGet, withGET, "", httpenv.WithConnAddr(&getAddr)))
	get.Prime(0)
	withPOST := e.Initialize("{}")
	id := e.ID()
	pending := e.PostHeaders(withPOST, httpenv.ToolCall(id, "wait", "", ""))
	idle := e.Initialize("{}")
	// The POST is busy once its handler runs: wait for the session's
	// request count rather than for time.
	waitFor(t, "the tool call to be in flight", func() bool { return e.session(withPOST).busy.n.Load() > 0 })

	// By the clock all three are idle past the TTL; only the idle one has
	// no request in flight and no stream attached.
	clock.Advance(sweepTestTTL + time.Nanosecond)
	e.h.sweepOnce()
	if e.hasSession(idle) {
		t.Error("the idle session was not swept")
	}
	if !e.hasSession(withGET) {
		t.Error("a session with an attached GET stream was swept")
	}
	if !e.hasSession(withPOST) {
		t.Error("a session with a request in flight was swept")
	}
	e.srv.ResourceUpdated("file:///marker")
	get.MessageFrame(t, mcp.NotificationResourcesUpdated)
	close(release)
	if text, _ := httpenv.ToolText(t, e.ReadJSON(e.Headers(pending))); text != "waited" {
		t.Errorf("wait answered %q", text)
	}
	// Once they are idle, they go too. (The POST's request ends just after
	// its answer is read: sweep until it has.)
	get.Close()
	httpenv.RecvT(t, e.ServerClosed(getAddr), "the server to close the GET connection")
	waitFor(t, "the other sessions to be swept", func() bool {
		e.h.sweepOnce()
		return e.h.SessionCount() == 0 && len(e.srv.Sessions()) == 0
	})
	e.ExpectStatus(e.Do(http.MethodPost, withGET, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), http.StatusNotFound)
}

func TestHTTPCloseEndsEverything(t *testing.T) {
	s := elicitServer()
	tool := addPollTool(s)
	cancelled := make(chan error, 1)
	s.AddRawTool(&mcp.Tool{Name: "forever"}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := req.Progress(ctx, 1, 0, ""); err != nil {
			return nil, err
		}
		<-ctx.Done()
		cancelled <- ctx.Err()
		return nil, ctx.Err()
	})
	e := newHTTPEnv(t, s, nil)
	sid := e.Initialize(httpenv.ElicitCaps)
	get := e.OpenSSE(e.Do(http.MethodGet, sid, ""))
	get.Prime(0)
	// A request in flight, on an open stream.
	post := e.OpenSSE(e.Post(sid, httpenv.ToolCall(e.ID(), "forever", "", "tok")))
	post.Prime(0)
	post.Message()
	// A request whose stream was closed, waiting for a resumption.
	pending := e.PostHeaders(sid, httpenv.ToolCall(e.ID(), "poll", "", "tok"))
	tool.do(t, "progress")
	polled := e.OpenSSE(e.Headers(pending))
	polled.Prime(0)
	polled.Message()
	tool.do(t, "close")
	polled.End()
	// An elicitation waiting for the client.
	ask := e.OpenSSE(e.Post(sid, httpenv.ToolCall(e.ID(), "ask", "", "")))
	ask.Prime(0)
	ask.Message()
	other := e.Initialize("{}")

	if err := e.h.Close(); err != nil {
		t.Fatal(err)
	}
	get.End()
	// The requests in flight are answered with an error, not cut short.
	for _, st := range []*httpenv.SSEStream{post, ask} {
		if _, m := st.Message(); m.Error == nil || m.Error.Code != mcp.CodeInternalError {
			t.Errorf("a request in flight at Close got %s, want a -32603 error", m.Raw)
		}
		st.End()
	}
	if err := httpenv.RecvT(t, cancelled, "the running handler to be cancelled"); err == nil {
		t.Error("the handler's context did not end")
	}
	if n := e.h.SessionCount(); n != 0 {
		t.Errorf("SessionCount after Close = %d", n)
	}
	for _, id := range []string{sid, other} {
		e.ExpectStatus(e.Do(http.MethodPost, id, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), http.StatusNotFound)
	}
	e.ExpectStatus(e.Do(http.MethodPost, "", httpenv.InitBody(1, "{}")), http.StatusServiceUnavailable)
	if n := e.h.SessionCount(); n != 0 {
		t.Errorf("SessionCount after an initialize past Close = %d", n)
	}
	if err := e.h.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestHTTPIdleSessionHeap measures the heap an idle legacy session holds
// (initialize and notifications/initialized done, nothing since): the
// target is 4 KiB.
func TestHTTPIdleSessionHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap over 2000 sessions")
	}
	perSession, total, goroutines := measureIdleSessionHeap(t, 2000)
	t.Logf("idle legacy session: %.0f B/session (%d B for 2000 sessions)", perSession, total)
	if goroutines > 0 {
		t.Errorf("2000 idle sessions hold %d goroutines; an idle session should own none", goroutines)
	}
	if perSession > 4096 {
		t.Errorf("an idle session holds %.0f B, over the 4096 B target", perSession)
	}
}

// measureIdleSessionHeap opens n idle sessions and returns the heap each
// holds, the total, and how many goroutines they hold together.
func measureIdleSessionHeap(tb testing.TB, n int) (float64, int64, int) {
	e := newHTTPEnv(tb, echoServer(), &Options{SessionTTL: -1})
	// 2n+2 requests: under -race on a loaded machine they can take longer
	// than the env's hang guard, which bounds a single wait's worth.
	ctx, cancel := context.WithTimeout(context.Background(), 10*httpenv.HangGuard)
	defer cancel()
	e.Ctx = ctx
	e.openSession(true) // warm up: connection, pools, first-use allocations
	// A request that starts no handler, so that the warm-up's has ended
	// (at worst the baseline counts it, which weakens the check only).
	e.ExpectStatus(e.Do(http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`), http.StatusBadRequest)
	baseG := runtime.NumGoroutine()
	base := heapAlloc()
	for range n {
		e.openSession(true)
	}
	afterG := settleGoroutines(baseG)
	after := heapAlloc()
	if got := e.h.SessionCount(); got != n+1 {
		tb.Fatalf("SessionCount = %d, want %d", got, n+1)
	}
	delta := int64(after) - int64(base)
	e.Shutdown()
	return float64(delta) / float64(n), delta, afterG - baseG
}
