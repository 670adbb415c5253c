package group

import (
	"context"
	"iter"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// Tool is a tool of one server of the group. Its Name is namespaced; pass
// the embedded mcp.Tool to whoever chooses tools, and its Name back to
// CallTool.
type Tool struct {
	mcp.Tool
	Server   string // the server's Name
	Original string // the name the server gave
}

// Prompt is a prompt of one server, its Name namespaced.
type Prompt struct {
	mcp.Prompt
	Server   string
	Original string
}

// Resource is a resource of one server, its URI namespaced (a handle for
// ReadResource, not a URI to dereference elsewhere); Name is the
// server's.
type Resource struct {
	mcp.Resource
	Server   string
	Original string // the URI the server gave
}

// ResourceTemplate is a resource template of one server, its URITemplate
// namespaced: a URI expanded from it is namespaced too.
type ResourceTemplate struct {
	mcp.ResourceTemplate
	Server   string
	Original string // the URI template the server gave
}

// merge lists every server in the order given to Connect. A server that
// is down, or whose list fails part-way, yields one *ServerError and the
// listing goes on with the next server (after what it listed so far).
func merge[T, Out any](g *Group, ctx context.Context, list func(*client.Client, context.Context) iter.Seq2[T, error], wrap func(*member, T) Out) iter.Seq2[Out, error] {
	return func(yield func(Out, error) bool) {
		var zero Out
		for _, m := range g.members {
			if ctx.Err() != nil {
				yield(zero, ctx.Err())
				return
			}
			c, err := m.get(ctx)
			if err != nil {
				if !yield(zero, err) {
					return
				}
				continue
			}
			for v, err := range list(c, ctx) {
				if err != nil {
					if ctx.Err() != nil { // the caller's end, not the server's
						yield(zero, ctx.Err())
						return
					}
					if !yield(zero, m.fail(err)) {
						return
					}
					break
				}
				if !yield(wrap(m, v), nil) {
					return
				}
			}
		}
	}
}

// Tools lists the tools of every server under namespaced names. Errors
// are per server (*ServerError) and do not end the iteration: stop it
// yourself if you want all or nothing. The context's end does.
func (g *Group) Tools(ctx context.Context) iter.Seq2[Tool, error] {
	return merge(g, ctx, (*client.Client).Tools, func(m *member, t mcp.Tool) Tool {
		orig := t.Name
		t.Name = m.join(orig)
		return Tool{Tool: t, Server: m.name, Original: orig}
	})
}

// Prompts lists the prompts of every server under namespaced names, as
// Tools does.
func (g *Group) Prompts(ctx context.Context) iter.Seq2[Prompt, error] {
	return merge(g, ctx, (*client.Client).Prompts, func(m *member, p mcp.Prompt) Prompt {
		orig := p.Name
		p.Name = m.join(orig)
		return Prompt{Prompt: p, Server: m.name, Original: orig}
	})
}

// Resources lists the resources of every server under namespaced URIs,
// as Tools does.
func (g *Group) Resources(ctx context.Context) iter.Seq2[Resource, error] {
	return merge(g, ctx, (*client.Client).Resources, func(m *member, r mcp.Resource) Resource {
		orig := r.URI
		r.URI = m.join(orig)
		return Resource{Resource: r, Server: m.name, Original: orig}
	})
}

// ResourceTemplates lists the resource templates of every server under
// namespaced URI templates, as Tools does.
func (g *Group) ResourceTemplates(ctx context.Context) iter.Seq2[ResourceTemplate, error] {
	return merge(g, ctx, (*client.Client).ResourceTemplates, func(m *member, t mcp.ResourceTemplate) ResourceTemplate {
		orig := t.URITemplate
		t.URITemplate = m.join(orig)
		return ResourceTemplate{ResourceTemplate: t, Server: m.name, Original: orig}
	})
}
