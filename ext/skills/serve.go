package skills

import (
	"cmp"
	"context"
	"encoding/base64"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// state is an immutable snapshot of the registered skills: requests
// read it without a lock; AddSkill, AddFS and Remove replace it.
type state struct {
	skills []*skill          // sorted by URI
	byURI  map[string]*skill // by SKILL.md URI
	bytes  int64             // all files
	dirs   map[string][]entry
	files  []string // every file URI, sorted
}

// entry is a child of a directory: a file or a subdirectory.
type entry struct {
	res mcp.Resource
	dir bool
}

func newState(all []*skill) *state {
	slices.SortFunc(all, func(a, b *skill) int { return cmp.Compare(a.entry.URI, b.entry.URI) })
	st := &state{skills: all, byURI: make(map[string]*skill, len(all)), dirs: make(map[string][]entry)}
	seen := make(map[string]bool)
	add := func(dir string, e entry) {
		if !seen[e.res.URI] {
			seen[e.res.URI] = true
			st.dirs[dir] = append(st.dirs[dir], e)
		}
	}
	for _, sk := range all {
		st.byURI[sk.entry.URI] = sk
		st.bytes += sk.bytes
		for _, f := range sk.files {
			st.files = append(st.files, f.uri)
			dir := path.Dir(f.uri[len(Scheme):])
			add(Scheme+dir, entry{res: f.resource(sk)})
			for strings.Contains(dir, "/") {
				parent := path.Dir(dir)
				add(Scheme+parent, entry{res: mcp.Resource{URI: Scheme + dir, Name: path.Base(dir), MIMEType: DirectoryMIMEType}, dir: true})
				dir = parent
			}
		}
	}
	for _, es := range st.dirs {
		slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.res.URI, b.res.URI) })
	}
	slices.Sort(st.files)
	return st
}

// resource is the file's resources/list and directory entry.
func (f *file) resource(sk *skill) mcp.Resource {
	r := mcp.Resource{URI: f.uri, Name: path.Base(f.uri), MIMEType: f.mime, Size: ptr(int64(len(f.data)))}
	if f.uri == sk.entry.URI {
		r.Name, r.Description = sk.entry.Frontmatter.Name(), sk.entry.Frontmatter.Description()
	}
	return r
}

// sees reports whether the caller of req may see the resource uri.
func (x *Server) sees(ctx context.Context, req *server.Request, uri string) bool {
	return x.srv.Visible(ctx, req, server.Item{Kind: server.KindResource, Name: uri})
}

// seesUnder reports whether the caller may see a file under dir.
func (x *Server) seesUnder(ctx context.Context, req *server.Request, st *state, dir string) bool {
	prefix := dir + "/"
	for i := sort.SearchStrings(st.files, prefix); i < len(st.files) && strings.HasPrefix(st.files[i], prefix); i++ {
		if x.sees(ctx, req, st.files[i]) {
			return true
		}
	}
	return false
}

func encodeCursor(last string) string { return base64.RawURLEncoding.EncodeToString([]byte(last)) }

func decodeCursor(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) == 0 {
		return "", jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid cursor")
	}
	return string(b), nil
}

// stamp sets the cache hints of a 2026-07-28 result.
func (x *Server) stamp(req *server.Request) (*int64, mcp.CacheScope) {
	if !mcp.IsModern(req.ProtocolVersion()) {
		return nil, ""
	}
	ttl, scope := x.srv.CacheHints()
	return &ttl, scope
}

// list answers skills/list: the skills the caller may see (those whose
// SKILL.md resource it may see), by URI, a page at a time.
func (x *Server) list(ctx context.Context, req *server.Request, in ListParams) (*ListResult, error) {
	after, err := decodeCursor(in.Cursor)
	if err != nil {
		return nil, err
	}
	st := x.state.Load()
	i, _ := slices.BinarySearchFunc(st.skills, after, func(sk *skill, u string) int { return cmp.Compare(sk.entry.URI, u) })
	out := &ListResult{Skills: []Skill{}}
	for ; i < len(st.skills); i++ {
		sk := st.skills[i]
		if sk.entry.URI <= after || !x.sees(ctx, req, sk.entry.URI) {
			continue
		}
		if len(out.Skills) == x.opts.PageSize {
			out.NextCursor = encodeCursor(out.Skills[len(out.Skills)-1].URI)
			break
		}
		out.Skills = append(out.Skills, sk.entry)
	}
	out.TTLMs, out.CacheScope = x.stamp(req)
	return out, nil
}

// get answers skills/get; a skill the caller may not see is answered as
// an unknown one.
func (x *Server) get(ctx context.Context, req *server.Request, in GetParams) (*GetResult, error) {
	sk, ok := x.state.Load().byURI[in.URI]
	if !ok || !x.sees(ctx, req, in.URI) {
		return nil, jsonrpc.Errorf(mcp.CodeInvalidParams, "No skill is served at %s", in.URI)
	}
	out := &GetResult{Skill: sk.entry}
	out.TTLMs, out.CacheScope = x.stamp(req)
	return out, nil
}

// readDirectory answers resources/directory/read: the direct children
// of a directory of the skill namespace the caller may see. A URI that
// is no directory, or one holding nothing the caller may see, is -32602.
func (x *Server) readDirectory(ctx context.Context, req *server.Request, in DirectoryReadParams) (*DirectoryReadResult, error) {
	after, err := decodeCursor(in.Cursor)
	if err != nil {
		return nil, err
	}
	st := x.state.Load()
	children, ok := st.dirs[in.URI]
	if !ok || !x.seesUnder(ctx, req, st, in.URI) {
		return nil, jsonrpc.Errorf(mcp.CodeInvalidParams, "%s is not a directory resource", in.URI)
	}
	out := &DirectoryReadResult{Resources: []mcp.Resource{}}
	for _, c := range children {
		if c.res.URI <= after {
			continue
		}
		if c.dir && !x.seesUnder(ctx, req, st, c.res.URI) || !c.dir && !x.sees(ctx, req, c.res.URI) {
			continue
		}
		if len(out.Resources) == x.opts.PageSize {
			out.NextCursor = encodeCursor(out.Resources[len(out.Resources)-1].URI)
			break
		}
		out.Resources = append(out.Resources, c.res)
	}
	return out, nil
}
