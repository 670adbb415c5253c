package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// Tasks of a 2026 upstream. A tool that supports tasks is registered with
// server.TaskOnDemand: its handler runs in the client's request and, when
// the tool requires a task or the client asked for one (wantsTask), asks
// the upstream with the tasks extension declared (client.StartToolTask);
// otherwise it makes a plain call, whose progress and log messages pass.
// The upstream decides, as it would for the client: input-required
// rounds are relayed as usual; a result is the answer; a task makes the
// handler continue as a task of the gateway's own (server.ContinueAsTask),
// created at the same round the upstream created its own, which waits for
// the upstream task's outcome, relays its input requests (the upstream
// task's id in the sealed state) and cancels it when the client cancels.

// upstreamTask is the error a task-supporting tool's call ends with when
// the upstream answered with a task.
type upstreamTask struct{ id string }

func (t *upstreamTask) Error() string { return "gateway: the upstream runs the call as task " + t.id }

// wantsTask reports whether the client's call may be answered with a
// task: a 2025-11-25 request carrying params.task, or a 2026 one that
// declared the tasks extension. Only such a call of a task-optional tool
// goes up as a task: a 2026 upstream's task has no channel for its
// progress and log messages, which a plain call's request stream carries.
func wantsTask(req *server.CallToolRequest) bool {
	if req.Params.Task != nil {
		return true
	}
	_, ok := req.ClientCapabilities().Extensions[mcp.ExtensionTasks]
	return ok
}

// taskCall makes a task-supporting tool's call of a 2026 upstream.
func (u *upstream) taskCall(ctx context.Context, c *client.Client, q *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	task, err := c.StartToolTask(ctx, q)
	if err != nil {
		return nil, err
	}
	if task.ID != "" {
		return nil, &upstreamTask{id: task.ID}
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(task.Result, &res); err != nil {
		return nil, err
	}
	u.contentURIs(res.Content)
	return &res, nil
}

// awaitTask is the work of the gateway's task that mirrors upstream task
// id: it waits for its outcome, and is run again with the client's answers
// when it relayed the upstream task's input requests.
func (u *upstream) awaitTask(id string) server.ToolHandler {
	return func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		if u.cfg.Identity.Mode != IdentityStatic {
			return u.awaitTaskAsCaller(ctx, req, id)
		}
		// A task's wait counts as one of its client's calls on u, and as a
		// call in flight on the control connection (the upstream's log
		// messages meanwhile go to no other call: modern.go).
		key := u.g.clientKey(ctx, req.Request)
		if err := u.reserve(key, u.perClientCap(false)); err != nil {
			return nil, err
		}
		defer u.unreserve(key)
		c, release, err := u.acquireControl(ctx)
		if err != nil {
			return nil, upstreamError(err)
		}
		defer release()
		in := &inflight{}
		u.addModern(in)
		defer func() { u.removeModern(in, ctx.Err() != nil, c) }()
		return u.followTask(ctx, req, id, c)
	}
}

// awaitTaskAsCaller is awaitTask for an upstream called with each
// caller's identity: the upstream task belongs to the caller who started
// it (an upstream binds a task to its requestor), so its status, answers
// and result are asked on a call connection bound to that caller, never
// on the control connection, which carries the gateway's own identity.
func (u *upstream) awaitTaskAsCaller(ctx context.Context, req *server.CallToolRequest, id string) (*mcp.CallToolResult, error) {
	ctx, err := u.identify(ctx, req.Request)
	if err != nil {
		return nil, upstreamError(err)
	}
	l, err := u.acquire(ctx, u.g.clientKey(ctx, req.Request), &inflight{})
	if err != nil {
		return nil, upstreamError(err)
	}
	res, err := u.followTask(ctx, req, id, l.cc.c)
	l.release(retiring(ctx, err))
	return res, err
}

// followTask waits on c for upstream task id's outcome, after passing on
// the client's answers when the gateway relayed the task's input
// requests.
func (u *upstream) followTask(ctx context.Context, req *server.CallToolRequest, id string, c *client.Client) (*mcp.CallToolResult, error) {
	ctx = client.WithCapabilities(ctx, bridged(req.ClientCapabilities()))
	if st, err := u.roundOf(req.Request); err == nil && st.Task == id {
		if err := c.UpdateTask(ctx, id, st.answers(req.Request)); err != nil {
			return nil, upstreamError(err)
		}
	}
	res, err := c.TaskResult(ctx, id)
	var ire *client.InputRequiredError
	if errors.As(err, &ire) && ire.TaskID == id && ire.Result != nil {
		return nil, u.relayInputFor(req.Request, ire.Result, id)
	}
	if err != nil {
		if ctx.Err() != nil {
			// The client cancelled the gateway's task: the upstream's goes too.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			_ = c.CancelTask(cctx, id) // best effort: the upstream task may be over
			cancel()
		}
		return nil, upstreamError(err)
	}
	u.contentURIs(res.Content)
	return res, nil
}
