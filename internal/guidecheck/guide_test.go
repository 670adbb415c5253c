package guidecheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// snippets returns the ```go blocks of a Markdown text, each as its
// lines.
func snippets(md string) [][]string {
	var out [][]string
	var cur []string
	in := false
	for line := range strings.Lines(md) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case !in && strings.TrimSpace(line) == "```go":
			in, cur = true, nil
		case in && strings.TrimSpace(line) == "```":
			in = false
			out = append(out, cur)
		case in:
			cur = append(cur, line)
		}
	}
	return out
}

func normalize(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimSpace(l)
	}
	return out
}

// contains reports whether snippet appears as consecutive lines of src.
func contains(src, snippet []string) bool {
	if len(snippet) == 0 {
		return true
	}
	for i := 0; i+len(snippet) <= len(src); i++ {
		if slices.Equal(src[i:i+len(snippet)], snippet) {
			return true
		}
	}
	return false
}

// sources returns the normalized lines of every compiled, tested source
// a snippet may come from: the files of examples/, of the example/
// directories of the other modules (store/redis/example/cluster), and
// every example_test.go.
func sources(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := make(map[string][]string)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		slashed := filepath.ToSlash(rel)
		if !strings.HasPrefix(slashed, "examples/") && !strings.Contains(slashed, "/example/") && !strings.HasSuffix(slashed, "example_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out[rel] = normalize(strings.Split(string(b), "\n"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGuideSnippets fails for a Go snippet of docs/guide that no
// compiled example holds.
func TestGuideSnippets(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "guide", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("docs/guide has no pages")
	}
	srcs := sources(t, root)
	total := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, snip := range snippets(string(b)) {
			total++
			norm := normalize(snip)
			found := false
			for _, src := range srcs {
				if contains(src, norm) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s: Go snippet %d appears in no file of examples/ or example_test.go (copy it from one, line for line):\n%s",
					filepath.Base(page), i+1, strings.Join(snip, "\n"))
			}
		}
	}
	if total == 0 {
		t.Error("the guide has no Go snippets to check")
	}
}

// TestMatcher checks the checker: a snippet is found only as
// consecutive lines, whatever their indentation.
func TestMatcher(t *testing.T) {
	src := normalize(strings.Split("func f() {\n\ta := 1\n\tb := 2\n}\n", "\n"))
	md := "text\n```go\na := 1\n    b := 2\n```\n```go\nb := 2\na := 1\n```\n```sh\nnot go\n```\n"
	snips := snippets(md)
	if len(snips) != 2 {
		t.Fatalf("found %d go snippets; want 2", len(snips))
	}
	if !contains(src, normalize(snips[0])) {
		t.Error("an indented run of lines was not found")
	}
	if contains(src, normalize(snips[1])) {
		t.Error("lines out of order were found")
	}
}
