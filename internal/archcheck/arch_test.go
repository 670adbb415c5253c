package archcheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mcpkit/mcpkit"

// rule is one row of the ARCHITECTURE.md table: a package (or a tree of
// packages, "x/...") and the mcpkit packages it may import.
type rule struct {
	pkg     string
	allowed []string
}

// readRules parses the table of ARCHITECTURE.md. A row names its package
// in backquotes in the first cell and the mcpkit packages it may import
// in backquotes in the last; other text in the cells is commentary.
func readRules(t *testing.T, path string) []rule {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rules []rule
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 3 {
			continue
		}
		names := quoted(cells[0])
		if len(names) == 0 {
			continue
		}
		rules = append(rules, rule{pkg: names[0], allowed: quoted(cells[len(cells)-1])})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rules) == 0 {
		t.Fatalf("%s has no table of packages", path)
	}
	return rules
}

// quoted returns the backquoted words of s.
func quoted(s string) []string {
	var out []string
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(s[i+1:], '`')
		if j < 0 {
			return out
		}
		out = append(out, s[i+1:i+1+j])
		s = s[i+1+j+1:]
	}
}

// matches reports whether pkg (module-relative) is pattern, or under it
// for "x/...".
func matches(pattern, pkg string) bool {
	if tree, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == tree || strings.HasPrefix(pkg, tree+"/")
	}
	return pkg == pattern
}

// ruleFor returns the most specific rule naming pkg.
func ruleFor(rules []rule, pkg string) (rule, bool) {
	best, found := rule{}, false
	for _, r := range rules {
		if matches(r.pkg, pkg) && (!found || len(r.pkg) > len(best.pkg)) {
			best, found = r, true
		}
	}
	return best, found
}

// noHTTP are the packages that must not import net/http: the protocol
// server and what it stands on know nothing of HTTP (ARCHITECTURE.md);
// the Streamable HTTP server is server/streamhttp.
var noHTTP = []string{"mcp", "jsonrpc", "transport", "store", "server", "server/internal/seam"}

type listed struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// goList lists the packages of the module in dir with their imports
// (tests excluded: tests may drive a package through its peers).
func goList(t *testing.T, dir string) []listed {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil && os.Getenv("GOROOT") != "" {
		gobin, err = filepath.Join(os.Getenv("GOROOT"), "bin", "go"), nil
	}
	if err != nil {
		t.Fatalf("no go command on PATH (or in $GOROOT/bin) to list the packages: %v", err)
	}
	cmd := exec.Command(gobin, "list", "-e", "-json=ImportPath,Imports,Deps", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v\n%s", dir, err, stderr.String())
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestImportRules fails when a package imports an mcpkit package its row
// of ARCHITECTURE.md does not allow, or has no row.
func TestImportRules(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	rules := readRules(t, filepath.Join(root, "ARCHITECTURE.md"))
	used := make(map[string]bool)
	// The core module and the store/redis, otel, interop and matrix
	// modules (each its own go.mod).
	for _, dir := range []string{root, filepath.Join(root, "store", "redis"), filepath.Join(root, "otel"), filepath.Join(root, "interop"), filepath.Join(root, "matrix")} {
		for _, p := range goList(t, dir) {
			pkg, ok := strings.CutPrefix(p.ImportPath, module+"/")
			if !ok {
				continue
			}
			if pkg == "internal/archcheck" {
				used[pkg] = true
				continue // this test
			}
			if slices.Contains(noHTTP, pkg) && slices.Contains(p.Deps, "net/http") {
				t.Errorf("%s depends on net/http (directly or through an import); the protocol server and its layers know nothing of HTTP", pkg)
			}
			r, ok := ruleFor(rules, pkg)
			if !ok {
				t.Errorf("%s has no row in ARCHITECTURE.md's table", pkg)
				continue
			}
			used[r.pkg] = true
			for _, imp := range p.Imports {
				dep, mine := strings.CutPrefix(imp, module+"/")
				if !mine {
					continue
				}
				if matches(r.pkg, dep) && strings.HasSuffix(r.pkg, "/...") {
					continue // within its own tree
				}
				if !slices.ContainsFunc(r.allowed, func(a string) bool { return matches(a, dep) }) {
					t.Errorf("%s imports %s, which its row of ARCHITECTURE.md (%s) does not allow", pkg, dep, r.pkg)
				}
			}
		}
	}
	for _, r := range rules {
		if !used[r.pkg] {
			t.Errorf("ARCHITECTURE.md has a row for %s, which names no package: the table is out of date", r.pkg)
		}
	}
}

// TestImportRulesCatch checks the checker: a rule that leaves out an
// import is reported.
func TestImportRulesCatch(t *testing.T) {
	rules := []rule{{pkg: "a", allowed: []string{"b", "c/..."}}, {pkg: "x/...", allowed: []string{"a"}}}
	for _, tc := range []struct {
		pkg, dep string
		ok       bool
	}{
		{"a", "b", true}, {"a", "c", true}, {"a", "c/d", true}, {"a", "d", false}, {"a", "bb", false},
		{"x/y", "a", true}, {"x/y", "b", false},
	} {
		r, found := ruleFor(rules, tc.pkg)
		got := found && slices.ContainsFunc(r.allowed, func(a string) bool { return matches(a, tc.dep) })
		if got != tc.ok {
			t.Errorf("%s importing %s allowed = %v, want %v", tc.pkg, tc.dep, got, tc.ok)
		}
	}
	if got := quoted("`server`, `mcp` (and `x`)"); !slices.Equal(got, []string{"server", "mcp", "x"}) {
		t.Errorf("quoted = %q", got)
	}
}
