package skills_test

import (
	"context"
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

const pdfMD = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nmetadata:\n  version: \"2.1\"\n---\n\n# PDF processing\n\nSee references/FORMS.md and templates/.\n"

const gitMD = "---\nname: git-workflow\ndescription: Follow the team's Git conventions\n---\nBranch, commit, push.\n"

func skillsFS() fstest.MapFS {
	return fstest.MapFS{
		"pdf-processing/SKILL.md":                 {Data: []byte(pdfMD)},
		"pdf-processing/references/FORMS.md":      {Data: []byte("# Forms\n")},
		"pdf-processing/templates/invoice.md":     {Data: []byte("Invoice\n")},
		"pdf-processing/templates/regional/eu.md": {Data: []byte("EU invoice\n")},
		"pdf-processing/scripts/logo.png":         {Data: []byte{0x89, 'P', 'N', 'G', 0xff, 0x00}},
		"git-workflow/SKILL.md":                   {Data: []byte(gitMD)},
	}
}

func newSkillsServer(t *testing.T, sopts *server.Options, opts *skills.Options) (*server.Server, *skills.Server) {
	t.Helper()
	s := server.New(sopts)
	x, err := skills.NewServer(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, x
}

func call[Out any](t *testing.T, p *mcptest.Pair, method string, params any) Out {
	t.Helper()
	out, err := client.CallMethod[Out](p.Context(), p.Client, method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return out
}

func callErr(t *testing.T, p *mcptest.Pair, method string, params any) *jsonrpc.Error {
	t.Helper()
	_, err := client.CallMethod[jsontext.Value](p.Context(), p.Client, method, params)
	e, ok := jsonrpc.AsError(err)
	if !ok {
		t.Fatalf("%s: err = %v, want a JSON-RPC error", method, err)
	}
	return e
}

func TestServeSkills(t *testing.T) {
	for _, era := range mcptest.Eras() {
		t.Run(era.String(), func(t *testing.T) {
			s, x := newSkillsServer(t, nil, nil)
			if err := x.AddFS(skillsFS(), ""); err != nil {
				t.Fatal(err)
			}
			p := mcptest.NewPair(t, s, &mcptest.Options{Era: era})

			if era == client.EraModern {
				if _, err := p.Client.Discover(p.Context()); err != nil {
					t.Fatal(err)
				}
			}
			settings, ok := p.Client.ServerExtension(skills.ExtensionID)
			if !ok || string(settings) != `{"directoryRead":true}` {
				t.Fatalf("capabilities.extensions[%s] = %s, %v", skills.ExtensionID, settings, ok)
			}
			if p.Client.ServerCapabilities().Resources == nil {
				t.Fatal("the resources capability is not declared")
			}

			list := call[skills.ListResult](t, p, skills.MethodList, nil)
			if len(list.Skills) != 2 || list.NextCursor != "" {
				t.Fatalf("skills/list = %+v", list)
			}
			if mcp.IsModern(p.Version) != (list.TTLMs != nil && list.CacheScope != "") {
				t.Fatalf("cache hints on %s: ttlMs %v cacheScope %q", p.Version, list.TTLMs, list.CacheScope)
			}
			git, pdf := list.Skills[0], list.Skills[1]
			if git.URI != "skill://git-workflow/SKILL.md" || pdf.URI != "skill://pdf-processing/SKILL.md" {
				t.Fatalf("URIs %s, %s", git.URI, pdf.URI)
			}
			wantFM := skills.Frontmatter{"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents", "metadata": map[string]any{"version": "2.1"}}
			if d := skills.Diff(pdf.Frontmatter, wantFM); d != nil {
				t.Fatalf("frontmatter differs in %v: %v", d, pdf.Frontmatter)
			}
			files := skillsFS()
			var uris []string
			for _, f := range pdf.Resources.Files {
				uris = append(uris, f.URI)
				data := files["pdf-processing/"+strings.TrimPrefix(f.URI, "skill://pdf-processing/")].Data
				if f.Digest != skills.Digest(data) || f.Size != int64(len(data)) {
					t.Errorf("%s: digest %s size %d, want %s %d", f.URI, f.Digest, f.Size, skills.Digest(data), len(data))
				}
			}
			want := []string{"skill://pdf-processing/SKILL.md", "skill://pdf-processing/references/FORMS.md", "skill://pdf-processing/scripts/logo.png", "skill://pdf-processing/templates/invoice.md", "skill://pdf-processing/templates/regional/eu.md"}
			if !slices.Equal(uris, want) {
				t.Fatalf("manifest %v, want %v", uris, want)
			}

			got := call[skills.GetResult](t, p, skills.MethodGet, skills.GetParams{URI: pdf.URI})
			if got.Skill.URI != pdf.URI || len(got.Skill.Resources.Files) != 5 || mcp.IsModern(p.Version) != (got.TTLMs != nil) {
				t.Fatalf("skills/get = %+v", got)
			}
			for _, uri := range []string{"skill://nope/SKILL.md", "skill://pdf-processing", "skill://pdf-processing/references/FORMS.md"} {
				if e := callErr(t, p, skills.MethodGet, skills.GetParams{URI: uri}); e.Code != mcp.CodeInvalidParams {
					t.Errorf("skills/get %s: %v, want -32602", uri, e)
				}
			}

			read, err := p.Client.ReadResource(p.Context(), &mcp.ReadResourceParams{URI: pdf.URI})
			if err != nil {
				t.Fatal(err)
			}
			text, ok := read.Contents[0].(*mcp.TextResourceContents)
			if !ok || text.Text != pdfMD || text.MIMEType != skills.MIMEType {
				t.Fatalf("SKILL.md read as %#v", read.Contents[0])
			}
			read, err = p.Client.ReadResource(p.Context(), &mcp.ReadResourceParams{URI: "skill://pdf-processing/scripts/logo.png"})
			if err != nil {
				t.Fatal(err)
			}
			if blob, ok := read.Contents[0].(*mcp.BlobResourceContents); !ok || skills.Digest(blob.Blob) != pdf.Resources.Files[2].Digest || blob.MIMEType != "image/png" {
				t.Fatalf("logo.png read as %#v", read.Contents[0])
			}

			res, err := p.Client.ListResources(p.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(res.Resources, func(r mcp.Resource) bool { return r.URI == pdf.URI })
			if i < 0 || res.Resources[i].Name != "pdf-processing" || res.Resources[i].Description != wantFM.Description() || res.Resources[i].MIMEType != skills.MIMEType {
				t.Fatalf("resources/list: %+v", res.Resources)
			}

			dir := call[skills.DirectoryReadResult](t, p, skills.MethodDirectoryRead, skills.DirectoryReadParams{URI: "skill://pdf-processing"})
			if got := resourceURIs(dir.Resources); !slices.Equal(got, []string{"skill://pdf-processing/SKILL.md", "skill://pdf-processing/references", "skill://pdf-processing/scripts", "skill://pdf-processing/templates"}) {
				t.Fatalf("directory read: %v", got)
			}
			if dir.Resources[1].MIMEType != skills.DirectoryMIMEType || dir.Resources[1].Name != "references" {
				t.Fatalf("subdirectory entry %+v", dir.Resources[1])
			}
			dir = call[skills.DirectoryReadResult](t, p, skills.MethodDirectoryRead, skills.DirectoryReadParams{URI: "skill://pdf-processing/templates"})
			if got := resourceURIs(dir.Resources); !slices.Equal(got, []string{"skill://pdf-processing/templates/invoice.md", "skill://pdf-processing/templates/regional"}) {
				t.Fatalf("templates: %v", got)
			}
			for _, uri := range []string{pdf.URI, "skill://pdf-processing/templates/invoice.md", "skill://nope", "skill://pdf-processing/", "skill://"} {
				if e := callErr(t, p, skills.MethodDirectoryRead, skills.DirectoryReadParams{URI: uri}); e.Code != mcp.CodeInvalidParams {
					t.Errorf("directory read %s: %v, want -32602", uri, e)
				}
			}
		})
	}
}

func resourceURIs(rs []mcp.Resource) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.URI
	}
	return out
}

func TestPagination(t *testing.T) {
	s, x := newSkillsServer(t, nil, &skills.Options{PageSize: 2})
	fsys := fstest.MapFS{}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		fsys["team/"+n+"/SKILL.md"] = &fstest.MapFile{Data: []byte("---\nname: " + n + "\ndescription: skill " + n + "\n---\n")}
	}
	sub, _ := fsSub(fsys, "team")
	if err := x.AddFS(sub, "team"); err != nil {
		t.Fatal(err)
	}
	p := mcptest.NewPair(t, s, nil)
	var seen []string
	cursor, pages := "", 0
	for {
		page := call[skills.ListResult](t, p, skills.MethodList, skills.ListParams{Cursor: cursor})
		pages++
		if len(page.Skills) > 2 {
			t.Fatalf("page of %d", len(page.Skills))
		}
		for _, sk := range page.Skills {
			seen = append(seen, sk.Frontmatter.Name())
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if pages != 3 || !slices.Equal(seen, []string{"a", "b", "c", "d", "e"}) {
		t.Fatalf("%d pages: %v", pages, seen)
	}
	var dirSeen []string
	cursor = ""
	for {
		page := call[skills.DirectoryReadResult](t, p, skills.MethodDirectoryRead, skills.DirectoryReadParams{URI: "skill://team", Cursor: cursor})
		dirSeen = append(dirSeen, resourceURIs(page.Resources)...)
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if len(dirSeen) != 5 || dirSeen[4] != "skill://team/e" {
		t.Fatalf("directory pages: %v", dirSeen)
	}
	for _, m := range []string{skills.MethodList, skills.MethodDirectoryRead} {
		if e := callErr(t, p, m, skills.DirectoryReadParams{URI: "skill://team", Cursor: "%%%"}); e.Code != mcp.CodeInvalidParams {
			t.Errorf("%s with a bad cursor: %v", m, e)
		}
	}
}

func TestListChangedAndRemove(t *testing.T) {
	s, x := newSkillsServer(t, nil, nil)
	changed := make(chan struct{}, 16)
	p := mcptest.NewPair(t, s, &mcptest.Options{Era: client.EraLegacy, Client: &client.Options{
		OnResourcesListChanged: func(context.Context) { changed <- struct{}{} },
	}})
	if got := call[skills.ListResult](t, p, skills.MethodList, nil); len(got.Skills) != 0 {
		t.Fatalf("skills before any: %+v", got)
	}
	sub, _ := fsSub(skillsFS(), "pdf-processing")
	if err := x.AddSkill("acme/pdf-processing", sub); err != nil {
		t.Fatal(err)
	}
	<-changed // one notification for the whole skill (a batch)
	list := call[skills.ListResult](t, p, skills.MethodList, nil)
	if len(list.Skills) != 1 || list.Skills[0].URI != "skill://acme/pdf-processing/SKILL.md" {
		t.Fatalf("after AddSkill: %+v", list)
	}
	x.Remove(list.Skills[0].URI)
	<-changed
	if got := call[skills.ListResult](t, p, skills.MethodList, nil); len(got.Skills) != 0 {
		t.Fatalf("after Remove: %+v", got)
	}
	if e := callErr(t, p, skills.MethodGet, skills.GetParams{URI: list.Skills[0].URI}); e.Code != mcp.CodeInvalidParams {
		t.Fatalf("get after Remove: %v", e)
	}
	if _, err := p.Client.ReadResource(p.Context(), &mcp.ReadResourceParams{URI: list.Skills[0].URI}); err == nil {
		t.Fatal("SKILL.md still readable after Remove")
	}
	if len(changed) != 0 {
		t.Fatalf("%d more list changes than the add and the remove", len(changed))
	}
}

func TestVisibility(t *testing.T) {
	hide := func(_ context.Context, _ server.Caller, it server.Item) bool {
		return !strings.HasPrefix(it.Name, "skill://git-workflow")
	}
	s, x := newSkillsServer(t, &server.Options{Visibility: hide}, nil)
	if err := x.AddFS(skillsFS(), ""); err != nil {
		t.Fatal(err)
	}
	for _, era := range mcptest.Eras() {
		t.Run(era.String(), func(t *testing.T) {
			p := mcptest.NewPair(t, s, &mcptest.Options{Era: era})
			list := call[skills.ListResult](t, p, skills.MethodList, nil)
			if len(list.Skills) != 1 || list.Skills[0].Frontmatter.Name() != "pdf-processing" {
				t.Fatalf("skills/list shows %+v", list.Skills)
			}
			if mcp.IsModern(p.Version) && list.CacheScope != mcp.CachePrivate {
				t.Fatalf("cacheScope %q with a visibility filter", list.CacheScope)
			}
			if e := callErr(t, p, skills.MethodGet, skills.GetParams{URI: "skill://git-workflow/SKILL.md"}); e.Code != mcp.CodeInvalidParams {
				t.Fatalf("get of a hidden skill: %v", e)
			}
			if e := callErr(t, p, skills.MethodDirectoryRead, skills.DirectoryReadParams{URI: "skill://git-workflow"}); e.Code != mcp.CodeInvalidParams {
				t.Fatalf("directory read of a hidden skill: %v", e)
			}
			if _, err := p.Client.ReadResource(p.Context(), &mcp.ReadResourceParams{URI: "skill://git-workflow/SKILL.md"}); err == nil {
				t.Fatal("hidden SKILL.md readable")
			}
		})
	}
	if len(x.Skills()) != 2 {
		t.Fatalf("registered: %d", len(x.Skills()))
	}
}
