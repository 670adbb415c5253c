package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/memory"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// seenPost is one POST the resume server received: its JSON-RPC method
// and the session id it carried.
type seenPost struct{ method, session string }

// resumeServer is an mcpkit server over Streamable HTTP, both eras, with
// a tool "echo", recording every POST.
type resumeServer struct {
	url string
	mu  sync.Mutex
	all []seenPost
}

func newResumeServer(t *testing.T) *resumeServer {
	t.Helper()
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "resume", Version: "1.0.0"}, Instructions: "echo things"})
	if err := server.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *server.CallToolRequest, in struct{ S string }) (string, error) {
		return in.S, nil
	}); err != nil {
		t.Fatal(err)
	}
	h := streamhttp.NewHandler(s, nil)
	rs := &resumeServer{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var env struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(body, &env, json.RejectUnknownMembers(false))
			rs.mu.Lock()
			rs.all = append(rs.all, seenPost{env.Method, r.Header.Get("Mcp-Session-Id")})
			rs.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	rs.url = ts.URL
	return rs
}

// posts returns the POSTs received, and forgets them.
func (rs *resumeServer) posts() []seenPost {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := rs.all
	rs.all = nil
	return out
}

func (rs *resumeServer) connect(t *testing.T, topts *streamable.Options, opts *client.Options) (*client.Client, error) {
	t.Helper()
	c, err := client.Connect(testCtx(t), streamable.New(rs.url, topts), opts)
	if err == nil {
		t.Cleanup(func() { _ = c.Close() })
	}
	return c, err
}

func echo(t *testing.T, c *client.Client, s string) {
	t.Helper()
	res, err := c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "echo", Arguments: jsontext.Value(`{"S":"` + s + `"}`)})
	if err != nil || res.IsError || text(res) != s {
		t.Fatalf("echo %q: %v %v", s, res, err)
	}
}

// storedSession opens a legacy session, calls a tool in it, and closes the
// client without ending the session (KeepSession).
func storedSession(t *testing.T, rs *resumeServer) client.SessionState {
	t.Helper()
	a, err := rs.connect(t, &streamable.Options{KeepSession: true}, &client.Options{ProtocolVersion: mcp.LatestLegacy})
	if err != nil {
		t.Fatal(err)
	}
	echo(t, a, "first")
	st, ok := a.SessionState()
	if !ok || st.SessionID == "" || st.ProtocolVersion != mcp.LatestLegacy || st.ServerInfo.Name != "resume" || st.Instructions != "echo things" || st.Capabilities.Tools == nil {
		t.Fatalf("SessionState = %+v, %v", st, ok)
	}
	if a.Resumed() {
		t.Error("a new session reports Resumed")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	rs.posts()
	return st
}

// TestResumeLegacySession: a client given the stored state of a session
// continues it with no initialize; the server sees the same session id
// on every request; the state survives a JSON round trip; and when the
// server loses the session later, the transport re-initializes it with
// the client's identity, as after any lost session.
func TestResumeLegacySession(t *testing.T) {
	rs := newResumeServer(t)
	st := storedSession(t, rs)
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back client.SessionState
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	for _, pv := range []string{"", mcp.LatestLegacy} { // automatic, and a pinned legacy revision
		b, err := rs.connect(t, &streamable.Options{KeepSession: true}, &client.Options{ProtocolVersion: pv, Resume: &back, Info: mcp.Implementation{Name: "b"}})
		if err != nil {
			t.Fatalf("%q: Connect: %v", pv, err)
		}
		if !b.Resumed() || b.Era() != client.EraLegacy || b.ProtocolVersion() != st.ProtocolVersion || b.ServerInfo().Name != "resume" || b.Instructions() != "echo things" {
			t.Fatalf("%q: Resumed %v, era %v, version %q, info %+v", pv, b.Resumed(), b.Era(), b.ProtocolVersion(), b.ServerInfo())
		}
		echo(t, b, "again")
		for _, p := range rs.posts() {
			if p.method == mcp.MethodInitialize || p.method == mcp.MethodServerDiscover || p.session != st.SessionID {
				t.Errorf("%q: the server saw %s in session %q, want only session %q", pv, p.method, p.session, st.SessionID)
			}
		}
		if now, ok := b.SessionState(); !ok || now.SessionID != st.SessionID || now.ServerInfo.Name != st.ServerInfo.Name {
			t.Errorf("%q: SessionState after resuming = %+v", pv, now)
		}
		_ = b.Close()
	}

	// The server ends the session; the resumed client re-initializes.
	c, err := rs.connect(t, nil, &client.Options{Resume: &st, Info: mcp.Implementation{Name: "c"}})
	if err != nil || !c.Resumed() {
		t.Fatalf("Connect: %v, resumed %v", err, c != nil && c.Resumed())
	}
	del, _ := http.NewRequest(http.MethodDelete, rs.url, nil)
	del.Header.Set("Mcp-Session-Id", st.SessionID)
	del.Header.Set("MCP-Protocol-Version", st.ProtocolVersion)
	resp, err := http.DefaultClient.Do(del)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	rs.posts()
	echo(t, c, "after the loss")
	methods := []string{}
	for _, p := range rs.posts() {
		methods = append(methods, p.method)
	}
	if !slices.Contains(methods, mcp.MethodInitialize) || !slices.Contains(methods, mcp.NotificationInitialized) {
		t.Errorf("after the session ended the server saw %v, want a replayed initialize", methods)
	}
}

// TestResumeGoneSessionFallsBack: a stored session the server no longer
// has (ended with DELETE, or never known) is refused with 404; Connect
// then opens a new session as if Resume were not set: initialize with a
// legacy revision pinned, the era detection (here: modern) without.
func TestResumeGoneSessionFallsBack(t *testing.T) {
	rs := newResumeServer(t)
	a, err := rs.connect(t, nil, &client.Options{ProtocolVersion: mcp.LatestLegacy})
	if err != nil {
		t.Fatal(err)
	}
	ended, _ := a.SessionState()
	_ = a.Close() // DELETE: the server ends the session
	unknown := ended
	unknown.SessionID = "no-such-session"
	for _, st := range []client.SessionState{ended, unknown} {
		rs.posts()
		b, err := rs.connect(t, nil, &client.Options{ProtocolVersion: mcp.LatestLegacy, Resume: &st})
		if err != nil {
			t.Fatalf("%s: Connect: %v", st.SessionID, err)
		}
		now, ok := b.SessionState()
		if b.Resumed() || !ok || now.SessionID == st.SessionID || b.Era() != client.EraLegacy {
			t.Errorf("%s: Resumed %v, state %+v, era %v", st.SessionID, b.Resumed(), now, b.Era())
		}
		echo(t, b, "new")
		posts := rs.posts()
		if len(posts) < 3 || posts[0].method != mcp.MethodPing || posts[0].session != st.SessionID || posts[1].method != mcp.MethodInitialize || posts[1].session != "" {
			t.Errorf("%s: the server saw %v, want the ping in the old session then initialize", st.SessionID, posts)
		}
		for _, p := range posts[2:] {
			if p.session != now.SessionID {
				t.Errorf("%s: %s sent in session %q, want the new %q", st.SessionID, p.method, p.session, now.SessionID)
			}
		}
	}
	c, err := rs.connect(t, nil, &client.Options{Resume: &unknown})
	if err != nil {
		t.Fatal(err)
	}
	if c.Resumed() || c.Era() != client.EraModern {
		t.Errorf("automatic era after a refused resume: Resumed %v, era %v; want a new modern connection", c.Resumed(), c.Era())
	}
	if _, ok := c.SessionState(); ok {
		t.Error("a modern connection reports a session state")
	}
}

// TestResumeIgnoredWhereNoSession: with a modern revision pinned, or on
// a transport without sessions, Resume is ignored: no request carries
// the stored session.
func TestResumeIgnoredWhereNoSession(t *testing.T) {
	rs := newResumeServer(t)
	st := storedSession(t, rs)
	c, err := rs.connect(t, nil, &client.Options{ProtocolVersion: mcp.Version20260728, Resume: &st})
	if err != nil {
		t.Fatal(err)
	}
	echo(t, c, "modern")
	if c.Resumed() || c.Era() != client.EraModern {
		t.Errorf("Resumed %v, era %v", c.Resumed(), c.Era())
	}
	for _, p := range rs.posts() {
		if p.session != "" {
			t.Errorf("a modern %s carried session %q", p.method, p.session)
		}
	}

	s := server.New(nil)
	ca, sb := memory.NewPair()
	ss := s.Connect(sb)
	t.Cleanup(func() { ss.Close() })
	m, err := client.Connect(testCtx(t), ca, &client.Options{ProtocolVersion: mcp.LatestLegacy, Resume: &st})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Resumed() || m.Era() != client.EraLegacy {
		t.Errorf("memory: Resumed %v, era %v; want a new legacy session", m.Resumed(), m.Era())
	}
	if _, ok := m.SessionState(); ok {
		t.Error("memory: a transport without sessions reports a session state")
	}
}

// TestResumeBadState: a state that cannot be a legacy session fails
// Connect with ErrBadSessionState before anything is sent.
func TestResumeBadState(t *testing.T) {
	rs := newResumeServer(t)
	good := client.SessionState{SessionID: "abc", ProtocolVersion: mcp.LatestLegacy}
	bad := map[string]func(*client.SessionState){
		"no id":          func(s *client.SessionState) { s.SessionID = "" },
		"id with space":  func(s *client.SessionState) { s.SessionID = "a b" },
		"id with CRLF":   func(s *client.SessionState) { s.SessionID = "a\r\nX-Evil: 1" },
		"modern version": func(s *client.SessionState) { s.ProtocolVersion = mcp.Version20260728 },
		"no version":     func(s *client.SessionState) { s.ProtocolVersion = "" },
		"unknown":        func(s *client.SessionState) { s.ProtocolVersion = "2099-01-01" },
	}
	for name, spoil := range bad {
		st := good
		spoil(&st)
		_, err := rs.connect(t, nil, &client.Options{Resume: &st})
		if !errors.Is(err, client.ErrBadSessionState) {
			t.Errorf("%s: Connect = %v, want ErrBadSessionState", name, err)
		}
	}
	if p := rs.posts(); len(p) != 0 {
		t.Errorf("bad states sent %v", p)
	}
}

// TestResumeOnOldTransportFallsBack: a stored session given to a server
// that speaks only the 2024-11-05 HTTP+SSE transport is refused (its
// POST endpoint answers 405), and Connect falls back to that transport
// with a new session as it would without Resume.
func TestResumeOnOldTransportFallsBack(t *testing.T) {
	s := server.New(nil)
	if err := server.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *server.CallToolRequest, in struct{ S string }) (string, error) {
		return in.S, nil
	}); err != nil {
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
	conn := streamable.New(ts.URL+"/sse", nil)
	st := client.SessionState{SessionID: "stored", ProtocolVersion: mcp.LatestLegacy}
	c, err := client.Connect(testCtx(t), conn, &client.Options{ProtocolVersion: mcp.LatestLegacy, Resume: &st})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Resumed() || !conn.Legacy() {
		t.Errorf("Resumed %v, 2024-11-05 transport %v", c.Resumed(), conn.Legacy())
	}
	echo(t, c, "old")
	if _, ok := c.SessionState(); ok {
		t.Error("a 2024-11-05 connection reports a session state it cannot resume")
	}
}
