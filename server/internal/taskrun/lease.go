package taskrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store"
)

// startBeatLocked starts the heartbeat goroutine unless it runs; mu is
// held.
func (m *Manager) startBeatLocked() {
	if m.beating || m.closing {
		return
	}
	m.beating = true
	m.wg.Add(1)
	go m.heartbeat() // owned by the server: ends when nothing is left to watch, or at Shutdown
}

// heartbeat renews the leases of the tasks this process runs and checks
// the tasks of other instances that requests here wait on, every third
// of the lease, on the task clock. It ends when there is neither.
func (m *Manager) heartbeat() {
	defer m.wg.Done()
	next := func() (<-chan struct{}, func() bool) {
		tick := make(chan struct{})
		return tick, m.clock.AfterFunc(m.cfg.Lease/3, func() { close(tick) })
	}
	tick, stop := next()
	for {
		select {
		case <-tick:
		case <-m.kick: // a run or a watch ended: maybe nothing is left
			if m.beatIdle() {
				stop()
				return
			}
			continue
		case <-m.stop:
			stop()
			m.mu.Lock()
			m.beating = false
			m.mu.Unlock()
			return
		}
		if m.beatIdle() {
			return
		}
		m.mu.Lock()
		runs := make([]*Run, 0, len(m.runs))
		for _, run := range m.runs {
			runs = append(runs, run)
		}
		watched := make([]string, 0, len(m.watch))
		for id := range m.watch {
			watched = append(watched, id)
		}
		m.mu.Unlock()
		for _, run := range runs {
			if run.stored.Load() { // not yet stored: nothing to renew
				m.renew(run)
			}
		}
		for _, id := range watched {
			m.checkWatched(id)
		}
		if m.beat != nil {
			m.beat()
		}
		tick, stop = next()
	}
}

// beatIdle reports whether the heartbeat has nothing left to do, and if
// so marks it stopped.
func (m *Manager) beatIdle() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.runs) == 0 && len(m.watch) == 0 {
		m.beating = false
		return true
	}
	return false
}

// kickBeat tells the heartbeat that a run or a watch ended.
func (m *Manager) kickBeat() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// renew extends the lease of a task this process runs. A task that is
// terminal in the store while it still runs here was settled elsewhere
// (a tasks/cancel whose message to this instance was lost): its handler
// is cancelled.
func (m *Manager) renew(run *Run) {
	me, lease := m.Instance(), m.cfg.Lease
	ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
	defer cancel()
	cur, _, err := m.cfg.Store.Update(ctx, run.ID, func(r *store.TaskRecord) bool {
		if r.Status.Terminal() || r.Owner != me {
			return false
		}
		r.LeaseUntil = m.clock.Now().Add(lease)
		return true
	})
	switch {
	case errors.Is(err, store.ErrTaskNotFound):
		// Expired, or lost with the store: nobody can ask for it any more.
		m.cfg.Log.Warn("server: a running task's record is gone from the store; stopping it", "task", run.ID)
		run.cancel(errGone)
	case err != nil:
		m.cfg.Log.Warn("server: renewing a task's lease", "task", run.ID, "err", err)
	case cur.Status.Terminal() || cur.Owner != me:
		run.cancel(errCancelled)
	}
}

// ReapLapsed fails a task whose owner let its lease run out (the owner
// died, or lost the store for longer than the lease), and returns the
// record as it now is. Records of this instance are never reaped here:
// their runs are known.
func (m *Manager) ReapLapsed(ctx context.Context, rec *store.TaskRecord) *store.TaskRecord {
	now := m.clock.Now()
	if !rec.Lapsed(now) || rec.Owner == m.Instance() {
		return rec
	}
	msg := fmt.Sprintf("the server instance running this task (%s) stopped before it finished: no heartbeat since %s", rec.Owner, rec.LeaseUntil.Add(-m.cfg.Lease).UTC().Format(time.RFC3339))
	// The owner is gone: a legacy session hears of the failure from the
	// instance holding its stream (PeerMsg.Note), this one included.
	cur, changed, noted, err := m.updateTelling(ctx, rec.ID, m.host.CastsStatus(), func(r *store.TaskRecord) bool {
		if !r.Lapsed(now) {
			return false
		}
		r.Status, r.StatusMessage, r.InputRequests, r.LastUpdatedAt = mcp.TaskFailed, msg, nil, now
		r.Error = &mcp.TaskError{Code: mcp.CodeInternalError, Message: "Internal error: " + msg}
		return true
	})
	if err != nil {
		m.cfg.Log.Warn("server: failing a task whose owner is gone", "task", rec.ID, "err", err)
		return rec
	}
	if changed {
		m.cfg.Log.Info("server: task failed: its owner is gone", "task", rec.ID, "owner", rec.Owner)
		m.freshTask(cur)
		m.tellSession(nil, cur, noted)
	}
	return cur
}
