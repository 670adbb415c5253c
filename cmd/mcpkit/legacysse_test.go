package main

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/server/streamhttp"
)

// TestOldHTTPSSEServer: inspect and call reach a server of the deprecated
// HTTP+SSE transport (2024-11-05) with nothing but its URL, in the
// automatic era and in legacy.
func TestOldHTTPSSEServer(t *testing.T) {
	s, err := newDemoServer(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	h := streamhttp.NewHandler(s, &streamhttp.Options{LegacySSE: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && !r.URL.Query().Has("sessionId") {
			http.Error(w, "only the HTTP+SSE transport here", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	url := ts.URL + "/sse"
	expect(t, mcpkit(t, "call", url, "add", "a=2", "b=40"), 0, `{"sum":42}`)
	expect(t, mcpkit(t, "call", "--era", "legacy", url, "add", "a=2", "b=40"), 0, `{"sum":42}`)
	expect(t, mcpkit(t, "call", "--era", "legacy", url, "research", "topic=go"), 0, "a report on go")
	expect(t, mcpkit(t, "inspect", "--era", "legacy", url), 0, "server:       mcpkit-demo", "  add: Adds two numbers.")
	expect(t, mcpkit(t, "inspect", url), 0, "server:       mcpkit-demo", "    task:   required")
}
