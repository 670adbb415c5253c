package server

import (
	"context"
	"errors"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/seam"
	"github.com/mcpkit/mcpkit/server/internal/taskrun"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
	"github.com/mcpkit/mcpkit/store"

	"github.com/go-json-experiment/json/jsontext"
)

// Tasks (docs/design/tasks.md). The machinery that runs them — the
// task table, start, run loop and settling, input rounds, the lease and
// heartbeat, the work shared with other instances, the notification
// queue — is server/internal/taskrun's Manager, one per Server (s.tasks,
// made in New). This file is the public API and the hand-off: a
// tools/call that becomes a task (startTask, a taskJob running the
// handler with the task's Request) and the tasks/* methods
// (task_methods.go), with what the Manager asks of the server
// (taskHost).

// Task defaults and limits (docs/design/tasks.md,
// docs/design/multi-instance.md).
const (
	// DefaultTaskTTL is how long a task is kept when Options.TaskTTL is
	// zero and the client asks for nothing shorter.
	DefaultTaskTTL = time.Hour
	// DefaultTaskPollInterval is the polling period suggested to clients.
	DefaultTaskPollInterval = 500 * time.Millisecond
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
	// DefaultTaskNotificationQueue is how many notifications a 2025-11-25
	// task holds for its client while no tasks/result request is in
	// flight, when Options.TaskNotificationQueue is zero. Past it the
	// oldest is dropped: progress only increases, so the newest steps
	// matter most.
	DefaultTaskNotificationQueue = 256
	// DefaultSettledTasks is how many terminal task records a server keeps
	// in memory to answer tasks/get and tasks/result without the
	// TaskStore, when Options.SettledTasks is zero.
	DefaultSettledTasks = 1024
	// DefaultSettledTaskBytes bounds the bytes (results, errors) of those
	// records when Options.SettledTaskBytes is zero or negative.
	DefaultSettledTaskBytes = 8 << 20
)

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

// Shutdown stops the server's tasks: no new task starts, every running
// task's handler is cancelled, and each is recorded failed ("the server
// shut down before the task finished") unless it settles otherwise
// first. It waits for the task goroutines to end, or for ctx. Carriers
// shut down separately (streamhttp.Handler.Shutdown).
func (s *Server) Shutdown(ctx context.Context) error { return s.tasks.Shutdown(ctx) }

// newTasks makes the server's task Manager from its options (New, once
// the logger and the task store are set).
func (s *Server) newTasks() *taskrun.Manager {
	cfg := taskrun.Config{
		Store: s.opts.TaskStore, Log: s.log,
		MaxTasks: s.opts.MaxTasks, Lease: s.opts.TaskLease, NoteQueue: s.opts.TaskNotificationQueue,
	}
	if cfg.MaxTasks <= 0 {
		cfg.MaxTasks = DefaultMaxTasks
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultTaskLease
	}
	if cfg.NoteQueue <= 0 {
		cfg.NoteQueue = DefaultTaskNotificationQueue
	}
	cfg.SettledRecords, cfg.SettledBytes = s.opts.SettledTasks, s.opts.SettledTaskBytes
	if cfg.SettledRecords == 0 {
		cfg.SettledRecords = DefaultSettledTasks
	}
	if cfg.SettledBytes <= 0 {
		cfg.SettledBytes = DefaultSettledTaskBytes
	}
	return taskrun.New(cfg, taskHost{s})
}

// taskHost is what the task Manager asks of the server (taskrun.Host).
type taskHost struct{ s *Server }

func (h taskHost) Announce(run *taskrun.Run, rec *store.TaskRecord) {
	taskEra(rec).announceTask(h.s, run, rec)
}

func (h taskHost) HasListener(id string) bool { return h.s.hasTaskListener(id) }

func (h taskHost) NotifyListeners(rec *store.TaskRecord) { h.s.notifyTaskListeners(rec) }

func (h taskHost) CastsStatus() bool { return !h.s.intercepts() && h.s.opts.Observe == nil }

func (taskHost) CheckResponses(got mcp.InputResponses, asked map[string]string, forms map[string]jsontext.Value) (mcp.InputResponses, error) {
	return checkResponses(got, asked, forms)
}

// attachPeers implements seam.Protocol.AttachPeers.
func (s *Server) attachPeers(p seam.Peers) (seam.PeerHandler, func()) { return s.tasks.AttachPeers(p) }

// taskSupport returns the tool's declared task support.
func (e *toolEntry) taskSupport() string {
	if e.tool.Execution == nil || e.tool.Execution.TaskSupport == "" {
		return mcp.TaskSupportForbidden
	}
	return e.tool.Execution.TaskSupport
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

// sessionOrigin is a legacy session as the origin of its tasks.
type sessionOrigin struct{ ss *Session }

func (o sessionOrigin) Ready() bool { return o.ss.ready() }

func (o sessionOrigin) Notify(ctx context.Context, method string, params any) error {
	return o.ss.notify(ctx, method, params)
}

// startTask creates a task for a tools/call and runs fn detached from
// the request; it returns the answer to the request.
func (s *Server) startTask(ctx context.Context, req *Request, p *mcp.CallToolParams, fn ToolHandler) (any, error) {
	ttl := s.opts.TaskTTL
	if ttl <= 0 {
		ttl = DefaultTaskTTL
	}
	rec := &store.TaskRecord{
		Principal: requestor(ctx, req), Modern: req.era().tasks().Modern(),
		TTL: req.era().tasks().TTL(p, ttl), PollInterval: DefaultTaskPollInterval,
	}
	var origin taskrun.Origin
	if req.session != nil {
		rec.SessionID = req.session.ID()
		origin = sessionOrigin{req.session}
	}
	run, err := s.tasks.Begin(ctx, rec, origin)
	if err != nil {
		return nil, err
	}
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
		treq.out = modernTaskOut{m: s.tasks, run: run, id: rec.ID}
	} else {
		treq.out = legacyTaskOut{m: s.tasks, run: run, call: treq.out}
	}
	answer := req.era().tasks().Created(rec)
	s.tasks.Go(run, rec, &taskJob{s: s, treq: treq, p: p, fn: fn})
	return answer, nil
}

// taskJob is a task's handler as the Manager runs it (taskrun.Job):
// with the task's own Request, again after each round of input.
type taskJob struct {
	s    *Server
	treq *Request
	p    *mcp.CallToolParams
	fn   ToolHandler
	in   *Input // the input the last step asked for
}

func (j *taskJob) Step(ctx context.Context) taskrun.Step {
	j.treq.newRun()
	res, err := callHandler(ctx, j.fn, &CallToolRequest{Request: j.treq, Params: j.p})
	if aw, ok := asAsync(err); ok { // already a task: just go on
		j.fn = aw.fn
		return taskrun.Step{Kind: taskrun.StepAgain}
	}
	if in, ok := asInput(err); ok {
		if verr := in.validate(); verr != nil {
			return taskFailed("", mcp.CodeInternalError, "Internal error: "+verr.Error())
		}
		j.in = in
		return taskrun.Step{Kind: taskrun.StepInput}
	}
	if rpcErr, ok := jsonrpc.AsError(err); ok {
		return taskrun.Step{Kind: taskrun.StepFailed, Message: rpcErr.Message, Error: &mcp.TaskError{Code: rpcErr.Code, Message: rpcErr.Message, Data: rpcErr.Data}}
	}
	if err != nil {
		res = errorResult(err.Error())
	}
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	raw, merr := json.Marshal(res)
	if merr != nil {
		return taskFailed("", mcp.CodeInternalError, "Internal error: encoding the result: "+merr.Error())
	}
	return taskrun.Step{Kind: taskrun.StepDone, Result: j.s.capEncodedToolResult(ctx, j.p.Name, raw)}
}

func (j *taskJob) Gather(ctx context.Context, run *taskrun.Run, rec *store.TaskRecord) bool {
	return j.treq.taskActions().gatherTaskInput(ctx, j.s, run, rec, j.treq, j.in)
}

// taskFailed is the step of a task that fails with code and message.
func taskFailed(status string, code int64, message string) taskrun.Step {
	return taskrun.Step{Kind: taskrun.StepFailed, Message: status, Error: &mcp.TaskError{Code: code, Message: message}}
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

// discardOut is the outbound of a session-less legacy task: no request
// can reach its client outside a tasks/result.
type discardOut struct{}

func (discardOut) Call(context.Context, mcp.ID, string, any, any) error { return ErrModernRequest }
func (discardOut) Notify(context.Context, mcp.ID, string, any) error    { return nil }

// legacyTaskOut is the outbound of a 2025-11-25 task's handler: its
// requests go as a request's would (the session's connection), its
// notifications, with related-task _meta, to a tasks/result request in
// flight, here or lent by another instance, queued meanwhile
// (Manager.Note; docs/design/tasks.md, "Progress and log messages of a
// task").
type legacyTaskOut struct {
	m    *taskrun.Manager
	run  *taskrun.Run
	call outbound // requests: the session's, or none (session-less)
}

func (o legacyTaskOut) Call(ctx context.Context, related mcp.ID, method string, params, result any) error {
	return o.call.Call(ctx, related, method, params, result)
}

func (o legacyTaskOut) Notify(_ context.Context, _ mcp.ID, method string, params any) error {
	o.m.Note(o.run, method, tasks.WithRelatedMeta(params, o.run.ID))
	return nil
}

// modernTaskOut is the outbound of a 2026-07-28 task's handler: no
// request can reach the client (the request was answered; the era has no
// server→client requests), progress becomes the task's statusMessage,
// and log messages have no channel (dropped).
type modernTaskOut struct {
	m   *taskrun.Manager
	run *taskrun.Run
	id  string
}

func (modernTaskOut) Call(context.Context, mcp.ID, string, any, any) error { return ErrModernRequest }

func (o modernTaskOut) Notify(ctx context.Context, _ mcp.ID, method string, params any) error {
	if p, ok := params.(mcp.ProgressParams); ok && method == mcp.NotificationProgress {
		o.m.SetProgress(ctx, o.run, o.id, tasks.ProgressText(p))
	}
	return nil
}
