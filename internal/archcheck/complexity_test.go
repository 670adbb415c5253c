package archcheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxComplexity is the highest cyclomatic complexity a library function
// may have (issue 36). Above it a function is split, or, if it is a
// hand-written decoder whose shape is the grammar it reads, listed in
// complexityExceptions with its reason.
const maxComplexity = 30

// complexityExceptions are the library functions allowed above
// maxComplexity, keyed "dir.Func" or "dir.(*Type).Method" (dir relative
// to the repository root), each with the one-line reason it stays. Only
// hand-written decoders belong here. An entry whose function is gone or
// back under the limit fails the test, so the list cannot go stale.
var complexityExceptions = map[string]string{}

// notLibrary are the trees whose functions are not library code: programs,
// the conformance and interop drivers, the benchmarks, and test support.
var notLibrary = []string{
	"cmd", "examples", "conformance", "interop", "matrix", "bench",
	"internal/clustertest", "internal/wirecheck", "internal/keepalive/keepalivetest",
	"internal/apirecord", "server/internal/httpenv", "store/storetest",
	"store/redis/internal", "store/redis/example",
}

// funcStat is one function's measure.
type funcStat struct {
	key        string // dir.Func or dir.(*Type).Method
	pos        string // file:line
	complexity int
	lines      int
}

// cyclomatic returns the cyclomatic complexity of a function the way
// gocyclo counts it: 1, plus one for each if, for, range, non-default
// case of a switch or select, && and ||. Function literals inside the
// body count towards the function that holds them.
func cyclomatic(fn *ast.FuncDecl) int {
	c := 1
	ast.Inspect(fn, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if n.List != nil {
				c++
			}
		case *ast.CommClause:
			if n.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}

// funcName is gocyclo's name for fn: Func, or (Type).Method and
// (*Type).Method for methods (type parameters left out).
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	var recv func(e ast.Expr) string
	recv = func(e ast.Expr) string {
		switch e := e.(type) {
		case *ast.StarExpr:
			return "*" + recv(e.X)
		case *ast.IndexExpr:
			return recv(e.X)
		case *ast.IndexListExpr:
			return recv(e.X)
		case *ast.Ident:
			return e.Name
		}
		return "?"
	}
	return "(" + recv(fn.Recv.List[0].Type) + ")." + fn.Name.Name
}

// measureFile parses one Go file and measures its functions; a generated
// file yields nothing.
func measureFile(fset *token.FileSet, path, dir string, src any) ([]funcStat, error) {
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	if ast.IsGenerated(f) {
		return nil, nil
	}
	var out []funcStat
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
		out = append(out, funcStat{
			key:        dir + "." + funcName(fn),
			pos:        fmt.Sprintf("%s:%d", path, start.Line),
			complexity: cyclomatic(fn),
			lines:      end.Line - start.Line + 1,
		})
	}
	return out, nil
}

// libraryFuncs measures every function of the library's non-test,
// non-generated Go files under root, the otel and store/redis modules
// included.
func libraryFuncs(t *testing.T, root string) []funcStat {
	t.Helper()
	fset := token.NewFileSet()
	var all []funcStat
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				name == "testdata" || name == "node_modules" || name == "vendor" ||
				slices.ContainsFunc(notLibrary, func(p string) bool { return rel == p })) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		stats, err := measureFile(fset, rel, filepath.ToSlash(filepath.Dir(rel)), src)
		if err != nil {
			return err
		}
		all = append(all, stats...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// TestComplexity fails on a library function above maxComplexity that
// complexityExceptions does not name, and on an exception that is no
// longer needed. With -v it logs the counts the issue measured: functions
// over 80 lines and over complexity 20.
func TestComplexity(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	stats := libraryFuncs(t, root)
	if len(stats) < 1000 {
		t.Fatalf("measured only %d functions under %s: the walk is broken", len(stats), root)
	}
	seen := make(map[string]int)
	over80, over20 := 0, 0
	for _, s := range stats {
		seen[s.key] = s.complexity
		if s.lines > 80 {
			over80++
		}
		if s.complexity > 20 {
			over20++
		}
		if s.complexity > maxComplexity {
			if _, ok := complexityExceptions[s.key]; !ok {
				t.Errorf("%s: %s has cyclomatic complexity %d, over %d: split it (or, for a hand-written decoder, list it with its reason in complexityExceptions)",
					s.pos, s.key, s.complexity, maxComplexity)
			}
		}
	}
	for key, reason := range complexityExceptions {
		if strings.TrimSpace(reason) == "" {
			t.Errorf("complexityExceptions[%q] has no reason", key)
		}
		c, ok := seen[key]
		switch {
		case !ok:
			t.Errorf("complexityExceptions names %s, which is not a library function: remove it", key)
		case c <= maxComplexity:
			t.Errorf("complexityExceptions names %s, whose complexity is %d (limit %d): remove it", key, c, maxComplexity)
		}
	}
	t.Logf("%d library functions: %d over 80 lines, %d over complexity 20", len(stats), over80, over20)
}

// TestCyclomaticCounts checks the counter on functions whose complexity
// gocyclo v0.6.0 reports (the figures in the comments are its output).
func TestCyclomaticCounts(t *testing.T) {
	const src = `package p

// 1
func plain() {}

// 1 + if + && + || + for + range = 6
func branches(a, b bool, xs []int) {
	if a && b || !a {
	}
	for i := 0; i < 3; i++ {
	}
	for range xs {
	}
}

// 1 + two cases (default not counted) + one comm case (default not counted) = 4
func cases(x int, ch chan int) {
	switch x {
	case 1:
	case 2, 3:
	default:
	}
	select {
	case <-ch:
	default:
	}
}

// 1 + the if inside the literal = 2
func (r *T[K]) lit() {
	f := func() {
		if true {
		}
	}
	f()
}

// 1 + type switch cases (2) = 3
func (T) kinds(v any) {
	switch v.(type) {
	case int:
	case string:
	}
}
`
	stats, err := measureFile(token.NewFileSet(), "p.go", "p", src)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"p.plain": 1, "p.branches": 6, "p.cases": 4, "p.(*T).lit": 2, "p.(T).kinds": 3}
	if len(stats) != len(want) {
		t.Fatalf("measured %d functions, want %d", len(stats), len(want))
	}
	for _, s := range stats {
		if w, ok := want[s.key]; !ok || s.complexity != w {
			t.Errorf("%s: complexity %d, want %d (known %v)", s.key, s.complexity, w, ok)
		}
	}
	gen := "// Code generated by x. DO NOT EDIT.\n\npackage p\n\nfunc f() { if true {} }\n"
	if stats, err := measureFile(token.NewFileSet(), "g.go", "p", gen); err != nil || len(stats) != 0 {
		t.Errorf("generated file measured: %v, %v", stats, err)
	}
}
