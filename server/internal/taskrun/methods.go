package taskrun

import (
	"context"
	"errors"
	"maps"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store"
)

// What the tasks/* methods need of running tasks. Package server checks
// the request (its era, the extension, who may see the task) and renders
// the answers; these act on the tasks.

// Update hands tasks/update answers to a task waiting for input (2026),
// here or on the instance that runs it. Answers to keys the task did not
// ask (or no longer asks) are ignored, as SEP-2322 has it; the task
// resumes once every open request is answered (Host.CheckResponses
// decides which answers count).
func (m *Manager) Update(ctx context.Context, rec *store.TaskRecord, responses mcp.InputResponses) error {
	if owner := m.RemoteOwner(rec); owner != "" && !rec.Status.Terminal() {
		return m.remoteUpdate(ctx, rec, owner, responses)
	}
	return m.updateHere(ctx, rec, responses)
}

func (m *Manager) updateHere(ctx context.Context, rec *store.TaskRecord, responses mcp.InputResponses) error {
	run := m.Lookup(rec.ID)
	if run == nil {
		return nil
	}
	run.mu.Lock()
	if run.asked == nil || run.resume == nil {
		run.mu.Unlock()
		return nil
	}
	got, err := m.host.CheckResponses(responses, run.asked, run.forms)
	if err != nil || len(got) == 0 {
		run.mu.Unlock()
		return err
	}
	if run.answers == nil {
		run.answers = make(mcp.InputResponses)
	}
	maps.Copy(run.answers, got)
	asked := run.asked // this round's (a new map each round, never changed)
	open := make(map[string]bool)
	for k := range run.asked {
		if _, ok := run.answers[k]; !ok {
			open[k] = true
		}
	}
	if len(open) == 0 {
		// Every request is answered. The record is back to working
		// before the handler runs again and before the ack: a tasks/get
		// sent after the ack never sees the requests it answered (a
		// client, or a gateway relaying this task, would ask them
		// again). Later updates of this round are ignored (resume nil).
		// The ack waits for that write and for its announcement to
		// listeners and peers (each bounded by StoreTimeout).
		resume := run.resume
		run.resume = nil
		run.mu.Unlock()
		m.SetStatus(ctx, run, rec, mcp.TaskWorking, nil)
		close(resume)
		return nil
	}
	run.mu.Unlock()
	// Some requests are still open: the record lists only those. The
	// store call is made with no lock held.
	now := m.clock.Now()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), StoreTimeout)
	defer cancel()
	cur, changed, err := m.cfg.Store.Update(ctx, rec.ID, func(r *store.TaskRecord) bool {
		if r.Status != mcp.TaskInputRequired {
			return false
		}
		for k := range r.InputRequests {
			if _, ok := asked[k]; !ok {
				return false // a later round's requests: this update is stale
			}
		}
		left := make(mcp.InputRequests, len(open))
		for k, ir := range r.InputRequests {
			if open[k] {
				left[k] = ir
			}
		}
		r.InputRequests, r.LastUpdatedAt = left, now
		return true
	})
	if err != nil {
		return jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: storing the task: %v", err)
	}
	if changed {
		m.host.Announce(run, cur)
		m.tellPeers(cur)
	}
	return nil
}

// Result waits, for tasks/result (2025-11-25), until the task is
// terminal, carrying meanwhile its input requests and notifications on
// the request (c: Ask and Notify on it here; lent, the one that reports
// send errors), and returns what the request would have, with
// related-task _meta: the result, or the JSON-RPC error.
func (m *Manager) Result(ctx context.Context, rec *store.TaskRecord, c, lent *Carrier) (*mcp.CallToolResult, error) {
	if run := m.Lookup(rec.ID); run != nil {
		defer run.addCarrier(c)()
		run.flushNotes() // what the task reported while no tasks/result was in flight
		select {
		case <-run.done:
			run.flushNotes() // its last steps, before its outcome
			if run.final != nil {
				rec = run.final // as settled here: final, no need to read it back
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	} else if left := m.takeNotes(rec.ID); left != nil {
		// The task ended before any tasks/result came: this one carries
		// what it reported meanwhile, before its outcome.
		defer left.addCarrier(c)()
		left.flushNotes()
	} else if owner := m.RemoteOwner(rec); owner != "" && !rec.Status.Terminal() {
		cur, err := m.remoteResult(ctx, lent, rec, owner)
		if err != nil {
			return nil, err
		}
		rec = cur
	}
	// A terminal record read during this request is final (no write
	// replaces a terminal state): only a task that ended meanwhile is
	// read again, for its outcome.
	if !rec.Status.Terminal() {
		id := rec.ID
		cur, err := m.Read(ctx, id)
		if errors.Is(err, store.ErrTaskNotFound) {
			return nil, Unknown(id)
		} else if err != nil {
			return nil, m.StoreFailed(id, err)
		}
		rec = cur
	}
	related := mcp.RelatedTaskMetadata{TaskID: rec.ID}
	switch rec.Status {
	case mcp.TaskCompleted:
		var res mcp.CallToolResult
		if err := json.Unmarshal(rec.Result, &res); err != nil {
			return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: decoding the task result: %v", err)
		}
		meta := make(mcp.Meta, len(res.Meta)+1)
		maps.Copy(meta, res.Meta)
		meta[mcp.MetaKeyRelatedTask] = related
		res.Meta = meta
		return &res, nil
	case mcp.TaskFailed:
		e := jsonrpc.NewError(rec.Error.Code, rec.Error.Message)
		if rec.Error.Data != nil {
			e = e.WithData(rec.Error.Data)
		}
		return nil, e
	case mcp.TaskCancelled:
		return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: task %q was cancelled", rec.ID)
	}
	return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: task %q is %s", rec.ID, rec.Status)
}

// Unknown is the answer for a task that does not exist, or that the
// requestor may not see.
func Unknown(id string) error {
	return jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: unknown task %q", id)
}

// StoreFailed is the answer when the TaskStore fails to read a task
// (a Redis restart, a timeout): not "unknown task", which a client takes
// as final, but jsonrpc.ErrUnavailable, which it retries (HTTP 503 on
// Streamable HTTP). The details go to the log, not to the client.
func (m *Manager) StoreFailed(id string, err error) error {
	m.cfg.Log.Warn("server: reading a task", "task", id, "err", err)
	return jsonrpc.ErrUnavailable
}

// CancelLegacy serves a 2025 tasks/cancel of a task not yet terminal:
// the task is cancelled at once, its handler stopped wherever it runs
// and the record settled (by the owner, on the session that created
// it, when it can).
func (m *Manager) CancelLegacy(ctx context.Context, rec *store.TaskRecord) {
	if m.RemoteOwner(rec) != "" {
		if !m.StopAnywhere(ctx, rec) {
			m.Settle(nil, rec, mcp.TaskCancelled, CancelledByClient, nil, nil)
		}
		return
	}
	run := m.Stop(rec.ID)
	m.Settle(run, rec, mcp.TaskCancelled, CancelledByClient, nil, nil)
}

// CancelModern serves a 2026 tasks/cancel of a task not yet terminal:
// cooperative, the task settles cancelled when its handler returns (at
// once when no handler runs anywhere).
func (m *Manager) CancelModern(ctx context.Context, rec *store.TaskRecord) {
	if !m.StopAnywhere(ctx, rec) { // no work anywhere to wind down
		m.Settle(nil, rec, mcp.TaskCancelled, "", nil, nil)
	}
}
