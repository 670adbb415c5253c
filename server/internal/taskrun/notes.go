package taskrun

import (
	"context"
	"slices"

	"github.com/mcpkit/mcpkit/mcp"
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

// note is a notification a legacy task holds for its client.
type note struct {
	method string
	params any
}

// Note queues a notification of a 2025-11-25 task's handler for its
// client (params already carry related-task _meta) and sends what is
// queued on a tasks/result request in flight, if one is. Past
// Config.NoteQueue the oldest is dropped: progress only increases, so
// the newest steps matter most.
func (m *Manager) Note(run *Run, method string, params any) {
	limit := m.cfg.NoteQueue
	run.mu.Lock()
	if len(run.notes) >= limit {
		drop := len(run.notes) - limit + 1
		clear(run.notes[:drop])
		run.notes = run.notes[drop:]
	}
	run.notes = append(run.notes, note{method, params})
	run.mu.Unlock()
	run.flushNotes()
}

// noteCarrierLocked returns the newest tasks/result request in flight
// that can carry a notification — here, or lent by another instance —
// (run.mu held); nil when there is none.
func (run *Run) noteCarrierLocked() *Carrier {
	for i := len(run.carriers) - 1; i >= 0; i-- {
		if c := run.carriers[i]; c.Notify != nil && c.Ctx.Err() == nil {
			return c
		}
	}
	return nil
}

// flushNotes sends the queued notifications, in order, on the stream of
// a tasks/result request in flight; they stay queued while there is
// none. One caller sends at a time (run.flushing), the others leave
// their notes to it, so the order holds without I/O under run.mu.
func (run *Run) flushNotes() {
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
		run.notes[0] = note{}
		run.notes = run.notes[1:]
		run.mu.Unlock()
		err := c.Notify(n.method, n.params)
		run.mu.Lock()
		if err != nil { // the lender is gone (its carrier too): the next one sends it
			run.notes = append([]note{n}, run.notes...)
		}
	}
}

// drainNotes sends what a run of the task's handler reported before the
// task goes on (its outcome above all): it flushes the queue, or waits
// for the goroutine flushing it, so that a tasks/result never answers
// before the steps that came first. It gives up at Shutdown.
func (m *Manager) drainNotes(run *Run) {
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
		case <-m.stop:
			return
		}
	}
}

// SetProgress records a working task's latest progress as its
// statusMessage and tells whoever listens. A task not working (waiting
// for input, or over) keeps its message.
func (m *Manager) SetProgress(ctx context.Context, run *Run, id, msg string) {
	now := m.clock.Now()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), StoreTimeout)
	defer cancel()
	cur, changed, err := m.cfg.Store.Update(ctx, id, func(r *store.TaskRecord) bool {
		if r.Status != mcp.TaskWorking || r.StatusMessage == msg {
			return false
		}
		r.StatusMessage, r.LastUpdatedAt = msg, now
		return true
	})
	if err != nil {
		m.cfg.Log.Warn("server: storing a task's progress", "task", id, "err", err)
		return
	}
	if changed {
		m.host.Announce(run, cur)
		m.tellPeers(cur)
	}
}

// keepNotes keeps an ended legacy task whose notifications no
// tasks/result has carried yet, for the first one to come (takeNotes).
// At most maxTasks such tasks are kept, the oldest forgotten first.
func (m *Manager) keepNotes(run *Run) {
	run.mu.Lock()
	pending := len(run.notes) > 0
	run.mu.Unlock()
	if !pending {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closing {
		return
	}
	if m.ended == nil {
		m.ended = make(map[string]*Run)
	}
	m.ended[run.ID] = run
	m.endOrder = append(m.endOrder, run.ID)
	for len(m.endOrder) > m.cfg.MaxTasks {
		delete(m.ended, m.endOrder[0])
		m.endOrder[0] = ""
		m.endOrder = m.endOrder[1:]
	}
}

// takeNotes returns the ended task id kept by keepNotes, and forgets it;
// nil when none is kept.
func (m *Manager) takeNotes(id string) *Run {
	m.mu.Lock()
	defer m.mu.Unlock()
	run := m.ended[id]
	if run == nil {
		return nil
	}
	delete(m.ended, id)
	m.endOrder = slices.DeleteFunc(m.endOrder, func(x string) bool { return x == id })
	return run
}
