package gateway

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/skills"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
)

var skillFS = fstest.MapFS{
	"pdf-processing/SKILL.md":                 {Data: []byte("---\nname: pdf-processing\ndescription: PDFs\n---\nSee templates/.\n")},
	"pdf-processing/templates/invoice.md":     {Data: []byte("Invoice\n")},
	"pdf-processing/templates/regional/eu.md": {Data: []byte("EU\n")},
	"pdf-processing/logo.bin":                 {Data: []byte{0, 0xff, 1}},
}

func skillsUpstream(t *testing.T) *server.Server {
	s := server.New(nil)
	x, err := skills.NewServer(s, nil)
	must(t, err)
	must(t, x.AddFS(skillFS, ""))
	return s
}

func callSkills[Out any](t *testing.T, p *mcptest.Pair, method string, params any) (Out, *jsonrpc.Error) {
	t.Helper()
	out, err := client.CallMethod[Out](p.Context(), p.Client, method, params)
	if err != nil {
		e, ok := jsonrpc.AsError(err)
		if !ok {
			t.Fatalf("%s: %v", method, err)
		}
		return out, e
	}
	return out, nil
}

// TestSkillsRelayed: an upstream's skills pass through under its prefix
// (skill://<prefix>/<skill-path>/...), names and digests unchanged, with
// skills/get and resources/directory/read forwarded, in every era pair.
func TestSkillsRelayed(t *testing.T) {
	eraPairs(t, func(t *testing.T, up, down client.Era) {
		docs := newMemUpstream(t, skillsUpstream(t))
		plain := newMemUpstream(t, upstreamServer(t, "plain"))
		g := newGateway(t, &Options{Upstreams: []Upstream{
			{Name: "docs", Prefix: "docs", Connect: docs.connect, ProtocolVersion: version(up)},
			{Name: "plain", Prefix: "plain", Connect: plain.connect, ProtocolVersion: version(up)},
		}})
		p := mcptest.NewPair(t, g.Server(), &mcptest.Options{Era: down})
		if down == client.EraModern {
			_, err := p.Client.Discover(p.Context())
			must(t, err)
		}
		if v, ok := p.Client.ServerExtension(skills.ExtensionID); !ok || string(v) != `{"directoryRead":true}` {
			t.Fatalf("extension: %s %v", v, ok)
		}

		list, e := callSkills[skills.ListResult](t, p, skills.MethodList, nil)
		if e != nil || len(list.Skills) != 1 {
			t.Fatalf("skills/list = %+v, %v", list, e)
		}
		sk := list.Skills[0]
		if _, name, err := skills.ParseSkillURI(sk.URI); err != nil || sk.URI != "skill://docs/pdf-processing/SKILL.md" || name != sk.Frontmatter.Name() {
			t.Fatalf("entry %s (name %q, %v)", sk.URI, name, err)
		}
		if mcp.IsModern(p.Version) != (list.TTLMs != nil) {
			t.Fatalf("cache hints on %s: %v", p.Version, list.TTLMs)
		}
		for _, f := range sk.Resources.Files {
			if !skills.Within(sk.URI, f.URI) {
				t.Errorf("%s is outside %s", f.URI, sk.URI)
			}
			rr, err := p.Client.ReadResource(p.Context(), &mcp.ReadResourceParams{URI: f.URI})
			must(t, err)
			var data []byte
			switch c := rr.Contents[0].(type) {
			case *mcp.TextResourceContents:
				data = []byte(c.Text)
			case *mcp.BlobResourceContents:
				data = c.Blob
			}
			if skills.Digest(data) != f.Digest || int64(len(data)) != f.Size {
				t.Errorf("%s read through the gateway does not match its manifest entry", f.URI)
			}
		}

		got, e := callSkills[skills.GetResult](t, p, skills.MethodGet, skills.GetParams{URI: sk.URI})
		if e != nil || got.Skill.URI != sk.URI || len(got.Skill.Resources.Files) != 4 || got.Skill.Resources.Files[1].URI != "skill://docs/pdf-processing/logo.bin" {
			t.Fatalf("skills/get = %+v, %v", got, e)
		}
		for _, uri := range []string{"skill://pdf-processing/SKILL.md", "skill://plain/pdf-processing/SKILL.md", "skill://docs/nope/SKILL.md", "docs+skill://pdf-processing/SKILL.md"} {
			if _, e := callSkills[skills.GetResult](t, p, skills.MethodGet, skills.GetParams{URI: uri}); e == nil || e.Code != mcp.CodeInvalidParams {
				t.Errorf("skills/get %s: %v, want -32602", uri, e)
			}
		}

		dir, e := callSkills[skills.DirectoryReadResult](t, p, skills.MethodDirectoryRead, skills.DirectoryReadParams{URI: "skill://docs/pdf-processing/templates"})
		var uris []string
		for _, r := range dir.Resources {
			uris = append(uris, r.URI+" "+r.MIMEType)
		}
		if e != nil || !slices.Equal(uris, []string{"skill://docs/pdf-processing/templates/invoice.md text/markdown", "skill://docs/pdf-processing/templates/regional inode/directory"}) {
			t.Fatalf("directory read = %v, %v", uris, e)
		}
		for _, uri := range []string{"skill://docs/pdf-processing/SKILL.md", "skill://plain/pdf-processing", "skill://pdf-processing"} {
			if _, e := callSkills[jsontext.Value](t, p, skills.MethodDirectoryRead, skills.DirectoryReadParams{URI: uri}); e == nil || e.Code != mcp.CodeInvalidParams {
				t.Errorf("directory read %s: %v, want -32602", uri, e)
			}
		}
	})
}

// TestSkillsUnprefixed: without a prefix the URIs pass unchanged.
func TestSkillsUnprefixed(t *testing.T) {
	docs := newMemUpstream(t, skillsUpstream(t))
	g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "docs", Connect: docs.connect}}})
	p := mcptest.NewPair(t, g.Server(), &mcptest.Options{Era: client.EraLegacy})
	list, e := callSkills[skills.ListResult](t, p, skills.MethodList, nil)
	if e != nil || len(list.Skills) != 1 || list.Skills[0].URI != "skill://pdf-processing/SKILL.md" || !strings.HasPrefix(list.Skills[0].Resources.Files[1].URI, "skill://pdf-processing/") {
		t.Fatalf("skills/list = %+v, %v", list, e)
	}
	if _, e := callSkills[skills.GetResult](t, p, skills.MethodGet, skills.GetParams{URI: list.Skills[0].URI}); e != nil {
		t.Fatalf("skills/get: %v", e)
	}
}

func TestSkillNames(t *testing.T) {
	for in, want := range map[string]string{
		"skill://pdf/SKILL.md":          "skill://fs/pdf/SKILL.md",
		"skill://acme/x/y/a.md":         "skill://fs/acme/x/y/a.md",
		"github://o/r/refunds/SKILL.md": "fs+github://o/r/refunds/SKILL.md",
	} {
		if got := outer("fs", kindResource, in); got != want {
			t.Errorf("outer(%q) = %q, want %q", in, got, want)
		}
		if back, ok := inner("fs", kindResource, want); !ok || back != in {
			t.Errorf("inner(%q) = %q, %v", want, back, ok)
		}
	}
}
