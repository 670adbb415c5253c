package taskrun

import (
	"context"
	"errors"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
	"github.com/mcpkit/mcpkit/store"
)

// StepKind is what one run of a task's handler came to.
type StepKind uint8

const (
	// StepDone: the handler returned a result (Step.Result); the task
	// completes.
	StepDone StepKind = iota
	// StepFailed: the task fails with Step.Error and Step.Message.
	StepFailed
	// StepAgain: the handler asked to go on as a task (ContinueAsTask);
	// it runs again at once.
	StepAgain
	// StepInput: the handler needs input; Job.Gather collects it, then
	// the handler runs again.
	StepInput
)

// Step is the outcome of one run of a task's handler.
type Step struct {
	Kind    StepKind
	Result  jsontext.Value // StepDone: the encoded CallToolResult
	Message string         // StepFailed: the status message
	Error   *mcp.TaskError // StepFailed: the error
}

// Job is a task's work as the server runs it: its handler, with the
// task's Request. The Manager calls it from the task's goroutine only,
// one method at a time.
type Job interface {
	// Step runs the handler once.
	Step(ctx context.Context) Step
	// Gather collects the input the last Step asked for, as the task's
	// era has it (AskInput, AwaitInput), and readies the next Step. It
	// reports false when the task ended meanwhile.
	Gather(ctx context.Context, run *Run, rec *store.TaskRecord) bool
}

// Begin registers a new task and stores its record: the caller fills
// rec's Principal, Modern, SessionID, TTL and PollInterval; Begin sets
// its id, owner, status, times and lease. It returns the run, to be
// started with Go, or the error that refuses the task. The task's
// context is detached from ctx and ends at its TTL.
func (m *Manager) Begin(ctx context.Context, rec *store.TaskRecord, origin Origin) (*Run, error) {
	now := m.clock.Now()
	me := m.Instance()
	rec.ID, rec.Owner, rec.Status = tasks.NewID(me), me, mcp.TaskWorking
	rec.CreatedAt, rec.LastUpdatedAt, rec.LeaseUntil = now, now, now.Add(m.cfg.Lease)
	tctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	run := &Run{ID: rec.ID, Origin: origin, ctx: tctx, cancel: cancel, done: make(chan struct{})}
	if err := m.claim(run); err != nil {
		cancel(nil)
		return nil, err
	}
	// Durable before the answer: tasks/get right after it must resolve.
	if err := m.cfg.Store.Put(ctx, rec); err != nil {
		cancel(nil)
		m.unclaim(run)
		return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: storing the task: %v", err)
	}
	run.stored.Store(true)
	run.stopExpire = m.clock.AfterFunc(rec.TTL, func() { cancel(errExpired) })
	return run, nil
}

// Go runs a task begun with Begin in a goroutine of the Manager's
// (Shutdown cancels it and waits for it). rec is the Manager's from
// then on: the caller must not use it again.
func (m *Manager) Go(run *Run, rec *store.TaskRecord, job Job) {
	go func() { // owned by the Manager: claim counted it
		defer func() {
			run.stopExpire()
			if rec.Status.Terminal() { // settled: the loop no longer writes rec
				run.final = rec
			}
			close(run.done)
			m.mu.Lock()
			delete(m.runs, run.ID)
			m.mu.Unlock()
			m.keepNotes(run)
			run.cancel(nil)
			m.kickBeat()
			m.wg.Done()
		}()
		m.loop(run.ctx, run, rec, job)
	}()
}

// loop runs the task's handler until the task is terminal: again after
// each round of input, as a multi round-trip handler runs again after
// each retry.
func (m *Manager) loop(ctx context.Context, run *Run, rec *store.TaskRecord, job Job) {
	for {
		st := job.Step(ctx)
		m.drainNotes(run) // what it reported goes before what follows
		if m.endedBy(ctx, run, rec) || errors.Is(context.Cause(ctx), errGone) {
			return
		}
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), errCancelled) {
			m.Settle(run, rec, mcp.TaskCancelled, "", nil, nil)
			return
		}
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), errExpired) {
			m.forgetSettled(rec.ID)
			_ = m.cfg.Store.Delete(context.Background(), rec.ID)
			return
		}
		switch st.Kind {
		case StepAgain:
			continue
		case StepInput:
			if !job.Gather(ctx, run, rec) {
				if m.endedBy(ctx, run, rec) || errors.Is(context.Cause(ctx), errGone) {
					return
				}
				if errors.Is(context.Cause(ctx), errExpired) {
					m.forgetSettled(rec.ID)
					_ = m.cfg.Store.Delete(context.Background(), rec.ID)
					return
				}
				if ctx.Err() != nil {
					m.Settle(run, rec, mcp.TaskCancelled, "", nil, nil)
				}
				return
			}
			continue
		case StepFailed:
			m.Settle(run, rec, mcp.TaskFailed, st.Message, nil, st.Error)
		default:
			m.Settle(run, rec, mcp.TaskCompleted, "", st.Result, nil)
		}
		return
	}
}

// endedBy settles a task whose server is shutting down as failed, and
// reports whether that is why ctx ended.
func (m *Manager) endedBy(ctx context.Context, run *Run, rec *store.TaskRecord) bool {
	if ctx.Err() == nil || !errors.Is(context.Cause(ctx), errShutdown) {
		return false
	}
	const msg = "the server shut down before the task finished"
	m.Settle(run, rec, mcp.TaskFailed, msg, nil, &mcp.TaskError{Code: mcp.CodeInternalError, Message: "Internal error: " + msg})
	return true
}

// AskInput puts a 2025-11-25 task in input_required and asks the
// client each request of keys (requests, with forms), as the legacy
// shim does, on the stream of a tasks/result request in flight (waiting
// for one), the requests tagged with related-task _meta. It returns the
// answers, or false when the task ended meanwhile (cancelled, expired,
// or failed: a failure is settled here). The caller sets the status
// back to working once it has taken the answers.
func (m *Manager) AskInput(ctx context.Context, run *Run, rec *store.TaskRecord, keys []string, requests mcp.InputRequests, forms map[string]jsontext.Value) (mcp.InputResponses, bool) {
	m.SetStatus(context.Background(), run, rec, mcp.TaskInputRequired, requests)
	answers := make(mcp.InputResponses, len(keys))
	for i := 0; i < len(keys); {
		k := keys[i]
		ir := requests[k]
		ir.Params = tasks.WithRelated(ir.Params, rec.ID)
		c := run.waitCarrier(ctx)
		if c == nil {
			return nil, false
		}
		legCtx, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(c.Ctx, cancel)
		raw, err := c.Ask(legCtx, ir, forms[k])
		stop()
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, false
			}
			if c.Ctx.Err() != nil {
				continue // that tasks/result went away: ask on the next
			}
			e, ok := jsonrpc.AsError(err)
			if !ok {
				e = jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: %v", err)
			}
			m.Settle(run, rec, mcp.TaskFailed, "", nil, &mcp.TaskError{Code: e.Code, Message: e.Message})
			return nil, false
		}
		answers[k] = raw
		i++
	}
	if len(answers) == 0 {
		answers = nil
	}
	return answers, true
}

// AwaitInput puts a task of the 2026 extension in input_required until
// tasks/update (Update) has answered every request asked (key →
// method; requests is what the record lists, forms their elicitation
// forms), and returns the answers; false when the task ended
// meanwhile. The caller sets the status back to working once it has
// taken the answers.
func (m *Manager) AwaitInput(ctx context.Context, run *Run, rec *store.TaskRecord, asked map[string]string, requests mcp.InputRequests, forms map[string]jsontext.Value) (mcp.InputResponses, bool) {
	run.mu.Lock()
	run.asked, run.forms = asked, forms
	run.answers = nil
	run.resume = make(chan struct{})
	resume := run.resume
	run.mu.Unlock()
	if len(requests) > 0 {
		m.SetStatus(context.Background(), run, rec, mcp.TaskInputRequired, requests)
		select {
		case <-resume:
		case <-ctx.Done():
			return nil, false
		}
	}
	run.mu.Lock()
	answers := run.answers
	run.answers, run.asked, run.forms, run.resume = nil, nil, nil, nil
	run.mu.Unlock()
	return answers, true
}

// SetStatus records a non-terminal status change and tells whoever
// listens; a task already terminal stays as it is.
func (m *Manager) SetStatus(ctx context.Context, run *Run, rec *store.TaskRecord, status mcp.TaskStatus, requests mcp.InputRequests) {
	now := m.clock.Now()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), StoreTimeout)
	defer cancel()
	cur, changed, err := m.cfg.Store.Update(ctx, rec.ID, func(r *store.TaskRecord) bool {
		if r.Status.Terminal() {
			return false
		}
		if r.Status == status && len(r.InputRequests) == 0 && len(requests) == 0 {
			return false // already so: nothing to store or announce
		}
		r.Status, r.InputRequests, r.LastUpdatedAt = status, requests, now
		r.StatusMessage = ""
		if status == mcp.TaskInputRequired {
			r.StatusMessage = "waiting for input"
		}
		return true
	})
	if err != nil {
		m.cfg.Log.Warn("server: storing a task", "task", rec.ID, "err", err)
		return
	}
	*rec = *cur
	if changed {
		m.host.Announce(run, cur)
		m.tellPeers(cur)
	}
}

// Settle records the terminal state of a task, unless it already has
// one (the store's compare-and-set decides between a cancel and a
// completion that race, on any instance). While the store is
// unreachable it tries again, backing off, until it answers, the task
// is gone from it, or the server shuts down: a completed result is
// not dropped because the store blinked. run may be nil (no handler
// runs here).
func (m *Manager) Settle(run *Run, rec *store.TaskRecord, status mcp.TaskStatus, msg string, result jsontext.Value, terr *mcp.TaskError) {
	now := m.clock.Now()
	pause := 50 * time.Millisecond
	// A legacy session's status notification may ride the peers'
	// broadcast of the settled record, which every instance receives:
	// the one holding the session's stream sends it (PeerMsg.Note). With
	// no run here (a cancel whose owner is out of reach) that broadcast is
	// the only way the session hears of the end.
	note := (run == nil || run.Origin != nil && run.Origin.Ready()) && m.host.CastsStatus()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
		cur, changed, noted, err := m.updateTelling(ctx, rec.ID, note, func(r *store.TaskRecord) bool {
			if r.Status.Terminal() {
				return false
			}
			r.Status, r.StatusMessage, r.Result, r.Error = status, msg, result, terr
			r.InputRequests, r.LastUpdatedAt = nil, now
			return true
		})
		cancel()
		if err == nil {
			*rec = *cur
			m.keepSettled(cur) // terminal, ours alone: rec holds a copy
			if changed {
				// The peers were told first (updateTelling): their copy
				// of the final record (and the wake-up of their waiting
				// tasks/result requests) is what a client's next request
				// elsewhere needs; the status notification is advisory.
				m.tellSession(run, cur, noted)
			}
			return
		}
		if errors.Is(err, store.ErrTaskNotFound) {
			return
		}
		m.cfg.Log.Warn("server: storing a task's outcome; trying again", "task", rec.ID, "status", status, "err", err)
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-m.stop:
			t.Stop()
			m.cfg.Log.Error("server: a task's outcome was not stored before shutdown", "task", rec.ID, "status", status)
			return
		}
		pause = min(2*pause, settleRetryMax)
	}
}
