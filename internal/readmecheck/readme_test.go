// Package readmecheck proves that the Go programs in README.md compile as
// shown: each ```go block is written, unchanged, into its own package of a
// scratch module that requires this repository by a replace directive, and
// the module is built once, offline.
//
// A block that is a fragment by design must say so: an HTML comment
// "<!-- readmecheck: fragment -->" on the line before its fence excludes
// it. Every other block must be a complete program (package main).
package readmecheck

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	module         = "github.com/mcpkit/mcpkit"
	fragmentMarker = "<!-- readmecheck: fragment -->"
)

// snippet is one ```go block of the README.
type snippet struct {
	line     int // line of the opening fence, 1-based
	code     string
	fragment bool
}

// goBlocks returns the ```go blocks of a Markdown document.
func goBlocks(t *testing.T, doc string) []snippet {
	t.Helper()
	var (
		out  []snippet
		cur  *snippet
		body strings.Builder
		prev string
	)
	sc := bufio.NewScanner(strings.NewReader(doc))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &snippet{line: n, fragment: strings.TrimSpace(prev) == fragmentMarker}
			body.Reset()
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.code = body.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line)
			body.WriteByte('\n')
		}
		prev = line
	}
	if cur != nil {
		t.Fatalf("README.md:%d: unterminated ```go block", cur.line)
	}
	return out
}

// requireBlock returns the require directives of the repository's go.mod,
// so that the scratch module selects exactly the versions go.sum holds.
func requireBlock(t *testing.T, gomod string) string {
	t.Helper()
	var b strings.Builder
	in := false
	for line := range strings.Lines(gomod) {
		trimmed := strings.TrimSpace(line)
		switch {
		case in:
			b.WriteString(line)
			if trimmed == ")" {
				in = false
			}
		case trimmed == "require (":
			in = true
			b.WriteString(line)
		case strings.HasPrefix(trimmed, "require "):
			b.WriteString(line)
		}
	}
	if b.Len() == 0 {
		t.Fatal("go.mod has no require directive")
	}
	return b.String()
}

func TestReadmeGoBlocksCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the README programs; skipped with -short")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}

	blocks := goBlocks(t, string(readme))
	dir := t.TempDir()
	built := 0
	for _, b := range blocks {
		if b.fragment {
			continue
		}
		if !strings.HasPrefix(strings.TrimSpace(b.code), "package main") {
			t.Errorf("README.md:%d: a ```go block must be a complete program (package main …) or be marked %q on the line before it", b.line, fragmentMarker)
			continue
		}
		pkg := filepath.Join(dir, fmt.Sprintf("line%d", b.line))
		if err := os.Mkdir(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "main.go"), []byte(b.code), 0o644); err != nil {
			t.Fatal(err)
		}
		built++
	}
	if built == 0 {
		t.Fatal("README.md has no complete Go program to build")
	}

	mod := "module readmecheck\n\ngo 1.26\n\n" + requireBlock(t, string(gomod)) +
		"\nrequire " + module + " v0.0.0\n\nreplace " + module + " => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), gosum, 0o644); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command("go", "build", "./...")
	cmd.Dir = dir
	// Offline: every module must come from the cache that built this
	// repository, and the go.mod written above must already be complete.
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build of the README programs (packages named after their README.md line) failed: %v\n%s", err, out)
	}
	t.Logf("built %d README program(s)", built)
}

func TestGoBlocks(t *testing.T) {
	doc := "x\n```go\npackage main\n```\n" + fragmentMarker + "\n```go\nx := 1\n```\n```sh\nls\n```\n"
	got := goBlocks(t, doc)
	if len(got) != 2 {
		t.Fatalf("got %d blocks, want 2", len(got))
	}
	if got[0].line != 2 || got[0].code != "package main\n" || got[0].fragment {
		t.Errorf("first block = %+v", got[0])
	}
	if got[1].line != 6 || !got[1].fragment {
		t.Errorf("second block = %+v", got[1])
	}
}
