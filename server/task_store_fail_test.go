package server

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
	"github.com/mcpkit/mcpkit/store"
)

// blinkingTaskStore is a MemoryTaskStore whose Get fails while down is
// set, as a shared store does while it restarts; gets counts its reads.
type blinkingTaskStore struct {
	*store.MemoryTaskStore
	down atomic.Bool
	gets atomic.Int64
}

var errStoreDown = errors.New("dial tcp 127.0.0.1:6379: connection refused")

func (b *blinkingTaskStore) Get(ctx context.Context, id string) (*store.TaskRecord, error) {
	b.gets.Add(1)
	if b.down.Load() {
		return nil, errStoreDown
	}
	return b.MemoryTaskStore.Get(ctx, id)
}

// TestTaskStoreFailureIsUnavailable: while the TaskStore cannot be read,
// tasks/get and tasks/result answer jsonrpc.ErrUnavailable (which the
// client retries), not the -32602 of an unknown task (which it takes as
// final); once the store is back, the same task answers as before. An
// id the store does not hold is still "unknown task". The server keeps
// no settled records here (SettledTasks < 0), so that every read goes to
// the store: TestSettledTaskServedWithoutStore covers the copies.
func TestTaskStoreFailureIsUnavailable(t *testing.T) {
	for _, modern := range []bool{false, true} {
		name := "2025-11-25"
		methods := []string{mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksCancel}
		if modern {
			name = "2026-07-28"
			methods = []string{mcp.MethodTasksGet, mcp.MethodTasksCancel}
		}
		t.Run(name, func(t *testing.T) {
			ts := &blinkingTaskStore{MemoryTaskStore: store.NewMemoryTaskStore(nil)}
			fx := newTaskFixture(&Options{TaskStore: ts, SettledTasks: -1})
			p := newStdioTaskPeer(t, fx.srv, modern)
			id := startTask(t, p, "quick", nil)
			if !modern {
				if raw, e := p.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id}); e != nil || !strings.Contains(string(raw), `"done"`) {
					t.Fatalf("tasks/result = %s, %v", raw, e)
				}
			} else {
				waitStatus(t, p, id, "completed") // before the store goes down
			}
			ts.down.Store(true)
			for _, m := range methods {
				raw, e := p.call(t, m, map[string]any{"taskId": id})
				if e == nil || e.Code != jsonrpc.ErrUnavailable.Code || e.Message != jsonrpc.ErrUnavailable.Message {
					t.Errorf("%s while the store is down = %s, %v; want %v", m, raw, e, jsonrpc.ErrUnavailable)
				}
				if e != nil && strings.Contains(e.Message, "6379") {
					t.Errorf("%s told the client the store's error: %v", m, e)
				}
			}
			ts.down.Store(false)
			if w, e := getTask(t, p, id); e != nil || w.Status != "completed" {
				t.Fatalf("tasks/get once the store is back = %+v, %v", w, e)
			}
			never := "task-nowhere-AAAAAAAAAAAAAAAAAAAAAAAAAA"
			_, e := p.call(t, mcp.MethodTasksGet, map[string]any{"taskId": never})
			refusedAsUnknown(t, "tasks/get of an id the store does not hold", never, e)
		})
	}
}

// TestTaskResultStoreFailureAfterWait: a 2025-11-25 tasks/result that
// waited for its task, which ended with no outcome stored (its TTL
// elapsed: the record is deleted), then fails to read the record,
// answers jsonrpc.ErrUnavailable (it used to answer "unknown task",
// naming the record it had just lost).
func TestTaskResultStoreFailureAfterWait(t *testing.T) {
	clock := newManualClock()
	ts := &failAfterWaitStore{MemoryTaskStore: store.NewMemoryTaskStore(&store.MemoryTaskStoreOptions{Now: clock.Now}), firstGet: make(chan struct{})}
	fx := newTaskFixture(&Options{TaskStore: ts})
	fx.srv.tasks.SetClock(tasks.Clock{NowFunc: clock.Now, AfterFuncFunc: clock.AfterFunc})
	p := newStdioTaskPeer(t, fx.srv, false)
	id := startTask(t, p, "block", map[string]any{"ttl": 100})
	ts.failNext.Store(2) // lookupTask's Get succeeds, the one after the wait fails
	ts.armed.Store(true)
	done := make(chan *jsonrpc.Error, 1)
	go func() {
		_, e := p.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id})
		done <- e
	}()
	<-ts.firstGet // tasks/result is past its lookup, waiting for the task
	clock.Advance(101 * time.Millisecond)
	e := <-done
	if e == nil || e.Code != jsonrpc.ErrUnavailable.Code || e.Message != jsonrpc.ErrUnavailable.Message {
		t.Fatalf("tasks/result whose final read fails = %v, want %v", e, jsonrpc.ErrUnavailable)
	}
}

// TestTaskResultAfterWaitNoRead: a 2025-11-25 tasks/result that waited
// for its task on the instance that ran it answers the outcome that
// instance settled, without reading the record back: here every read
// after the lookup fails, and the result still comes.
func TestTaskResultAfterWaitNoRead(t *testing.T) {
	ts := &failAfterWaitStore{MemoryTaskStore: store.NewMemoryTaskStore(nil), firstGet: make(chan struct{}), failAll: true}
	fx := newTaskFixture(&Options{TaskStore: ts})
	p := newStdioTaskPeer(t, fx.srv, false)
	id := startTask(t, p, "block", nil)
	ts.failNext.Store(2)
	ts.armed.Store(true)
	type answer struct {
		raw []byte
		e   *jsonrpc.Error
	}
	done := make(chan answer, 1)
	go func() {
		raw, e := p.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id})
		done <- answer{raw, e}
	}()
	<-ts.firstGet
	close(fx.release)
	a := <-done
	if a.e != nil || !strings.Contains(string(a.raw), `"released"`) {
		t.Fatalf("tasks/result after the wait = %s, %v; want the result", a.raw, a.e)
	}
}

// failAfterWaitStore fails the second Get after armed: the first lets
// tasks/result find its task and is reported on firstGet.
type failAfterWaitStore struct {
	*store.MemoryTaskStore
	armed    atomic.Bool
	failNext atomic.Int32
	failAll  bool // every Get after the first fails, not only the second
	firstGet chan struct{}
}

func (f *failAfterWaitStore) Get(ctx context.Context, id string) (*store.TaskRecord, error) {
	if f.armed.Load() {
		switch n := f.failNext.Add(-1); {
		case n == 1:
			defer close(f.firstGet)
		case n == 0, n < 0 && f.failAll:
			return nil, errStoreDown
		}
	}
	return f.MemoryTaskStore.Get(ctx, id)
}

// blinkingView is an instance's view of a shared TaskStore whose Get
// fails while down is set.
type blinkingView struct {
	store.TaskStore
	down atomic.Bool
}

func (b *blinkingView) Get(ctx context.Context, id string) (*store.TaskRecord, error) {
	if b.down.Load() {
		return nil, errStoreDown
	}
	return b.TaskStore.Get(ctx, id)
}

// TestTaskRemoteResultStoreFailure: a 2025-11-25 tasks/result waiting on
// instance B for a task A runs rereads the task when A announces its
// end; a store that fails that read answers jsonrpc.ErrUnavailable
// (the client asks again), not "unknown task" (final: the client would
// report the task failed). Asked again once the store is back, the
// result comes.
func TestTaskRemoteResultStoreFailure(t *testing.T) {
	var bv *blinkingView
	p := newTaskPairB(t, false, time.Minute, func(s store.TaskStore) store.TaskStore {
		bv = &blinkingView{TaskStore: s}
		return bv
	})
	id := startTask(t, p.a, "block", nil)
	waitStatus(t, p.b, id, "working")
	got := make(chan *jsonrpc.Error, 1)
	go func() {
		_, e := p.b.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id})
		got <- e
	}()
	waitFor(t, "B to wait on the task", func() bool { return p.fb.srv.watching(id) })
	bv.down.Store(true)
	p.fa.release <- struct{}{}
	if e := <-got; e == nil || e.Code != jsonrpc.ErrUnavailable.Code || e.Message != jsonrpc.ErrUnavailable.Message {
		t.Fatalf("tasks/result on B with its store failing = %v, want %v", e, jsonrpc.ErrUnavailable)
	}
	bv.down.Store(false)
	if raw, e := p.b.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id}); e != nil || !strings.Contains(string(raw), "released") {
		t.Fatalf("tasks/result on B once the store is back = %s, %v", raw, e)
	}
}
