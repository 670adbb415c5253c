package group

import (
	"context"
	"fmt"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// errNoParams is the error of a call given nil params.
var errNoParams = fmt.Errorf("%w: no params", ErrUnknownName)

// CallTool calls the tool whose namespaced name is p.Name on its server,
// under its original name (p itself is not changed). A tool error is a
// result with IsError set, as from client.CallTool; a failure of the
// server is a *ServerError. The call is never repeated on another
// connection.
func (g *Group) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	return routed(ctx, g, p, func(q *mcp.CallToolParams) *string { return &q.Name }, (*client.Client).CallTool)
}

// CallTool is client.CallTool[Out] routed by a namespaced name: the typed
// call (arguments as any Go value, the result's structuredContent
// validated and decoded into Out).
func CallTool[Out any](ctx context.Context, g *Group, name string, args any) (Out, *mcp.CallToolResult, error) {
	m, c, orig, err := g.route(ctx, name)
	if err != nil {
		var zero Out
		return zero, nil, err
	}
	out, res, err := client.CallTool[Out](ctx, c, orig, args)
	if err != nil {
		err = m.fail(err)
	}
	return out, res, err
}

// GetPrompt gets the prompt whose namespaced name is p.Name from its
// server.
func (g *Group) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	return routed(ctx, g, p, func(q *mcp.GetPromptParams) *string { return &q.Name }, (*client.Client).GetPrompt)
}

// ReadResource reads the resource whose namespaced URI is p.URI (listed
// by Resources, or expanded from a template of ResourceTemplates) from its
// server. The contents keep the URIs the server gave.
func (g *Group) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	return routed(ctx, g, p, func(q *mcp.ReadResourceParams) *string { return &q.URI }, (*client.Client).ReadResource)
}

// Complete asks the server of a prompt (p.Ref.Name) or of a resource
// template (p.Ref.URI), namespaced as listed, for completions of an
// argument.
func (g *Group) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return routed(ctx, g, p, func(q *mcp.CompleteParams) *string {
		if q.Ref.Type == mcp.RefResource {
			return &q.Ref.URI
		}
		return &q.Ref.Name
	}, (*client.Client).Complete)
}

// routed sends a copy of p to the server that the namespaced name at
// key(copy) belongs to, with that name replaced by the server's own, and
// records a failure against the server.
func routed[P, R any](ctx context.Context, g *Group, p *P, key func(*P) *string, call func(*client.Client, context.Context, *P) (R, error)) (R, error) {
	var zero R
	if p == nil {
		return zero, errNoParams
	}
	q := *p
	k := key(&q)
	m, c, orig, err := g.route(ctx, *k)
	if err != nil {
		return zero, err
	}
	*k = orig
	res, err := call(c, ctx, &q)
	if err != nil {
		return zero, m.fail(err)
	}
	return res, nil
}
