package interop

// The Skills extension (SEP-2640) across implementations: mcpkit's
// skills client (ext/skills) against the TypeScript SDK's skills server
// (testdata/tsskills_server.mjs, over stdio), and the TypeScript SDK's
// skills client (testdata/tsskills_client.mjs) against an mcpkit skills
// server over Streamable HTTP, each in both eras.

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/skills"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
)

// The skill both sides serve.
const (
	tsSkillURI = "skill://git-flow/SKILL.md"
	tsRefURI   = "skill://git-flow/references/commits.md"
	tsSkillMD  = "---\nname: git-flow\ndescription: Branch and commit the team's way\n---\n\n# Git flow\n\nSee references/commits.md.\n"
	tsRefMD    = "# Commits\n\nImperative mood, 72 characters.\n"
)

var interopEras = []struct{ name, version string }{
	{"legacy", mcp.LatestLegacy},
	{"modern", mcp.Version20260728},
}

func TestMcpkitSkillsClientAgainstTypeScriptServer(t *testing.T) {
	dir := peers(t)
	for _, era := range interopEras {
		t.Run(era.name, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(dir, "node"), filepath.Join("testdata", "tsskills_server.mjs"), dir)
			conn := startStdio(t, cmd)
			ctx := testCtx(t)
			c, err := client.Connect(ctx, conn, &client.Options{ProtocolVersion: era.version})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if got := c.ProtocolVersion(); got != era.version {
				t.Fatalf("negotiated %s, want %s", got, era.version)
			}
			sc := skills.NewClient(c, nil)
			if !sc.Supported(ctx) {
				t.Fatalf("the TypeScript server does not declare %s: %v", skills.ExtensionID, c.ServerCapabilities().Extensions)
			}
			var listed []string
			for s, err := range sc.Skills(ctx) {
				if err != nil {
					t.Fatalf("listing: %v", err)
				}
				listed = append(listed, s.URI)
			}
			if !slices.Equal(listed, []string{tsSkillURI}) {
				t.Fatalf("listed %v", listed)
			}
			s, err := sc.Get(ctx, tsSkillURI)
			if err != nil {
				t.Fatal(err)
			}
			md, err := sc.Read(ctx, s, "")
			if err != nil {
				t.Fatal(err)
			}
			if string(md.Data) != tsSkillMD || !md.Verified {
				t.Fatalf("SKILL.md %+v", md)
			}
			out := filepath.Join(t.TempDir(), "git-flow")
			paths, err := sc.Materialize(ctx, s, out)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(paths)
			if !slices.Equal(paths, []string{"SKILL.md", "references/commits.md"}) {
				t.Fatalf("materialised %v", paths)
			}
			b, err := os.ReadFile(filepath.Join(out, "references", "commits.md"))
			if err != nil || string(b) != tsRefMD {
				t.Fatalf("references/commits.md: %q, %v", b, err)
			}
			if !sc.DirectoryRead(ctx) {
				t.Fatal("the TypeScript catalog does not declare directoryRead")
			}
			kids, err := sc.ReadDirectory(ctx, "skill://git-flow")
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, k := range kids {
				uris = append(uris, k.URI)
			}
			slices.Sort(uris)
			if !slices.Equal(uris, []string{tsSkillURI, "skill://git-flow/references"}) {
				t.Fatalf("directory read: %v", uris)
			}
		})
	}
}

// tsSkillsReport is what tsskills_client.mjs prints.
type tsSkillsReport struct {
	ProtocolVersion string       `json:"protocolVersion"`
	Supported       bool         `json:"supported"`
	DirectoryRead   bool         `json:"directoryRead"`
	Listed          []string     `json:"listed"`
	Skill           skills.Skill `json:"skill"`
	Files           []struct {
		URI         string             `json:"uri"`
		Verified    bool               `json:"verified"`
		Text        string             `json:"text"`
		Frontmatter skills.Frontmatter `json:"frontmatter"`
	} `json:"files"`
}

// runTSSkillsClient runs the TypeScript skills client against url.
func runTSSkillsClient(t *testing.T, url, version string) *tsSkillsReport {
	t.Helper()
	dir := peers(t)
	mode := version
	if version != mcp.Version20260728 {
		mode = "legacy"
	}
	cmd := exec.CommandContext(testCtx(t), filepath.Join(dir, "node"), filepath.Join("testdata", "tsskills_client.mjs"), dir, url, mode, tsSkillURI)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the TypeScript skills client: %v\n%s", err, stderr.String())
	}
	r := &tsSkillsReport{}
	if err := json.Unmarshal(out, r); err != nil {
		t.Fatalf("the TypeScript skills client's report %q: %v", out, err)
	}
	return r
}

func TestTypeScriptSkillsClientAgainstMcpkitServer(t *testing.T) {
	peers(t)
	s := server.New(nil)
	x, err := skills.NewServer(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.AddFS(fstest.MapFS{
		"git-flow/SKILL.md":              {Data: []byte(tsSkillMD)},
		"git-flow/references/commits.md": {Data: []byte(tsRefMD)},
	}, ""); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(streamhttp.NewHandler(s, nil))
	t.Cleanup(ts.Close)
	for _, era := range interopEras {
		t.Run(era.name, func(t *testing.T) {
			r := runTSSkillsClient(t, ts.URL, era.version)
			if r.ProtocolVersion != era.version {
				t.Fatalf("the TypeScript client negotiated %s, want %s", r.ProtocolVersion, era.version)
			}
			if !r.Supported || !r.DirectoryRead {
				t.Fatalf("the TypeScript client saw supported=%v directoryRead=%v, want both", r.Supported, r.DirectoryRead)
			}
			if !slices.Equal(r.Listed, []string{tsSkillURI}) {
				t.Fatalf("listed %v", r.Listed)
			}
			if r.Skill.URI != tsSkillURI || r.Skill.Frontmatter.Name() != "git-flow" || len(r.Skill.Resources.Files) != 2 {
				t.Fatalf("skills/get: %+v", r.Skill)
			}
			want := map[string]string{tsSkillURI: tsSkillMD, tsRefURI: tsRefMD}
			if len(r.Files) != len(want) {
				t.Fatalf("read %d files, want %d", len(r.Files), len(want))
			}
			for _, f := range r.Files {
				if !f.Verified || f.Text != want[f.URI] {
					t.Fatalf("%s: verified=%v text %q", f.URI, f.Verified, f.Text)
				}
			}
			if r.Files[0].Frontmatter.Description() != "Branch and commit the team's way" {
				t.Fatalf("SKILL.md frontmatter as the TypeScript client parsed it: %v", r.Files[0].Frontmatter)
			}
		})
	}
}

// The mcpkit command against the TypeScript skills server, launched over
// stdio: list, show, fetch, in both eras.
func TestMcpkitSkillsCommandAgainstTypeScriptServer(t *testing.T) {
	dir := peers(t)
	server := []string{"--", filepath.Join(dir, "node"), filepath.Join("testdata", "tsskills_server.mjs"), dir}
	for _, era := range interopEras {
		t.Run(era.name, func(t *testing.T) {
			out, _ := runCLI(t, append([]string{"skills", "--era", era.name}, server...)...)
			wantIn(t, "list", out, "git-flow  "+tsSkillURI, "Branch and commit the team's way", "files: 2, ")
			out, _ = runCLI(t, append([]string{"skills", "--era", era.name, "git-flow"}, server...)...)
			wantIn(t, "show", out, tsRefURI, "--- SKILL.md (verified)", "# Git flow")
			target := filepath.Join(t.TempDir(), "git-flow")
			out, _ = runCLI(t, append([]string{"skills", "--era", era.name, "--fetch", target, "git-flow"}, server...)...)
			wantIn(t, "fetch", out, "SKILL.md", "references/commits.md")
			b, err := os.ReadFile(filepath.Join(target, "SKILL.md"))
			if err != nil || string(b) != tsSkillMD {
				t.Fatalf("fetched SKILL.md: %q, %v", b, err)
			}
		})
	}
}
