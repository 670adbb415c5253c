package server

// Tests of tasks across instances (task_peers.go, task_owner.go): two
// servers share one TaskStore and reach each other through an in-process
// seam.Peers (mesh); a client of each runs the requests, over stdio, in
// both eras. The HTTP cluster (server/streamhttp, store/redis) runs the
// same routes over a real Broker.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/seam"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
	"github.com/mcpkit/mcpkit/store"
)

// mesh connects servers in one process as the instances of a deployment.
type mesh struct {
	mu       sync.Mutex
	handlers map[string]seam.PeerHandler
}

type meshPeer struct {
	m  *mesh
	id string
}

func (p meshPeer) ID() string { return p.id }

func (p meshPeer) Call(ctx context.Context, to string, msg []byte) ([]byte, bool, error) {
	p.m.mu.Lock()
	h, ok := p.m.handlers[to]
	p.m.mu.Unlock()
	if !ok {
		return nil, false, nil
	}
	return h.Serve(ctx, msg), true, nil
}

func (p meshPeer) Broadcast(_ context.Context, msg []byte) error {
	p.m.mu.Lock()
	var hs []seam.PeerHandler
	for id, h := range p.m.handlers {
		if id != p.id {
			hs = append(hs, h)
		}
	}
	p.m.mu.Unlock()
	for _, h := range hs {
		h.Deliver(msg)
	}
	return nil
}

func (m *mesh) join(s *Server, id string) {
	h, _ := s.attachPeers(meshPeer{m, id})
	m.mu.Lock()
	m.handlers[id] = h
	m.mu.Unlock()
}

// kill takes an instance out of the mesh: calls to it report it gone.
func (m *mesh) kill(id string) {
	m.mu.Lock()
	delete(m.handlers, id)
	m.mu.Unlock()
}

// cutStore is an instance's view of the shared TaskStore; once cut, every
// call fails, as for a process that died or lost the store.
type cutStore struct {
	store.TaskStore
	cut atomic.Bool
}

var errCut = errors.New("test: the instance is dead")

func (c *cutStore) Put(ctx context.Context, r *store.TaskRecord) error {
	if c.cut.Load() {
		return errCut
	}
	return c.TaskStore.Put(ctx, r)
}

func (c *cutStore) Get(ctx context.Context, id string) (*store.TaskRecord, error) {
	if c.cut.Load() {
		return nil, errCut
	}
	return c.TaskStore.Get(ctx, id)
}

func (c *cutStore) Update(ctx context.Context, id string, fn func(*store.TaskRecord) bool) (*store.TaskRecord, bool, error) {
	if c.cut.Load() {
		return nil, false, errCut
	}
	return c.TaskStore.Update(ctx, id, fn)
}

// taskPair is two instances, A and B, sharing a TaskStore on one manual
// clock; a and b are clients of each, in one era.
type taskPair struct {
	clock  *manualClock
	mesh   *mesh
	fa, fb *taskFixture
	sa     *cutStore
	a, b   *stdioTaskPeer
}

func newTaskPair(t *testing.T, modern bool, lease time.Duration) *taskPair {
	t.Helper()
	return newTaskPairB(t, modern, lease, func(s store.TaskStore) store.TaskStore { return s })
}

// newTaskPairB is newTaskPair with B's view of the shared store made by
// viewB.
func newTaskPairB(t *testing.T, modern bool, lease time.Duration, viewB func(store.TaskStore) store.TaskStore) *taskPair {
	t.Helper()
	clock := newManualClock()
	shared := store.NewMemoryTaskStore(&store.MemoryTaskStoreOptions{Now: clock.Now})
	p := &taskPair{clock: clock, mesh: &mesh{handlers: map[string]seam.PeerHandler{}}}
	p.sa = &cutStore{TaskStore: shared}
	p.fa = newTaskFixture(&Options{TaskStore: p.sa, TaskLease: lease})
	p.fb = newTaskFixture(&Options{TaskStore: viewB(shared), TaskLease: lease})
	for _, x := range []struct {
		f  *taskFixture
		id string
	}{{p.fa, "instA"}, {p.fb, "instB"}} {
		x.f.srv.tasks.SetClock(tasks.Clock{NowFunc: clock.Now, AfterFuncFunc: clock.AfterFunc})
		p.mesh.join(x.f.srv, x.id)
	}
	// a and b are one client reaching two instances: one principal (a
	// task answers only to its creator, and two stdio connections are two
	// sessions).
	p.a, p.b = newStdioTaskPeerFor(t, p.fa.srv, modern, "client"), newStdioTaskPeerFor(t, p.fb.srv, modern, "client")
	t.Cleanup(func() {
		close(p.fa.release)
		close(p.fb.release)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, s := range []*Server{p.fa.srv, p.fb.srv} {
			if err := s.Shutdown(ctx); err != nil {
				t.Errorf("Shutdown: %v", err)
			}
		}
	})
	return p
}

func eachEra(t *testing.T, f func(t *testing.T, modern bool)) {
	for _, modern := range []bool{false, true} {
		name := "2025-11-25"
		if modern {
			name = "2026-07-28"
		}
		t.Run(name, func(t *testing.T) { f(t, modern) })
	}
}

// TestTaskIDNamesOwner: a task id names the instance that runs it.
func TestTaskIDNamesOwner(t *testing.T) {
	p := newTaskPair(t, false, time.Minute)
	id := startTask(t, p.a, "quick", nil)
	if got := tasks.OwnerOf(id); got != "instA" {
		t.Fatalf("owner of %q = %q, want instA", id, got)
	}
	if got := tasks.OwnerOf("task-nodash"); got != "" {
		t.Errorf("owner of an id without instance = %q", got)
	}
}

// TestTaskAcrossInstancesGetCancel: a task started on A is seen from B
// (tasks/get) and cancelled from B: A's handler is cancelled (the bug
// was a record marked cancelled while its owner kept working).
func TestTaskAcrossInstancesGetCancel(t *testing.T) {
	eachEra(t, func(t *testing.T, modern bool) {
		p := newTaskPair(t, modern, time.Minute)
		id := startTask(t, p.a, "block", nil)
		waitStatus(t, p.b, id, "working")
		if _, e := p.b.call(t, mcp.MethodTasksCancel, map[string]any{"taskId": id}); e != nil {
			t.Fatalf("tasks/cancel on B: %v", e)
		}
		p.fa.waitDone(t, "cancel from B")
		waitStatus(t, p.a, id, "cancelled")
		waitStatus(t, p.b, id, "cancelled")
	})
}

// TestTaskAcrossInstancesInput: a task on A that needs input gets it
// through B — 2026: tasks/update on B reaches A's run; 2025: a
// tasks/result on B carries the elicitation (related-task _meta) and
// returns the result.
func TestTaskAcrossInstancesInput(t *testing.T) {
	eachEra(t, func(t *testing.T, modern bool) {
		p := newTaskPair(t, modern, time.Minute)
		id := startTask(t, p.a, "ask", nil)
		waitStatus(t, p.b, id, "input_required")
		if modern {
			if _, e := p.b.call(t, mcp.MethodTasksUpdate, map[string]any{"taskId": id, "inputResponses": map[string]any{
				"who": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}},
			}}); e != nil {
				t.Fatalf("tasks/update on B: %v", e)
			}
			w := waitStatus(t, p.b, id, "completed")
			if w.Result == nil || w.Result.Content[0].Text != "hello Ada" {
				t.Fatalf("completed = %+v", w)
			}
			return
		}
		raw, e := p.b.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id})
		if e != nil || !strings.Contains(string(raw), "hello Ada") {
			t.Fatalf("tasks/result on B = %s, %v", raw, e)
		}
		if rel, _ := p.b.related.Load().(string); !strings.Contains(rel, id) {
			t.Errorf("elicitation on B: related-task _meta = %q, want %s", rel, id)
		}
	})
}

// TestTaskAcrossInstancesResultWaits: a 2025 tasks/result on B waits for
// a task running on A and returns its result once A completes it.
func TestTaskAcrossInstancesResultWaits(t *testing.T) {
	p := newTaskPair(t, false, time.Minute)
	id := startTask(t, p.a, "block", nil)
	waitStatus(t, p.b, id, "working")
	got := make(chan string, 1)
	go func() {
		raw, e := p.b.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id})
		got <- string(raw) + errText(e)
	}()
	waitFor(t, "B to wait on the task", func() bool { return p.fb.srv.watching(id) })
	p.fa.release <- struct{}{}
	if r := <-got; !strings.Contains(r, "released") {
		t.Fatalf("tasks/result on B = %s", r)
	}
}

// TestTaskOwnerDies: A dies (gone from the mesh, its store calls fail)
// while its task runs. Once A's lease runs out on the clock, B fails the
// task with a message that says so: tasks/get at once, and a 2025
// tasks/result already waiting on B within a heartbeat.
func TestTaskOwnerDies(t *testing.T) {
	const lease = 30 * time.Second
	eachEra(t, func(t *testing.T, modern bool) {
		p := newTaskPair(t, modern, lease)
		id := startTask(t, p.a, "block", nil)
		waitStatus(t, p.b, id, "working")
		var got chan string
		if !modern {
			got = make(chan string, 1)
			go func() {
				_, e := p.b.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id})
				got <- errText(e)
			}()
			waitFor(t, "B to wait on the task", func() bool { return p.fb.srv.watching(id) })
		}
		p.mesh.kill("instA")
		p.sa.cut.Store(true)
		p.clock.Advance(lease - time.Second) // within the lease: still working
		if w, _ := getTask(t, p.b, id); w == nil || w.Status != "working" {
			t.Fatalf("within the lease: %+v, want working", w)
		}
		p.clock.Advance(2 * time.Second)
		w, e := getTask(t, p.b, id)
		if e != nil || w.Status != "failed" {
			t.Fatalf("past the lease: %+v, %v; want failed", w, e)
		}
		raw, _ := p.b.call(t, mcp.MethodTasksGet, map[string]any{"taskId": id})
		if !strings.Contains(string(raw), "stopped before it finished") {
			t.Errorf("tasks/get = %s, want the status message to say the owner stopped", raw)
		}

		if got != nil {
			// The wait wakes on B's next heartbeat (lease/3 on the
			// clock). Its timer may not be set again yet when the clock
			// first moves (a loaded machine): a beat at a time until the
			// answer comes.
			var r string
			waitFor(t, "the waiting tasks/result to end", func() bool {
				select {
				case r = <-got:
					return true
				default:
					p.clock.Advance(lease / 3)
					return false
				}
			})
			if !strings.Contains(r, "stopped before it finished") {
				t.Errorf("waiting tasks/result = %s", r)
			}
		}
	})
}

// TestTaskMaxTasks: past Options.MaxTasks a task-augmented call is
// refused with a clear error; a slot frees when a task ends.
func TestTaskMaxTasks(t *testing.T) {
	eachPeer(t, &Options{MaxTasks: 1}, func(t *testing.T, fx *taskFixture, p taskPeer) {
		startTask(t, p, "block", nil)
		params := map[string]any{"name": "block", "arguments": map[string]any{}}
		if !p.modern() {
			params["task"] = map[string]any{}
		}
		_, e := p.call(t, mcp.MethodToolsCall, params)
		if e == nil || e.Code != mcp.CodeInternalError || !strings.Contains(e.Message, "too many tasks running") {
			t.Fatalf("second task = %v, want -32603 too many tasks", e)
		}
		fx.release <- struct{}{}
		waitFor(t, "the slot to free", func() bool { return fx.srv.tasks.Running() == 0 })
		id := startTask(t, p, "quick", nil)
		waitStatus(t, p, id, "completed")
	})
}

// TestTaskShutdown: Server.Shutdown cancels the running tasks, records
// them failed with a clear message, waits for their goroutines, and
// refuses new ones.
func TestTaskShutdown(t *testing.T) {
	eachPeer(t, nil, func(t *testing.T, fx *taskFixture, p taskPeer) {
		id := startTask(t, p, "block", nil)
		waitStatus(t, p, id, "working")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := fx.srv.Shutdown(ctx); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		if n := fx.srv.tasks.Running(); n != 0 {
			t.Fatalf("%d tasks still running after Shutdown", n)
		}
		raw, e := p.call(t, mcp.MethodTasksGet, map[string]any{"taskId": id})
		if e != nil || !strings.Contains(string(raw), `"failed"`) || !strings.Contains(string(raw), "shut down") {
			t.Fatalf("tasks/get after Shutdown = %s, %v", raw, e)
		}
		params := map[string]any{"name": "quick", "arguments": map[string]any{}}
		if !p.modern() {
			params["task"] = map[string]any{}
		}
		if _, e := p.call(t, mcp.MethodToolsCall, params); e == nil || !strings.Contains(e.Message, "shutting down") {
			t.Fatalf("tools/call after Shutdown = %v", e)
		}
	})
}

// TestTaskShutdownBounded: a handler that ignores cancellation makes
// Shutdown return ctx's error, not hang.
func TestTaskShutdownBounded(t *testing.T) {
	s := New(nil)
	stuck := make(chan struct{})
	defer close(stuck)
	AddTool(s, &mcp.Tool{Name: "stuck", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}}, func(context.Context, *CallToolRequest, struct{}) (string, error) {
		<-stuck
		return "", nil
	})
	p := newStdioTaskPeer(t, s, false)
	startTask(t, p, "stuck", nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Shutdown(ctx); err == nil || !strings.Contains(err.Error(), "server: shutdown: 1 tasks still running") {
		t.Fatalf("Shutdown = %v", err)
	}
}

// watching reports whether a request here waits on the task (test
// support for ordering: the wait is registered before the test acts).
func (s *Server) watching(id string) bool { return s.tasks.Watching(id) }

func errText(e *jsonrpc.Error) string {
	if e == nil {
		return ""
	}
	return e.Error()
}

// slowPut is a TaskStore whose Put waits for release (a store slow to
// take a new task: Redis restarting).
type slowPut struct {
	store.TaskStore
	putting chan struct{} // receives when a Put starts
	release chan struct{}
}

func (s *slowPut) Put(ctx context.Context, r *store.TaskRecord) error {
	s.putting <- struct{}{}
	<-s.release
	return s.TaskStore.Put(ctx, r)
}

// TestTaskHeartbeatBeforeStored: a heartbeat that comes while a new
// task's record is still being stored leaves the task alone (the bug: it
// found no record, took the task for expired, and the task deleted its
// record once stored — a task id the client held became unknown).
func TestTaskHeartbeatBeforeStored(t *testing.T) {
	clock := newManualClock()
	mem := store.NewMemoryTaskStore(&store.MemoryTaskStoreOptions{Now: clock.Now})
	slow := &slowPut{TaskStore: mem, putting: make(chan struct{}, 1), release: make(chan struct{})}
	const lease = 30 * time.Second
	fx := newTaskFixture(&Options{TaskStore: slow, TaskLease: lease})
	beats := make(chan struct{}, 16)
	fx.srv.tasks.SetClock(tasks.Clock{NowFunc: clock.Now, AfterFuncFunc: clock.AfterFunc})
	fx.srv.tasks.OnBeat(func() { beats <- struct{}{} })
	p := newStdioTaskPeer(t, fx.srv, true)
	ids := make(chan string, 1)
	go func() { ids <- startTask(t, p, "quick", nil) }()
	<-slow.putting
	waitFor(t, "the heartbeat to start", func() bool { return clock.pending() > 0 })
	clock.Advance(lease / 3)
	<-beats // a beat ran while the record was not stored yet
	close(slow.release)
	id := <-ids
	waitStatus(t, p, id, "completed")
}

// pending counts the clock's timers not yet fired or stopped.
func (c *manualClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, tm := range c.timers {
		if !tm.stopped {
			n++
		}
	}
	return n
}

// TestTaskOwnerUnreachable: with the owner gone from the mesh (its lease
// not yet run out), tasks/cancel on B still records the cancellation,
// and a 2026 tasks/update fails with a clear error instead of dropping
// the answers.
func TestTaskOwnerUnreachable(t *testing.T) {
	eachEra(t, func(t *testing.T, modern bool) {
		p := newTaskPair(t, modern, time.Minute)
		tool := "block"
		if modern {
			tool = "ask"
		}
		id := startTask(t, p.a, tool, nil)
		if modern {
			waitStatus(t, p.b, id, "input_required")
		} else {
			waitStatus(t, p.b, id, "working")
		}
		p.mesh.kill("instA")
		if modern {
			_, e := p.b.call(t, mcp.MethodTasksUpdate, map[string]any{"taskId": id, "inputResponses": map[string]any{
				"who": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}},
			}})
			if e == nil || e.Code != mcp.CodeInternalError || !strings.Contains(e.Message, "did not take the answers") {
				t.Fatalf("tasks/update with the owner unreachable = %v", e)
			}
		}
		if _, e := p.b.call(t, mcp.MethodTasksCancel, map[string]any{"taskId": id}); e != nil {
			t.Fatalf("tasks/cancel with the owner unreachable: %v", e)
		}
		waitStatus(t, p.b, id, "cancelled")
		// A, alive but cut off, stops its handler at its next heartbeat.
		// The heartbeat's timer may not be set again yet when the clock
		// first moves (a loaded machine): move it a beat at a time until
		// one finds the task gone.
		waitFor(t, "the owner to stop the task", func() bool {
			if p.fa.srv.tasks.Running() == 0 {
				return true
			}
			p.clock.Advance(time.Minute / 3)
			return false
		})
	})
}

// TestTaskListReapsLapsed: tasks/list (2025) shows a task whose owner's
// lease ran out as failed, as tasks/get does.
func TestTaskListReapsLapsed(t *testing.T) {
	clock := newManualClock()
	mem := store.NewMemoryTaskStore(&store.MemoryTaskStoreOptions{Now: clock.Now})
	fx := newTaskFixture(&Options{TaskStore: mem})
	fx.srv.tasks.SetClock(tasks.Clock{NowFunc: clock.Now, AfterFuncFunc: clock.AfterFunc})
	p := newStdioTaskPeer(t, fx.srv, false)
	startTask(t, p, "quick", nil) // the session is open; its id names the lapsed task's session
	sid := fx.srv.Sessions()[0].ID()
	now := clock.Now()
	if err := mem.Put(context.Background(), &store.TaskRecord{ID: "task-gone-1", SessionID: sid, Status: mcp.TaskWorking,
		CreatedAt: now, LastUpdatedAt: now, TTL: time.Hour, Owner: "gone", LeaseUntil: now.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Second)
	raw, e := p.call(t, mcp.MethodTasksList, map[string]any{})
	if e != nil || !strings.Contains(string(raw), `"taskId":"task-gone-1","status":"failed"`) {
		t.Fatalf("tasks/list = %s, %v; want task-gone-1 failed", raw, e)
	}
}
