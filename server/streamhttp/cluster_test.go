package streamhttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/store"

	"github.com/mcpkit/mcpkit/mcp"
)

// clusterPair serves two instances sharing in-memory stores and a
// MemoryBus; their brokers are returned so that a test can take one
// away (a dead instance, as the others see it).
func clusterPair(t *testing.T, setup func(*server.Server)) (a, b *httpEnv, brokerA, brokerB *store.MemoryBroker) {
	t.Helper()
	sessions, events, bus := store.NewMemorySessionStore(), store.NewMemoryEventStore(nil), store.NewMemoryBus()
	brokerA, brokerB = bus.Broker(), bus.Broker()
	t.Cleanup(func() { brokerA.Close(); brokerB.Close() })
	for _, x := range []struct {
		env **httpEnv
		br  *store.MemoryBroker
	}{{&a, brokerA}, {&b, brokerB}} {
		srv := server.New(&server.Options{Logging: true})
		if setup != nil {
			setup(srv)
		}
		*x.env = newHTTPEnv(t, srv, &Options{SessionStore: sessions, EventStore: events, Broker: x.br, KeepAlive: -1})
	}
	t.Cleanup(a.Shutdown) // before b's leak check, which would see a's goroutines
	return a, b, brokerA, brokerB
}

// TestClusterOrphanStreams: the instance that owns a stream is gone.
// Resuming its POST stream on another instance replays the events stored
// after Last-Event-ID; once none is left, the resumption fails with 410
// and a JSON-RPC error (the request's outcome is unknown), so that the
// client stops resuming. Resuming its standalone GET stream continues
// with the other instance's own standalone stream.
func TestClusterOrphanStreams(t *testing.T) {
	logged := make(chan struct{})
	a, b, brokerA, _ := clusterPair(t, func(s *server.Server) {
		server.AddTool(s, &mcp.Tool{Name: "two"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
			_ = req.Log(ctx, mcp.LevelInfo, "t", "one")
			_ = req.Log(ctx, mcp.LevelInfo, "t", "two")
			close(logged)
			<-ctx.Done()
			return "", ctx.Err()
		})
	})
	sid := a.Initialize("{}")

	get := a.OpenSSE(a.Do(http.MethodGet, sid, ""))
	standalone := get.Prime(0)
	get.Close()
	if owner, post := ownerOfStream(standalone); owner != brokerA.ID() || post {
		t.Fatalf("standalone stream id %q: want one of instance %s, not a POST's", standalone, brokerA.ID())
	}

	call := a.OpenSSE(a.Post(sid, httpenv.ToolCall(a.ID(), "two", `{}`, "")))
	stream := call.Prime(0)
	httpenv.RecvT(t, logged, "the tool's logs")
	// The client has seen both logs: an event reaches the client only once
	// the store has it (appends run outside the stream's lock, after the
	// handler's Log returns), so both are stored before A goes.
	for _, want := range []string{"one", "two"} {
		if _, m := call.Message(); m.Method != mcp.NotificationMessage || !strings.Contains(string(m.Params), want) {
			t.Fatalf("call stream: %s, want the log %q", m.Raw, want)
		}
	}
	call.Close()

	brokerA.Close() // instance A is gone, as B sees it

	replay := b.OpenSSE(b.Do(http.MethodGet, sid, "", httpenv.WithHeader("Last-Event-ID", stream+"_0")))
	replay.Plain = true
	for i, want := range []string{"one", "two"} {
		f, m := replay.Message()
		if f.ID != stream+"_"+string(rune('1'+i)) || m.Method != mcp.NotificationMessage || !strings.Contains(string(m.Params), want) {
			t.Fatalf("replayed event %d: %v", i+1, f)
		}
	}
	replay.End()

	m := b.ExpectStatus(b.Do(http.MethodGet, sid, "", httpenv.WithHeader("Last-Event-ID", stream+"_2")), http.StatusGone)
	if m.Error.Code != mcp.CodeInternalError || !strings.Contains(m.Error.Message, "stopped before it finished") {
		t.Errorf("410 body: %+v", m.Error)
	}

	cont := b.OpenSSE(b.Do(http.MethodGet, sid, "", httpenv.WithHeader("Last-Event-ID", standalone+"_0")))
	if own := cont.Prime(0); own == standalone {
		t.Errorf("the standalone stream continued under the dead instance's id %q", own)
	}
	server.AddTool(b.srv, &mcp.Tool{Name: "late"}, func(context.Context, *server.CallToolRequest, struct{}) (string, error) { return "", nil })
	if _, n := cont.Message(); n.Method != mcp.NotificationToolsListChanged {
		t.Errorf("standalone stream on B: %s, want tools/list_changed", n.Method)
	}
	cont.Close()
}

// TestClusterRelayEnds: a stream resumed on another instance is relayed
// live from its owner; when the resuming client goes away, the owner
// stops relaying (and can serve the stream again).
func TestClusterRelayEnds(t *testing.T) {
	logged, release := make(chan struct{}, 4), make(chan struct{})
	a, b, _, _ := clusterPair(t, func(s *server.Server) {
		server.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
			_ = req.Log(ctx, mcp.LevelInfo, "t", "before")
			logged <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			_ = req.Log(ctx, mcp.LevelInfo, "t", "after")
			return "done", nil
		})
	})
	sid := a.Initialize("{}")
	call := a.OpenSSE(a.Post(sid, httpenv.ToolCall(a.ID(), "slow", `{}`, "")))
	call.Prime(0)
	httpenv.RecvT(t, logged, "the first log")
	f, _ := call.Message()
	call.Close()

	ctx, cancel := context.WithCancel(context.Background())
	relayed := b.OpenSSE(resume(b, sid, f.ID, httpenv.WithCtx(ctx)))
	relayed.Plain = true
	waitFor(t, "the relay to start", func() bool { return servingRelays(a.h) == 1 })
	cancel()
	relayed.Close()
	waitFor(t, "the owner to stop relaying", func() bool { return servingRelays(a.h) == 0 })

	// Resumed again, on B, the stream goes on to its end.
	again := b.OpenSSE(resume(b, sid, f.ID))
	again.Plain = true
	close(release)
	if _, m := again.Message(); m.Method != mcp.NotificationMessage || !strings.Contains(string(m.Params), "after") {
		t.Fatalf("relayed: %s %s", m.Method, m.Params)
	}
	if _, m := again.Message(); m.Error != nil || !strings.Contains(string(m.Result), "done") {
		t.Fatalf("relayed final message: %s", m.Raw)
	}
	again.End()
}

// resume sends GET with Last-Event-ID, again while the answer is 409:
// the server may not have seen the end of the previous connection yet
// (a client does the same). It waits for that as long as the env's hang
// guard allows, not for a fixed number of tries: under load the server
// may take a while to notice.
func resume(e *httpEnv, sid, last string, opts ...httpenv.ReqOpt) *http.Response {
	e.T.Helper()
	for {
		resp := e.Do(http.MethodGet, sid, "", append(opts, httpenv.WithHeader("Last-Event-ID", last))...)
		if resp.StatusCode != http.StatusConflict || e.Ctx.Err() != nil {
			return resp
		}
		resp.Body.Close()
		select {
		case <-time.After(10 * time.Millisecond):
		case <-e.Ctx.Done():
		}
	}
}

func servingRelays(h *Handler) int {
	h.cluster.mu.Lock()
	defer h.cluster.mu.Unlock()
	return len(h.cluster.serving)
}

// TestClusterOneStandalone: the server sends a message on one stream
// only. A session's standalone stream opened on another instance ends
// the one the first instance held, and a change reaches the new one,
// once.
func TestClusterOneStandalone(t *testing.T) {
	a, b, _, _ := clusterPair(t, nil)
	sid := a.Initialize("{}")
	first := a.OpenSSE(a.Do(http.MethodGet, sid, ""))
	first.Prime(0)
	second := b.OpenSSE(b.Do(http.MethodGet, sid, ""))
	second.Prime(0)
	first.End() // A dropped its stream when B opened one
	waitFor(t, "A to drop its standalone stream", func() bool {
		hs := a.h.local(sid)
		return hs != nil && hs.standalone() == nil
	})
	server.AddTool(a.srv, &mcp.Tool{Name: "late"}, func(context.Context, *server.CallToolRequest, struct{}) (string, error) { return "", nil })
	if _, n := second.Message(); n.Method != mcp.NotificationToolsListChanged {
		t.Fatalf("B's stream: %s", n.Method)
	}
	second.Close()
}

// TestSessionBoundToPrincipal: a session opened by one principal is not
// found when another presents its id (MCP security best practices:
// session ids are not authentication), on the instance that opened it
// and on any other, which learns the principal from the SessionStore.
func TestSessionBoundToPrincipal(t *testing.T) {
	sessions, events, bus := store.NewMemorySessionStore(), store.NewMemoryEventStore(nil), store.NewMemoryBus()
	var urls []string
	for range 2 {
		br := bus.Broker()
		h := NewHandler(server.New(nil), &Options{SessionStore: sessions, EventStore: events, Broker: br})
		ts := httptest.NewServer(principalMiddleware(h))
		t.Cleanup(func() { ts.Close(); h.Close(); br.Close() })
		urls = append(urls, ts.URL)
	}
	post := func(url, sid, principal, body string) (int, http.Header) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", httpenv.AcceptBoth)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		if principal != "" {
			req.Header.Set("X-Test-Principal", principal)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	status, hdr := post(urls[0], "", "alice", httpenv.InitBody(1, "{}"))
	sid := hdr.Get("Mcp-Session-Id")
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d", status)
	}
	if status, _ := post(urls[0], sid, "alice", `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		t.Fatalf("initialized: %d", status)
	}
	ping := `{"jsonrpc":"2.0","id":5,"method":"ping"}`
	for i, url := range urls {
		for _, who := range []string{"mallory", ""} {
			if status, _ := post(url, sid, who, ping); status != http.StatusNotFound {
				t.Errorf("instance %d, principal %q: %d, want 404", i, who, status)
			}
		}
		if status, _ := post(url, sid, "alice", ping); status != http.StatusOK {
			t.Errorf("instance %d, alice's own session: %d", i, status)
		}
	}
	http.DefaultClient.CloseIdleConnections()
}
