package client

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// legacyEra is a connection begun with initialize (2025-11-25 and
// older): a session, plain JSON-RPC calls, the server's requests on the
// transport's listening stream, ping, and the core tasks (params.task,
// tasks/result).
type legacyEra Client

// pendingEra is the client while Connect chooses: the legacy rules, no
// era yet (the probe and the handshake send directly, not through it).
// It knows no identity: the initialize result is being decoded into
// c.init meanwhile, which only legacyEra, published after it, reads. A
// message handled then (through the interceptors) sees era 0 and
// revision "".
type pendingEra struct{ *legacyEra }

func (pendingEra) era() Era { return 0 }

func (pendingEra) protocolVersion() string { return "" }

func (pendingEra) serverInfo() mcp.Implementation { return mcp.Implementation{} }

func (pendingEra) serverCapabilities() mcp.ServerCapabilities { return mcp.ServerCapabilities{} }

func (pendingEra) instructions() string { return "" }

func (e *legacyEra) client() *Client { return (*Client)(e) }

func (*legacyEra) era() Era { return EraLegacy }

func (*legacyEra) lacks(method string) error { return lacks(onlyModern, ErrLegacy, method) }

func (e *legacyEra) send(ctx context.Context, method string, params any, _ *mcp.Meta, result any, sent func(mcp.ID)) (int, error) {
	c := e.client()
	ctx, cancel := c.withTimeout(ctx, method)
	defer cancel()
	return 0, c.rpc(ctx, method, params, result, jsonrpc.CallOptions{Sent: sent}, 0)
}

func (*legacyEra) notifyMeta(context.Context, *extParams) {}

func (e *legacyEra) protocolVersion() string { return e.init.ProtocolVersion }

func (e *legacyEra) serverInfo() mcp.Implementation { return e.init.ServerInfo.Clone() }

func (e *legacyEra) serverCapabilities() mcp.ServerCapabilities { return e.init.Capabilities.Clone() }

func (e *legacyEra) instructions() string { return e.init.Instructions }

// resultCache: a legacy server marks nothing cacheable.
func (*legacyEra) resultCache() *Cache { return nil }

// connected starts the transport's listening stream when the client can
// answer server requests or Options.Listen asks for it, and the
// keepalive.
func (e *legacyEra) connected() {
	c := e.client()
	if c.opts.Listen || c.handlers().any() {
		c.listen()
	}
	c.keepAlive()
}

// handlersChanged starts the listening stream once there is a handler
// (initialize declared the capabilities once and for all).
func (e *legacyEra) handlersChanged(next *inputHandlers) {
	if next.any() {
		e.client().listen()
	}
}

func (*legacyEra) listedTools(tools []mcp.Tool) []mcp.Tool { return tools }

func (e *legacyEra) setLoggingLevel(ctx context.Context, level mcp.LoggingLevel) error {
	p := &mcp.SetLevelParams{Level: level}
	return e.client().call(ctx, mcp.MethodLoggingSetLevel, p, &p.Meta, nil)
}

func (e *legacyEra) callTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	c := e.client()
	if p != nil && p.Task != nil {
		return c.RunToolTask(ctx, p)
	}
	return c.callLegacy(ctx, p)
}

func (e *legacyEra) sendToolCall(ctx context.Context, p *mcp.CallToolParams, result any) error {
	return e.client().call(ctx, mcp.MethodToolsCall, p, &p.Meta, result)
}

// startToolTask asks for a task with params.task, when the server runs
// tool calls as tasks.
func (e *legacyEra) startToolTask(ctx context.Context, p *mcp.CallToolParams) (*Task, error) {
	if !e.init.Capabilities.Tasks.SupportsRequest(mcp.MethodToolsCall) {
		return nil, ErrTasksUnsupported
	}
	if p.Task == nil {
		p.Task = &mcp.TaskMetadata{}
	}
	var raw jsontext.Value
	if err := e.sendToolCall(ctx, p, &raw); err != nil {
		return nil, err
	}
	if rawHasTask(raw) {
		return decodeTask(raw)
	}
	return &Task{Status: mcp.TaskCompleted, Result: raw, raw: raw}, nil
}

// holdProgress: a 2025-11-25 task reports progress with the call's token
// for as long as it runs, so the token stays registered until the
// outcome, not only until the CreateTaskResult.
func (e *legacyEra) holdProgress(ctx context.Context, p *mcp.CallToolParams) (context.Context, *mcp.CallToolParams, func()) {
	fn := progressFunc(ctx)
	if fn == nil {
		return ctx, p, func() {}
	}
	c := e.client()
	cp := *orNew(p)
	src := cp.Meta
	cp.Meta = make(mcp.Meta, len(src)+1)
	for k, v := range src {
		cp.Meta[k] = v
	}
	token := mcp.StringID(randToken())
	cp.Meta[mcp.MetaKeyProgressToken] = token
	c.progress.Store(token, fn)
	return WithProgress(ctx, nil), &cp, func() { c.progress.Delete(token) }
}

// taskOver: a 2025-11-25 tasks/result answers once the task is over: its
// result says completed, its JSON-RPC error failed. Any other error (the
// connection is gone) tells nothing of the task.
func (*legacyEra) taskOver(ctx context.Context, fn func(*Task), id string, err error) {
	if ctx.Err() != nil || (err != nil && !taskOutcome(err)) {
		return
	}
	end := &Task{ID: id, Status: mcp.TaskCompleted}
	if err != nil {
		end.Status = mcp.TaskFailed
	}
	fn(end)
}

func (*legacyEra) taskCtx(ctx context.Context) context.Context { return ctx }

// taskResult sends tasks/result, which the server answers once the task
// is over, again after a transient failure.
func (e *legacyEra) taskResult(ctx context.Context, id string) (*mcp.CallToolResult, error) {
	c := e.client()
	retry := c.newTaskRetry(id)
	for {
		p := &mcp.TaskIDParams{TaskID: id}
		var res mcp.CallToolResult
		err := c.call(ctx, mcp.MethodTasksResult, p, &p.Meta, &res)
		if err == nil {
			return &res, nil
		}
		if again, err := retry.again(ctx, mcp.MethodTasksResult, err); !again {
			return nil, err
		}
	}
}
