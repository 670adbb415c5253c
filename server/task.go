package server

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/store"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/seam"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
)

// Task defaults.
const (
	// DefaultTaskTTL is how long a task is kept when Options.TaskTTL is
	// zero and the client asks for nothing shorter.
	DefaultTaskTTL = time.Hour
	// DefaultTaskPollInterval is the polling period suggested to clients.
	DefaultTaskPollInterval = 500 * time.Millisecond
)

// errTaskCancelled is the cause of a task's context after tasks/cancel.
var errTaskCancelled = errors.New("server: task cancelled")

// errTaskExpired is the cause of a task's context once its TTL elapsed.
var errTaskExpired = errors.New("server: task expired")

// errTaskGone is the cause of a task's context when its record is gone
// from the store (lost with it): there is nothing left to record.
var errTaskGone = errors.New("server: the task's record is gone")

// asyncWork is what ContinueAsTask returns: the rest of a tool's work.
type asyncWork struct{ fn ToolHandler }

func (*asyncWork) Error() string { return "server: continue as a task" }

// asAsync reports whether err is, or wraps, what ContinueAsTask returned.
func asAsync(err error) (*asyncWork, bool) {
	if err == nil {
		return nil, false // most calls: no allocation for errors.As's target
	}
	var aw *asyncWork
	return aw, errors.As(err, &aw)
}

// ContinueAsTask is returned by a tool handler (registered with the
// TaskOnDemand option) that has gathered what it needs in the request —
// for example through NeedInput rounds — and now wants the rest of its
// work, fn, to run as a task. When the request may be answered with a
// task (2026: the client declared the tasks extension; 2025-11-25: the
// request carried params.task), the server creates one, answers at once
// and runs fn detached; otherwise fn runs now, in the request. The
// handler may wrap the error (fmt.Errorf with %w): it is found as
// errors.As finds it.
func ContinueAsTask(fn ToolHandler) error { return &asyncWork{fn: fn} }

// ToolOption configures a tool at registration. Options come from the
// functions of this package (TaskOnDemand); the zero ToolOption does
// nothing.
type ToolOption struct{ apply func(*toolEntry) }

// TaskOnDemand makes a task-supporting tool's handler run in the request
// first, deciding itself when to become a task by returning
// ContinueAsTask. Without it, a call that may be a task is one from the
// start.
func TaskOnDemand() ToolOption {
	return ToolOption{apply: func(e *toolEntry) { e.onDemand = true }}
}

// taskSupport returns the tool's declared task support.
func (e *toolEntry) taskSupport() string {
	if e.tool.Execution == nil || e.tool.Execution.TaskSupport == "" {
		return mcp.TaskSupportForbidden
	}
	return e.tool.Execution.TaskSupport
}

// taskRun is the live part of a task in this process.
type taskRun struct {
	id      string
	cancel  context.CancelCauseFunc
	done    chan struct{} // closed once the task is terminal
	session *Session      // legacy: where notifications/tasks/status go
	stored  atomic.Bool   // the record is in the store: the heartbeat renews it

	mu      sync.Mutex
	answers mcp.InputResponses // every answer received so far
	// carriers are the 2025 tasks/result requests in flight: a legacy
	// task's input requests travel on one of them (SEP-2260: a
	// server→client request belongs to a client request in progress);
	// arrived is closed and replaced when one arrives.
	carriers []*carrier
	arrived  chan struct{}
	asked    map[string]string         // open input requests: key → method
	forms    map[string]jsontext.Value // their elicitation forms (Input.forms)
	resume   chan struct{}             // closed when every open request is answered
	// notes are a legacy task's notifications waiting for a tasks/result
	// request to carry them (task_notes.go); flushing is set while one
	// goroutine sends them.
	notes    []taskNote
	flushing bool
	flushed  chan struct{} // closed when flushing ends, once asked for (drainNotes)
}

// carrier is a tasks/result request in flight: here (req), or on
// another instance that lent it (ask sends an input request there).
type carrier struct {
	ctx context.Context
	req *Request
	ask func(ctx context.Context, ir mcp.InputRequest, form jsontext.Value) (jsontext.Value, error)
	// notify sends a task's notification on a request another instance
	// lent (nil for a request here: req.out sends it); an error means
	// it was not sent.
	notify func(method string, params any) error
}

// addCarrier registers a tasks/result request; the returned func removes it.
func (run *taskRun) addCarrier(c *carrier) func() {
	run.mu.Lock()
	run.carriers = append(run.carriers, c)
	if run.arrived != nil {
		close(run.arrived)
		run.arrived = nil
	}
	run.mu.Unlock()
	return func() {
		run.mu.Lock()
		run.carriers = slices.DeleteFunc(run.carriers, func(x *carrier) bool { return x == c })
		run.mu.Unlock()
	}
}

// waitCarrier returns the newest live tasks/result request, waiting for
// one; nil when ctx ends first.
func (run *taskRun) waitCarrier(ctx context.Context) *carrier {
	for {
		run.mu.Lock()
		for i := len(run.carriers) - 1; i >= 0; i-- {
			if c := run.carriers[i]; c.ctx.Err() == nil {
				run.mu.Unlock()
				return c
			}
		}
		if run.arrived == nil {
			run.arrived = make(chan struct{})
		}
		arrived := run.arrived
		run.mu.Unlock()
		select {
		case <-arrived:
		case <-ctx.Done():
			return nil
		}
	}
}

// taskTable is the server's task machinery. mu guards the maps and flags;
// no store call or other I/O is made while it is held (a record's
// transitions are the store's compare-and-set, TaskStore.Update).
type taskTable struct {
	mu       sync.Mutex
	runs     map[string]*taskRun
	instance string     // the owner part of this server's task ids
	peers    seam.Peers // the other instances, when a carrier attached them
	closing  bool       // Shutdown began: no new task
	stop     chan struct{}
	wg       sync.WaitGroup // task goroutines, the heartbeat, peer deliveries
	beating  bool           // the heartbeat goroutine runs
	kick     chan struct{}  // wakes the heartbeat when a run or watch ends
	watch    map[string]*taskWatch
	ended    map[string]*taskRun           // ended legacy tasks whose notifications wait for a tasks/result
	endOrder []string                      // their ids, oldest first (bounded by maxTasks)
	lent     map[string]*carrier           // tasks/result requests lent to owners, by tag
	borrowed map[string]context.CancelFunc // carriers lent by other instances, by tag
	clock    tasks.Clock                   // the wall clock, unless a test sets it before serving
	beat     func()                        // tests: called at the end of each heartbeat
}

func (s *Server) taskStore() store.TaskStore { return s.opts.TaskStore }

// requestor returns the principal a task request acts for: the
// request's own, else its legacy session's.
func requestor(ctx context.Context, req *Request) string {
	if p := principalFrom(ctx); p != "" {
		return p
	}
	if req.session != nil {
		return req.session.principalOf() // under its lock: a cluster's restore may replace it
	}
	return ""
}

// hasTaskTools reports whether any registered tool supports tasks.
func (s *Server) hasTaskTools() bool {
	for _, e := range s.tools.all() {
		if e.taskSupport() != mcp.TaskSupportForbidden {
			return true
		}
	}
	return false
}

// startTask creates a task for a tools/call and runs fn detached from
// the request; it returns the answer to the request.
func (s *Server) startTask(ctx context.Context, req *Request, p *mcp.CallToolParams, fn ToolHandler) (any, error) {
	now := s.tasks.clock.Now()
	ttl := s.opts.TaskTTL
	if ttl <= 0 {
		ttl = DefaultTaskTTL
	}
	ttl = req.era().tasks().TTL(p, ttl)
	me := s.instance()
	rec := &store.TaskRecord{
		ID: tasks.NewID(me), Principal: requestor(ctx, req), Modern: req.era().tasks().Modern(),
		Status: mcp.TaskWorking, CreatedAt: now, LastUpdatedAt: now,
		TTL: ttl, PollInterval: DefaultTaskPollInterval,
		Owner: me, LeaseUntil: now.Add(s.taskLease()),
	}
	if req.session != nil {
		rec.SessionID = req.session.ID()
	}
	tctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	run := &taskRun{id: rec.ID, cancel: cancel, done: make(chan struct{}), session: req.session}
	if err := s.claim(run); err != nil {
		cancel(nil)
		return nil, err
	}
	// Durable before the answer: tasks/get right after it must resolve.
	if err := s.taskStore().Put(ctx, rec); err != nil {
		cancel(nil)
		s.unclaim(run)
		return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: storing the task: %v", err)
	}
	run.stored.Store(true)
	stopExpire := s.tasks.clock.AfterFunc(ttl, func() { cancel(errTaskExpired) })

	treq := &Request{
		srv: s, session: req.session, version: req.version, caps: req.caps, info: req.info,
		meta: req.meta, eraID: req.eraID, inputs: req.inputs, state: req.state,
		out: discardOut{},
	}
	if req.call != nil { // the task's own: its rounds change the kept answers
		call := *req.call
		treq.call = &call
	}
	if last, ok := req.sentProgress(); ok { // a request continued as a task (ContinueAsTask): steps sent stay sent
		treq.resumeProgress(last)
	}
	if req.session != nil {
		treq.out = sessionOut{req.session}
	}
	if rec.Modern {
		treq.out = modernTaskOut{s: s, run: run, id: rec.ID}
	} else {
		treq.out = legacyTaskOut{s: s, run: run, call: treq.out}
	}
	answer := req.era().tasks().Created(rec)
	go func() { // owned by the server: Shutdown cancels it and waits (claim counted it)
		defer func() {
			stopExpire()
			close(run.done)
			s.tasks.mu.Lock()
			delete(s.tasks.runs, rec.ID)
			s.tasks.mu.Unlock()
			s.keepNotes(run)
			cancel(nil)
			s.kickBeat()
			s.tasks.wg.Done()
		}()
		s.runTask(tctx, run, rec, treq, p, fn)
	}()
	return answer, nil
}

// discardOut is the outbound of a session-less legacy task: no request
// can reach its client outside a tasks/result (task_notes.go).
type discardOut struct{}

func (discardOut) Call(context.Context, mcp.ID, string, any, any) error { return ErrModernRequest }
func (discardOut) Notify(context.Context, mcp.ID, string, any) error    { return nil }

// runTask runs the task's handler until the task is terminal: again
// after each round of input, as a multi round-trip handler runs again
// after each retry.
func (s *Server) runTask(ctx context.Context, run *taskRun, rec *store.TaskRecord, treq *Request, p *mcp.CallToolParams, fn ToolHandler) {
	for {
		treq.newRun()
		res, err := callHandler(ctx, fn, &CallToolRequest{Request: treq, Params: p})
		s.drainNotes(run) // what it reported goes before what follows
		if s.endedBy(ctx, run, rec) || errors.Is(context.Cause(ctx), errTaskGone) {
			return
		}
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), errTaskCancelled) {
			s.settle(run, rec, mcp.TaskCancelled, "", nil, nil)
			return
		}
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), errTaskExpired) {
			_ = s.taskStore().Delete(context.Background(), rec.ID)
			return
		}
		if aw, ok := asAsync(err); ok { // already a task: just go on
			fn = aw.fn
			continue
		}
		if in, ok := asInput(err); ok {
			if verr := in.validate(); verr != nil {
				s.settle(run, rec, mcp.TaskFailed, "", nil, &mcp.TaskError{Code: mcp.CodeInternalError, Message: "Internal error: " + verr.Error()})
				return
			}
			if !treq.taskActions().gatherTaskInput(ctx, s, run, rec, treq, in) {
				if s.endedBy(ctx, run, rec) || errors.Is(context.Cause(ctx), errTaskGone) {
					return
				}
				if errors.Is(context.Cause(ctx), errTaskExpired) {
					_ = s.taskStore().Delete(context.Background(), rec.ID)
					return
				}
				if ctx.Err() != nil {
					s.settle(run, rec, mcp.TaskCancelled, "", nil, nil)
				}
				return
			}
			continue
		}
		if rpcErr, ok := jsonrpc.AsError(err); ok {
			s.settle(run, rec, mcp.TaskFailed, rpcErr.Message, nil, &mcp.TaskError{Code: rpcErr.Code, Message: rpcErr.Message, Data: rpcErr.Data})
			return
		}
		if err != nil {
			res = errorResult(err.Error())
		}
		if res == nil {
			res = &mcp.CallToolResult{}
		}
		raw, merr := json.Marshal(res)
		if merr != nil {
			s.settle(run, rec, mcp.TaskFailed, "", nil, &mcp.TaskError{Code: mcp.CodeInternalError, Message: "Internal error: encoding the result: " + merr.Error()})
			return
		}
		s.settle(run, rec, mcp.TaskCompleted, "", raw, nil)
		return
	}
}

// callHandler runs a task's handler, turning a panic into -32603.
func callHandler(ctx context.Context, fn ToolHandler, req *CallToolRequest) (res *mcp.CallToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: the tool panicked: %v", v)
		}
	}()
	return fn(ctx, req)
}

// askTaskInput puts a 2025-11-25 task in input_required until every
// request of in is answered, then back to working with the answers on
// treq: it asks the client as the legacy shim does, on the stream of a
// tasks/result request in flight (waiting for one), the requests tagged
// with related-task _meta. It reports false when the task ended
// meanwhile (cancelled, expired, or failed).
func (s *Server) askTaskInput(ctx context.Context, run *taskRun, rec *store.TaskRecord, treq *Request, in *Input) bool {
	if s.opts.DisableLegacyShim {
		s.settle(run, rec, mcp.TaskFailed, "", nil, &mcp.TaskError{Code: mcp.CodeInternalError, Message: "Internal error: the task needs input and the legacy shim is disabled"})
		return false
	}
	if err := treq.Require(in.Needed()); err != nil {
		e, _ := jsonrpc.AsError(err)
		s.settle(run, rec, mcp.TaskFailed, "", nil, &mcp.TaskError{Code: e.Code, Message: e.Message})
		return false
	}
	s.setStatus(context.Background(), run, rec, mcp.TaskInputRequired, in.requests)
	// Earlier rounds' answers stay, as in the shim (keptAnswers).
	kept := keptAnswers(treq, in)
	answers := make(mcp.InputResponses, len(in.keys))
	for i := 0; i < len(in.keys); {
		k := in.keys[i]
		ir := in.requests[k]
		ir.Params = tasks.WithRelated(ir.Params, rec.ID)
		c := run.waitCarrier(ctx)
		if c == nil {
			return false
		}
		legCtx, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(c.ctx, cancel)
		var raw jsontext.Value
		var err error
		if c.ask != nil {
			raw, err = c.ask(legCtx, ir, in.forms[k])
		} else {
			raw, err = s.leg(legCtx, c.req, ir, in.forms[k])
		}
		stop()
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return false
			}
			if c.ctx.Err() != nil {
				continue // that tasks/result went away: ask on the next
			}
			e, ok := jsonrpc.AsError(err)
			if !ok {
				e = jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: %v", err)
			}
			s.settle(run, rec, mcp.TaskFailed, "", nil, &mcp.TaskError{Code: e.Code, Message: e.Message})
			return false
		}
		answers[k] = raw
		i++
	}
	if len(answers) == 0 {
		answers = nil
	}
	treq.inputs, treq.state = answers, in.state
	treq.setKept(kept)
	s.setStatus(context.Background(), run, rec, mcp.TaskWorking, nil)
	return true
}

// awaitTaskInput puts a task of the 2026 extension in input_required
// until tasks/update has answered every request of in, then back to
// working with the answers on treq. It reports false when the task
// ended meanwhile.
func (s *Server) awaitTaskInput(ctx context.Context, run *taskRun, rec *store.TaskRecord, treq *Request, in *Input) bool {
	run.mu.Lock()
	run.asked, run.forms = in.asked(), in.forms
	run.answers = nil
	run.resume = make(chan struct{})
	resume := run.resume
	run.mu.Unlock()
	if len(in.requests) > 0 {
		s.setStatus(context.Background(), run, rec, mcp.TaskInputRequired, in.requests)
		select {
		case <-resume:
		case <-ctx.Done():
			return false
		}
	}
	run.mu.Lock()
	// Earlier rounds' answers stay, as in the shim (keptAnswers), apart
	// from this round's.
	kept := keptAnswers(treq, in)
	treq.inputs, treq.state = run.answers, in.state
	treq.setKept(kept)
	run.answers, run.asked, run.forms, run.resume = nil, nil, nil, nil
	run.mu.Unlock()
	// Usually a no-op: updateTask stored working already. Not when that
	// update came before this round's input_required was stored, or its
	// write failed.
	s.setStatus(context.Background(), run, rec, mcp.TaskWorking, nil)
	return true
}

// setStatus records a non-terminal status change and tells whoever
// listens; a task already terminal stays as it is.
func (s *Server) setStatus(ctx context.Context, run *taskRun, rec *store.TaskRecord, status mcp.TaskStatus, requests mcp.InputRequests) {
	now := s.tasks.clock.Now()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskStoreTimeout)
	defer cancel()
	cur, changed, err := s.taskStore().Update(ctx, rec.ID, func(r *store.TaskRecord) bool {
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
		s.log.Warn("server: storing a task", "task", rec.ID, "err", err)
		return
	}
	*rec = *cur
	if changed {
		s.announceTask(run, cur)
		s.tellPeers(cur.ID)
	}
}

// settle records the terminal state of a task, unless it already has
// one (the store's compare-and-set decides between a cancel and a
// completion that race, on any instance). While the store is
// unreachable it tries again, backing off, until it answers, the task
// is gone from it, or the server shuts down: a completed result is
// not dropped because the store blinked.
func (s *Server) settle(run *taskRun, rec *store.TaskRecord, status mcp.TaskStatus, msg string, result jsontext.Value, terr *mcp.TaskError) {
	now := s.tasks.clock.Now()
	pause := 50 * time.Millisecond
	for {
		ctx, cancel := context.WithTimeout(context.Background(), taskStoreTimeout)
		cur, changed, err := s.taskStore().Update(ctx, rec.ID, func(r *store.TaskRecord) bool {
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
			if changed {
				s.announceTask(run, cur)
				s.tellPeers(cur.ID)
			}
			return
		}
		if errors.Is(err, store.ErrTaskNotFound) {
			return
		}
		s.log.Warn("server: storing a task's outcome; trying again", "task", rec.ID, "status", status, "err", err)
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-s.tasks.stop:
			t.Stop()
			s.log.Error("server: a task's outcome was not stored before shutdown", "task", rec.ID, "status", status)
			return
		}
		pause = min(2*pause, settleRetryMax)
	}
}

// announceTask sends a task's new status to whoever listens, as the
// task's era has it (taskActions.announceTask).
func (s *Server) announceTask(run *taskRun, rec *store.TaskRecord) {
	taskEra(rec).announceTask(s, run, rec)
}

func (s *Server) taskRun(id string) *taskRun {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	return s.tasks.runs[id]
}

// tasksMethod serves tasks/* for both eras: the 2026 extension's
// tasks/get, tasks/update and tasks/cancel (only for requests that
// declared the extension: -32021 otherwise) and the 2025-11-25 core
// tasks/get, tasks/result, tasks/list and tasks/cancel.
func (s *Server) tasksMethod(ctx context.Context, req *Request, name string, wp *wireParams) (any, error) {
	if err := req.era().tasks().Check(hasTasksExtension(req)); err != nil {
		return nil, err
	}
	req.meta = wp.Meta
	if name == mcp.MethodTasksList {
		return s.listTasks(ctx, req, wp)
	}
	rec, err := s.lookupTask(ctx, req, wp.TaskID)
	if err != nil {
		return nil, err
	}
	switch name {
	case mcp.MethodTasksGet:
		return req.era().tasks().Render(rec), nil
	case mcp.MethodTasksUpdate:
		if owner := s.remoteOwner(rec); owner != "" && !rec.Status.Terminal() {
			return s.remoteUpdate(ctx, rec, owner, wp.InputResponses)
		}
		return s.updateTask(ctx, rec, wp.InputResponses)
	case mcp.MethodTasksCancel:
		return req.taskActions().cancelTask(ctx, s, rec)
	case mcp.MethodTasksResult:
		return s.taskResult(ctx, req, rec)
	}
	return nil, jsonrpc.Errorf(mcp.CodeMethodNotFound, "Method not found: %s", name)
}

// updateTask hands answers to a task waiting for input (2026). Answers
// to keys the task did not ask (or no longer asks) are ignored, as
// SEP-2322 has it; the task resumes once every open request is answered.
func (s *Server) updateTask(ctx context.Context, rec *store.TaskRecord, responses mcp.InputResponses) (any, error) {
	run := s.taskRun(rec.ID)
	if run == nil {
		return &mcp.EmptyResult{}, nil
	}
	run.mu.Lock()
	if run.asked == nil || run.resume == nil {
		run.mu.Unlock()
		return &mcp.EmptyResult{}, nil
	}
	got, err := checkResponses(responses, run.asked, run.forms)
	if err != nil || len(got) == 0 {
		run.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return &mcp.EmptyResult{}, nil
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
		// listeners and peers (each bounded by taskStoreTimeout).
		resume := run.resume
		run.resume = nil
		run.mu.Unlock()
		s.setStatus(ctx, run, rec, mcp.TaskWorking, nil)
		close(resume)
		return &mcp.EmptyResult{}, nil
	}
	run.mu.Unlock()
	// Some requests are still open: the record lists only those. The
	// store call is made with no lock held.
	now := s.tasks.clock.Now()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskStoreTimeout)
	defer cancel()
	cur, changed, err := s.taskStore().Update(ctx, rec.ID, func(r *store.TaskRecord) bool {
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
		return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: storing the task: %v", err)
	}
	if changed {
		s.announceTask(run, cur)
		s.tellPeers(cur.ID)
	}
	return &mcp.EmptyResult{}, nil
}

// stopTask cancels the handler of a task running in this process and
// returns its run; nil when none runs here.
func (s *Server) stopTask(id string) *taskRun {
	run := s.taskRun(id)
	if run != nil {
		run.cancel(errTaskCancelled)
	}
	return run
}

// taskResult answers tasks/result (2025-11-25): it waits until the task
// is terminal and returns what the request would have, with related-task
// _meta — the result, or the JSON-RPC error.
func (s *Server) taskResult(ctx context.Context, req *Request, rec *store.TaskRecord) (any, error) {
	if run := s.taskRun(rec.ID); run != nil {
		defer run.addCarrier(&carrier{ctx: ctx, req: req})()
		run.flushNotes() // what the task reported while no tasks/result was in flight
		select {
		case <-run.done:
			run.flushNotes() // its last steps, before its outcome
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	} else if left := s.takeNotes(rec.ID); left != nil {
		// The task ended before any tasks/result came: this one carries
		// what it reported meanwhile, before its outcome.
		defer left.addCarrier(&carrier{ctx: ctx, req: req})()
		left.flushNotes()
	} else if owner := s.remoteOwner(rec); owner != "" && !rec.Status.Terminal() {
		if _, err := s.remoteResult(ctx, req, rec, owner); err != nil {
			return nil, err
		}
	}
	id := rec.ID
	rec, err := s.taskStore().Get(ctx, id)
	if errors.Is(err, store.ErrTaskNotFound) {
		return nil, unknownTask(id)
	} else if err != nil {
		return nil, s.taskStoreFailed(id, err)
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

// listTasks answers tasks/list (2025-11-25): the requestor's own tasks
// (its principal's; without authentication, its session's).
func (s *Server) listTasks(ctx context.Context, req *Request, wp *wireParams) (any, error) {
	sid := ""
	if req.session != nil {
		sid = req.session.ID()
	}
	recs, err := s.taskStore().List(ctx, requestor(ctx, req), sid)
	if err != nil {
		return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: listing tasks: %v", err)
	}
	start := 0
	if wp.Cursor != nil {
		last, err := decodeCursor(*wp.Cursor)
		if err != nil {
			return nil, jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: invalid cursor")
		}
		start = len(recs)
		for i, r := range recs {
			if r.ID == last {
				start = i + 1
				break
			}
		}
	}
	res := &mcp.ListTasksResult{Tasks: []mcp.Task{}}
	size := s.pageSize()
	for i := start; i < len(recs) && len(res.Tasks) < size; i++ {
		res.Tasks = append(res.Tasks, tasks.CoreTask(s.reapLapsed(ctx, recs[i])))
		if len(res.Tasks) == size && i+1 < len(recs) {
			c := encodeCursor(recs[i].ID)
			res.NextCursor = &c
		}
	}
	return res, nil
}
