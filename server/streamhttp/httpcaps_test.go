package streamhttp

// Tests of the session caps (Options.MaxSessions and
// MaxSessionsPerPrincipal): an initialize over a cap is answered 503
// with Retry-After and a JSON-RPC error for its id, and creates nothing;
// concurrent initializes never admit more than the cap.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
)

// initializeAs runs one initialize through h as principal ("" for none)
// and returns the recorded answer.
func initializeAs(h *Handler, principal string, id int64) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(httpenv.InitBody(id, "{}")))
	r.Host = "localhost"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", httpenv.AcceptBoth)
	if principal != "" {
		r = r.WithContext(server.WithPrincipal(r.Context(), principal))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// expectRefused checks the answer to an initialize over a cap.
func expectRefused(t *testing.T, wc *wirecheck.Checker, w *httptest.ResponseRecorder, id int64) {
	t.Helper()
	if w.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503: %s", w.Code, w.Body.Bytes())
	}
	if ra, err := strconv.Atoi(w.Header().Get("Retry-After")); err != nil || ra <= 0 {
		t.Errorf("Retry-After %q, want a positive number of seconds", w.Header().Get("Retry-After"))
	}
	if sid := w.Header().Get("Mcp-Session-Id"); sid != "" {
		t.Errorf("a refused initialize named session %s", sid)
	}
	if err := wc.Check(w.Body.Bytes()); err != nil {
		t.Errorf("503 body does not conform: %v\n%s", err, w.Body.Bytes())
	}
	m := httpenv.ParseMsg(t, w.Body.Bytes())
	if m.Error == nil || string(m.ID) != strconv.FormatInt(id, 10) {
		t.Errorf("503 body %s: want a JSON-RPC error for id %d", w.Body.Bytes(), id)
	}
}

func TestHTTPSessionCap(t *testing.T) {
	wc := wirecheck.For(t, mcp.Version20251125)
	h := NewHandler(echoServer(), &Options{MaxSessions: 3})
	defer h.Close()
	var sids []string
	for i := range 3 {
		w := initializeAs(h, "", int64(i+1))
		if w.Code != http.StatusOK {
			t.Fatalf("initialize %d: %d %s", i+1, w.Code, w.Body.Bytes())
		}
		sids = append(sids, w.Header().Get("Mcp-Session-Id"))
	}
	expectRefused(t, wc, initializeAs(h, "", 4), 4)
	expectRefused(t, wc, initializeAs(h, "alice", 5), 5) // a principal does not lift the global cap
	if n := h.SessionCount(); n != 3 {
		t.Errorf("SessionCount %d, want 3", n)
	}
	// Ending a session frees its place.
	r := httptest.NewRequest(http.MethodDelete, "/", nil)
	r.Host = "localhost"
	r.Header.Set("Mcp-Session-Id", sids[0])
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", w.Code, w.Body.Bytes())
	}
	if w := initializeAs(h, "", 6); w.Code != http.StatusOK {
		t.Fatalf("initialize after DELETE: %d %s", w.Code, w.Body.Bytes())
	}
}

func TestHTTPSessionCapPerPrincipal(t *testing.T) {
	wc := wirecheck.For(t, mcp.Version20251125)
	h := NewHandler(echoServer(), &Options{MaxSessionsPerPrincipal: 2})
	defer h.Close()
	var alice []string
	for i := range 2 {
		w := initializeAs(h, "alice", int64(i+1))
		if w.Code != http.StatusOK {
			t.Fatalf("alice's initialize %d: %d %s", i+1, w.Code, w.Body.Bytes())
		}
		alice = append(alice, w.Header().Get("Mcp-Session-Id"))
	}
	expectRefused(t, wc, initializeAs(h, "alice", 3), 3)
	// Others are not held back by alice's sessions; requests without a
	// principal count against MaxSessions only.
	for i := range 3 {
		switch w := initializeAs(h, "bob", 10); {
		case i < 2 && w.Code != http.StatusOK:
			t.Fatalf("bob's initialize: %d %s", w.Code, w.Body.Bytes())
		case i == 2:
			expectRefused(t, wc, w, 10) // bob has his own cap
		}
		if w := initializeAs(h, "", 20); w.Code != http.StatusOK {
			t.Fatalf("anonymous initialize %d: %d %s", i+1, w.Code, w.Body.Bytes())
		}
	}
	// Ending a session (DELETE, the idle sweep) frees alice's place.
	h.endSession(h.sessionForTest(alice[0]))
	if w := initializeAs(h, "alice", 4); w.Code != http.StatusOK {
		t.Fatalf("alice after ending a session: %d %s", w.Code, w.Body.Bytes())
	}
	expectRefused(t, wc, initializeAs(h, "alice", 5), 5)
}

// TestHTTPSessionCapRace: many initializes at once never admit more than
// a cap.
func TestHTTPSessionCapRace(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      Options
		principal func(i int) string
		want      int
	}{
		{"global", Options{MaxSessions: 7}, func(i int) string { return fmt.Sprintf("p%d", i) }, 7},
		{"per principal", Options{MaxSessionsPerPrincipal: 5}, func(int) string { return "alice" }, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHandler(echoServer(), &tc.opts)
			defer h.Close()
			const n = 48
			codes := make([]int, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Go(func() {
					<-start
					codes[i] = initializeAs(h, tc.principal(i), int64(i+1)).Code
				})
			}
			close(start)
			wg.Wait()
			ok, refused := 0, 0
			for _, c := range codes {
				switch c {
				case http.StatusOK:
					ok++
				case http.StatusServiceUnavailable:
					refused++
				default:
					t.Errorf("status %d", c)
				}
			}
			if ok != tc.want || refused != n-tc.want || h.SessionCount() != tc.want {
				t.Errorf("%d admitted, %d refused, %d sessions; want %d admitted", ok, refused, h.SessionCount(), tc.want)
			}
		})
	}
}

func TestHTTPSessionCapDefaults(t *testing.T) {
	h := NewHandler(echoServer(), nil)
	defer h.Close()
	if h.opts.MaxSessions != DefaultMaxSessions || h.opts.MaxSessionsPerPrincipal != DefaultMaxSessionsPerPrincipal {
		t.Errorf("defaults %d, %d", h.opts.MaxSessions, h.opts.MaxSessionsPerPrincipal)
	}
	// Negative: no cap.
	u := NewHandler(echoServer(), &Options{MaxSessions: -1, MaxSessionsPerPrincipal: -1})
	defer u.Close()
	for i := range 5 {
		if w := initializeAs(u, "alice", int64(i)); w.Code != http.StatusOK {
			t.Fatalf("initialize %d without caps: %d", i, w.Code)
		}
	}
}

// sessionForTest returns the session sid.
func (h *Handler) sessionForTest(sid string) *httpSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[sid]
}
