package gateway

import (
	"context"
	"errors"
	"iter"
	"maps"
	"slices"
	"sort"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// item is one entry of an upstream's list, ready to register.
type item struct {
	inner, outer string
	enc          string
	add          func() error
}

// collect walks a paginated list to its end (every cursor followed).
func collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// unsupported reports an error that means the upstream has no such list.
func unsupported(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == mcp.CodeMethodNotFound
}

// sync lists everything the upstream offers and brings the gateway's
// registrations in line: new and changed items are registered, vanished
// ones removed. Only the run goroutine calls it.
func (u *upstream) sync(ctx context.Context, c *client.Client) error {
	caps := c.ServerCapabilities()
	srv := u.g.srv
	p := u.cfg.Prefix
	lists := []struct {
		k    kind
		has  bool
		list func() ([]item, error)
	}{
		{kindTool, caps.Tools != nil, func() ([]item, error) {
			tools, err := collect(c.Tools(ctx))
			items := make([]item, len(tools))
			for i, t := range tools {
				t.Name, t.Execution = outer(p, kindTool, t.Name), nil
				h := u.toolHandler(tools[i].Name)
				items[i] = item{inner: tools[i].Name, outer: t.Name, enc: encode(t), add: func() error { return srv.AddRawTool(&t, h) }}
			}
			return items, err
		}},
		{kindPrompt, caps.Prompts != nil, func() ([]item, error) {
			prompts, err := collect(c.Prompts(ctx))
			items := make([]item, len(prompts))
			for i, pr := range prompts {
				pr.Name = outer(p, kindPrompt, pr.Name)
				h := u.promptHandler(prompts[i].Name)
				items[i] = item{inner: prompts[i].Name, outer: pr.Name, enc: encode(pr), add: func() error { return srv.AddPrompt(&pr, h) }}
			}
			return items, err
		}},
		{kindResource, caps.Resources != nil, func() ([]item, error) {
			rs, err := collect(c.Resources(ctx))
			items := make([]item, len(rs))
			for i, r := range rs {
				r.URI = outer(p, kindResource, r.URI)
				items[i] = item{inner: rs[i].URI, outer: r.URI, enc: encode(r), add: func() error { return srv.AddResource(&r, u.readHandler) }}
			}
			return items, err
		}},
		{kindTemplate, caps.Resources != nil, func() ([]item, error) {
			ts, err := collect(c.ResourceTemplates(ctx))
			items := make([]item, len(ts))
			for i, t := range ts {
				t.URITemplate = outer(p, kindTemplate, t.URITemplate)
				items[i] = item{inner: ts[i].URITemplate, outer: t.URITemplate, enc: encode(t), add: func() error { return srv.AddResourceTemplate(&t, u.readHandler) }}
			}
			return items, err
		}},
	}
	for _, l := range lists {
		var items []item
		if l.has {
			var err error
			if items, err = l.list(); err != nil && !unsupported(err) {
				return err
			}
		}
		u.apply(l.k, items)
	}
	u.g.completions()
	return nil
}

// apply registers items of kind k and removes the registered ones that
// are gone.
func (u *upstream) apply(k kind, items []item) {
	u.mu.Lock()
	old := maps.Clone(u.reg[k])
	u.mu.Unlock()
	seen := make(map[string]bool, len(items))
	var conflicts, skipped []string
	for _, it := range items {
		if seen[it.outer] {
			continue
		}
		seen[it.outer] = true
		if r, ok := old[it.outer]; ok && r.enc == it.enc {
			continue
		}
		if !u.g.names.claim(k, it.outer, u) {
			conflicts = append(conflicts, k.String()+" "+it.outer)
			seen[it.outer] = false
			continue
		}
		if err := it.add(); err != nil {
			u.g.log.Warn("gateway: upstream item refused", "upstream", u.cfg.Name, "kind", k.String(), "name", it.outer, "err", err)
			skipped = append(skipped, k.String()+" "+it.outer+": "+err.Error())
			u.g.names.release(k, u, it.outer)
			seen[it.outer] = false
			continue
		}
		u.mu.Lock()
		u.reg[k][it.outer] = registered{inner: it.inner, enc: it.enc}
		u.mu.Unlock()
	}
	var gone []string
	for name := range old {
		if !seen[name] {
			gone = append(gone, name)
		}
	}
	if len(conflicts) > 0 {
		u.g.log.Warn("gateway: names taken by another upstream", "upstream", u.cfg.Name, "items", conflicts)
	}
	u.mu.Lock()
	for _, name := range gone {
		delete(u.reg[k], name)
	}
	u.conflicts = replaceKind(u.conflicts, k, conflicts)
	u.skipped = replaceKind(u.skipped, k, skipped)
	u.mu.Unlock()
	u.remove(k, gone)
}

// replaceKind replaces the entries of kind k in list (each starts with
// the kind's name) by add.
func replaceKind(list []string, k kind, add []string) []string {
	out := slices.DeleteFunc(list, func(s string) bool { return len(s) > len(k.String()) && s[:len(k.String())+1] == k.String()+" " })
	out = append(out, add...)
	sort.Strings(out)
	return out
}

// remove unregisters names of kind k from the server.
func (u *upstream) remove(k kind, names []string) {
	if len(names) == 0 {
		return
	}
	switch k {
	case kindTool:
		u.g.srv.RemoveTools(names...)
	case kindPrompt:
		u.g.srv.RemovePrompts(names...)
	case kindResource:
		u.g.srv.RemoveResources(names...)
	case kindTemplate:
		u.g.srv.RemoveResourceTemplates(names...)
	}
	u.g.names.release(k, u, names...)
	// An upstream whose items were left out for these names gets them now.
	for _, o := range u.g.ups {
		if o != u {
			o.mu.Lock()
			has := len(o.conflicts) > 0
			o.mu.Unlock()
			if has {
				signal(o.resync)
			}
		}
	}
}

// withdraw unregisters everything the upstream registered: its items
// disappear from the lists, with list_changed notifications.
func (u *upstream) withdraw() {
	for k := range kinds {
		u.mu.Lock()
		names := slices.Collect(maps.Keys(u.reg[k]))
		clear(u.reg[k])
		u.mu.Unlock()
		u.remove(k, names)
	}
	u.mu.Lock()
	u.conflicts, u.skipped = nil, nil
	u.mu.Unlock()
	u.g.completions()
}

// completions declares completion when any connected upstream does.
func (g *Gateway) completions() {
	any := false
	for _, u := range g.ups {
		u.mu.Lock()
		c := u.c
		u.mu.Unlock()
		if c != nil && c.ServerCapabilities().Completions != nil {
			any = true
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if any == g.completing {
		return
	}
	g.completing = any
	if any {
		g.srv.SetCompletionHandler(g.complete)
	} else {
		g.srv.SetCompletionHandler(nil)
	}
}

// innerName finds the upstream holding an outer name and the upstream's
// own name for it.
func (g *Gateway) innerName(k kind, outerName string) (*upstream, string, bool) {
	u := g.names.lookup(k, outerName)
	if u == nil {
		return nil, "", false
	}
	u.mu.Lock()
	r, ok := u.reg[k][outerName]
	u.mu.Unlock()
	return u, r.inner, ok
}
