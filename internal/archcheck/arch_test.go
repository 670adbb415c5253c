package archcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

// importsColumn is the header of the table's column that lists, and only
// lists, the mcpkit packages a row's package may import.
const importsColumn = "may import (mcpkit)"

// readRules parses the table of ARCHITECTURE.md.
func readRules(t *testing.T, path string) []rule {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := parseRules(string(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rules
}

// parseRules reads the table of packages from markdown text. A row names
// its package in backquotes in its first cell; the allowed imports come
// from the column headed importsColumn alone, whose cell must be "nothing"
// or backquoted package names separated by commas: any other text there
// is an error, so an aside (which belongs in another column, never read)
// cannot allow an import by quoting a package name.
func parseRules(text string) ([]rule, error) {
	var rules []rule
	col, width := -1, 0
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if i := slices.Index(cells, importsColumn); i >= 0 && cells[0] == "package" {
			col, width = i, len(cells)
			continue
		}
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		names := quoted(cells[0])
		if len(names) == 0 {
			continue
		}
		if col < 0 {
			return nil, fmt.Errorf("line %d: a row before the table's header (a %q column)", n+1, importsColumn)
		}
		if len(cells) != width {
			return nil, fmt.Errorf("line %d: row %s has %d cells, the header %d", n+1, names[0], len(cells), width)
		}
		allowed, err := importList(cells[col])
		if err != nil {
			return nil, fmt.Errorf("line %d: row %s: %v", n+1, names[0], err)
		}
		rules = append(rules, rule{pkg: names[0], allowed: allowed})
	}
	if len(rules) == 0 {
		return nil, errors.New("no table of packages")
	}
	return rules, nil
}

// importList parses a "may import" cell: "nothing", or backquoted names
// separated by commas, with no other text.
func importList(cell string) ([]string, error) {
	if cell == "nothing" {
		return nil, nil
	}
	var out []string
	for item := range strings.SplitSeq(cell, ",") {
		item = strings.TrimSpace(item)
		name, ok := strings.CutPrefix(item, "`")
		if ok {
			name, ok = strings.CutSuffix(name, "`")
		}
		if !ok || name == "" || strings.ContainsAny(name, "` ") {
			return nil, fmt.Errorf("the %q cell holds %q, which is not a backquoted package name (asides go in the notes column)", importsColumn, item)
		}
		out = append(out, name)
	}
	return out, nil
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

// TestAsideCannotAllow checks the parser on a fixture table: a package
// named in an aside (the notes column, or parentheses in the imports
// cell) is never an allowance.
func TestAsideCannotAllow(t *testing.T) {
	const table = "| package | owns | " + importsColumn + " | notes on its imports |\n" +
		"|---|---|---|---|\n" +
		"| `auth` | the middleware, unlike `server/streamhttp` | `server`, `internal/httpbody` | `internal/httpbody`: shared with `server/streamhttp` |\n" +
		"| `mcp` | types | nothing | |\n"
	rules, err := parseRules(table)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 2 || rules[0].pkg != "auth" || !slices.Equal(rules[0].allowed, []string{"server", "internal/httpbody"}) ||
		rules[1].pkg != "mcp" || rules[1].allowed != nil {
		t.Fatalf("rules = %+v", rules)
	}
	r, _ := ruleFor(rules, "auth")
	if slices.ContainsFunc(r.allowed, func(a string) bool { return matches(a, "server/streamhttp") }) {
		t.Error("an aside allowed auth to import server/streamhttp")
	}
	// An aside written into the imports cell itself is refused, not read.
	for _, cell := range []string{
		"`server`, `internal/httpbody` (shared with `server/streamhttp`)",
		"the public API only: `server`",
		"`server` `client`",
		"``",
	} {
		bad := strings.Replace(table, "`server`, `internal/httpbody`", cell, 1)
		if rules, err := parseRules(bad); err == nil {
			t.Errorf("imports cell %q accepted: %+v", cell, rules)
		}
	}
	// A row whose cells do not line up with the header is refused.
	if _, err := parseRules(strings.Replace(table, " | nothing | |", " | nothing |", 1)); err == nil {
		t.Error("a row with a missing cell was accepted")
	}
}
