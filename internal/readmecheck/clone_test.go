package readmecheck

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The markers of the README's shell blocks that say how to use mcpkit
// from a clone: the replace directives, and a Go workspace.
const (
	cloneMarker     = "<!-- readmecheck: clone -->"
	workspaceMarker = "<!-- readmecheck: workspace -->"
)

// shellBlock returns the command lines of the ```sh block right after
// marker.
func shellBlock(t *testing.T, doc, marker string) []string {
	t.Helper()
	var (
		cmds  []string
		state int // 0: looking for the marker, 1: its fence, 2: in the block
	)
	sc := bufio.NewScanner(strings.NewReader(doc))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case state == 0 && line == marker:
			state = 1
		case state == 1 && line == "```sh":
			state = 2
		case state == 1:
			t.Fatalf("README.md: %s is not followed by a ```sh block", marker)
		case state == 2 && line == "```":
			return cmds
		case state == 2 && line != "" && !strings.HasPrefix(line, "#"):
			cmds = append(cmds, line)
		}
	}
	t.Fatalf("README.md has no complete ```sh block after %s", marker)
	return nil
}

// quickStart is the README's first complete Go program (the server).
func quickStart(t *testing.T, readme string) string {
	t.Helper()
	for _, b := range goBlocks(t, readme) {
		if !b.fragment && strings.HasPrefix(strings.TrimSpace(b.code), "package main") {
			return b.code
		}
	}
	t.Fatal("README.md has no complete Go program")
	return ""
}

// alsoModules uses the two modules of their own, so that the commands
// must make them resolvable too.
const alsoModules = `package main

import (
	_ "github.com/mcpkit/mcpkit/otel"
	_ "github.com/mcpkit/mcpkit/store/redis"
)
`

// TestInstallFromClone follows the README's "from a clone" instructions
// in a fresh module beside a clone (a link to this repository, named
// ../mcpkit as the README says): the replace commands, and separately the
// workspace command, each run as written, then go build of the README's
// server. Modules that mcpkit needs come from the module cache or
// $GOPROXY, as they would for a reader.
func TestInstallFromClone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a fresh module; skipped with -short")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH: the install instructions cannot be followed")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	server := quickStart(t, readme)

	for _, tc := range []struct {
		name, marker string
		env          []string
	}{
		// GOFLAGS=-mod=mod as a reader's go mod tidy would have it; a
		// workspace allows no -mod=mod.
		{"replace", cloneMarker, []string{"GOFLAGS=-mod=mod", "GOWORK=off"}},
		{"workspace", workspaceMarker, []string{"GOFLAGS=", "GOWORK="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Symlink(root, filepath.Join(dir, "mcpkit")); err != nil {
				t.Fatal(err)
			}
			app := filepath.Join(dir, "app")
			if err := os.Mkdir(app, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, src := range map[string]string{"main.go": server, "modules.go": alsoModules} {
				if err := os.WriteFile(filepath.Join(app, name), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := append(os.Environ(), tc.env...)
			run := func(args ...string) {
				t.Helper()
				cmd := exec.Command(gobin, args...)
				cmd.Dir = app
				cmd.Env = env
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("go %s (in a fresh module beside the clone): %v\n%s", strings.Join(args, " "), err, out)
				}
			}
			run("mod", "init", "example.com/app")
			for _, line := range shellBlock(t, readme, tc.marker) {
				f := strings.Fields(line)
				if f[0] != "go" {
					t.Fatalf("README.md: %q: the install block may hold go commands only", line)
				}
				run(f[1:]...)
			}
			run("build", "-o", os.DevNull, ".")
		})
	}
}

func TestShellBlock(t *testing.T) {
	doc := "x\n" + cloneMarker + "\n```sh\ngo a\n# note\n\ngo b\n```\n```sh\ngo c\n```\n"
	if got := shellBlock(t, doc, cloneMarker); strings.Join(got, "|") != "go a|go b" {
		t.Errorf("got %q", got)
	}
}

// TestGuideInstallMatchesReadme: the guide's getting-started page gives
// the same clone and workspace commands as the README, which
// TestInstallFromClone runs, so the guide's cannot drift from them.
func TestGuideInstallMatchesReadme(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile(filepath.Join(root, "docs", "guide", "getting-started.md"))
	if err != nil {
		t.Fatal(err)
	}
	guideLines := map[string]bool{}
	for l := range strings.Lines(string(guide)) {
		guideLines[strings.TrimSpace(l)] = true
	}
	for _, marker := range []string{cloneMarker, workspaceMarker} {
		for _, cmd := range shellBlock(t, string(readme), marker) {
			if !guideLines[cmd] {
				t.Errorf("docs/guide/getting-started.md lacks the README's install command %q", cmd)
			}
		}
	}
}
