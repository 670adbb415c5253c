package streamhttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/store"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/mcp"
)

// mapStore is a SessionStore in a map, standing in for a shared one.
type mapStore struct {
	mu sync.Mutex
	m  map[string][]byte // JSON, as an external store would keep it
}

func (s *mapStore) Put(_ context.Context, id string, st *store.SessionState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[id] = b
	return nil
}

func (s *mapStore) Get(_ context.Context, id string) (*store.SessionState, error) {
	s.mu.Lock()
	b, ok := s.m[id]
	s.mu.Unlock()
	if !ok {
		return nil, store.ErrUnknownSession
	}
	var st store.SessionState
	return &st, json.Unmarshal(b, &st)
}

func (s *mapStore) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
	return nil
}

// TestSessionStoreAcrossInstances: a session created on one instance is
// served by another that shares the stores, with the state the client
// set on the first (log level, subscriptions); DELETE ends it everywhere.
func TestSessionStoreAcrossInstances(t *testing.T) {
	fst := &mapStore{m: map[string][]byte{}}
	events := store.NewMemoryEventStore(nil)
	newInstance := func() (*Handler, *httptest.Server) {
		s := server.New(&server.Options{Logging: true})
		server.AddTool(s, &mcp.Tool{Name: "log"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			_ = req.Log(ctx, mcp.LevelDebug, "t", "debug line")
			_ = req.Log(ctx, mcp.LevelError, "t", "error line")
			return "ok", nil
		})
		s.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: "test://r", Text: "r"}}}, nil
		})
		h := NewHandler(s, &Options{SessionStore: fst, EventStore: events})
		ts := httptest.NewServer(h)
		t.Cleanup(func() { h.Close(); ts.Close() })
		return h, ts
	}
	hA, a := newInstance()
	hB, b := newInstance()
	post := func(url, sid, body string) (*http.Response, string) {
		t.Helper()
		return copyDo(t, http.MethodPost, url, sid, body)
	}
	resp, _ := post(a.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session id")
	}
	post(a.URL, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	post(a.URL, sid, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"error"}}`)
	post(a.URL, sid, `{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"test://r"}}`)

	// Instance B has never seen the session.
	if n := hB.SessionCount(); n != 0 {
		t.Fatalf("B has %d sessions before any request", n)
	}
	resp, body := post(b.URL, sid, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"log"}}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"text":"ok"`) {
		t.Fatalf("B answered %s: %s", resp.Status, body)
	}
	if !strings.Contains(body, "error line") || strings.Contains(body, "debug line") {
		t.Errorf("B did not apply the log level set on A: %s", body)
	}
	hs := hB.local(sid)
	if hs == nil {
		t.Fatal("B holds no copy of the session")
	}
	if st := hs.ss.State(); hs.ss.ID() != sid || st.ProtocolVersion != mcp.Version20251125 || !slices.Contains(st.Subscriptions, "test://r") || !st.Ready {
		t.Fatalf("B's copy of the session is not the one A negotiated")
	}
	// DELETE on B ends it everywhere: A, after dropping its local copy
	// (as its idle sweep would), no longer finds it.
	req, _ := http.NewRequest(http.MethodDelete, b.URL, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	for _, hs := range func() []*httpSession {
		hA.mu.Lock()
		defer hA.mu.Unlock()
		var out []*httpSession
		for _, hs := range hA.sessions {
			out = append(out, hs)
		}
		return out
	}() {
		hA.endSession(hs)
	}
	if resp, _ := post(a.URL, sid, `{"jsonrpc":"2.0","id":5,"method":"ping"}`); resp.StatusCode != http.StatusNotFound {
		t.Errorf("after DELETE, A answered %s, want 404", resp.Status)
	}
}

// TestSessionStoreWithoutBrokerReadsEveryRequest: with a SessionStore
// and no Broker, nothing brings an instance's copy the DELETE made on
// another, so the copy is never served from memory: right after the
// DELETE on B, A (which holds a copy checked a moment before) answers
// 404, with no time passing on its clock.
func TestSessionStoreWithoutBrokerReadsEveryRequest(t *testing.T) {
	fst := &mapStore{m: map[string][]byte{}}
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { return now }
	newInstance := func() *httptest.Server {
		h := NewHandler(server.New(nil), &Options{SessionStore: fst, Now: clock})
		ts := httptest.NewServer(h)
		t.Cleanup(func() { h.Close(); ts.Close() })
		return ts
	}
	a, b := newInstance(), newInstance()
	var sid string
	do := func(method, url, body string) int {
		t.Helper()
		resp, _ := copyDo(t, method, url, sid, body)
		if sid == "" {
			sid = resp.Header.Get("Mcp-Session-Id")
		}
		return resp.StatusCode
	}
	do(http.MethodPost, a.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	do(http.MethodPost, a.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got := do(http.MethodPost, a.URL, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); got != http.StatusOK {
		t.Fatalf("ping on A: %d", got)
	}
	if got := do(http.MethodDelete, b.URL, ""); got != http.StatusNoContent {
		t.Fatalf("DELETE on B: %d", got)
	}
	if got := do(http.MethodPost, a.URL, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); got != http.StatusNotFound {
		t.Fatalf("A after a DELETE on B, no Broker: %d, want 404 (a copy served without the store)", got)
	}
}
