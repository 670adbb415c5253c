package streamable

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// sessionServer is a fake server with real sessions: initialize mints
// "s-1", "s-2", …; a request naming an unknown session gets 404; forget
// ends the current one. Methods in refuse are answered 404 whatever the
// session (a server that keeps losing it).
type sessionServer struct {
	*fake
	mu     sync.Mutex
	n      int
	live   map[string]bool
	refuse map[string]bool
	get    handlerFunc // GET with a live session; nil: 405
}

func newSessionServer(t *testing.T) *sessionServer {
	s := &sessionServer{live: map[string]bool{}, refuse: map[string]bool{}}
	s.fake = newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		if r.Method == http.MethodPost && in.Msg.Method == "initialize" {
			if in.Header.Get("Mcp-Session-Id") != "" || in.Header.Get("Mcp-Protocol-Version") != "" {
				t.Errorf("initialize carried session headers: %v", in.Header)
			}
			s.mu.Lock()
			s.n++
			id := "s-" + strconv.Itoa(s.n)
			s.live[id] = true
			s.mu.Unlock()
			answerInit(w, in, id)
			return
		}
		sid := in.Header.Get("Mcp-Session-Id")
		s.mu.Lock()
		ok := s.live[sid] && (in.Msg == nil || !s.refuse[in.Msg.Method])
		get := s.get
		s.mu.Unlock()
		if !ok {
			writeJSON(w, http.StatusNotFound, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Not Found: unknown or ended session"}}`)
			return
		}
		switch {
		case r.Method == http.MethodGet && get != nil:
			get(w, r, in)
		case r.Method == http.MethodGet:
			w.WriteHeader(http.StatusMethodNotAllowed)
		case r.Method == http.MethodDelete:
			s.forget()
			w.WriteHeader(http.StatusNoContent)
		case in.Msg.IsRequest():
			writeJSON(w, http.StatusOK, result(in.Msg.ID, `{}`))
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
	return s
}

func (s *sessionServer) forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.live)
}

// TestSessionLossRecovered: a 404 to a request that carried the session
// id makes the transport re-initialize once (the original initialize
// replayed with a fresh id, then notifications/initialized) and retry the
// request, transparently for the client.
func TestSessionLossRecovered(t *testing.T) {
	s := newSessionServer(t)
	conn := newConn(t, s.fake, nil)
	ctx := testCtx(t)
	cl, err := client.Connect(ctx, conn, legacy(&client.Options{Info: mcp.Implementation{Name: "replayed", Version: "9"}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if conn.SessionID() != "s-1" {
		t.Fatalf("session %q", conn.SessionID())
	}
	s.forget()
	if err := cl.Ping(ctx); err != nil {
		t.Fatalf("Ping after the server lost the session: %v", err)
	}
	if conn.SessionID() != "s-2" || conn.ProtocolVersion() != "2025-11-25" {
		t.Errorf("after re-initialize: session %q version %q", conn.SessionID(), conn.ProtocolVersion())
	}
	posts := s.of(http.MethodPost)
	var got []string
	for _, p := range posts {
		got = append(got, p.Msg.Method+"@"+p.Header.Get("Mcp-Session-Id"))
	}
	want := []string{"initialize@", "notifications/initialized@s-1", "ping@s-1", "initialize@", "notifications/initialized@s-2", "ping@s-2"}
	if len(got) != len(want) {
		t.Fatalf("POSTs %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("POSTs %v, want %v", got, want)
		}
	}
	first, again := posts[0].Msg, posts[3].Msg
	if string(first.Params) != string(again.Params) {
		t.Errorf("replayed initialize params %s, want the original %s", again.Params, first.Params)
	}
	if first.ID == again.ID || !again.ID.IsString() {
		t.Errorf("replayed initialize id %s, want a fresh one (the original was %s)", again.ID, first.ID)
	}
	if posts[2].Msg.ID != posts[5].Msg.ID || string(posts[2].Body) != string(posts[5].Body) {
		t.Errorf("the retried ping differs: %s vs %s", posts[2].Body, posts[5].Body)
	}
	// The client goes on in the new session.
	if err := cl.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	_ = cl.Close()
	if d := s.of(http.MethodDelete); len(d) != 1 || d[0].Header.Get("Mcp-Session-Id") != "s-2" {
		t.Errorf("DELETEs %v, want one for s-2", d)
	}
}

// TestSessionLossConcurrent: requests that hit the same 404 at once share
// one re-initialization.
func TestSessionLossConcurrent(t *testing.T) {
	s := newSessionServer(t)
	conn := newConn(t, s.fake, nil)
	ctx := testCtx(t)
	cl, err := client.Connect(ctx, conn, legacy(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	s.forget()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := cl.Ping(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	inits := 0
	for _, p := range s.of(http.MethodPost) {
		if p.Msg.Method == "initialize" {
			inits++
		}
	}
	if inits != 2 {
		t.Errorf("%d initialize requests, want 2 (one re-initialization)", inits)
	}
}

// TestSessionLost: when the retried message gets 404 again, Write fails
// with ErrSessionLost, for good: later calls fail too and the client's
// connection ends.
func TestSessionLost(t *testing.T) {
	s := newSessionServer(t)
	s.refuse["tools/list"] = true
	conn := newConn(t, s.fake, nil)
	ctx := testCtx(t)
	cl, err := client.Connect(ctx, conn, legacy(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	_, err = cl.ListTools(ctx, nil)
	if !errors.Is(err, ErrSessionLost) {
		t.Fatalf("ListTools = %v, want ErrSessionLost", err)
	}
	recv(t, cl.Done(), "the client connection to end")
	if err := cl.Wait(); !errors.Is(err, ErrSessionLost) {
		t.Errorf("client Wait = %v, want ErrSessionLost", err)
	}
	// The client's connection closed the transport as it ended.
	if err := conn.Write(ctx, transport.Message{Data: []byte(request(mcp.IntID(99), "ping", ""))}); !isClosed(err) {
		t.Errorf("Write after the loss = %v, want ErrClosed", err)
	}
	if n := len(s.of(http.MethodPost)); n != 6 {
		t.Errorf("%d POSTs, want 6 (initialize, initialized, tools/list, initialize, initialized, tools/list)", n)
	}
	if conn.SessionID() != "" {
		t.Errorf("session %q after the loss", conn.SessionID())
	}
	_ = cl.Close()
	if n := s.count(http.MethodDelete); n != 0 {
		t.Errorf("%d DELETEs for a lost session", n)
	}
}

// TestSessionLossReinitFails: a re-initialization that fails loses the
// session.
func TestSessionLossReinitFails(t *testing.T) {
	var broken bool
	var mu sync.Mutex
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		mu.Lock()
		b := broken
		mu.Unlock()
		switch {
		case in.Msg != nil && in.Msg.Method == "initialize" && b:
			w.WriteHeader(http.StatusServiceUnavailable)
		case in.Msg != nil && in.Msg.Method == "initialize":
			answerInit(w, in, "only")
		case b:
			w.WriteHeader(http.StatusNotFound)
		case in.Msg != nil && in.Msg.IsRequest():
			writeJSON(w, 200, result(in.Msg.ID, `{}`))
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
	conn := newConn(t, f, nil)
	ctx := testCtx(t)
	cl, err := client.Connect(ctx, conn, legacy(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	mu.Lock()
	broken = true
	mu.Unlock()
	err = cl.Ping(ctx)
	var se *StatusError
	if !errors.Is(err, ErrSessionLost) || !errors.As(err, &se) || se.StatusCode != 503 {
		t.Errorf("Ping = %v, want ErrSessionLost wrapping the 503", err)
	}
}

// TestSessionLossOnInitialized: the lost message is the initialized
// notification itself; it is not sent twice.
func TestSessionLossOnInitialized(t *testing.T) {
	s := newSessionServer(t)
	conn := newConn(t, s.fake, nil)
	mustWrite(t, conn, request(mcp.IntID(1), "initialize", `{"protocolVersion":"2025-11-25"}`))
	readMsg(t, conn)
	s.forget()
	mustWrite(t, conn, notification("notifications/initialized"))
	var got []string
	for _, p := range s.of(http.MethodPost) {
		got = append(got, p.Msg.Method+"@"+p.Header.Get("Mcp-Session-Id"))
	}
	want := "[initialize@ notifications/initialized@s-1 initialize@ notifications/initialized@s-2]"
	if g := "[" + join(got) + "]"; g != want {
		t.Errorf("POSTs %s, want %s", g, want)
	}
	// The replayed initialize's response is not delivered.
	mustWrite(t, conn, request(mcp.IntID(2), "ping", ""))
	if m := readMsg(t, conn); m.ID != mcp.IntID(2) {
		t.Errorf("Read %v, want the ping's response", m)
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

// TestSessionLossRestartsListener: a listener that stopped because its
// session was gone (404s) starts again, fresh, in the new session.
func TestSessionLossRestartsListener(t *testing.T) {
	s := newSessionServer(t)
	gets := make(chan rec, 10)
	s.get = func(w http.ResponseWriter, r *http.Request, in rec) {
		gets <- in
		sseStart(w)
		sseRaw(w, "id: ev-"+in.Header.Get("Mcp-Session-Id")+"\nretry: 100\ndata: "+listMsg+"\n\n")
		hold(r)
	}
	conn := newConn(t, s.fake, nil)
	ctx := testCtx(t)
	listChanged := make(chan struct{}, 10)
	cl, err := client.Connect(ctx, conn, legacy(&client.Options{
		ListRootsHandler:   func(context.Context) (*mcp.ListRootsResult, error) { return &mcp.ListRootsResult{}, nil },
		OnToolsListChanged: func(context.Context) { listChanged <- struct{}{} },
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if g := recv(t, gets, "the first GET"); g.Header.Get("Mcp-Session-Id") != "s-1" {
		t.Errorf("GET session %q", g.Header.Get("Mcp-Session-Id"))
	}
	recv(t, listChanged, "the listener's message")
	// The server ends the session and the GET stream with it.
	s.forget()
	s.mu.Lock()
	s.get = nil
	s.mu.Unlock()
	s.CloseClientConnections()
	stopped := waitListener(t, conn)
	if !errors.Is(stopped, ErrListenFailures) || statusCode(stopped) != 404 {
		t.Fatalf("listener stopped = %v, want failures ending in 404", stopped)
	}
	// The cut stream had delivered a message: it starts a new series of
	// failures, which the 404 of the next attempt completes.
	if g := s.of(http.MethodGet); len(g) != 2 || g[1].Header.Get("Last-Event-ID") != "ev-s-1" {
		t.Errorf("GETs %v", g)
	}
	s.mu.Lock()
	s.get = func(w http.ResponseWriter, r *http.Request, in rec) {
		gets <- in
		sseStart(w)
		hold(r)
	}
	s.mu.Unlock()
	if err := cl.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	g := recv(t, gets, "the GET of the new session")
	if g.Header.Get("Mcp-Session-Id") != "s-2" || g.Header.Get("Last-Event-ID") != "" {
		t.Errorf("restarted listener GET headers %v", g.Header)
	}
	if running, stopped := conn.ListenerStatus(); !running || stopped != nil {
		t.Errorf("ListenerStatus = %v %v", running, stopped)
	}
}

// TestSessionLostRaw: after ErrSessionLost, Write fails with it, Read
// returns it once the queue is empty, and the listener stops with it.
func TestSessionLostRaw(t *testing.T) {
	s := newSessionServer(t)
	s.refuse["x"] = true
	s.get = func(w http.ResponseWriter, r *http.Request, in rec) {
		sseStart(w)
		hold(r)
	}
	conn := newConn(t, s.fake, nil)
	ctx := testCtx(t)
	mustWrite(t, conn, request(mcp.IntID(1), "initialize", `{}`))
	mustWrite(t, conn, notification("notifications/initialized"))
	conn.Listen()
	s.next(t, http.MethodGet)
	if err := conn.Write(ctx, transport.Message{Data: []byte(request(mcp.IntID(2), "x", ""))}); !errors.Is(err, ErrSessionLost) {
		t.Fatalf("Write = %v, want ErrSessionLost", err)
	}
	if err := conn.Write(ctx, transport.Message{Data: []byte(request(mcp.IntID(3), "ping", ""))}); !errors.Is(err, ErrSessionLost) {
		t.Errorf("later Write = %v, want ErrSessionLost", err)
	}
	if m := readMsg(t, conn); m.ID != mcp.IntID(1) {
		t.Errorf("queued message %v, want the initialize response first", m)
	}
	if _, err := conn.Read(ctx); !errors.Is(err, ErrSessionLost) {
		t.Errorf("Read = %v, want ErrSessionLost", err)
	}
	if stopped := waitListener(t, conn); !errors.Is(stopped, ErrSessionLost) {
		t.Errorf("listener stopped = %v, want ErrSessionLost", stopped)
	}
}
