package tasks

import (
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store"
)

// Info is a record as the 2026 extension sends it.
func Info(rec *store.TaskRecord) mcp.TaskInfo {
	t := mcp.TaskInfo{
		TaskID: rec.ID, Status: rec.Status, StatusMessage: rec.StatusMessage,
		CreatedAt: rec.CreatedAt.UTC().Format(time.RFC3339Nano), LastUpdatedAt: rec.LastUpdatedAt.UTC().Format(time.RFC3339Nano),
	}
	if rec.TTL > 0 {
		ms := rec.TTL.Milliseconds()
		t.TTLMs = &ms
	}
	if rec.PollInterval > 0 {
		ms := rec.PollInterval.Milliseconds()
		t.PollIntervalMs = &ms
	}
	return t
}

// Detailed is a record as tasks/get and notifications/tasks send it
// (2026): its input requests, result or error by status.
func Detailed(rec *store.TaskRecord) *mcp.DetailedTask {
	d := &mcp.DetailedTask{TaskInfo: Info(rec)}
	switch rec.Status {
	case mcp.TaskInputRequired:
		d.InputRequests = rec.InputRequests
	case mcp.TaskCompleted:
		d.Result = rec.Result
	case mcp.TaskFailed:
		d.Error = rec.Error
	}
	return d
}

// CoreTask is a record as the 2025-11-25 methods send it.
func CoreTask(rec *store.TaskRecord) mcp.Task {
	ti := Info(rec)
	return mcp.Task{
		TaskID: ti.TaskID, Status: ti.Status, StatusMessage: ti.StatusMessage,
		CreatedAt: ti.CreatedAt, LastUpdatedAt: ti.LastUpdatedAt, TTL: ti.TTLMs, PollInterval: ti.PollIntervalMs,
	}
}
