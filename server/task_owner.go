package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
	"github.com/mcpkit/mcpkit/store"
)

// Limits and timings of the task machinery (docs/design/tasks.md,
// docs/design/multi-instance.md).
const (
	// DefaultMaxTasks bounds the tasks one server runs at once when
	// Options.MaxTasks is zero. A tools/call that would start one more is
	// refused (-32603, "too many tasks running").
	DefaultMaxTasks = 1000
	// DefaultTaskLease is how long a task's owner holds it without
	// renewing its claim, when Options.TaskLease is zero. The owner renews
	// every third of it (a heartbeat); a task not terminal whose lease
	// has run out is failed by the first instance that sees it. A task
	// whose owner died is therefore failed, as every instance sees it, at
	// most TaskLease after the owner's last heartbeat for tasks/get and
	// tasks/list, and within TaskLease + TaskLease/3 for waiting
	// tasks/result requests and listen streams.
	DefaultTaskLease = 15 * time.Second
	// taskStoreTimeout bounds each TaskStore call made outside a request
	// (a heartbeat, a settle, a watch).
	taskStoreTimeout = 5 * time.Second
	// settleRetryMax is the longest pause between two attempts to store a
	// task's terminal state while the store is unreachable.
	settleRetryMax = 2 * time.Second
)

// errServerShutdown is the cause of a task's context when the server
// shuts down (Server.Shutdown).
var errServerShutdown = errors.New("server: the server is shutting down")

// maxTasks is the cap on running tasks.
func (s *Server) maxTasks() int {
	if s.opts.MaxTasks > 0 {
		return s.opts.MaxTasks
	}
	return DefaultMaxTasks
}

// taskLease is the lease of this server's tasks.
func (s *Server) taskLease() time.Duration {
	if s.opts.TaskLease > 0 {
		return s.opts.TaskLease
	}
	return DefaultTaskLease
}

// instance names this server among the instances of its deployment: the
// broker's id once a carrier attached peers, else an id of its own.
func (s *Server) instance() string {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	return s.tasks.instance
}

// claim reserves a slot for a new task and registers its run; the error
// refuses the task (the cap, or shutdown).
func (s *Server) claim(run *taskRun) error {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	if s.tasks.closing {
		return jsonrpc.NewError(mcp.CodeInternalError, "Internal error: the server is shutting down and starts no new task")
	}
	if n := s.maxTasks(); len(s.tasks.runs) >= n {
		return jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: too many tasks running (the server's limit is %d); try again later", n)
	}
	if s.tasks.runs == nil {
		s.tasks.runs = make(map[string]*taskRun)
	}
	s.tasks.runs[run.id] = run
	s.tasks.wg.Add(1) // released by the task's goroutine, or by unclaim
	s.startBeatLocked()
	return nil
}

// unclaim undoes claim for a task that did not start.
func (s *Server) unclaim(run *taskRun) {
	s.tasks.mu.Lock()
	delete(s.tasks.runs, run.id)
	s.tasks.mu.Unlock()
	s.tasks.wg.Done()
}

// Shutdown stops the server's tasks: no new task starts, every running
// task's handler is cancelled, and each is recorded failed ("the server
// shut down before the task finished") unless it settles otherwise
// first. It waits for the task goroutines to end, or for ctx. Carriers
// shut down separately (streamhttp.Handler.Shutdown).
func (s *Server) Shutdown(ctx context.Context) error {
	s.tasks.mu.Lock()
	if !s.tasks.closing {
		s.tasks.closing = true
		close(s.tasks.stop)
	}
	runs := make([]*taskRun, 0, len(s.tasks.runs))
	for _, run := range s.tasks.runs {
		runs = append(runs, run)
	}
	s.tasks.mu.Unlock()
	for _, run := range runs {
		run.cancel(errServerShutdown)
	}
	done := make(chan struct{})
	go func() { // ends when the task goroutines have: bounded by their handlers
		s.tasks.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("server: shutdown: %d tasks still running: %w", s.runningTasks(), ctx.Err())
	}
}

// runningTasks counts the tasks running in this process.
func (s *Server) runningTasks() int {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	return len(s.tasks.runs)
}

// startBeatLocked starts the heartbeat goroutine unless it runs; mu is
// held.
func (s *Server) startBeatLocked() {
	if s.tasks.beating || s.tasks.closing {
		return
	}
	s.tasks.beating = true
	s.tasks.wg.Add(1)
	go s.heartbeat() // owned by the server: ends when nothing is left to watch, or at Shutdown
}

// heartbeat renews the leases of the tasks this process runs and checks
// the tasks of other instances that requests here wait on, every third
// of the lease, on the task clock. It ends when there is neither.
func (s *Server) heartbeat() {
	defer s.tasks.wg.Done()
	next := func() (<-chan struct{}, func() bool) {
		tick := make(chan struct{})
		return tick, s.tasks.clock.AfterFunc(s.taskLease()/3, func() { close(tick) })
	}
	tick, stop := next()
	for {
		select {
		case <-tick:
		case <-s.tasks.kick: // a run or a watch ended: maybe nothing is left
			if s.beatIdle() {
				stop()
				return
			}
			continue
		case <-s.tasks.stop:
			stop()
			s.tasks.mu.Lock()
			s.tasks.beating = false
			s.tasks.mu.Unlock()
			return
		}
		if s.beatIdle() {
			return
		}
		s.tasks.mu.Lock()
		runs := make([]*taskRun, 0, len(s.tasks.runs))
		for _, run := range s.tasks.runs {
			runs = append(runs, run)
		}
		watched := make([]string, 0, len(s.tasks.watch))
		for id := range s.tasks.watch {
			watched = append(watched, id)
		}
		s.tasks.mu.Unlock()
		for _, run := range runs {
			if run.stored.Load() { // not yet stored: nothing to renew
				s.renew(run)
			}
		}
		for _, id := range watched {
			s.checkWatched(id)
		}
		if s.tasks.beat != nil {
			s.tasks.beat()
		}
		tick, stop = next()
	}
}

// beatIdle reports whether the heartbeat has nothing left to do, and if
// so marks it stopped.
func (s *Server) beatIdle() bool {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	if len(s.tasks.runs) == 0 && len(s.tasks.watch) == 0 {
		s.tasks.beating = false
		return true
	}
	return false
}

// kickBeat tells the heartbeat that a run or a watch ended.
func (s *Server) kickBeat() {
	select {
	case s.tasks.kick <- struct{}{}:
	default:
	}
}

// renew extends the lease of a task this process runs. A task that is
// terminal in the store while it still runs here was settled elsewhere
// (a tasks/cancel whose message to this instance was lost): its handler
// is cancelled.
func (s *Server) renew(run *taskRun) {
	me, lease := s.instance(), s.taskLease()
	ctx, cancel := context.WithTimeout(context.Background(), taskStoreTimeout)
	defer cancel()
	cur, _, err := s.taskStore().Update(ctx, run.id, func(r *store.TaskRecord) bool {
		if r.Status.Terminal() || r.Owner != me {
			return false
		}
		r.LeaseUntil = s.tasks.clock.Now().Add(lease)
		return true
	})
	switch {
	case errors.Is(err, store.ErrTaskNotFound):
		// Expired, or lost with the store: nobody can ask for it any more.
		s.log.Warn("server: a running task's record is gone from the store; stopping it", "task", run.id)
		run.cancel(errTaskGone)
	case err != nil:
		s.log.Warn("server: renewing a task's lease", "task", run.id, "err", err)
	case cur.Status.Terminal() || cur.Owner != me:
		run.cancel(errTaskCancelled)
	}
}

// reapLapsed fails a task whose owner let its lease run out (the owner
// died, or lost the store for longer than the lease), and returns the
// record as it now is. Records of this instance are never reaped here:
// their runs are known.
func (s *Server) reapLapsed(ctx context.Context, rec *store.TaskRecord) *store.TaskRecord {
	now := s.tasks.clock.Now()
	if !rec.Lapsed(now) || rec.Owner == s.instance() {
		return rec
	}
	msg := fmt.Sprintf("the server instance running this task (%s) stopped before it finished: no heartbeat since %s", rec.Owner, rec.LeaseUntil.Add(-s.taskLease()).UTC().Format(time.RFC3339))
	cur, changed, err := s.taskStore().Update(ctx, rec.ID, func(r *store.TaskRecord) bool {
		if !r.Lapsed(now) {
			return false
		}
		r.Status, r.StatusMessage, r.InputRequests, r.LastUpdatedAt = mcp.TaskFailed, msg, nil, now
		r.Error = &mcp.TaskError{Code: mcp.CodeInternalError, Message: "Internal error: " + msg}
		return true
	})
	if err != nil {
		s.log.Warn("server: failing a task whose owner is gone", "task", rec.ID, "err", err)
		return rec
	}
	if changed {
		s.log.Info("server: task failed: its owner is gone", "task", rec.ID, "owner", rec.Owner)
		s.freshTask(cur)
		s.announceTask(nil, cur)
		s.tellPeers(cur.ID)
	}
	return cur
}

// A task answers only to its creator (docs/design/tasks.md, "Owner"):
// the principal it was created for when there was one, on any session
// or connection of that principal; else the legacy session that created
// it. A task created with neither (a 2026 stateless request, or a
// session-less legacy one, without authentication) answers to whoever
// names it: its id is then the only capability, 130 random bits
// (tasks.NewID). This is the rule of tasks/list (TaskStore.List), applied
// to every method that names a task: tasks/get, tasks/result,
// tasks/cancel, tasks/update and the taskIds of subscriptions/listen.
// The record carries both (TaskRecord.Principal and SessionID), so the
// rule holds on every instance that shares the TaskStore.

// lookupTask returns the task a tasks/* request names, refusing — as if
// unknown, -32602, the same error and message — a task that does not
// answer to the requestor (taskBoundTo) or belongs to the other era:
// the answer does not tell an outsider that the id exists. Only
// store.ErrTaskNotFound means unknown: any other failure of the store
// answers jsonrpc.ErrUnavailable (taskStoreFailed), so that the client
// tries again instead of giving the task up.
func (s *Server) lookupTask(ctx context.Context, req *Request, id string) (*store.TaskRecord, error) {
	if id == "" {
		return nil, jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: taskId is required")
	}
	sid := ""
	if req.session != nil {
		sid = req.session.ID()
	}
	rec, err := s.taskStore().Get(ctx, id)
	if err != nil && !errors.Is(err, store.ErrTaskNotFound) {
		return nil, s.taskStoreFailed(id, err)
	}
	if err != nil || !tasks.BoundTo(rec, requestor(ctx, req), sid) || rec.Modern != req.era().tasks().Modern() {
		return nil, unknownTask(id)
	}
	return s.reapLapsed(ctx, rec), nil
}

// unknownTask is the answer for a task that does not exist, or that the
// requestor may not see.
func unknownTask(id string) error {
	return jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: unknown task %q", id)
}

// taskStoreFailed is the answer when the TaskStore fails to read a task
// (a Redis restart, a timeout): not "unknown task", which a client takes
// as final, but jsonrpc.ErrUnavailable, which it retries (HTTP 503 on
// Streamable HTTP). The details go to the log, not to the client.
func (s *Server) taskStoreFailed(id string, err error) error {
	s.log.Warn("server: reading a task", "task", id, "err", err)
	return jsonrpc.ErrUnavailable
}
