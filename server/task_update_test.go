package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	armed      atomic.Bool
	hold       chan struct{}
	once       sync.Once
	held, done atomic.Int32 // writes held by the gate; of those, stored
}

func (g *gateStore) Update(ctx context.Context, id string, fn func(*store.TaskRecord) bool) (*store.TaskRecord, bool, error) {
	if g.armed.Load() && ctx.Value(updateMark{}) == nil {
		g.held.Add(1)
		defer g.done.Add(1)
		select {
		case <-g.hold:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
	return g.TaskStore.Update(ctx, id, fn)
}

// waitHeld waits until every write the gate held has been stored.
func (g *gateStore) waitHeld(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); g.done.Load() < g.held.Load(); runtime.Gosched() {
		if time.Now().After(deadline) { // the hang guard, not a margin
			t.Fatal("a held store write never finished")
		}
	}
}

func (g *gateStore) release() { g.once.Do(func() { close(g.hold) }) }

// TestTaskUpdateAckAfterWorking: once tasks/update has answered a task's
// last open request, a tasks/get sent after the ack sees the task working,
// not the requests it just answered — even before the handler has run
// again. (A client or a gateway relaying the task polled right after the
// ack, saw the stale input_required and asked the same questions again.)
func TestTaskUpdateAckAfterWorking(t *testing.T) {
	_, gs, p := gatedTasks(t)

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

// gatedTasks serves a task fixture over HTTP (2026-07-28) on a gateStore
// that tells the tasks/update requests' store writes from the others.
func gatedTasks(t *testing.T) (*taskFixture, *gateStore, *httpTaskPeer) {
	gs := &gateStore{TaskStore: store.NewMemoryTaskStore(nil), hold: make(chan struct{})}
	t.Cleanup(gs.release)
	fx := newTaskFixture(&Options{TaskStore: gs})
	AddTool(fx.srv, &mcp.Tool{Name: "askThenWait", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
		func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
			if _, ok, err := req.ElicitResult("who"); err != nil || !ok {
				return "", NeedInput().Elicit("who", &mcp.ElicitParams{Message: "Who?", RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
			}
			select { // works on after the answer, until released
			case <-fx.release:
				return "released", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
	h := NewHTTPHandler(fx.srv, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == mcp.MethodTasksUpdate {
			r = r.WithContext(context.WithValue(r.Context(), updateMark{}, true))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { gs.release(); close(fx.release); _ = h.Close(); ts.Close() })
	return fx, gs, newHTTPTaskPeer(t, ts.URL, true, "")
}

// TestTaskUpdateBeforeInputRequiredStored: an update that arrives once
// the task waits for it but before its input_required is stored (a
// relayed or repeated update) does not leave the record input_required,
// listing answered requests, while the handler works on.
func TestTaskUpdateBeforeInputRequiredStored(t *testing.T) {
	fx, gs, p := gatedTasks(t)
	gs.armed.Store(true) // the handler's input_required write waits
	id := startTask(t, p, "askThenWait", nil)
	// The hang guard, not a margin: the task waits for its answer soon.
	for deadline := time.Now().Add(10 * time.Second); ; runtime.Gosched() {
		run := fx.srv.tasks.Lookup(id)
		if run != nil && run.AwaitingInput() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the task never waited for its answer")
		}
	}
	if _, e := p.call(t, mcp.MethodTasksUpdate, map[string]any{"taskId": id, "inputResponses": map[string]any{
		"who": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}},
	}}); e != nil {
		t.Fatalf("tasks/update: %v", e)
	}
	gs.armed.Store(false)
	gs.release() // the stale input_required lands now
	gs.waitHeld(t)
	if w := waitStatus(t, p, id, "working"); len(w.InputRequests) != 0 {
		t.Fatalf("working task = %+v", w)
	}
}
