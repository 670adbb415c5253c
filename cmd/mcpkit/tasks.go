package main

import (
	"context"
	"fmt"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// Tasks in the CLI: a tool that runs only as a task (taskSupport
// "required") is run as one by the client library on its own; --task asks
// for one for a tool that allows it ("optional"). Either way the task's
// states go to stderr as they change, its progress as for any call, and
// its input requests to the same handlers as a plain call's.

// callTool calls p, as a task when asked, reporting task states.
func (c *cli) callTool(ctx context.Context, cl *client.Client, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	ctx = client.WithProgress(ctx, c.onProgress)
	ctx = client.WithTaskStatus(ctx, c.onTaskStatus)
	if c.asTask {
		return cl.RunToolTask(ctx, p)
	}
	return cl.CallTool(ctx, p)
}

// onTaskStatus shows a task's state on stderr, one line per change.
func (c *cli) onTaskStatus(t *client.Task) {
	c.mu.Lock()
	defer c.mu.Unlock()
	live := c.progressLive
	c.clearProgressLocked()
	line := fmt.Sprintf("task %s: %s", t.ID, t.Status)
	if t.StatusMessage != "" {
		line += ": " + t.StatusMessage
	}
	fmt.Fprintln(c.stderr, line)
	if live {
		fmt.Fprint(c.stderr, c.progressLine)
		c.progressLive = true
	}
}

// taskSupport is how inspect shows a tool's task support: "" for a tool
// that never runs as a task (no execution, or "forbidden").
func taskSupport(t *mcp.Tool) string {
	if t.Execution == nil || t.Execution.TaskSupport == "" || t.Execution.TaskSupport == mcp.TaskSupportForbidden {
		return ""
	}
	return t.Execution.TaskSupport
}
