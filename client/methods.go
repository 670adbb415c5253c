package client

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/mcpkit/mcpkit/jsonrpc"

	"github.com/mcpkit/mcpkit/mcp"
)

// Ping checks that the server is responsive. The modern era has no ping:
// there it returns ErrModern.
func (c *Client) Ping(ctx context.Context) error {
	if c.Era() == EraModern {
		return fmt.Errorf("%w: ping", ErrModern)
	}
	ctx, cancel := c.withTimeout(ctx, mcp.MethodPing)
	defer cancel()
	return c.rpc(ctx, mcp.MethodPing, nil, nil, jsonrpc.CallOptions{}, 0)
}

// ListTools returns one page of tools; p may be nil for the first page.
//
// On a modern connection the page may come from the Cache, and tools
// whose x-mcp-header annotations are invalid (SEP-2243) are left out of
// the result, with a warning in the log; the annotations of the others
// are kept for CallTool.
func (c *Client) ListTools(ctx context.Context, p *mcp.ListToolsParams) (*mcp.ListToolsResult, error) {
	p = orNew(p)
	var res mcp.ListToolsResult
	if err := c.cachedCall(ctx, mcp.MethodToolsList, cursorKey(p.Cursor), true, p, &p.Meta, &res); err != nil {
		return nil, err
	}
	c.noteOutputs(res.Tools, p.Cursor == nil && res.NextCursor == nil)
	c.noteTaskSupport(res.Tools)
	if c.Era() == EraModern {
		res.Tools = c.noteTools(res.Tools)
	}
	return &res, nil
}

// Tools iterates over every tool, fetching pages as it goes. It stops at
// the first error, which it yields.
func (c *Client) Tools(ctx context.Context) iter.Seq2[mcp.Tool, error] {
	return paginate(func(cursor *string) ([]mcp.Tool, *string, error) {
		res, err := c.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, nil, err
		}
		return res.Tools, res.NextCursor, nil
	})
}

// CallTool calls a tool. A tool-level failure is a result with IsError
// set, not an error; errors are protocol or transport failures.
//
// On a modern connection, the arguments of properties the tool's listed
// input schema annotates with x-mcp-header are mirrored into Mcp-Param-*
// headers (Streamable HTTP; see transport.Message.Header). A tool the client
// dropped for invalid annotations is not called (ErrInvalidTool). When the
// server answers -32020 (header mismatch), the client lists the tools
// again, which refreshes the annotations, and retries once.
//
// A modern server may answer that it requires input first (SEP-2322): the
// client answers with its handlers and repeats the call (see
// Options.ManualInput), or returns an *InputRequiredError. For a manual
// retry, set p.InputResponses and p.RequestState.
//
// With Options.Tasks set, a modern server may run the call as a task
// (resultType "task"): CallTool then waits for the task's outcome (see
// TaskResult) and returns it; when ctx ends first, it cancels the task.
// On a legacy connection, a call with p.Task set is run as a task the
// same way (see RunToolTask). A tool that runs only as a task is run as
// one on its own: a legacy server's tool whose listed
// execution.taskSupport is "required" is called as a task from the
// start, and a plain call refused for want of a task (-32601 from a
// legacy server that runs tool calls as tasks, -32021 naming the tasks
// extension from a modern one) is made again as a task. WithTaskStatus
// reports the task's progress through its states.
func (c *Client) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if c.Era() != EraModern {
		if p != nil && p.Task != nil {
			return c.RunToolTask(ctx, p)
		}
		return c.callLegacy(ctx, p)
	}
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

// callTool sends tools/call and decodes its result into result; on a
// modern connection (where exchange mirrors the annotated arguments into
// headers) it handles -32020 (see CallTool). A modern server's task is a
// *taskStarted error.
func (c *Client) callTool(ctx context.Context, p *mcp.CallToolParams, result any) error {
	p = orNew(p)
	if c.Era() != EraModern {
		return c.call(ctx, mcp.MethodToolsCall, p, &p.Meta, result)
	}
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

// refreshTools lists every tool from the server, bypassing the cache, to
// refresh the annotations CallTool mirrors.
func (c *Client) refreshTools(ctx context.Context) error {
	var cursor *string
	for range 1000 {
		p := &mcp.ListToolsParams{Cursor: cursor}
		var res mcp.ListToolsResult
		if err := c.call(ctx, mcp.MethodToolsList, p, &p.Meta, &res); err != nil {
			return err
		}
		c.noteTools(res.Tools)
		c.noteOutputs(res.Tools, false)
		c.noteTaskSupport(res.Tools)
		if res.NextCursor == nil || (cursor != nil && *cursor == *res.NextCursor) {
			return nil
		}
		cursor = res.NextCursor
	}
	return nil
}

// ListPrompts returns one page of prompts; p may be nil. On a modern
// connection the page may come from the Cache.
func (c *Client) ListPrompts(ctx context.Context, p *mcp.ListPromptsParams) (*mcp.ListPromptsResult, error) {
	p = orNew(p)
	var res mcp.ListPromptsResult
	if err := c.cachedCall(ctx, mcp.MethodPromptsList, cursorKey(p.Cursor), true, p, &p.Meta, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Prompts iterates over every prompt.
func (c *Client) Prompts(ctx context.Context) iter.Seq2[mcp.Prompt, error] {
	return paginate(func(cursor *string) ([]mcp.Prompt, *string, error) {
		res, err := c.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, nil, err
		}
		return res.Prompts, res.NextCursor, nil
	})
}

// GetPrompt renders a prompt. A modern server's input-required answer is
// handled as by CallTool.
func (c *Client) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	p = orNew(p)
	var res mcp.GetPromptResult
	if err := c.call(ctx, mcp.MethodPromptsGet, p, &p.Meta, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ListResources returns one page of resources; p may be nil. On a modern
// connection the page may come from the Cache.
func (c *Client) ListResources(ctx context.Context, p *mcp.ListResourcesParams) (*mcp.ListResourcesResult, error) {
	p = orNew(p)
	var res mcp.ListResourcesResult
	if err := c.cachedCall(ctx, mcp.MethodResourcesList, cursorKey(p.Cursor), true, p, &p.Meta, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Resources iterates over every resource.
func (c *Client) Resources(ctx context.Context) iter.Seq2[mcp.Resource, error] {
	return paginate(func(cursor *string) ([]mcp.Resource, *string, error) {
		res, err := c.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, nil, err
		}
		return res.Resources, res.NextCursor, nil
	})
}

// ListResourceTemplates returns one page of resource templates; p may be
// nil. On a modern connection the page may come from the Cache.
func (c *Client) ListResourceTemplates(ctx context.Context, p *mcp.ListResourceTemplatesParams) (*mcp.ListResourceTemplatesResult, error) {
	p = orNew(p)
	var res mcp.ListResourceTemplatesResult
	if err := c.cachedCall(ctx, mcp.MethodResourcesTemplatesList, cursorKey(p.Cursor), true, p, &p.Meta, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ResourceTemplates iterates over every resource template.
func (c *Client) ResourceTemplates(ctx context.Context) iter.Seq2[mcp.ResourceTemplate, error] {
	return paginate(func(cursor *string) ([]mcp.ResourceTemplate, *string, error) {
		res, err := c.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return nil, nil, err
		}
		return res.ResourceTemplates, res.NextCursor, nil
	})
}

// ReadResource reads a resource. A missing resource is an error that
// matches mcp.ErrResourceNotFound with errors.Is and wraps the server's
// *jsonrpc.Error (code -32002 from legacy servers, -32602 from 2026-07-28
// on, SEP-2164). On
// a modern connection the result may come from the Cache (never for a
// retry that carries InputResponses or RequestState, nor one that took the
// driver's retries). A modern server's input-required answer is handled
// as by CallTool.
func (c *Client) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	p = orNew(p)
	var res mcp.ReadResourceResult
	cacheable := len(p.InputResponses) == 0 && p.RequestState == ""
	if err := c.cachedCall(ctx, mcp.MethodResourcesRead, "u:"+p.URI, cacheable, p, &p.Meta, &res); err != nil {
		if e, ok := jsonrpc.AsError(err); ok && (e.Code == mcp.CodeResourceNotFound || e.Code == mcp.CodeInvalidParams) {
			return nil, fmt.Errorf("client: resources/read %q: %w (%w)", p.URI, mcp.ErrResourceNotFound, err)
		}
		return nil, err
	}
	return &res, nil
}

// Subscribe asks for notifications/resources/updated about one resource.
// The modern era replaced it with Listen (resourceSubscriptions): there it
// returns ErrModern.
func (c *Client) Subscribe(ctx context.Context, uri string) error {
	if c.Era() == EraModern {
		return fmt.Errorf("%w: resources/subscribe (use Listen)", ErrModern)
	}
	p := &mcp.SubscribeParams{URI: uri}
	return c.call(ctx, mcp.MethodResourcesSubscribe, p, &p.Meta, nil)
}

// Unsubscribe cancels a Subscribe. On a modern connection it returns
// ErrModern.
func (c *Client) Unsubscribe(ctx context.Context, uri string) error {
	if c.Era() == EraModern {
		return fmt.Errorf("%w: resources/unsubscribe (close the Listen subscription)", ErrModern)
	}
	p := &mcp.UnsubscribeParams{URI: uri}
	return c.call(ctx, mcp.MethodResourcesUnsubscribe, p, &p.Meta, nil)
}

// Complete asks for completions of a prompt argument or template variable.
func (c *Client) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	p = orNew(p)
	var res mcp.CompleteResult
	if err := c.call(ctx, mcp.MethodCompletionComplete, p, &p.Meta, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// SetLoggingLevel sets the minimum level of the log messages the server
// sends. Legacy: it sends logging/setLevel. Modern (2026-07-28, where that
// request no longer exists): it sends nothing; every later request carries
// the level as io.modelcontextprotocol/logLevel in its _meta (unless the
// request's own _meta sets one), and the server sends that request's log
// messages on its own response stream, to OnLog. Without a level a modern
// server sends no log messages. The empty level stops sending one.
func (c *Client) SetLoggingLevel(ctx context.Context, level mcp.LoggingLevel) error {
	if c.Era() == EraModern {
		if level != "" && !level.Valid() {
			return fmt.Errorf("client: invalid logging level %q", level)
		}
		c.mu.Lock()
		c.logLevel = level
		c.mu.Unlock()
		return nil
	}
	p := &mcp.SetLevelParams{Level: level}
	return c.call(ctx, mcp.MethodLoggingSetLevel, p, &p.Meta, nil)
}

// RootsChanged tells the server that the client's roots changed
// (notifications/roots/list_changed). The modern era has no such
// notification: there it returns ErrModern.
func (c *Client) RootsChanged(ctx context.Context) error {
	if c.Era() == EraModern {
		return fmt.Errorf("%w: notifications/roots/list_changed", ErrModern)
	}
	return c.notifyOut(ctx, mcp.NotificationRootsListChanged, nil)
}

func orNew[T any](p *T) *T {
	if p == nil {
		return new(T)
	}
	cp := *p // never mutate the caller's params (the progress token, the envelope)
	return &cp
}

// errCursorLoop reports a server that sent the same cursor twice in a
// row, which would otherwise make an iterator run forever.
var errCursorLoop = errors.New("client: the server repeated a pagination cursor")

// paginate turns a page fetcher into an iterator.
func paginate[T any](fetch func(cursor *string) ([]T, *string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var cursor *string
		for {
			items, next, err := fetch(cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == nil {
				return
			}
			if cursor != nil && *cursor == *next {
				var zero T
				yield(zero, errCursorLoop)
				return
			}
			cursor = next
		}
	}
}

// asTaskStarted is errors.As for *taskStarted. Its target escapes: kept
// out of CallTool, whose successful calls then allocate nothing for it.
func asTaskStarted(err error) (*taskStarted, bool) {
	if err == nil {
		return nil, false
	}
	var ts *taskStarted
	ok := errors.As(err, &ts)
	return ts, ok
}
