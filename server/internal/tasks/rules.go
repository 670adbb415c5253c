package tasks

import (
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/revisions"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store"
)

// Rules are the task rules of one era that take data and return
// answers. Core is the 2025-11-25 core tasks (params.task, tasks/get,
// result, list, cancel) on legacy requests; Extension is the
// io.modelcontextprotocol/tasks extension (declared per request;
// tasks/get, update, cancel) on modern ones.
type Rules interface {
	// HasMethod reports whether name is a tasks/* method of the era on
	// revision v.
	HasMethod(v, name string) bool
	// Check refuses a tasks/* request that may not use tasks; declared
	// says whether the request declared the extension.
	Check(declared bool) error
	// Eligible decides whether a tools/call on revision v of the tool
	// named tool, whose task support is support, may be answered with a
	// task: ok says it may; err refuses a tool that requires a task from
	// a request that cannot have one.
	Eligible(v string, declared bool, tool, support string, p *mcp.CallToolParams) (ok bool, err error)
	// TTL is the TTL of a new task given the server's.
	TTL(p *mcp.CallToolParams, ttl time.Duration) time.Duration
	// Modern is the value of store.TaskRecord.Modern for the era's
	// tasks: a task is visible only to requests of the era that created
	// it.
	Modern() bool
	// Created is the answer to a tools/call that became a task.
	Created(rec *store.TaskRecord) any
	// Render is a task as tasks/get returns it.
	Render(rec *store.TaskRecord) any
}

// Core is the rules of the 2025-11-25 core tasks. Its value is empty:
// it costs no allocation in an interface.
type Core struct{}

// Extension is the rules of the 2026 io.modelcontextprotocol/tasks
// extension. Its value is empty, as Core's.
type Extension struct{}

// HasMethod reports get, result, list and cancel on revisions with core
// tasks (2025-11-25); older revisions have none.
func (Core) HasMethod(v, name string) bool {
	switch name {
	case mcp.MethodTasksGet, mcp.MethodTasksCancel, mcp.MethodTasksResult, mcp.MethodTasksList:
		return revisions.HasCoreTasks(v)
	}
	return false
}

// Check refuses nothing: a legacy request reached tasks/* through
// HasMethod.
func (Core) Check(bool) error { return nil }

// Eligible allows a task where a 2025-11-25 request asks for one with
// params.task; a tool that runs only as a task is -32601 without it, or
// on a revision without tasks.
func (Core) Eligible(v string, _ bool, tool, support string, p *mcp.CallToolParams) (bool, error) {
	if !revisions.HasCoreTasks(v) {
		if support == mcp.TaskSupportRequired {
			return false, jsonrpc.Errorf(mcp.CodeMethodNotFound, "Method not found: tool %q runs only as a task, which protocol revision %s lacks", tool, v)
		}
		return false, nil
	}
	if p.Task == nil {
		if support == mcp.TaskSupportRequired {
			return false, jsonrpc.Errorf(mcp.CodeMethodNotFound, "Method not found: tool %q must be called as a task (params.task)", tool)
		}
		return false, nil
	}
	return support != mcp.TaskSupportForbidden, nil
}

// TTL honours a shorter params.task.ttl.
func (Core) TTL(p *mcp.CallToolParams, ttl time.Duration) time.Duration {
	if p.Task != nil && p.Task.TTL != nil && *p.Task.TTL > 0 {
		if asked := time.Duration(*p.Task.TTL) * time.Millisecond; asked < ttl {
			return asked
		}
	}
	return ttl
}

// Modern is false: core tasks are legacy ones.
func (Core) Modern() bool { return false }

// Created is a CreateTaskResult.
func (Core) Created(rec *store.TaskRecord) any {
	return &mcp.CreateTaskResult{Task: CoreTask(rec)}
}

// Render is the record as a Task.
func (Core) Render(rec *store.TaskRecord) any {
	t := CoreTask(rec)
	return &t
}

// HasMethod reports get, update and cancel, on every modern revision.
func (Extension) HasMethod(_, name string) bool {
	switch name {
	case mcp.MethodTasksGet, mcp.MethodTasksCancel, mcp.MethodTasksUpdate:
		return true
	}
	return false
}

// Check refuses a request that did not declare the extension (-32021).
func (Extension) Check(declared bool) error {
	if !declared {
		return MissingExtension()
	}
	return nil
}

// Eligible allows a task where the request declared the extension: from
// any tool that supports one; a tool that requires one refuses a request
// without it (-32021).
func (Extension) Eligible(_ string, declared bool, _, support string, _ *mcp.CallToolParams) (bool, error) {
	if support == mcp.TaskSupportRequired && !declared {
		return false, MissingExtension()
	}
	return declared && support != mcp.TaskSupportForbidden, nil
}

// TTL is the server's: the extension has no way to ask for another.
func (Extension) TTL(_ *mcp.CallToolParams, ttl time.Duration) time.Duration { return ttl }

// Modern is true.
func (Extension) Modern() bool { return true }

// Created is the extension's resultType "task" answer.
func (Extension) Created(rec *store.TaskRecord) any {
	return &mcp.CreatedTaskResult{ResultType: mcp.ResultTask, TaskInfo: Info(rec)}
}

// Render is the record as a DetailedTask.
func (Extension) Render(rec *store.TaskRecord) any { return Detailed(rec) }

// For returns the rules of the era a stored task belongs to
// (store.TaskRecord.Modern).
func For(rec *store.TaskRecord) Rules {
	if rec.Modern {
		return Extension{}
	}
	return Core{}
}

// MissingExtension is -32021 naming the tasks extension.
func MissingExtension() *jsonrpc.Error {
	return jsonrpc.NewError(mcp.CodeMissingRequiredClientCapability, "Missing required client capability: the "+mcp.ExtensionTasks+" extension").
		WithData(mcp.MissingCapabilityData{RequiredCapabilities: mcp.ClientCapabilities{
			Extensions: map[string]jsontext.Value{mcp.ExtensionTasks: jsontext.Value("{}")},
		}})
}
