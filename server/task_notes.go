package server

import (
	"context"
	"slices"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
	"github.com/mcpkit/mcpkit/store"
)

// What a task's handler reports while it runs — progress, log messages —
// and where it goes (docs/design/tasks.md, "Progress and log messages of
// a task").
//
//   - 2025-11-25: the request that created the task has been answered, so
//     its stream (Streamable HTTP) is gone. The task's notifications keep
//     the call's progress token (the spec: it "remains valid throughout the
//     task lifetime") and carry related-task _meta; they travel on the
//     stream of a tasks/result request in flight, as the task's input
//     requests do. While none is, they wait in a bounded queue
//     (Options.TaskNotificationQueue) and go, in order, once one arrives.
//   - 2026-07-28: progress is for the request's own stream only, and that
//     request was answered with the task. A task's progress becomes its
//     statusMessage, which the extension describes as the place for a
//     working task's progress: every tasks/get and notifications/tasks
//     carries it, on any instance. Log messages have no channel and are
//     dropped.

// DefaultTaskNotificationQueue is how many notifications a 2025-11-25
// task holds for its client while no tasks/result request is in flight,
// when Options.TaskNotificationQueue is zero. Past it the oldest is
// dropped: progress only increases, so the newest steps matter most.
const DefaultTaskNotificationQueue = 256

// taskNote is a notification a legacy task holds for its client.
type taskNote struct {
	method string
	params any
}

func (s *Server) taskNotificationQueue() int {
	if s.opts.TaskNotificationQueue > 0 {
		return s.opts.TaskNotificationQueue
	}
	return DefaultTaskNotificationQueue
}

// legacyTaskOut is the outbound of a 2025-11-25 task's handler: its
// requests go as a request's would (the session's connection), its
// notifications to a tasks/result request in flight, here or lent by
// another instance (flushNotes).
type legacyTaskOut struct {
	s    *Server
	run  *taskRun
	call outbound // requests: the session's, or none (session-less)
}

func (o legacyTaskOut) Call(ctx context.Context, related mcp.ID, method string, params, result any) error {
	return o.call.Call(ctx, related, method, params, result)
}

func (o legacyTaskOut) Notify(_ context.Context, _ mcp.ID, method string, params any) error {
	params = tasks.WithRelatedMeta(params, o.run.id)
	limit := o.s.taskNotificationQueue()
	o.run.mu.Lock()
	if len(o.run.notes) >= limit {
		drop := len(o.run.notes) - limit + 1
		clear(o.run.notes[:drop])
		o.run.notes = o.run.notes[drop:]
	}
	o.run.notes = append(o.run.notes, taskNote{method, params})
	o.run.mu.Unlock()
	o.run.flushNotes()
	return nil
}

// noteCarrierLocked returns the newest tasks/result request in flight
// that can carry a notification — here, or lent by another instance —
// (run.mu held); nil when there is none.
func (run *taskRun) noteCarrierLocked() *carrier {
	for i := len(run.carriers) - 1; i >= 0; i-- {
		if c := run.carriers[i]; (c.req != nil || c.notify != nil) && c.ctx.Err() == nil {
			return c
		}
	}
	return nil
}

// flushNotes sends the queued notifications, in order, on the stream of
// a tasks/result request in flight; they stay queued while there is
// none. One caller sends at a time (run.flushing), the others leave
// their notes to it, so the order holds without I/O under run.mu.
func (run *taskRun) flushNotes() {
	run.mu.Lock()
	if run.flushing {
		run.mu.Unlock()
		return
	}
	run.flushing = true
	for {
		c := run.noteCarrierLocked()
		if c == nil || len(run.notes) == 0 {
			run.flushing = false
			if run.flushed != nil {
				close(run.flushed)
				run.flushed = nil
			}
			run.mu.Unlock()
			return
		}
		n := run.notes[0]
		run.notes[0] = taskNote{}
		run.notes = run.notes[1:]
		run.mu.Unlock()
		if c.notify == nil {
			_ = c.req.out.Notify(c.ctx, c.req.id, n.method, n.params)
			run.mu.Lock()
			continue
		}
		err := c.notify(n.method, n.params)
		run.mu.Lock()
		if err != nil { // the lender is gone (its carrier too): the next one sends it
			run.notes = append([]taskNote{n}, run.notes...)
		}
	}
}

// drainNotes sends what a run of the task's handler reported before the
// task goes on (its outcome above all): it flushes the queue, or waits
// for the goroutine flushing it, so that a tasks/result never answers
// before the steps that came first. It gives up at Shutdown.
func (s *Server) drainNotes(run *taskRun) {
	for {
		run.flushNotes()
		run.mu.Lock()
		if !run.flushing {
			run.mu.Unlock()
			return
		}
		if run.flushed == nil {
			run.flushed = make(chan struct{})
		}
		flushed := run.flushed
		run.mu.Unlock()
		select {
		case <-flushed:
		case <-s.tasks.stop:
			return
		}
	}
}

// modernTaskOut is the outbound of a 2026-07-28 task's handler: no
// request can reach the client (the request was answered; the era has no
// server→client requests), and progress becomes the task's
// statusMessage.
type modernTaskOut struct {
	s   *Server
	run *taskRun
	id  string
}

func (modernTaskOut) Call(context.Context, mcp.ID, string, any, any) error { return ErrModernRequest }

func (o modernTaskOut) Notify(ctx context.Context, _ mcp.ID, method string, params any) error {
	if p, ok := params.(mcp.ProgressParams); ok && method == mcp.NotificationProgress {
		o.s.setProgressMessage(ctx, o.run, o.id, tasks.ProgressText(p))
	}
	return nil
}

// setProgressMessage records a working task's latest progress as its
// statusMessage and tells whoever listens. A task not working (waiting
// for input, or over) keeps its message.
func (s *Server) setProgressMessage(ctx context.Context, run *taskRun, id, msg string) {
	now := s.tasks.clock.Now()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskStoreTimeout)
	defer cancel()
	cur, changed, err := s.taskStore().Update(ctx, id, func(r *store.TaskRecord) bool {
		if r.Status != mcp.TaskWorking || r.StatusMessage == msg {
			return false
		}
		r.StatusMessage, r.LastUpdatedAt = msg, now
		return true
	})
	if err != nil {
		s.log.Warn("server: storing a task's progress", "task", id, "err", err)
		return
	}
	if changed {
		s.announceTask(run, cur)
		s.tellPeers(cur.ID)
	}
}

// keepNotes keeps an ended legacy task whose notifications no
// tasks/result has carried yet, for the first one to come (takeNotes).
// At most maxTasks such tasks are kept, the oldest forgotten first.
func (s *Server) keepNotes(run *taskRun) {
	run.mu.Lock()
	pending := len(run.notes) > 0
	run.mu.Unlock()
	if !pending {
		return
	}
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	if s.tasks.closing {
		return
	}
	if s.tasks.ended == nil {
		s.tasks.ended = make(map[string]*taskRun)
	}
	s.tasks.ended[run.id] = run
	s.tasks.endOrder = append(s.tasks.endOrder, run.id)
	for len(s.tasks.endOrder) > s.maxTasks() {
		delete(s.tasks.ended, s.tasks.endOrder[0])
		s.tasks.endOrder[0] = ""
		s.tasks.endOrder = s.tasks.endOrder[1:]
	}
}

// takeNotes returns the ended task id kept by keepNotes, and forgets it;
// nil when none is kept.
func (s *Server) takeNotes(id string) *taskRun {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	run := s.tasks.ended[id]
	if run == nil {
		return nil
	}
	delete(s.tasks.ended, id)
	s.tasks.endOrder = slices.DeleteFunc(s.tasks.endOrder, func(x string) bool { return x == id })
	return run
}
