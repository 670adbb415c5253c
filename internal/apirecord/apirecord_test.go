package apirecord

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecord fails when the exported API of the core module differs from
// api/*.txt; the message shows the difference and the command to run.
func TestRecord(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	msg, err := Check(root, ".")
	if err != nil {
		t.Fatal(err)
	}
	if msg != "" {
		t.Fatal(msg)
	}
}

func check(t *testing.T, src string) *types.Package {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := (&types.Config{Importer: importer.Default()}).Check("example.com/m/p", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// TestLines pins the shape of a record and that every kind of exported
// change shows in it.
func TestLines(t *testing.T) {
	const src = `package p
const C = 3
const D int64 = 4
var V []string
func F(a int, b ...string) (bool, error) { return false, nil }
func G[T any, U comparable](t T) U { var u U; return u }
type S struct { A int; b int; *E }
type E struct{}
func (*E) M() {}
func (S) N(x int) {}
func (s *S) n() {}
type I interface { M(); n() }
type A = S
type K int
type L[T any] struct{ X T }
func (l L[T]) Get() T { return l.X }
type u struct{}
func (u) Exported() {}
`
	got := strings.Join(Lines(check(t, src)), "\n")
	want := strings.Join([]string{
		"pkg example.com/m/p, const C untyped int = 3",
		"pkg example.com/m/p, const D int64 = 4",
		"pkg example.com/m/p, func F(a int, b ...string) (bool, error)",
		"pkg example.com/m/p, func G[T any, U comparable](t T) U",
		"pkg example.com/m/p, method (*E) M()",
		"pkg example.com/m/p, method (L[T]) Get() T",
		"pkg example.com/m/p, method (S) N(x int)",
		"pkg example.com/m/p, type A = S",
		"pkg example.com/m/p, type E struct",
		"pkg example.com/m/p, type I interface { M, unexported methods }",
		"pkg example.com/m/p, type I interface, M()",
		"pkg example.com/m/p, type K int",
		"pkg example.com/m/p, type L[T any] struct",
		"pkg example.com/m/p, type L[T any] struct, X T",
		"pkg example.com/m/p, type S struct",
		"pkg example.com/m/p, type S struct, A int",
		"pkg example.com/m/p, type S struct, embedded *E",
		"pkg example.com/m/p, var V []string",
	}, "\n")
	if got != want {
		t.Errorf("record:\n%s\nwant:\n%s", got, want)
	}
}

// TestDiff checks the checker: an added, a changed and a removed
// identifier, a new package and a gone one are all reported, and equal
// records are not.
func TestDiff(t *testing.T) {
	old := Record{
		"a.txt": "pkg a, func F()\npkg a, func G(int)\n",
		"b.txt": "pkg b, var V int\n",
	}
	if d := Diff(old, old); d != "" {
		t.Fatalf("equal records differ:\n%s", d)
	}
	cur := Record{
		"a.txt": "pkg a, func F()\npkg a, func G(int64)\npkg a, func H()\n",
		"c.txt": "pkg c, var W int\n",
	}
	d := Diff(old, cur)
	for _, want := range []string{
		"api/a.txt:\n", "-pkg a, func G(int)\n", "+pkg a, func G(int64)\n", "+pkg a, func H()\n",
		"api/b.txt: the package is gone", "-pkg b, var V int\n",
		"api/c.txt: missing", "+pkg c, var W int\n",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	if strings.Contains(d, "func F()") {
		t.Errorf("diff reports an unchanged line:\n%s", d)
	}
}

func TestPublic(t *testing.T) {
	const m = "github.com/mcpkit/mcpkit"
	for _, tc := range []struct {
		path, name string
		want       bool
	}{
		{m + "/server", "server", true},
		{m + "/server/internal/seam", "seam", false},
		{m + "/internal/wire", "wire", false},
		{m + "/cmd/mcpkit", "main", false},
		{m + "x/other", "other", false},
		{m + "/otel", "mcpotel", true},
	} {
		if got := Public(m, tc.path, tc.name); got != tc.want {
			t.Errorf("Public(%s) = %v, want %v", tc.path, got, tc.want)
		}
	}
	if got := FileName(m+"/otel", m+"/otel"); got != "otel.txt" {
		t.Errorf("FileName(root) = %s", got)
	}
	if got := FileName(m, m+"/server/streamhttp"); got != "server.streamhttp.txt" {
		t.Errorf("FileName = %s", got)
	}
}
