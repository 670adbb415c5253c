package auth

import (
	"context"
	"slices"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// Visibility returns the visibility filter (server.Options.Visibility)
// that matches the scopes of opts, the same Options given to Require: a
// caller sees a tool only when its token grants Scopes,
// MethodScopes["tools/call"] and ToolScopes[name]; a prompt, resource or
// resource template when it grants Scopes and MethodScopes of
// prompts/get or resources/read. Implies is honoured as Require honours
// it. So tools/list shows exactly the tools a call would not be refused
// (403) for, and a hidden tool's call is answered as an unknown tool's.
// A request without a token (one that did not pass through Require)
// sees only what needs no scope. opts may be nil: everything is visible.
func Visibility(opts *Options) server.VisibilityFunc {
	var o Options
	if opts != nil {
		o = *opts
	}
	implies := o.Implies
	if implies == nil {
		implies = func(granted, needed string) bool { return granted == needed }
	}
	base := normScopes(o.Scopes)
	return func(ctx context.Context, _ server.Caller, it server.Item) bool {
		need := slices.Clone(base)
		switch it.Kind {
		case server.KindTool:
			need = append(need, o.MethodScopes[mcp.MethodToolsCall]...)
			need = append(need, o.ToolScopes[it.Name]...)
		case server.KindPrompt:
			need = append(need, o.MethodScopes[mcp.MethodPromptsGet]...)
		case server.KindResource, server.KindResourceTemplate:
			need = append(need, o.MethodScopes[mcp.MethodResourcesRead]...)
		}
		need = normScopes(need)
		if len(need) == 0 {
			return true
		}
		ti := TokenInfoFrom(ctx)
		if ti == nil {
			return false
		}
		for _, n := range need {
			if !slices.ContainsFunc(ti.Scopes, func(g string) bool { return implies(g, n) }) {
				return false
			}
		}
		return true
	}
}
