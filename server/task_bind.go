package server

import (
	"context"
	"errors"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
	"github.com/mcpkit/mcpkit/store"
)

// A task answers only to its creator (docs/design/tasks.md, "Owner"):
// the principal it was created for when there was one, on any session
// or connection of that principal; else the legacy session that created
// it. A task created with neither (a 2026 stateless request, or a
// session-less legacy one, without authentication) answers to whoever
// names it: its id is then the only capability, 130 random bits
// (newTaskID). This is the rule of tasks/list (TaskStore.List), applied
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
