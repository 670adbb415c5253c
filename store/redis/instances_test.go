package redisstore

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/server/streamhttp"

	"github.com/mcpkit/mcpkit/store"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
)

// TestTwoInstances: two handlers share the Redis stores. A session
// initialized on A is served by B with the state set on A; a stream A
// produced is resumed on B with Last-Event-ID; DELETE on B ends the
// session in the store and purges its events.
func TestTwoInstances(t *testing.T) {
	redistest.Need(t)
	p := prefix(t)
	sessions := NewSessionStore(rdb, &SessionStoreOptions{Prefix: p})
	events := NewEventStore(rdb, &EventStoreOptions{Prefix: p})
	newInstance := func() *httptest.Server {
		s := server.New(&server.Options{Logging: true})
		server.AddTool(s, &mcp.Tool{Name: "log"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			_ = req.Log(ctx, mcp.LevelDebug, "t", "debug line")
			_ = req.Log(ctx, mcp.LevelError, "t", "error line")
			return "ok", nil
		})
		h := streamhttp.NewHandler(s, &streamhttp.Options{SessionStore: sessions, EventStore: events})
		ts := httptest.NewServer(h)
		t.Cleanup(func() { h.Close(); ts.Close() })
		return ts
	}
	a, b := newInstance(), newInstance()
	do := func(method, url, sid, body string, hdr ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp, string(out)
	}
	resp, _ := do(http.MethodPost, a.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session id")
	}
	do(http.MethodPost, a.URL, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	do(http.MethodPost, a.URL, sid, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"error"}}`)
	st, err := sessions.Get(context.Background(), sid)
	if err != nil || st.ProtocolVersion != mcp.Version20251125 || !st.Ready || st.LogLevel != mcp.LevelError {
		t.Fatalf("stored state: %+v, %v", st, err)
	}

	// B has never seen the session and serves it with A's log level.
	resp, body := do(http.MethodPost, b.URL, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"log"}}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"text":"ok"`) {
		t.Fatalf("B answered %s: %s", resp.Status, body)
	}
	if !strings.Contains(body, "error line") || strings.Contains(body, "debug line") {
		t.Errorf("B did not apply the log level set on A: %s", body)
	}

	// A produces a stream (a log event, then the result); the client
	// resumes it on B after the first event.
	resp, body = do(http.MethodPost, a.URL, sid, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"log"}}`)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("A answered %s (%s), want an event stream: %s", resp.Status, ct, body)
	}
	var firstID string
	for _, ev := range strings.Split(body, "\n\n") {
		var id string
		var hasData bool
		for _, line := range strings.Split(ev, "\n") {
			if v, ok := strings.CutPrefix(line, "id:"); ok {
				id = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "data:"); ok && strings.TrimSpace(v) != "" {
				hasData = true
			}
		}
		if id != "" && hasData {
			firstID = id
			break
		}
	}
	if firstID == "" || !strings.Contains(body, "error line") {
		t.Fatalf("no event with an id in A's stream: %q", body)
	}
	resp, body = do(http.MethodGet, b.URL, sid, "", "Last-Event-ID", firstID)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"text":"ok"`) || !strings.Contains(body, `"id":4`) {
		t.Fatalf("resume on B after %s: %s: %q", firstID, resp.Status, body)
	}
	if strings.Contains(body, "error line") {
		t.Errorf("resume on B replayed the event before Last-Event-ID: %q", body)
	}
	// From before what the store holds: refused, not cut short.
	streamID := firstID[:strings.LastIndexByte(firstID, '_')]
	list, _, _ := events.keys(sid, streamID)
	if err := rdb.LPop(context.Background(), list).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(context.Background(), p+"{"+sid+"}:evp:"+streamID, "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if resp, body := do(http.MethodGet, b.URL, sid, "", "Last-Event-ID", streamID+"_0"); resp.StatusCode != http.StatusConflict {
		t.Errorf("resume from a purged event: %s %q, want 409", resp.Status, body)
	}

	// DELETE on B ends the session in the store and purges its events.
	if resp, _ := do(http.MethodDelete, b.URL, sid, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %s", resp.Status)
	}
	if _, err := sessions.Get(context.Background(), sid); !errors.Is(err, store.ErrUnknownSession) {
		t.Errorf("after DELETE the store has the session: %v", err)
	}
	if n := keyCount(t, p); n != 0 {
		keys, _ := rdb.Keys(context.Background(), p+"*").Result()
		t.Errorf("keys left after DELETE: %q", keys)
	}
}
