package apirecord

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Dir is the directory, relative to a module's root, that holds its record.
const Dir = "api"

// Command is what a developer runs, from the repository root, to rewrite
// the records of every module after a deliberate API change.
const Command = "go run ./internal/apirecord/apirecord -w"

// Record is the API of a module: the file name (within Dir) of each
// public package and the file's content.
type Record map[string]string

type listedPkg struct {
	ImportPath string
	Name       string
	Export     string
	DepOnly    bool
	Module     *struct{ Path string }
	Error      *struct{ Err string }
}

// goCmd runs the go command in dir, with any workspace turned off so that
// each module is read as its own go.mod says.
func goCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return out, nil
}

// Public reports whether a package of the module belongs in the record.
func Public(modulePath, importPath, name string) bool {
	if name == "main" {
		return false
	}
	rel, ok := strings.CutPrefix(importPath, modulePath)
	if !ok || (rel != "" && rel[0] != '/') {
		return false
	}
	return !slices.Contains(strings.Split(importPath, "/"), "internal")
}

// FileName is the name, within Dir, of the record of the package at
// importPath: its path below the module with "/" written as ".", or the
// module's last path element for the module's root package.
func FileName(modulePath, importPath string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(importPath, modulePath), "/")
	if rel == "" {
		rel = modulePath[strings.LastIndex(modulePath, "/")+1:]
	}
	return strings.ReplaceAll(rel, "/", ".") + ".txt"
}

// Generate reads the API of the public packages of the module rooted at
// dir (which must hold its go.mod). It compiles the module (the go
// command's cache makes a second run cheap).
func Generate(dir string) (Record, error) {
	modOut, err := goCmd(dir, "list", "-m")
	if err != nil {
		return nil, err
	}
	modulePath := strings.TrimSpace(string(modOut))
	out, err := goCmd(dir, "list", "-e", "-export", "-deps",
		"-json=ImportPath,Name,Export,DepOnly,Module,Error", "./...")
	if err != nil {
		return nil, err
	}
	exports := make(map[string]string)
	var public []listedPkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		if p.Export != "" {
			exports[p.ImportPath] = p.Export
		}
		if p.DepOnly || p.Module == nil || p.Module.Path != modulePath || !Public(modulePath, p.ImportPath, p.Name) {
			continue
		}
		if p.Error != nil {
			if strings.Contains(p.Error.Err, "no non-test Go files") {
				continue
			}
			return nil, fmt.Errorf("%s: %s", p.ImportPath, p.Error.Err)
		}
		public = append(public, p)
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	rec := make(Record)
	for _, p := range public {
		pkg, err := imp.Import(p.ImportPath)
		if err != nil {
			return nil, fmt.Errorf("reading the export data of %s: %w", p.ImportPath, err)
		}
		lines := Lines(pkg)
		rec[FileName(modulePath, p.ImportPath)] = strings.Join(lines, "\n") + "\n"
	}
	return rec, nil
}

// Read returns the record stored under the module rooted at dir.
func Read(dir string) (Record, error) {
	entries, err := os.ReadDir(filepath.Join(dir, Dir))
	if errors.Is(err, os.ErrNotExist) {
		return Record{}, nil
	}
	if err != nil {
		return nil, err
	}
	rec := make(Record)
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".txt") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, Dir, e.Name()))
		if err != nil {
			return nil, err
		}
		rec[e.Name()] = string(b)
	}
	return rec, nil
}

// Write replaces the record stored under the module rooted at dir: each
// file is written and a .txt file for a package that is gone is removed.
func Write(dir string, rec Record) error {
	if err := os.MkdirAll(filepath.Join(dir, Dir), 0o755); err != nil {
		return err
	}
	old, err := Read(dir)
	if err != nil {
		return err
	}
	for name := range old {
		if _, ok := rec[name]; !ok {
			if err := os.Remove(filepath.Join(dir, Dir, name)); err != nil {
				return err
			}
		}
	}
	for name, content := range rec {
		if old[name] == content {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, Dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Diff describes how got (the API as built) differs from want (the
// record): per file, the lines the record lacks ("+") and the lines it
// has that the API no longer does ("-"). It is empty when they agree.
func Diff(want, got Record) string {
	names := make([]string, 0, len(want)+len(got))
	for n := range want {
		names = append(names, n)
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		w, inWant := want[n]
		g, inGot := got[n]
		if w == g {
			continue
		}
		switch {
		case !inWant:
			fmt.Fprintf(&b, "%s/%s: missing (a new public package)\n", Dir, n)
		case !inGot:
			fmt.Fprintf(&b, "%s/%s: the package is gone (or no longer public)\n", Dir, n)
		default:
			fmt.Fprintf(&b, "%s/%s:\n", Dir, n)
		}
		wl, gl := lineSet(w), lineSet(g)
		for _, l := range sortedLines(w) {
			if !gl[l] {
				fmt.Fprintf(&b, "-%s\n", l)
			}
		}
		for _, l := range sortedLines(g) {
			if !wl[l] {
				fmt.Fprintf(&b, "+%s\n", l)
			}
		}
	}
	return b.String()
}

func sortedLines(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		if l = strings.TrimRight(l, "\n"); l != "" {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

func lineSet(s string) map[string]bool {
	m := make(map[string]bool)
	for _, l := range sortedLines(s) {
		m[l] = true
	}
	return m
}

// Modules are the directories, relative to the repository root, of the
// modules that have public packages and so a record.
var Modules = []string{".", "otel", filepath.Join("store", "redis")}

// Check compares the module rooted at dir with its record and returns
// an explanation for a developer when they differ, or "" when they agree.
// moduleDir names the module in the message (as Modules does).
func Check(dir, moduleDir string) (string, error) {
	got, err := Generate(dir)
	if err != nil {
		return "", err
	}
	want, err := Read(dir)
	if err != nil {
		return "", err
	}
	d := Diff(want, got)
	if d == "" {
		return "", nil
	}
	return fmt.Sprintf("the exported API of the module in %s differs from its record (%s/ there); "+
		"lines with + are in the API and not in the record, lines with - the other way round:\n\n%s\n"+
		"If the change is meant: run `%s` from the repository root, "+
		"and add a line for each change to CHANGELOG.md under ## [Unreleased] "+
		"(a rename or removal is breaking: keep the old name as a deprecated alias for one minor version).",
		moduleDir, Dir, d, Command), nil
}
