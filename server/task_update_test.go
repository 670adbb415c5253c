package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store"
)

// updateMark marks the context of a tasks/update request in
// TestTaskUpdateAckAfterWorking.
type updateMark struct{}

// gateStore holds every Update not made for a tasks/update request while
// it is armed: the task's own handler cannot move the record until the
// test lets it.
type gateStore struct {
	store.TaskStore
	armed atomic.Bool
	hold  chan struct{}
	once  sync.Once
}

func (g *gateStore) Update(ctx context.Context, id string, fn func(*store.TaskRecord) bool) (*store.TaskRecord, bool, error) {
	if g.armed.Load() && ctx.Value(updateMark{}) == nil {
		select {
		case <-g.hold:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
	return g.TaskStore.Update(ctx, id, fn)
}

func (g *gateStore) release() { g.once.Do(func() { close(g.hold) }) }

// TestTaskUpdateAckAfterWorking: once tasks/update has answered a task's
// last open request, a tasks/get sent after the ack sees the task working,
// not the requests it just answered — even before the handler has run
// again. (A client or a gateway relaying the task polled right after the
// ack, saw the stale input_required and asked the same questions again.)
func TestTaskUpdateAckAfterWorking(t *testing.T) {
	gs := &gateStore{TaskStore: store.NewMemoryTaskStore(nil), hold: make(chan struct{})}
	t.Cleanup(gs.release)
	fx := newTaskFixture(&Options{TaskStore: gs})
	h := NewHTTPHandler(fx.srv, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == mcp.MethodTasksUpdate {
			r = r.WithContext(context.WithValue(r.Context(), updateMark{}, true))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { gs.release(); _ = h.Close(); ts.Close() })
	p := newHTTPTaskPeer(t, ts.URL, true, "")

	id := startTask(t, p, "ask", nil)
	waitStatus(t, p, id, "input_required")
	gs.armed.Store(true) // from here the handler's own store writes wait
	if _, e := p.call(t, mcp.MethodTasksUpdate, map[string]any{"taskId": id, "inputResponses": map[string]any{
		"who": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}},
	}}); e != nil {
		t.Fatalf("tasks/update: %v", e)
	}
	w, e := getTask(t, p, id)
	if e != nil {
		t.Fatalf("tasks/get: %v", e)
	}
	if w.Status != "working" || len(w.InputRequests) != 0 {
		t.Fatalf("tasks/get right after the ack = %s with %d input requests, want working with none", w.Status, len(w.InputRequests))
	}
	gs.armed.Store(false)
	gs.release()
	if w := waitStatus(t, p, id, "completed"); w.Result == nil || w.Result.Content[0].Text != "hello Ada" {
		t.Fatalf("completed = %+v", w)
	}
}
