package archcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestErrorPrefixes keeps one convention true: the message of every
// exported sentinel error (a top-level Err… variable) starts with its
// package's name and a colon ("client: …"), or wraps one that does
// ("%w: …"), so a user can tell which layer an error comes from. Only the
// packages a user imports are checked (not internal ones, commands or
// examples); unexported errors are parts of messages that carry the
// prefix, and the messages built inside functions are checked by their
// packages' tests.
func TestErrorPrefixes(t *testing.T) {
	root := filepath.Join("..", "..")
	var bad []string
	checked := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch name := d.Name(); {
			case path != root && (strings.HasPrefix(name, ".") || name == "internal" || name == "cmd" ||
				name == "examples" || name == "conformance" || name == "bench" || name == "testdata"):
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		for _, msg := range sentinelMessages(f) {
			checked++
			if !strings.HasPrefix(msg, f.Name.Name+": ") && !strings.HasPrefix(msg, "%w") {
				rel, _ := filepath.Rel(root, path)
				bad = append(bad, rel+": "+strconv.Quote(msg))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("only %d sentinel errors found: the walk is broken", checked)
	}
	for _, b := range bad {
		t.Errorf("%s: an error message must start with its package's name", b)
	}
}

// sentinelMessages returns the format strings of the errors.New and
// fmt.Errorf calls that initialise the exported top-level variables of f.
func sentinelMessages(f *ast.File) []string {
	var msgs []string
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, v := range vs.Values {
				if i >= len(vs.Names) || !vs.Names[i].IsExported() {
					continue
				}
				call, ok := v.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					continue
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					continue
				}
				pkg, ok := sel.X.(*ast.Ident)
				if !ok || !(pkg.Name == "errors" && sel.Sel.Name == "New" || pkg.Name == "fmt" && sel.Sel.Name == "Errorf") {
					continue
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				if s, err := strconv.Unquote(lit.Value); err == nil {
					msgs = append(msgs, s)
				}
			}
		}
	}
	return msgs
}
