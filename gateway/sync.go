package gateway

import (
	"context"
	"errors"
	"iter"
	"maps"
	"slices"
	"sort"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
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
				t.Name = outer(p, kindTool, t.Name)
				t.Meta = viewLinks(p, t.Meta)
				// A 2026 upstream decides when a call becomes a task; the
				// gateway's task is made at the same round (tasks.go).
				var opts []server.ToolOption
				tasks := c.Era() == client.EraModern && t.Execution != nil &&
					(t.Execution.TaskSupport == mcp.TaskSupportOptional || t.Execution.TaskSupport == mcp.TaskSupportRequired)
				if tasks {
					opts = append(opts, server.TaskOnDemand())
				}
				h := u.toolHandler(tools[i].Name, tasks, t.Execution != nil && t.Execution.TaskSupport == mcp.TaskSupportRequired)
				items[i] = item{inner: tools[i].Name, outer: t.Name, enc: encode(t) + c.Era().String(), add: func() error { return srv.AddRawTool(&t, h, opts...) }}
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
	list, dirRead, declared, err := u.skillsOf(ctx, c)
	if err != nil && !unsupported(err) {
		return err
	}
	u.setSkills(list, dirRead, declared)
	u.g.extensions(c)
	if h := u.g.syncHook; h != nil {
		h(u.cfg.Name)
	}
	return nil
}

// apply registers items of kind k and removes the registered ones that
// are gone. Registrations of all upstreams are serialized (g.regMu), so
// that the name table and the server agree; the server's list-change
// notifications go out once per sync (Server.Batch), after the lock.
func (u *upstream) apply(k kind, items []item) {
	var lost []*upstream
	u.g.srv.Batch(func() {
		u.g.regMu.Lock()
		defer u.g.regMu.Unlock()
		lost = u.applyLocked(k, items)
	})
	for _, o := range lost {
		signal(o.resync)
	}
}

func (u *upstream) applyLocked(k kind, items []item) (lost []*upstream) {
	u.mu.Lock()
	old := maps.Clone(u.reg[k])
	u.mu.Unlock()
	var conflicts, skipped []string
	// Names an upstream listed earlier took meanwhile are no longer ours.
	for name := range old {
		if u.g.names.lookup(k, name) != u {
			delete(old, name)
			u.mu.Lock()
			delete(u.reg[k], name)
			u.mu.Unlock()
		}
	}
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		if _, dup := seen[it.outer]; dup {
			continue
		}
		seen[it.outer] = false
		if r, ok := old[it.outer]; ok && r.enc == it.enc {
			seen[it.outer] = true
			continue
		}
		ok, from := u.g.names.claim(k, it.outer, u)
		if !ok {
			conflicts = append(conflicts, k.String()+" "+it.outer)
			continue
		}
		if from != nil {
			// An upstream listed after u had it: it loses it now.
			from.mu.Lock()
			delete(from.reg[k], it.outer)
			from.conflicts = append(from.conflicts, k.String()+" "+it.outer)
			sort.Strings(from.conflicts)
			from.mu.Unlock()
			lost = append(lost, from)
		}
		if err := it.add(); err != nil {
			u.g.log.Warn("gateway: upstream item refused", "upstream", u.cfg.Name, "kind", k.String(), "name", it.outer, "err", err)
			skipped = append(skipped, k.String()+" "+it.outer+": "+err.Error())
			// An earlier registration of the name (ours, or the one of the
			// upstream it was taken from) goes: the server must not keep
			// an item no table knows.
			u.removeLocked(k, []string{it.outer})
			u.g.names.release(k, u, it.outer)
			delete(old, it.outer)
			u.mu.Lock()
			delete(u.reg[k], it.outer)
			u.mu.Unlock()
			continue
		}
		seen[it.outer] = true
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
		u.g.log.Warn("gateway: names kept by an upstream listed earlier", "upstream", u.cfg.Name, "items", conflicts)
	}
	u.mu.Lock()
	for _, name := range gone {
		delete(u.reg[k], name)
	}
	u.conflicts = replaceKind(u.conflicts, k, conflicts)
	u.skipped = replaceKind(u.skipped, k, skipped)
	u.mu.Unlock()
	u.removeLocked(k, gone)
	return lost
}

// replaceKind replaces the entries of kind k in list (each starts with
// the kind's name) by add.
func replaceKind(list []string, k kind, add []string) []string {
	out := slices.DeleteFunc(list, func(s string) bool { return len(s) > len(k.String()) && s[:len(k.String())+1] == k.String()+" " })
	out = append(out, add...)
	sort.Strings(out)
	return out
}

// removeLocked unregisters the names of kind k that u holds from the
// server (g.regMu held).
func (u *upstream) removeLocked(k kind, names []string) {
	names = slices.DeleteFunc(names, func(n string) bool { return u.g.names.lookup(k, n) != u })
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
	// The names stay u's: an upstream whose items were left out for them
	// does not get them (nameTable).
	u.g.names.release(k, u, names...)
}

// withdraw unregisters everything the upstream registered: its items
// disappear from the lists, with list_changed notifications.
func (u *upstream) withdraw() {
	u.g.srv.Batch(func() {
		u.g.regMu.Lock()
		defer u.g.regMu.Unlock()
		for k := range kinds {
			u.mu.Lock()
			names := slices.Collect(maps.Keys(u.reg[k]))
			clear(u.reg[k])
			u.mu.Unlock()
			u.removeLocked(k, names)
		}
	})
	u.mu.Lock()
	u.conflicts, u.skipped = nil, nil
	u.skills, u.skillsDirRead, u.skillsDeclared = nil, false, false
	u.mu.Unlock()
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

// appsExtension is the id of MCP Apps, whose views pass through the
// gateway: their resources are resources, their links tool _meta.
const appsExtension = "io.modelcontextprotocol/ui"

// viewLinks rewrites the MCP Apps view a tool links to (_meta.ui.resourceUri,
// and the "ui/resourceUri" of earlier drafts) to the view's name at the
// gateway.
func viewLinks(prefix string, m mcp.Meta) mcp.Meta {
	if prefix == "" || m == nil {
		return m
	}
	out := maps.Clone(m)
	var ui map[string]any
	if ok, err := m.Get("ui", &ui); ok && err == nil {
		if uri, ok := ui["resourceUri"].(string); ok {
			ui["resourceUri"] = outer(prefix, kindResource, uri)
			out["ui"] = ui
		}
	}
	var old string
	if ok, err := m.Get("ui/resourceUri", &old); ok && err == nil {
		out["ui/resourceUri"] = outer(prefix, kindResource, old)
	}
	return out
}

// extensions advertises the extensions of the upstreams that pass through
// the gateway unchanged (MCP Apps); others need methods the gateway does
// not forward.
func (g *Gateway) extensions(c *client.Client) {
	if v, ok := c.ServerExtension(appsExtension); ok {
		var settings map[string]any
		if json.Unmarshal(v, &settings) == nil {
			if err := g.srv.AddExtension(appsExtension, settings); err != nil {
				g.log.Warn("gateway: extension not advertised", "id", appsExtension, "err", err)
			}
		}
	}
}
