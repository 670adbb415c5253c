package client

import (
	"context"
	"errors"
	"iter"

	"github.com/mcpkit/mcpkit/jsonrpc"

	"github.com/mcpkit/mcpkit/mcp"
)

// Ping checks that the server is responsive.
func (c *Client) Ping(ctx context.Context) error {
	return c.conn.Call(ctx, mcp.MethodPing, nil, nil)
}

// ListTools returns one page of tools; p may be nil for the first page.
func (c *Client) ListTools(ctx context.Context, p *mcp.ListToolsParams) (*mcp.ListToolsResult, error) {
	p = orNew(p)
	var res mcp.ListToolsResult
	if err := c.call(ctx, mcp.MethodToolsList, p, &p.Meta, &res); err != nil {
		return nil, err
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
func (c *Client) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	p = orNew(p)
	var res mcp.CallToolResult
	if err := c.call(ctx, mcp.MethodToolsCall, p, &p.Meta, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ListPrompts returns one page of prompts; p may be nil.
func (c *Client) ListPrompts(ctx context.Context, p *mcp.ListPromptsParams) (*mcp.ListPromptsResult, error) {
	p = orNew(p)
	var res mcp.ListPromptsResult
	if err := c.call(ctx, mcp.MethodPromptsList, p, &p.Meta, &res); err != nil {
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

// GetPrompt renders a prompt.
func (c *Client) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	p = orNew(p)
	var res mcp.GetPromptResult
	if err := c.call(ctx, mcp.MethodPromptsGet, p, &p.Meta, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ListResources returns one page of resources; p may be nil.
func (c *Client) ListResources(ctx context.Context, p *mcp.ListResourcesParams) (*mcp.ListResourcesResult, error) {
	p = orNew(p)
	var res mcp.ListResourcesResult
	if err := c.call(ctx, mcp.MethodResourcesList, p, &p.Meta, &res); err != nil {
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

// ListResourceTemplates returns one page of resource templates; p may be nil.
func (c *Client) ListResourceTemplates(ctx context.Context, p *mcp.ListResourceTemplatesParams) (*mcp.ListResourceTemplatesResult, error) {
	p = orNew(p)
	var res mcp.ListResourceTemplatesResult
	if err := c.call(ctx, mcp.MethodResourcesTemplatesList, p, &p.Meta, &res); err != nil {
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

// ReadResource reads a resource. A missing resource is a *jsonrpc.Error
// with code -32002 (legacy servers) or -32602; see IsResourceNotFound.
func (c *Client) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	p = orNew(p)
	var res mcp.ReadResourceResult
	if err := c.call(ctx, mcp.MethodResourcesRead, p, &p.Meta, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Subscribe asks for notifications/resources/updated about one resource.
func (c *Client) Subscribe(ctx context.Context, uri string) error {
	p := &mcp.SubscribeParams{URI: uri}
	return c.call(ctx, mcp.MethodResourcesSubscribe, p, &p.Meta, nil)
}

// Unsubscribe cancels a Subscribe.
func (c *Client) Unsubscribe(ctx context.Context, uri string) error {
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
// sends (logging/setLevel).
func (c *Client) SetLoggingLevel(ctx context.Context, level mcp.LoggingLevel) error {
	p := &mcp.SetLevelParams{Level: level}
	return c.call(ctx, mcp.MethodLoggingSetLevel, p, &p.Meta, nil)
}

// RootsChanged tells the server that the client's roots changed
// (notifications/roots/list_changed).
func (c *Client) RootsChanged(ctx context.Context) error {
	return c.conn.Notify(ctx, mcp.NotificationRootsListChanged, nil)
}

func orNew[T any](p *T) *T {
	if p == nil {
		return new(T)
	}
	cp := *p // never mutate the caller's params (the progress token)
	return &cp
}

// errCursorLoop reports a server that sent the same cursor twice in a
// row, which would otherwise make an iterator run forever.
var errCursorLoop = errors.New("mcp: the server repeated a pagination cursor")

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

// IsResourceNotFound reports whether err, returned by ReadResource, says
// the resource does not exist: -32002 from legacy servers, -32602 from
// 2026-07-28 on (SEP-2164).
func IsResourceNotFound(err error) bool {
	e, ok := jsonrpc.AsError(err)
	return ok && (e.Code == mcp.CodeResourceNotFound || e.Code == mcp.CodeInvalidParams)
}
