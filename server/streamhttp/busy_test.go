package streamhttp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/internal/httpenv"
)

// TestBusyReleasedOnEveryPath: whatever becomes of a request that names a
// session (served, refused for another principal, refused for its
// protocol version header), the session's hold is released by the time
// the handler returns, so that the sweep can end it once idle. ServeHTTP
// runs on the test's goroutine: its return is the event waited on.
func TestBusyReleasedOnEveryPath(t *testing.T) {
	h := NewHandler(server.New(nil), nil)
	t.Cleanup(func() { h.Close() })
	do := func(method, sid, principal, version, body string) (int, string) {
		t.Helper()
		req := httptest.NewRequest(method, "http://127.0.0.1/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", httpenv.AcceptBoth)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		if version != "" {
			req.Header.Set("MCP-Protocol-Version", version)
		}
		if principal != "" {
			req = req.WithContext(server.WithPrincipal(req.Context(), principal))
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if sid == "" {
			if sid = rec.Header().Get("Mcp-Session-Id"); sid == "" {
				t.Fatalf("initialize: %d %s", rec.Code, rec.Body)
			}
		}
		h.mu.Lock()
		hs := h.sessions[sid]
		h.mu.Unlock()
		if hs == nil {
			t.Fatalf("%s %s: no session %q", method, body, sid)
		}
		if !hs.busy.zero() {
			t.Fatalf("%s %s (principal %q, version %q) answered %d and left the session held (%d)", method, body, principal, version, rec.Code, hs.busy.n.Load())
		}
		return rec.Code, sid
	}
	_, sid := do(http.MethodPost, "", "alice", "", httpenv.InitBody(1, "{}"))
	if got, _ := do(http.MethodPost, sid, "alice", "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`); got != http.StatusAccepted {
		t.Fatalf("initialized: %d", got)
	}
	ping := `{"jsonrpc":"2.0","id":5,"method":"ping"}`
	for _, tc := range []struct {
		principal, version string
		want               int
	}{
		{"alice", "", http.StatusOK},
		{"mallory", "", http.StatusNotFound},
		{"", "", http.StatusNotFound},
		{"alice", "1999-01-01", http.StatusBadRequest},
	} {
		if got, _ := do(http.MethodPost, sid, tc.principal, tc.version, ping); got != tc.want {
			t.Errorf("ping as %q, version %q: %d, want %d", tc.principal, tc.version, got, tc.want)
		}
	}
}
