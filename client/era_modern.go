package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// modernEra is a 2026-07-28 connection: no handshake and no session, the
// envelope in every request's _meta, checked results with the multi
// round-trip driver, the result cache, subscriptions/listen instead of
// the GET stream and resources/subscribe, no ping, and the tasks
// extension (declared per request, tasks/get polling, tasks/update).
type modernEra Client

func (e *modernEra) client() *Client { return (*Client)(e) }

func (*modernEra) era() Era { return EraModern }

func (*modernEra) lacks(method string) error { return lacks(onlyLegacy, ErrModern, method) }

func (e *modernEra) send(ctx context.Context, method string, params any, meta *mcp.Meta, result any, sent func(mcp.ID)) (int, error) {
	return e.client().callModern(ctx, method, params, meta, result, sent)
}

func (e *modernEra) notifyMeta(ctx context.Context, p *extParams) {
	c := e.client()
	c.mu.Lock()
	version := c.version
	c.mu.Unlock()
	env := c.newEnvelope(&p.Meta, p.Meta, version, c.tasksDeclared(ctx))
	overrideCaps(ctx, &env, c.tasksDeclared(ctx))
	p.Meta = env.asMap()
}

// protocolVersion is the revision the next request carries: it changes
// only when the server answers -32022 naming another one this client
// speaks.
func (e *modernEra) protocolVersion() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.version
}

func (e *modernEra) serverInfo() mcp.Implementation {
	c := e.client()
	if d := c.lastDiscover(); d != nil {
		if info, err := d.Meta.ServerInfo(); err == nil && info != nil {
			return *info // decoded afresh: the caller's own
		}
	}
	return c.learnedIdentity()
}

func (e *modernEra) serverCapabilities() mcp.ServerCapabilities {
	if d := e.client().lastDiscover(); d != nil {
		return d.Capabilities.Clone()
	}
	return mcp.ServerCapabilities{}
}

func (e *modernEra) instructions() string {
	if d := e.client().lastDiscover(); d != nil {
		return d.Instructions
	}
	return ""
}

func (e *modernEra) resultCache() *Cache { return e.client().cache }

// connected: a modern connection has no listening stream of its own
// (Listen opens subscriptions) and is never pinged (2026-07-28 has no
// ping).
func (*modernEra) connected() {}

// handlersChanged re-encodes the capabilities every later envelope
// declares, from the handlers now set.
func (e *modernEra) handlersChanged(*inputHandlers) {
	c := e.client()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.caps = c.capabilities(c.handlers())
	// Encoding the capabilities cannot fail: they are made of fixed
	// types and Options.Info, which Connect encoded already.
	_ = c.encodeCaps()
}

// listedTools drops the tools whose x-mcp-header annotations are invalid
// (SEP-2243) and keeps the others' for CallTool.
func (e *modernEra) listedTools(tools []mcp.Tool) []mcp.Tool { return e.client().noteTools(tools) }

// setLoggingLevel sends nothing: every later request carries the level
// in its envelope.
func (e *modernEra) setLoggingLevel(_ context.Context, level mcp.LoggingLevel) error {
	if level != "" && !level.Valid() {
		return fmt.Errorf("client: invalid logging level %q", level)
	}
	e.mu.Lock()
	e.logLevel = level
	e.mu.Unlock()
	return nil
}

func (e *modernEra) callTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	c := e.client()
	var res mcp.CallToolResult
	err := c.callTool(ctx, p, &res)
	if needsTasksExt(err) && !c.opts.Tasks && p != nil {
		c.log.Debug("client: tools/call refused for want of the tasks extension; calling again as a task", "tool", p.Name)
		return c.RunToolTask(ctx, p)
	}
	if ts, ok := asTaskStarted(err); ok {
		t, derr := decodeTask(ts.raw)
		if derr != nil {
			return nil, derr
		}
		return c.await(ctx, t)
	}
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// sendToolCall handles -32020 (header mismatch) by listing the tools
// again, which refreshes the annotations exchange mirrors into headers,
// and retrying once.
func (e *modernEra) sendToolCall(ctx context.Context, p *mcp.CallToolParams, result any) error {
	c := e.client()
	meta := p.Meta
	for attempt := 0; ; attempt++ {
		p.Meta = meta
		err := c.call(ctx, mcp.MethodToolsCall, p, &p.Meta, result)
		if e, ok := jsonrpc.AsError(err); ok && e.Code == mcp.CodeHeaderMismatch && attempt == 0 {
			c.log.Debug("client: tools/call refused with a header mismatch; refreshing the tool list", "tool", p.Name)
			if rerr := c.refreshTools(ctx); rerr != nil {
				return err
			}
			continue
		}
		return err
	}
}

// startToolTask declares the tasks extension; p.Task (a 2025 field) is
// not sent.
func (e *modernEra) startToolTask(ctx context.Context, p *mcp.CallToolParams) (*Task, error) {
	p.Task = nil
	var raw jsontext.Value
	err := e.client().callTool(tasksExt(ctx), p, &raw)
	var ts *taskStarted
	if errors.As(err, &ts) {
		return decodeTask(ts.raw)
	}
	if err != nil {
		return nil, err
	}
	return &Task{Status: mcp.TaskCompleted, Result: raw, raw: raw}, nil
}

// holdProgress: a 2026 task reports its steps in statusMessage, not with
// the call's progress token.
func (*modernEra) holdProgress(ctx context.Context, p *mcp.CallToolParams) (context.Context, *mcp.CallToolParams, func()) {
	return ctx, p, func() {}
}

// taskOver: the polls and notifications/tasks have reported the end.
func (*modernEra) taskOver(context.Context, func(*Task), string, error) {}

// taskCtx declares the tasks extension.
func (*modernEra) taskCtx(ctx context.Context) context.Context { return tasksExt(ctx) }

// taskResult polls tasks/get until the task is over, answering an
// input_required task's input requests (see TaskResult).
func (e *modernEra) taskResult(ctx context.Context, id string) (*mcp.CallToolResult, error) {
	c := e.client()
	retry := c.newTaskRetry(id)
	answered := make(map[string]bool)
	fn := taskStatusFunc(ctx)
	var last, lastMsg = mcp.TaskStatus(""), ""
	for {
		t, err := c.GetTask(ctx, id)
		if err != nil {
			if again, err := retry.again(ctx, mcp.MethodTasksGet, err); !again {
				return nil, err
			}
			continue
		}
		retry.reset()
		if fn != nil && (t.Status != last || t.StatusMessage != lastMsg) {
			fn(t)
		}
		last, lastMsg = t.Status, t.StatusMessage
		if res, over, err := taskEnd(t, id); over {
			return res, err
		}
		if t.Status == mcp.TaskInputRequired {
			if ir := pendingInput(t, answered); ir != nil {
				if err := c.answerTask(ctx, id, ir, answered); err != nil {
					return nil, err
				}
				continue
			}
		}
		if err := sleep(ctx, c.pollInterval(t)); err != nil {
			return nil, err
		}
	}
}

// taskEnd is the outcome of task id, t, when it is over (over false: it
// is not).
func taskEnd(t *Task, id string) (res *mcp.CallToolResult, over bool, err error) {
	switch t.Status {
	case mcp.TaskCompleted:
		res, err = toolResult(t)
		return res, true, err
	case mcp.TaskFailed:
		if t.Error != nil {
			return nil, true, t.Error
		}
		return nil, true, fmt.Errorf("%w: task %s: %s", ErrTaskFailed, id, t.StatusMessage)
	case mcp.TaskCancelled:
		return nil, true, fmt.Errorf("%w: task %s", ErrTaskCanceled, id)
	}
	return nil, false, nil
}

// answerTask answers the input requests ir of task id with the handlers
// (or returns ir when the driver is off) and sends them with tasks/update.
func (c *Client) answerTask(ctx context.Context, id string, ir *InputRequiredError, answered map[string]bool) error {
	if !c.driving() {
		return ir
	}
	responses, err := c.fulfil(ctx, ir, 0)
	if err != nil {
		if nh, ok := err.(*InputRequiredError); ok {
			nh.TaskID = id
		}
		return err
	}
	if err := c.UpdateTask(ctx, id, responses); err != nil {
		return err
	}
	for _, key := range ir.order {
		answered[key] = true
	}
	return nil
}
