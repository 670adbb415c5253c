package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Tools a legacy server runs only as tasks (execution.taskSupport
// "required", 2025-11-25). The spec says a client MUST call them as tasks
// and the server MUST refuse any other call with -32601, so CallTool does
// it on its own: as a task when the server's listing says the tool
// requires it (a server that runs tool calls as tasks is asked for its
// listing before the first call of a tool it has not listed), or again as
// a task when a plain call is refused -32601 by such a server.

type taskStatusKey struct{}

// WithTaskStatus returns a context whose tool call reports the task it
// became, if it becomes one (a tool that requires a task, RunToolTask,
// or a 2026 server that chose to run the call as a task): fn gets the
// task as created, then each status the client learns of while it waits
// — a 2025-11-25 server's notifications/tasks/status for it, the tasks/get
// answers of a 2026 server's polling — the last one terminal when the
// server said so. fn may run on the connection's reader goroutine: it
// must be quick and must not call the client.
func WithTaskStatus(ctx context.Context, fn func(*Task)) context.Context {
	return context.WithValue(ctx, taskStatusKey{}, fn)
}

func taskStatusFunc(ctx context.Context) func(*Task) {
	fn, _ := ctx.Value(taskStatusKey{}).(func(*Task))
	return fn
}

// onChange wraps fn so that it sees a task only when its status or status
// message changed (a creation and the first poll tell the same; status
// notifications and polls may repeat one; the end a 2025-11-25
// tasks/result implies may follow the server's own word of it). It is safe for concurrent use:
// notifications come on the reader goroutine.
//
// A task older than the last one reported (its lastUpdatedAt earlier: a
// poll's answer overtaken by a 2026 notifications/tasks) is not reported,
// and fn is never called twice at once, so it sees the task's states in
// the server's order.
func onChange(fn func(*Task)) func(*Task) {
	var mu sync.Mutex
	var status mcp.TaskStatus
	var msg string
	var last time.Time
	return func(t *Task) {
		mu.Lock() // held while fn runs: the states reach fn one at a time, in order
		defer mu.Unlock()
		at, err := time.Parse(time.RFC3339Nano, t.LastUpdatedAt)
		if err == nil && at.Before(last) {
			return // overtaken by a newer state already reported
		}
		// A status without a message repeats the last one's.
		if t.Status == status && (t.StatusMessage == msg || t.StatusMessage == "") {
			return
		}
		status, msg = t.Status, t.StatusMessage
		if err == nil {
			last = at
		}
		fn(t)
	}
}

// noteTaskSupport records which listed tools require a task.
func (c *Client) noteTaskSupport(tools []mcp.Tool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range tools {
		required := t.Execution != nil && t.Execution.TaskSupport == mcp.TaskSupportRequired
		switch {
		case required:
			if c.taskRequired == nil {
				c.taskRequired = make(map[string]bool)
			}
			c.taskRequired[t.Name] = true
		case c.taskRequired != nil:
			delete(c.taskRequired, t.Name)
		}
	}
}

// requiresTask reports whether a legacy call of tool name must be a task:
// the server runs tool calls as tasks and its listing says the tool
// requires it. A tool not listed yet is looked up with one complete
// listing (kept, as for output schemas): servers may answer the plain call
// of such a tool with a tool error rather than -32601 (the TypeScript
// SDK does), so asking first is the only sure way.
func (c *Client) requiresTask(ctx context.Context, name string) (bool, error) {
	if !c.init.Capabilities.Tasks.SupportsRequest(mcp.MethodToolsCall) {
		return false, nil
	}
	c.mu.Lock()
	required, listed := c.taskRequired[name], c.listedAll
	c.mu.Unlock()
	if required || listed {
		return required, nil
	}
	for _, err := range c.Tools(ctx) {
		if err != nil {
			return false, fmt.Errorf("client: listing the tools to learn the task support of %q: %w", name, err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listedAll = true
	return c.taskRequired[name], nil
}

// refusedForTask reports whether err is the -32601 a legacy server that
// runs tool calls as tasks answers a plain call of a tool that requires
// one.
func (c *Client) refusedForTask(err error) bool {
	e, ok := jsonrpc.AsError(err)
	return ok && e.Code == mcp.CodeMethodNotFound && c.init.Capabilities.Tasks.SupportsRequest(mcp.MethodToolsCall)
}

// callLegacy is CallTool on a legacy connection without p.Task.
func (c *Client) callLegacy(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if p != nil {
		required, err := c.requiresTask(ctx, p.Name)
		if err != nil {
			return nil, err
		}
		if required {
			return c.asTask(ctx, p)
		}
	}
	var res mcp.CallToolResult
	err := c.callTool(ctx, p, &res)
	if err != nil && p != nil && c.refusedForTask(err) {
		c.log.Debug("client: tools/call refused -32601 by a server that runs tasks; calling again as a task", "tool", p.Name)
		res, terr := c.asTask(ctx, p)
		if errors.Is(terr, ErrTasksUnsupported) {
			return nil, err
		}
		if e, ok := jsonrpc.AsError(terr); ok && e.Code == mcp.CodeMethodNotFound {
			return nil, err // not a matter of tasks after all: the first answer stands
		}
		return res, terr
	}
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// asTask runs a legacy call as a task (RunToolTask) without changing
// the caller's params.
func (c *Client) asTask(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	cp := *p
	cp.Task = &mcp.TaskMetadata{}
	return c.RunToolTask(ctx, &cp)
}

// watchTask registers fn for the status notifications of task id until
// the returned function is called.
func (c *Client) watchTask(id string, fn func(*Task)) func() {
	if fn == nil || id == "" {
		return func() {}
	}
	c.taskWatch.Store(id, fn)
	return func() { c.taskWatch.Delete(id) }
}

// taskStatusNote passes a notifications/tasks/status to the watcher of
// its task, if any (it goes to the notification handlers too).
func (c *Client) taskStatusNote(params jsontext.Value) {
	var w mcp.Task
	if json.Unmarshal(params, &w) != nil || w.TaskID == "" {
		return
	}
	fn, ok := c.taskWatch.Load(w.TaskID)
	if !ok {
		return
	}
	fn.(func(*Task))(&Task{ID: w.TaskID, Status: w.Status, StatusMessage: w.StatusMessage,
		CreatedAt: w.CreatedAt, LastUpdatedAt: w.LastUpdatedAt, TTL: w.TTL, PollInterval: w.PollInterval, raw: params})
}

// needsTasksExt reports whether err is a modern server's -32021 naming
// the tasks extension: the tool runs only as a task.
func needsTasksExt(err error) bool {
	e, ok := jsonrpc.AsError(err)
	if !ok || e.Code != mcp.CodeMissingRequiredClientCapability {
		return false
	}
	var data struct {
		Required struct {
			Extensions map[string]jsontext.Value `json:"extensions"`
		} `json:"requiredCapabilities"`
	}
	if json.Unmarshal(e.Data, &data) != nil {
		return false
	}
	_, ok = data.Required.Extensions[tasksExtension]
	return ok
}
