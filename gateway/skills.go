package gateway

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"slices"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/skills"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// Skills (io.modelcontextprotocol/skills, SEP-2640) pass through the
// gateway: a skill's files are resources, relayed like any other (a
// skill:// URI keeps its scheme and gets the prefix as its first
// segment, which the SEP reads as an organizational prefix, so the
// skill's name, the final segment, is unchanged), and the gateway
// answers skills/list from the entries its upstreams listed at their
// last sync, skills/get and resources/directory/read by forwarding to
// the upstream the URI names. An entry is listed only while its
// SKILL.md resource is registered for its upstream: the naming rules of
// resources (prefixes, the keeper of an unprefixed name) decide for
// skills too, and Options.Visibility hides a skill from whoever it
// hides its SKILL.md from. Digests pass unchanged: a gateway rewrites
// URIs, never contents.

// maxSkillPages bounds the pages of an upstream's skills/list walked in
// one sync: an upstream that never stops paging is cut off there.
const maxSkillPages = 1000

// skillsOf lists the upstream's skills when it declares the extension:
// every page, URIs given the gateway's names. ok is false when it does
// not declare the extension.
func (u *upstream) skillsOf(ctx context.Context, c *client.Client) (list []skills.Skill, dirRead, ok bool, err error) {
	raw, ok := c.ServerExtension(skills.ExtensionID)
	if !ok {
		return nil, false, false, nil
	}
	var settings skills.Settings
	_ = json.Unmarshal(raw, &settings)
	cursor := ""
	for range maxSkillPages {
		page, err := client.CallMethod[skills.ListResult](ctx, c, skills.MethodList, skills.ListParams{Cursor: cursor})
		if err != nil {
			return nil, false, true, err
		}
		for _, sk := range page.Skills {
			list = append(list, u.outerSkill(sk))
		}
		if page.NextCursor == "" || page.NextCursor == cursor {
			return list, settings.DirectoryRead, true, nil
		}
		cursor = page.NextCursor
	}
	u.g.log.Warn("gateway: an upstream's skills/list did not end; its first pages are kept", "upstream", u.cfg.Name, "pages", maxSkillPages)
	return list, settings.DirectoryRead, true, nil
}

// outerSkill gives an entry the URIs the gateway's clients know.
func (u *upstream) outerSkill(sk skills.Skill) skills.Skill {
	sk.URI = outer(u.cfg.Prefix, kindResource, sk.URI)
	files := make([]skills.File, len(sk.Resources.Files))
	for i, f := range sk.Resources.Files {
		f.URI = outer(u.cfg.Prefix, kindResource, f.URI)
		files[i] = f
	}
	if !sk.Resources.Dynamic {
		sk.Resources.Files = files
	}
	return sk
}

// setSkills records the upstream's skills after a sync, and advertises
// the extension (and registers its methods) once an upstream does.
func (u *upstream) setSkills(list []skills.Skill, dirRead, declared bool) {
	u.mu.Lock()
	u.skills, u.skillsDirRead, u.skillsDeclared = list, dirRead, declared
	u.mu.Unlock()
	if !declared {
		return
	}
	g := u.g
	g.skillsOnce.Do(func() {
		for _, err := range []error{
			server.AddMethod(g.srv, skills.MethodList, g.listSkills),
			server.AddMethod(g.srv, skills.MethodGet, g.getSkill),
			server.AddMethod(g.srv, skills.MethodDirectoryRead, g.readSkillDirectory),
		} {
			if err != nil {
				g.log.Warn("gateway: skills method not registered", "err", err)
			}
		}
	})
	// directoryRead is forwarded, so it is declared when an upstream does.
	g.mu.Lock()
	g.skillsDirRead = g.skillsDirRead || dirRead
	settings := skills.Settings{DirectoryRead: g.skillsDirRead}
	g.mu.Unlock()
	if err := g.srv.AddExtension(skills.ExtensionID, settings); err != nil {
		g.log.Warn("gateway: extension not advertised", "id", skills.ExtensionID, "err", err)
	}
}

// listSkills answers skills/list: the skills of every upstream whose
// SKILL.md is registered for it and visible to the caller, by URI.
func (g *Gateway) listSkills(ctx context.Context, req *server.Request, in skills.ListParams) (*skills.ListResult, error) {
	var after string
	if in.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(in.Cursor)
		if err != nil || len(b) == 0 {
			return nil, jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid cursor")
		}
		after = string(b)
	}
	var all []skills.Skill
	for _, u := range g.ups {
		u.mu.Lock()
		held := u.skills
		u.mu.Unlock()
		for _, sk := range held {
			if sk.URI > after && g.names.lookup(kindResource, sk.URI) == u &&
				g.srv.Visible(ctx, req, server.Item{Kind: server.KindResource, Name: sk.URI}) {
				all = append(all, sk)
			}
		}
	}
	slices.SortFunc(all, func(a, b skills.Skill) int { return cmp.Compare(a.URI, b.URI) })
	out := &skills.ListResult{Skills: all}
	if size := g.pageSize(); len(all) > size {
		out.Skills = all[:size]
		out.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(all[size-1].URI))
	}
	if mcp.IsModern(req.ProtocolVersion()) {
		ttl, scope := g.srv.CacheHints()
		out.TTLMs, out.CacheScope = &ttl, scope
	}
	return out, nil
}

func (g *Gateway) pageSize() int {
	if g.opts.Server != nil && g.opts.Server.PageSize > 0 {
		return g.opts.Server.PageSize
	}
	return server.DefaultPageSize
}

// owners are the upstreams a skill or directory URI of the gateway may
// belong to, with their name for it: the upstream whose prefix it
// carries, or, for unprefixed upstreams, the keeper of the URI's
// resource first and the others in configuration order.
func (g *Gateway) owners(uri string) []struct {
	u     *upstream
	inner string
} {
	var out []struct {
		u     *upstream
		inner string
	}
	keeper := g.names.lookup(kindResource, uri)
	for _, u := range g.ups {
		in, ok := inner(u.cfg.Prefix, kindResource, uri)
		if !ok {
			continue
		}
		e := struct {
			u     *upstream
			inner string
		}{u, in}
		if u == keeper {
			out = slices.Insert(out, 0, e)
		} else {
			out = append(out, e)
		}
	}
	return out
}

// forwardSkill calls method on the upstream's control connection,
// holding one of its MaxInFlight slots.
func forwardSkill[Out any](ctx context.Context, u *upstream, method string, params any) (Out, error) {
	var zero Out
	c, release, err := u.acquireControl(ctx)
	if err != nil {
		return zero, err
	}
	defer release()
	return client.CallMethod[Out](ctx, c, method, params)
}

// invalidParams reports whether err is the upstream's -32602.
func invalidParams(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == mcp.CodeInvalidParams
}

// getSkill answers skills/get by forwarding to the upstream the URI
// names; the entry comes back with the gateway's URIs. A URI no
// upstream serves as a skill, or one the caller may not see, is -32602.
func (g *Gateway) getSkill(ctx context.Context, req *server.Request, in skills.GetParams) (*skills.GetResult, error) {
	unknown := jsonrpc.Errorf(mcp.CodeInvalidParams, "No skill is served at %s", in.URI)
	if !g.srv.Visible(ctx, req, server.Item{Kind: server.KindResource, Name: in.URI}) {
		return nil, unknown
	}
	for _, o := range g.owners(in.URI) {
		if _, declared := g.declaresSkills(o.u); !declared {
			continue
		}
		res, err := forwardSkill[skills.GetResult](ctx, o.u, skills.MethodGet, skills.GetParams{URI: o.inner})
		if invalidParams(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out := &skills.GetResult{Skill: o.u.outerSkill(res.Skill)}
		if mcp.IsModern(req.ProtocolVersion()) {
			ttl, scope := g.srv.CacheHints()
			out.TTLMs, out.CacheScope = &ttl, scope
		}
		return out, nil
	}
	return nil, unknown
}

// readSkillDirectory answers resources/directory/read by forwarding to
// the upstream the URI names (one that declared directoryRead); the
// children come back with the gateway's URIs, those the caller may not
// see left out.
func (g *Gateway) readSkillDirectory(ctx context.Context, req *server.Request, in skills.DirectoryReadParams) (*skills.DirectoryReadResult, error) {
	for _, o := range g.owners(in.URI) {
		if dirRead, declared := g.declaresSkills(o.u); !declared || !dirRead {
			continue
		}
		res, err := forwardSkill[skills.DirectoryReadResult](ctx, o.u, skills.MethodDirectoryRead, skills.DirectoryReadParams{URI: o.inner, Cursor: in.Cursor})
		if invalidParams(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out := &skills.DirectoryReadResult{Resources: make([]mcp.Resource, 0, len(res.Resources)), NextCursor: res.NextCursor}
		for _, r := range res.Resources {
			r.URI = outer(o.u.cfg.Prefix, kindResource, r.URI)
			if r.MIMEType == skills.DirectoryMIMEType || g.srv.Visible(ctx, req, server.Item{Kind: server.KindResource, Name: r.URI}) {
				out.Resources = append(out.Resources, r)
			}
		}
		return out, nil
	}
	return nil, jsonrpc.Errorf(mcp.CodeInvalidParams, "%s is not a directory resource", in.URI)
}

// declaresSkills reports whether the upstream declared the extension at
// its last sync, and directoryRead.
func (g *Gateway) declaresSkills(u *upstream) (dirRead, declared bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.skillsDirRead, u.skillsDeclared
}
