package main

import (
	"context"
	"errors"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/ext/skills"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
)

const (
	cliSkillURI = "skill://team/git-flow/SKILL.md"
	cliRefURI   = "skill://team/git-flow/references/commits.md"
	cliSkillMD  = "---\nname: git-flow\ndescription: Branch and commit the team's way\n---\n\n# Git flow\n\nSee references/commits.md.\n"
	cliRefMD    = "# Commits\n\nImperative mood, 72 characters.\n"
)

// skillsServer serves one skill over Streamable HTTP from an mcpkit
// server: honestly, or (tamper) with a references file whose bytes are
// not those of the entry.
func skillsServer(t *testing.T, tamper bool) string {
	t.Helper()
	files := map[string]string{cliSkillURI: cliSkillMD, cliRefURI: cliRefMD}
	entry := skills.Skill{
		URI:         cliSkillURI,
		Frontmatter: skills.Frontmatter{"name": "git-flow", "description": "Branch and commit the team's way"},
	}
	for _, u := range []string{cliSkillURI, cliRefURI} {
		entry.Resources.Files = append(entry.Resources.Files, skills.File{URI: u, Digest: skills.Digest([]byte(files[u])), Size: int64(len(files[u]))})
	}
	if tamper {
		files[cliRefURI] = strings.Replace(cliRefMD, "Imperative", "Imperious!", 1)
	}
	s := server.New(nil)
	check := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	check(s.AddExtension(skills.ExtensionID, nil))
	check(server.AddMethod(s, skills.MethodList, func(context.Context, *server.Request, skills.ListParams) (skills.ListResult, error) {
		return skills.ListResult{Skills: []skills.Skill{entry}}, nil
	}))
	check(server.AddMethod(s, skills.MethodGet, func(_ context.Context, _ *server.Request, p skills.GetParams) (skills.GetResult, error) {
		if p.URI != entry.URI {
			return skills.GetResult{}, &jsonrpc.Error{Code: mcp.CodeInvalidParams, Message: "no skill at " + p.URI}
		}
		return skills.GetResult{Skill: entry}, nil
	}))
	for uri, text := range files {
		check(s.AddResource(&mcp.Resource{URI: uri, Name: filepath.Base(uri)}, func(context.Context, *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: uri, MIMEType: "text/markdown", Text: text}}}, nil
		}))
	}
	ts := httptest.NewServer(streamhttp.NewHandler(s, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestSkillsCommand(t *testing.T) {
	url := skillsServer(t, false)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			r := mcpkit(t, "skills", "--era", era, url)
			expect(t, r, 0, "git-flow  "+cliSkillURI, "Branch and commit the team's way", "files: 2, ")

			r = mcpkit(t, "skills", "--era", era, "--json", url)
			expect(t, r, 0)
			var listed []skills.Skill
			if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil || len(listed) != 1 || listed[0].URI != cliSkillURI {
				t.Fatalf("--json listing %q: %v", r.stdout, err)
			}

			for _, ref := range []string{"git-flow", cliSkillURI} {
				r = mcpkit(t, "skills", "--era", era, url, ref)
				expect(t, r, 0, "skill git-flow  "+cliSkillURI, cliRefURI, "--- SKILL.md (verified)", "# Git flow")
			}

			dir := filepath.Join(t.TempDir(), "git-flow")
			r = mcpkit(t, "skills", "--era", era, "--fetch", dir, url, "git-flow")
			expect(t, r, 0, "SKILL.md", "references/commits.md")
			for rel, want := range map[string]string{"SKILL.md": cliSkillMD, "references/commits.md": cliRefMD} {
				b, err := os.ReadFile(filepath.Join(dir, rel))
				if err != nil || string(b) != want {
					t.Fatalf("%s: %q, %v", rel, b, err)
				}
			}
			r = mcpkit(t, "skills", "--era", era, "--fetch", dir, url, "git-flow")
			expect(t, r, exitUsage) // an existing directory
		})
	}
}

// A server whose file is not what its entry says: show still works (it
// reads only SKILL.md), fetch refuses with exit code 2, naming the file
// and the check, and writes nothing.
func TestSkillsCommandRefusesTamperedFile(t *testing.T) {
	url := skillsServer(t, true)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			expect(t, mcpkit(t, "skills", "--era", era, url, "git-flow"), 0, "# Git flow")
			parent := t.TempDir()
			dir := filepath.Join(parent, "git-flow")
			r := mcpkit(t, "skills", "--era", era, "--fetch", dir, url, "git-flow")
			expect(t, r, exitProtocol)
			if !strings.Contains(r.stderr, cliRefURI) || !strings.Contains(r.stderr, "digest check failed") {
				t.Fatalf("stderr does not name the file and the check: %s", r.stderr)
			}
			if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("%s exists after a refused fetch: %v", dir, err)
			}
			if left, _ := os.ReadDir(parent); len(left) != 0 {
				t.Fatalf("a refused fetch left %v", left)
			}
		})
	}
}

func TestSkillsCommandUsage(t *testing.T) {
	expect(t, mcpkit(t, "skills", "--fetch", "x", "http://127.0.0.1:1/mcp"), exitUsage)
	expect(t, mcpkit(t, "skills", "http://127.0.0.1:1/mcp", "a", "b"), exitUsage)
	r := mcpkit(t, "help")
	expect(t, r, 0, "mcpkit skills   [flags] [--fetch DIR] TARGET [SKILL]")
}

// mcpkit skills against mcpkit serve and its demo skill: over HTTP and
// over stdio, in both eras; list, show, fetch, the files on disk equal
// to the embedded ones.
func TestSkillsCommandAgainstServe(t *testing.T) {
	md, err := demoSkillFiles.ReadFile("demoskill/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	tools, err := demoSkillFiles.ReadFile("demoskill/references/TOOLS.md")
	if err != nil {
		t.Fatal(err)
	}
	forEach(t, func(t *testing.T, g tgt, era string) {
		expect(t, mcpkit(t, g.args("skills", "--era", era)...), 0, "mcpkit-demo  "+demoSkillURI, "files: 2, ")
		expect(t, mcpkit(t, g.args("skills", "--era", era, "mcpkit-demo")...), 0,
			"--- SKILL.md (verified)", "skill://mcpkit-demo/references/TOOLS.md", "# Using the mcpkit demo server")
		dir := filepath.Join(t.TempDir(), "mcpkit-demo")
		expect(t, mcpkit(t, g.args("skills", "--era", era, "--fetch", dir, demoSkillURI)...), 0, "SKILL.md", "references/TOOLS.md")
		for rel, want := range map[string][]byte{"SKILL.md": md, "references/TOOLS.md": tools} {
			b, err := os.ReadFile(filepath.Join(dir, rel))
			if err != nil || string(b) != string(want) {
				t.Fatalf("%s: %q, %v", rel, b, err)
			}
		}
	})
}
