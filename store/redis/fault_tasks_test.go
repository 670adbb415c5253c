package redisstore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/clustertest"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/store"
	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
)

// The task fault cells (issue 33): a task awaited by the mcpkit client
// (RunToolTask) through a round-robin proxy over three instances that
// share a durable Redis, in both eras, while an instance dies or Redis
// restarts. Each asserts what the client ends with: the task's real
// outcome — its result, or its failure with the lease message — never
// "unknown task", never a transport error given as the task's failure.

// faultCluster starts a durable redis-server of the test's own (an
// append-only file synced on every write: a restart keeps the data, as a
// production Redis would) and three instances sharing it for sessions,
// events, tasks and pub/sub.
func faultCluster(t *testing.T) (*clustertest.Cluster, *redistest.Server) {
	c, srv, _ := faultClusterWatched(t)
	return c, srv
}

// failedReads is told of each TaskStore.Get that failed, on any instance
// (capacity 1: a signal, not a count).
type failedReads chan struct{}

// readWatch is a TaskStore whose failed reads are told of.
type readWatch struct {
	store.TaskStore
	failed failedReads
}

func (r readWatch) Get(ctx context.Context, id string) (*store.TaskRecord, error) {
	rec, err := r.TaskStore.Get(ctx, id)
	if err != nil && !errors.Is(err, store.ErrTaskNotFound) {
		select {
		case r.failed <- struct{}{}:
		default:
		}
	}
	return rec, err
}

// faultClusterWatched is faultCluster, also telling of every TaskStore
// read that failed.
func faultClusterWatched(t *testing.T) (*clustertest.Cluster, *redistest.Server, failedReads) {
	t.Helper()
	failed := make(failedReads, 1)
	redistest.Need(t)
	srv, err := redistest.StartDurable(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	const p = "fault:"
	c := clustertest.New(t, 3, func(int) clustertest.Backend {
		rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Sock})
		b, err := NewBroker(context.Background(), rdb, &BrokerOptions{Prefix: p})
		if err != nil {
			t.Fatal(err)
		}
		return clustertest.Backend{
			Sessions: NewSessionStore(rdb, &SessionStoreOptions{Prefix: p}),
			Events:   NewEventStore(rdb, &EventStoreOptions{Prefix: p}),
			Tasks:    readWatch{NewTaskStore(rdb, &TaskStoreOptions{Prefix: p}), failed},
			Broker:   b,
			Close:    func() { _ = b.Close(); _ = rdb.Close() },
		}
	})
	return c, srv, failed
}

// awaited is a RunToolTask in flight: the states its status callback saw
// and, once it returns, its outcome.
type awaited struct {
	mu     sync.Mutex
	states []client.Task
	id     chan string // the task's id, once created
	done   chan struct{}
	res    *mcp.CallToolResult
	err    error
}

// runTask calls tool as a task on cl and waits for it on a goroutine of
// its own (it ends when RunToolTask returns; the test waits for done).
func runTask(ctx context.Context, cl *client.Client, tool string) *awaited {
	a := &awaited{id: make(chan string, 1), done: make(chan struct{})}
	sctx := client.WithTaskStatus(ctx, func(tk *client.Task) {
		a.mu.Lock()
		if len(a.states) == 0 {
			a.id <- tk.ID
		}
		a.states = append(a.states, *tk)
		a.mu.Unlock()
	})
	go func() {
		defer close(a.done)
		a.res, a.err = cl.RunToolTask(sctx, &mcp.CallToolParams{Name: tool})
	}()
	return a
}

// wait returns once RunToolTask did, or fails the test when ctx ends.
func (a *awaited) wait(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-a.done:
	case <-ctx.Done():
		t.Fatalf("RunToolTask still waiting: %v (states %s)", ctx.Err(), a.seen())
	}
}

// seen lists the states the status callback saw.
func (a *awaited) seen() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var s []string
	for _, tk := range a.states {
		s = append(s, string(tk.Status)+" "+tk.StatusMessage)
	}
	return strings.Join(s, " | ")
}

// last is the last state the status callback saw.
func (a *awaited) last() client.Task {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.states) == 0 {
		return client.Task{}
	}
	return a.states[len(a.states)-1]
}

// faultEras are the eras of the cells: a legacy client waits in
// tasks/result, a modern one polls tasks/get.
var faultEras = []string{mcp.LatestLegacy, mcp.Version20260728}

// ownerOf returns the index of the instance whose id the task id names.
func ownerOf(t *testing.T, c *clustertest.Cluster, id string) int {
	t.Helper()
	for _, n := range c.Nodes {
		if strings.HasPrefix(id, "task-"+n.BrokerID()+"-") {
			return n.Index
		}
	}
	t.Fatalf("task id %q names no instance", id)
	return -1
}

// TestFaultInstanceKilledMidTask: the instance running a task dies while
// the client waits for it. The client ends with the task failed, saying
// the instance stopped (the lease message), as the server's word — a
// JSON-RPC error, the last state failed — not with the broken
// connection, and never "unknown task".
func TestFaultInstanceKilledMidTask(t *testing.T) {
	for _, era := range faultEras {
		t.Run(era, func(t *testing.T) {
			c, _ := faultCluster(t)
			cl := clustertest.Connect(t, c, &client.Options{ProtocolVersion: era, Tasks: true})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a hang guard
			defer cancel()
			a := runTask(ctx, cl, "taskhold")
			var id string
			select {
			case id = <-a.id:
			case <-a.done:
				t.Fatalf("RunToolTask returned before the task was created: %v", a.err)
			}
			<-c.Tasks.Started
			owner := ownerOf(t, c, id)
			if era != mcp.Version20260728 {
				waitHit(t, ctx, a, c, mcp.MethodTasksResult)
			}
			t.Logf("owner %d, hits %v", owner, c.Hits())
			c.Kill(owner)
			a.wait(t, ctx)

			const lease = "stopped before it finished"
			var rpcErr *jsonrpc.Error
			switch {
			case a.err == nil:
				t.Fatalf("RunToolTask = %+v, want the task failed", a.res)
			case strings.Contains(a.err.Error(), "unknown task"):
				t.Fatalf("RunToolTask: %v (states %s)", a.err, a.seen())
			case !errors.As(a.err, &rpcErr) || !strings.Contains(rpcErr.Message, lease):
				t.Fatalf("RunToolTask: %v, want the task's failure with the lease message (states %s)", a.err, a.seen())
			}
			if last := a.last(); last.Status != mcp.TaskFailed {
				t.Errorf("last state %s, want failed (states %s)", last.Status, a.seen())
			}
		})
	}
}

// TestFaultInstanceKilledWithItsWaiter: a legacy client's tasks/result
// goes to the very instance that runs the task (steered there through
// the round robin), and that instance dies: the client's request breaks
// with it. The client asks again through the others and ends with the
// task failed with the lease message, not with the broken connection.
func TestFaultInstanceKilledWithItsWaiter(t *testing.T) {
	c, _ := faultCluster(t)
	cl := clustertest.Connect(t, c, &client.Options{ProtocolVersion: mcp.LatestLegacy, Tasks: true,
		TaskRetryBackoff: 20 * time.Millisecond, TaskRetryMaxBackoff: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a hang guard
	defer cancel()
	task, err := cl.StartToolTask(ctx, &mcp.CallToolParams{Name: "taskhold"})
	if err != nil || task.ID == "" {
		t.Fatalf("taskhold as a task: %+v, %v", task, err)
	}
	<-c.Tasks.Started
	owner := ownerOf(t, c, task.ID)
	// Round robin over three: two requests elsewhere, and the next one
	// goes back to the owner.
	for range len(c.Nodes) - 1 {
		if err := cl.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	}
	a := &awaited{id: make(chan string, 1), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.res, a.err = cl.TaskResult(ctx, task.ID)
	}()
	if n := waitHit(t, ctx, a, c, mcp.MethodTasksResult); n != owner {
		t.Fatalf("tasks/result went to instance %d, not the owner %d (hits %v)", n, owner, c.Hits())
	}
	c.Kill(owner)
	a.wait(t, ctx)
	var rpcErr *jsonrpc.Error
	if a.err == nil || !errors.As(a.err, &rpcErr) || !strings.Contains(rpcErr.Message, "stopped before it finished") {
		t.Fatalf("TaskResult: %+v, %v, want the task's failure with the lease message", a.res, a.err)
	}
}

// TestFaultInstanceKilledBesideTask: an instance that does not run the
// task dies while the client waits — for a legacy client, the one its
// tasks/result stream went through when that is not the owner. The
// client carries on through the others and ends with the task's result
// once it completes, having seen no failure.
func TestFaultInstanceKilledBesideTask(t *testing.T) {
	for _, era := range faultEras {
		t.Run(era, func(t *testing.T) {
			c, _ := faultCluster(t)
			cl := clustertest.Connect(t, c, &client.Options{ProtocolVersion: era, Tasks: true,
				TaskRetryBackoff: 20 * time.Millisecond, TaskRetryMaxBackoff: 200 * time.Millisecond})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a hang guard
			defer cancel()
			a := runTask(ctx, cl, "taskhold")
			var id string
			select {
			case id = <-a.id:
			case <-a.done:
				t.Fatalf("RunToolTask returned before the task was created: %v", a.err)
			}
			<-c.Tasks.Started
			owner := ownerOf(t, c, id)
			victim := (owner + 1) % len(c.Nodes)
			if era != mcp.Version20260728 {
				if n := waitHit(t, ctx, a, c, mcp.MethodTasksResult); n != owner {
					victim = n
				}
			}
			t.Logf("owner %d, killed %d, hits %v", owner, victim, c.Hits())
			c.Kill(victim)
			// The client goes on through the others: a request of its own
			// lands after the kill (a modern poll, a legacy retry or the
			// ping below), then the task completes.
			if era != mcp.Version20260728 {
				if err := cl.Ping(ctx); err != nil {
					t.Fatalf("ping after the kill: %v", err)
				}
			} else {
				waitHits(t, ctx, a, c, len(c.Hits())+2)
			}
			close(c.Release)
			a.wait(t, ctx)

			if a.err != nil {
				t.Fatalf("RunToolTask: %v (states %s)", a.err, a.seen())
			}
			if got := clustertest.Text(t, a.res); got != "released" {
				t.Fatalf("result %q", got)
			}
			if s := a.seen(); strings.Contains(s, string(mcp.TaskFailed)) {
				t.Errorf("states %s: a failure seen", s)
			}
			if last := a.last(); last.Status != mcp.TaskCompleted {
				t.Errorf("last state %s, want completed (states %s)", last.Status, a.seen())
			}
		})
	}
}

// TestFaultRedisRestartMidTask: Redis (durable) dies and comes back while
// a task runs and the client waits for it. The task completes after the
// restart ("after"), or during the outage ("during": its outcome is
// stored once Redis is back, the server retrying). The client ends with
// the task's result, having seen no failure: the outage's errors (503
// "try again later" from the stores, a broken stream) are retried, never
// taken for the task's outcome.
func TestFaultRedisRestartMidTask(t *testing.T) {
	for _, era := range faultEras {
		for _, when := range []string{"after", "during"} {
			t.Run(era+"/"+when, func(t *testing.T) { redisRestartMidTask(t, era, when == "during") })
		}
	}
}

func redisRestartMidTask(t *testing.T, era string, during bool) {
	c, srv, failed := faultClusterWatched(t)
	cl := clustertest.Connect(t, c, &client.Options{ProtocolVersion: era, Tasks: true,
		TaskRetryBackoff: 20 * time.Millisecond, TaskRetryMaxBackoff: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a hang guard
	defer cancel()
	a := runTask(ctx, cl, "taskhold")
	select {
	case <-a.id:
	case <-a.done:
		t.Fatalf("RunToolTask returned before the task was created: %v", a.err)
	}
	<-c.Tasks.Started

	select { // a read before the outage does not count
	case <-failed:
	default:
	}
	srv.Stop()
	// The outage is real for the client: a modern client's polls land
	// while Redis is down, and an instance fails to read the task for
	// one; a legacy client, whose tasks/result waits, is refused any
	// other request.
	if era == mcp.Version20260728 {
		waitHits(t, ctx, a, c, len(c.Hits())+2)
		select {
		case <-failed:
		case <-a.done:
			t.Fatalf("RunToolTask returned during the outage: %v (states %s)", a.err, a.seen())
		case <-ctx.Done():
			t.Fatal("no read of the task failed during the outage")
		}
	} else {
		// Past SessionCheckInterval, the session's copies read the store.
		c.Advance(streamhttp.DefaultSessionCheckInterval)
		if err := cl.Ping(ctx); err == nil || !strings.Contains(err.Error(), "503") {
			t.Fatalf("ping with Redis down: %v, want a 503", err)
		}
	}
	if during {
		close(c.Release)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if !during {
		close(c.Release)
	}
	a.wait(t, ctx)

	if a.err != nil {
		t.Fatalf("RunToolTask: %v (states %s)", a.err, a.seen())
	}
	if got := clustertest.Text(t, a.res); got != "released" {
		t.Fatalf("result %q", got)
	}
	if s := a.seen(); strings.Contains(s, string(mcp.TaskFailed)) {
		t.Errorf("states %s: a failure seen", s)
	}
	if last := a.last(); last.Status != mcp.TaskCompleted {
		t.Errorf("last state %s, want completed (states %s)", last.Status, a.seen())
	}
}

// waitHit waits until the proxy has passed a POST of method on, and
// returns the instance it went to.
func waitHit(t *testing.T, ctx context.Context, a *awaited, c *clustertest.Cluster, method string) int {
	t.Helper()
	for {
		for _, h := range c.Hits() {
			if h.What == method {
				return h.Node
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no %s (hits %v)", method, c.Hits())
		case <-a.done:
			t.Fatalf("RunToolTask returned before its %s: %v (states %s)", method, a.err, a.seen())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitHits waits until the proxy has passed n requests on; it fails the
// test when the call a awaits returns first.
func waitHits(t *testing.T, ctx context.Context, a *awaited, c *clustertest.Cluster, n int) {
	t.Helper()
	for len(c.Hits()) < n {
		select {
		case <-ctx.Done():
			t.Fatalf("the client sent no request during the outage (%d hits)", len(c.Hits()))
		case <-a.done:
			t.Fatalf("RunToolTask returned during the outage: %v (states %s)", a.err, a.seen())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
