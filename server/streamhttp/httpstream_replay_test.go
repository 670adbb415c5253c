package streamhttp

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/store"

	"github.com/mcpkit/mcpkit/mcp"
)

// replayFaultStore fails Replay with the error the test sets.
type replayFaultStore struct {
	*store.MemoryEventStore
	err      atomic.Pointer[error]
	deadline atomic.Bool // a replay's context had a deadline
}

func (s *replayFaultStore) Replay(ctx context.Context, session, stream string, after uint64, fn func(uint64, []byte) error) error {
	if _, ok := ctx.Deadline(); ok {
		s.deadline.Store(true)
	}
	if p := s.err.Load(); p != nil {
		return *p
	}
	return s.MemoryEventStore.Replay(ctx, session, stream, after, fn)
}

// TestHTTPResumeLiveStreamReplayFails: resuming a stream that is still
// live needs the events the client missed from the store. When the store
// has forgotten the stream (its session's events expired) the answer is
// 409, as for purged events; when the store fails, 503 — never a 500 —
// and the store is asked under StoreTimeout.
func TestHTTPResumeLiveStreamReplayFails(t *testing.T) {
	s := echoServer()
	next := progressTool(s)
	fst := &replayFaultStore{MemoryEventStore: store.NewMemoryEventStore(nil)}
	e := newHTTPEnv(t, s, &Options{EventStore: fst})
	sid := e.Initialize("{}")
	var addr string
	post := e.OpenSSE(e.Post(sid, httpenv.ToolCall(e.ID(), "progress", "", "tok"), httpenv.WithConnAddr(&addr)))
	stream := post.Prime(0)
	if _, m := post.Message(); m.Method != mcp.NotificationProgress {
		t.Fatalf("first message %s, want the progress", m.Raw)
	}
	post.Close()
	httpenv.RecvT(t, e.ServerClosed(addr), "the server to see the client leave")
	for _, c := range []struct {
		err  error
		want int
	}{{store.ErrUnknownStream, http.StatusConflict}, {errors.New("fst down"), http.StatusServiceUnavailable}} {
		fst.err.Store(&c.err)
		e.ExpectStatus(e.Do(http.MethodGet, sid, "", httpenv.WithHeader("Last-Event-ID", stream+"_0")), c.want)
	}
	if !fst.deadline.Load() {
		t.Error("the replay ran without StoreTimeout")
	}
	fst.err.Store(nil)
	next <- struct{}{}
}

// TestHTTPRequestOnEndingSession: a request that found its session just
// as DELETE, the sweep or Shutdown ended it is told the session is gone
// (404), not that its id is already in flight (400).
func TestHTTPRequestOnEndingSession(t *testing.T) {
	e := newHTTPEnv(t, echoServer(), nil)
	sid := e.Initialize("{}")
	hs := e.session(sid)
	hs.mu.Lock()
	hs.closed = true // what ending the session does first; it is still listed
	hs.mu.Unlock()
	m := e.ExpectStatus(e.Post(sid, httpenv.ToolCall(e.ID(), "echo", `{"text":"x"}`, "")), http.StatusNotFound)
	if m == nil || m.Error.Code != mcp.CodeInvalidRequest {
		t.Errorf("answer %+v, want -32600", m)
	}
}
