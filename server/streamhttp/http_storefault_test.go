package streamhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/store"

	"github.com/mcpkit/mcpkit/mcp"
)

var errStoreDown = errors.New("test: the store is down")

// faultySessionStore is a MemorySessionStore whose writes fail on command.
type faultySessionStore struct {
	*store.MemorySessionStore
	failPut atomic.Bool
	puts    atomic.Int32 // failed Puts
}

func (s *faultySessionStore) Put(ctx context.Context, id string, st *store.SessionState) error {
	if s.failPut.Load() {
		s.puts.Add(1)
		return errStoreDown
	}
	return s.MemorySessionStore.Put(ctx, id, st)
}

// TestHTTPInitializeStoreDown: an initialize whose session the
// SessionStore did not take fails — 503, a JSON-RPC error, no session id,
// no session left here — instead of handing out an id nobody can serve.
func TestHTTPInitializeStoreDown(t *testing.T) {
	store := &faultySessionStore{MemorySessionStore: store.NewMemorySessionStore()}
	e := newHTTPEnv(t, echoServer(), &Options{SessionStore: store})
	store.failPut.Store(true)
	resp := e.Post("", httpenv.InitBody(7, "{}"))
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		t.Errorf("a failed initialize handed out session id %q", sid)
	}
	m := e.ExpectStatus(resp, http.StatusServiceUnavailable)
	if m == nil || m.Error.Code != mcp.CodeInternalError || string(m.ID) != "7" {
		t.Errorf("initialize with the store down answered %v; want a -32603 error for id 7", m)
	}
	if store.puts.Load() == 0 {
		t.Error("the store was not asked")
	}
	if n := e.h.SessionCount(); n != 0 {
		t.Errorf("SessionCount after a failed initialize = %d", n)
	}
	waitFor(t, "the failed session to close", func() bool { return len(e.srv.Sessions()) == 0 })
	store.failPut.Store(false)
	sid := e.Initialize("{}")
	if _, err := store.Get(context.Background(), sid); err != nil {
		t.Errorf("the session of a good initialize is not stored: %v", err)
	}
}

// TestHTTPStateWriteStoreDown: a request or notification whose change of
// session state the store did not take fails with 503.
func TestHTTPStateWriteStoreDown(t *testing.T) {
	store := &faultySessionStore{MemorySessionStore: store.NewMemorySessionStore()}
	e := newHTTPEnv(t, elicitServer(), &Options{SessionStore: store})
	ready := e.Initialize("{}")
	resp := e.Post("", httpenv.InitBody(e.ID(), "{}"))
	notReady := resp.Header.Get("Mcp-Session-Id")
	if m := e.ReadJSON(resp); m.Error != nil || notReady == "" {
		t.Fatalf("initialize: %s", m.Raw)
	}
	store.failPut.Store(true)
	for _, method := range []string{"logging/setLevel", "resources/subscribe", "resources/unsubscribe"} {
		id := e.ID()
		params := `{"uri":"file:///marker"}`
		if method == "logging/setLevel" {
			params = `{"level":"debug"}`
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
		m := e.ExpectStatus(e.Post(ready, body), http.StatusServiceUnavailable)
		if m == nil || m.Error.Code != mcp.CodeInternalError || string(m.ID) != httpenv.IDJSON(id) {
			t.Errorf("%s with the store down answered %v; want a -32603 error for id %d", method, m, id)
		}
		// The failed change did not happen here either: this instance
		// acts on no state the store (and so the other instances) lacks.
		if st := e.session(ready).ss.State(); slices.Contains(st.Subscriptions, "file:///marker") || st.LogLevel == mcp.LevelDebug {
			t.Errorf("%s: a change the store refused was kept (subscriptions %v, level %q)", method, st.Subscriptions, st.LogLevel)
		}
	}
	e.ExpectStatus(e.Post(notReady, `{"jsonrpc":"2.0","method":"notifications/initialized"}`), http.StatusServiceUnavailable)
	store.failPut.Store(false)
	e.Expect202(e.Post(notReady, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if st, err := store.Get(context.Background(), notReady); err != nil || !st.Ready {
		t.Errorf("after the store came back: %+v, %v", st, err)
	}
	if m := e.RPC(ready, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"logging/setLevel","params":{"level":"debug"}}`, e.ID())); m.Error != nil {
		t.Errorf("setLevel after the store came back: %s", m.Raw)
	}
}

// faultyEventStore is a MemoryEventStore whose appends fail, or block, on
// command. A blocked append ends when release is closed or its context
// ends.
type faultyEventStore struct {
	*store.MemoryEventStore
	fail      atomic.Bool
	block     atomic.Bool
	appending chan struct{} // receives when a blocked append begins
	release   chan struct{}
	deadline  atomic.Bool // an append's context had a deadline
}

func newFaultyEventStore() *faultyEventStore {
	return &faultyEventStore{MemoryEventStore: store.NewMemoryEventStore(nil), appending: make(chan struct{}, 16), release: make(chan struct{})}
}

func (s *faultyEventStore) Append(ctx context.Context, session, stream string, seq uint64, data []byte) error {
	if _, ok := ctx.Deadline(); ok {
		s.deadline.Store(true)
	}
	if s.fail.Load() {
		return errStoreDown
	}
	if s.block.Load() {
		s.appending <- struct{}{}
		select {
		case <-s.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.MemoryEventStore.Append(ctx, session, stream, seq, data)
}

// progressTool sends one progress notification and answers when the
// test sends on next.
func progressTool(s *server.Server) (next chan struct{}) {
	next = make(chan struct{})
	s.AddRawTool(&mcp.Tool{Name: "progress"}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := req.Progress(ctx, 1, 0, ""); err != nil {
			return nil, err
		}
		select {
		case <-next:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "done"}}}, nil
	})
	return next
}

// TestHTTPEventAppendOutsideLock: a slow EventStore holds no stream lock
// while it appends, and the events still reach the client in order, each
// after it is stored.
func TestHTTPEventAppendOutsideLock(t *testing.T) {
	s := echoServer()
	next := progressTool(s)
	store := newFaultyEventStore()
	e := newHTTPEnv(t, s, &Options{EventStore: store, StoreTimeout: httpenv.HangGuard})
	sid := e.Initialize("{}")
	store.block.Store(true)
	id := e.ID()
	answer := e.PostHeaders(sid, httpenv.ToolCall(id, "progress", "", "tok"))
	httpenv.RecvT(t, store.appending, "the progress event's append")
	e.session(sid).mu.Lock()
	st := e.session(sid).byReq.get(mcp.IntID(id))
	e.session(sid).mu.Unlock()
	if st == nil {
		t.Fatal("no stream for the request")
	}
	if !st.mu.TryLock() {
		t.Fatal("the stream's lock is held while the event store appends")
	}
	st.mu.Unlock()
	close(store.release)
	post := e.OpenSSE(e.Headers(answer))
	post.Prime(0)
	if _, m := post.Message(); m.Method != mcp.NotificationProgress {
		t.Errorf("first message %s, want the progress", m.Raw)
	}
	next <- struct{}{}
	if _, m := post.Message(); string(m.ID) != httpenv.IDJSON(id) || m.Error != nil {
		t.Errorf("second message %s, want the result", m.Raw)
	}
	post.End()
}

// TestHTTPEventAppendTimeout: an append is bounded by StoreTimeout; an
// event whose append failed is still delivered live.
func TestHTTPEventAppendTimeout(t *testing.T) {
	s := echoServer()
	next := progressTool(s)
	store := newFaultyEventStore()
	e := newHTTPEnv(t, s, &Options{EventStore: store, StoreTimeout: time.Millisecond})
	sid := e.Initialize("{}")
	store.block.Store(true) // and never released: only the timeout ends an append
	id := e.ID()
	post := e.OpenSSE(e.Post(sid, httpenv.ToolCall(id, "progress", "", "tok")))
	post.Prime(0)
	if _, m := post.Message(); m.Method != mcp.NotificationProgress {
		t.Errorf("first message %s, want the progress", m.Raw)
	}
	if !store.deadline.Load() {
		t.Error("an append ran without a deadline")
	}
	next <- struct{}{}
	if _, m := post.Message(); string(m.ID) != httpenv.IDJSON(id) {
		t.Errorf("second message %s, want the result", m.Raw)
	}
	post.End()
}

// TestHTTPEventAppendFailure: an event the store failed to keep is
// delivered live; a resumption that would need it is refused (409) rather
// than answered with a silent gap.
func TestHTTPEventAppendFailure(t *testing.T) {
	s := echoServer()
	next := progressTool(s)
	store := newFaultyEventStore()
	e := newHTTPEnv(t, s, &Options{EventStore: store})
	sid := e.Initialize("{}")
	store.fail.Store(true)
	id := e.ID()
	var addr string
	post := e.OpenSSE(e.Post(sid, httpenv.ToolCall(id, "progress", "", "tok"), httpenv.WithConnAddr(&addr)))
	primeID := post.Prime(0)
	if _, m := post.Message(); m.Method != mcp.NotificationProgress {
		t.Fatalf("first message %s, want the progress (delivered live)", m.Raw)
	}
	post.Close()
	httpenv.RecvT(t, e.ServerClosed(addr), "the server to see the client leave")
	e.ExpectStatus(e.Do(http.MethodGet, sid, "", httpenv.WithHeader("Last-Event-ID", primeID+"_0")), http.StatusConflict)
	store.fail.Store(false)
	next <- struct{}{}
}
