package server

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/taskrun"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
	"github.com/mcpkit/mcpkit/store"
)

// legacyEra is the era of revisions 2025-11-25 and older: a session
// begun with initialize carries the client's capabilities and log level,
// and a handler may ask the client for input with server→client requests
// tied to the request it serves (SEP-2260). See era for each method's
// contract.
type legacyEra struct{}

// openInput ignores the client's inputResponses and requestState: only
// the in-process shim supplies answers on a legacy request.
func (legacyEra) openInput(context.Context, *Server, *Request, mcp.InputResponses, string) error {
	return nil
}

func (legacyEra) needInput(ctx context.Context, s *Server, req *Request, m method, params *wireParams, in *Input) (any, error) {
	return s.shim(ctx, req, m, params, in)
}

func (legacyEra) stamp(_ *Server, result any, _ bool) any { return result }

func (legacyEra) canCall() error { return nil }

// logThreshold is the session's level (logging/setLevel), info before
// any and on a session-less request.
func (legacyEra) logThreshold(r *Request) (mcp.LoggingLevel, bool) {
	if r.session != nil {
		return r.session.logLevel(), true
	}
	return mcp.LevelInfo, true
}

func (legacyEra) missingCapability(missing mcp.ClientCapabilities) *jsonrpc.Error {
	names, _ := json.Marshal(missing)
	return jsonrpc.NewError(mcp.CodeInternalError, fmt.Sprintf("Internal error: the client did not declare the capabilities this request needs: %s", names))
}

func (legacyEra) resourceNotFound(uri string) *jsonrpc.Error {
	return resourceNotFound(mcp.CodeResourceNotFound, uri)
}

// httpStatus is 200: a legacy JSON-RPC error answer travels in the body
// of a successful HTTP response. (Failures of the transport itself —
// unknown session, a store that cannot be written — get their own
// statuses from the HTTP layer; they are not the era's.)
func (legacyEra) httpStatus(*jsonrpc.Error) int { return statusOK }

// tasks: the 2025-11-25 core tasks' rules.
func (legacyEra) tasks() tasks.Rules { return tasks.Core{} }

// cancelTask cancels the task at once and returns it as it now is; a
// terminal task cannot be cancelled (-32602).
func (legacyEra) cancelTask(ctx context.Context, s *Server, rec *store.TaskRecord) (any, error) {
	if rec.Status.Terminal() {
		return nil, jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: task %q is already %s", rec.ID, rec.Status)
	}
	// The owner cancels and records it (on the session that created the
	// task); if it cannot, the record is settled here.
	s.tasks.CancelLegacy(ctx, rec)
	cur, err := s.tasks.Store().Get(ctx, rec.ID)
	if err != nil {
		cur = rec
	}
	t := tasks.CoreTask(cur)
	return &t, nil
}

func (legacyEra) gatherTaskInput(ctx context.Context, s *Server, run *taskrun.Run, rec *store.TaskRecord, treq *Request, in *Input) bool {
	return s.askTaskInput(ctx, run, rec, treq, in)
}

// announceTask sends notifications/tasks/status on the session that
// created the task, while it is open.
func (legacyEra) announceTask(s *Server, run *taskrun.Run, rec *store.TaskRecord) {
	if run == nil || run.Origin == nil || !run.Origin.Ready() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	t := tasks.CoreTask(rec)
	if err := run.Origin.Notify(ctx, mcp.NotificationTasksStatus, &t); err != nil {
		s.log.Debug("server: task status not delivered", "task", rec.ID, "err", err)
	}
}

// askTaskInput puts a 2025-11-25 task in input_required until every
// request of in is answered, then back to working with the answers on
// treq: the Manager asks the client as the legacy shim does, on the
// stream of a tasks/result request in flight. It reports false when the
// task ended meanwhile (cancelled, expired, or failed).
func (s *Server) askTaskInput(ctx context.Context, run *taskrun.Run, rec *store.TaskRecord, treq *Request, in *Input) bool {
	if s.opts.DisableLegacyShim {
		s.tasks.Settle(run, rec, mcp.TaskFailed, "", nil, &mcp.TaskError{Code: mcp.CodeInternalError, Message: "Internal error: the task needs input and the legacy shim is disabled"})
		return false
	}
	if err := treq.Require(in.Needed()); err != nil {
		e, _ := jsonrpc.AsError(err)
		s.tasks.Settle(run, rec, mcp.TaskFailed, "", nil, &mcp.TaskError{Code: e.Code, Message: e.Message})
		return false
	}
	answers, ok := s.tasks.AskInput(ctx, run, rec, in.keys, in.requests, in.forms)
	if !ok {
		return false
	}
	// Earlier rounds' answers stay, as in the shim (keptAnswers).
	kept := keptAnswers(treq, in)
	treq.inputs, treq.state = answers, in.state
	treq.setKept(kept)
	s.tasks.SetStatus(context.Background(), run, rec, mcp.TaskWorking, nil)
	return true
}
