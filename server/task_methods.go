package server

import (
	"context"
	"errors"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/taskrun"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
	"github.com/mcpkit/mcpkit/store"
)

// tasksMethod serves tasks/* for both eras: the 2026 extension's
// tasks/get, tasks/update and tasks/cancel (only for requests that
// declared the extension: -32021 otherwise) and the 2025-11-25 core
// tasks/get, tasks/result, tasks/list and tasks/cancel. It checks the
// request and renders the answers; the Manager acts on the task.
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
		if err := s.tasks.Update(ctx, rec, wp.InputResponses); err != nil {
			return nil, err
		}
		return &mcp.EmptyResult{}, nil
	case mcp.MethodTasksCancel:
		return req.taskActions().cancelTask(ctx, s, rec)
	case mcp.MethodTasksResult:
		return s.taskResult(ctx, req, rec)
	}
	return nil, jsonrpc.Errorf(mcp.CodeMethodNotFound, "Method not found: %s", name)
}

// taskResult answers tasks/result (2025-11-25): it waits until the task
// is terminal, this request carrying meanwhile the task's input
// requests and notifications, and returns what the request would have.
func (s *Server) taskResult(ctx context.Context, req *Request, rec *store.TaskRecord) (any, error) {
	ask := func(actx context.Context, ir mcp.InputRequest, form jsontext.Value) (jsontext.Value, error) {
		return s.leg(actx, req, ir, form)
	}
	here := &taskrun.Carrier{Ctx: ctx, Ask: ask, Notify: func(method string, params any) error {
		_ = req.out.Notify(ctx, req.id, method, params) // a request here: nothing to send it on instead
		return nil
	}}
	lent := &taskrun.Carrier{Ctx: ctx, Ask: ask, Notify: func(method string, params any) error {
		return req.out.Notify(ctx, req.id, method, params)
	}}
	res, err := s.tasks.Result(ctx, rec, here, lent)
	if err != nil {
		return nil, err
	}
	return res, nil
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
// answer to the requestor (tasks.BoundTo) or belongs to the other era:
// the answer does not tell an outsider that the id exists. Only
// store.ErrTaskNotFound means unknown: any other failure of the store
// answers jsonrpc.ErrUnavailable (Manager.StoreFailed), so that the
// client tries again instead of giving the task up.
func (s *Server) lookupTask(ctx context.Context, req *Request, id string) (*store.TaskRecord, error) {
	if id == "" {
		return nil, jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: taskId is required")
	}
	sid := ""
	if req.session != nil {
		sid = req.session.ID()
	}
	rec, err := s.tasks.Read(ctx, id) // a settled record held here, else the store's
	if err != nil && !errors.Is(err, store.ErrTaskNotFound) {
		return nil, s.tasks.StoreFailed(id, err)
	}
	if err != nil || !tasks.BoundTo(rec, requestor(ctx, req), sid) || rec.Modern != req.era().tasks().Modern() {
		return nil, taskrun.Unknown(id)
	}
	return s.tasks.ReapLapsed(ctx, rec), nil
}

// listTasks answers tasks/list (2025-11-25): the requestor's own tasks
// (its principal's; without authentication, its session's).
func (s *Server) listTasks(ctx context.Context, req *Request, wp *wireParams) (any, error) {
	sid := ""
	if req.session != nil {
		sid = req.session.ID()
	}
	recs, err := s.tasks.Store().List(ctx, requestor(ctx, req), sid)
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
		res.Tasks = append(res.Tasks, tasks.CoreTask(s.tasks.ReapLapsed(ctx, recs[i])))
		if len(res.Tasks) == size && i+1 < len(recs) {
			c := encodeCursor(recs[i].ID)
			res.NextCursor = &c
		}
	}
	return res, nil
}
