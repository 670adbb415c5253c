package skills_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mcpkit/mcpkit/ext/skills"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
)

func fsSub(fsys fs.FS, dir string) (fs.FS, error) { return fs.Sub(fsys, dir) }

func md(name string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: d\n---\n")}
}

// TestAddFSRefuses: each bad skills directory fails AddFS with a
// RuleError naming the skill (when one is at fault) and the rule, and
// registers nothing at all.
func TestAddFSRefuses(t *testing.T) {
	opts := &skills.Options{MaxFileBytes: 1100, MaxSkillBytes: 1200, MaxSkillFiles: 3, MaxDepth: 2, MaxTotalBytes: 2000}
	big := &fstest.MapFile{Data: []byte(strings.Repeat("x", 1101))}
	half := &fstest.MapFile{Data: []byte(strings.Repeat("x", 600))}
	for name, tc := range map[string]struct {
		fsys  fstest.MapFS
		rule  skills.Rule
		skill string
	}{
		"no SKILL.md":        {fstest.MapFS{"ok/SKILL.md": md("ok"), "a/README.md": {Data: []byte("x")}}, skills.RuleFrontmatter, "skill://a/SKILL.md"},
		"no frontmatter":     {fstest.MapFS{"a/SKILL.md": {Data: []byte("# a\n")}}, skills.RuleFrontmatter, "skill://a/SKILL.md"},
		"bad yaml":           {fstest.MapFS{"a/SKILL.md": {Data: []byte("---\nname: [a\n---\n")}}, skills.RuleFrontmatter, "skill://a/SKILL.md"},
		"no description":     {fstest.MapFS{"a/SKILL.md": {Data: []byte("---\nname: a\n---\n")}}, skills.RuleDescription, "skill://a/SKILL.md"},
		"name mismatch":      {fstest.MapFS{"a/SKILL.md": md("b")}, skills.RuleNameMatch, "skill://a/SKILL.md"},
		"bad dir name":       {fstest.MapFS{"Bad_Name/SKILL.md": md("Bad_Name")}, skills.RuleName, "skill://Bad_Name/SKILL.md"},
		"file too big":       {fstest.MapFS{"a/SKILL.md": md("a"), "a/big.txt": big}, skills.RuleFileSize, "skill://a/SKILL.md"},
		"skill too big":      {fstest.MapFS{"a/SKILL.md": md("a"), "a/1.txt": half, "a/2.txt": half}, skills.RuleSkillSize, "skill://a/SKILL.md"},
		"too many files":     {fstest.MapFS{"a/SKILL.md": md("a"), "a/1": {}, "a/2": {}, "a/3": {}}, skills.RuleFileCount, "skill://a/SKILL.md"},
		"too deep":           {fstest.MapFS{"a/SKILL.md": md("a"), "a/x/y/z.md": {}}, skills.RulePath, "skill://a/SKILL.md"},
		"symlink":            {fstest.MapFS{"a/SKILL.md": md("a"), "a/link": {Data: []byte("/etc/passwd"), Mode: fs.ModeSymlink}}, skills.RuleFileKind, "skill://a/SKILL.md"},
		"named pipe":         {fstest.MapFS{"a/SKILL.md": md("a"), "a/fifo": {Mode: fs.ModeNamedPipe}}, skills.RuleFileKind, "skill://a/SKILL.md"},
		"device":             {fstest.MapFS{"a/SKILL.md": md("a"), "a/dev": {Mode: fs.ModeDevice}}, skills.RuleFileKind, "skill://a/SKILL.md"},
		"question mark":      {fstest.MapFS{"a/SKILL.md": md("a"), "a/what?.md": {}}, skills.RulePath, "skill://a/SKILL.md"},
		"percent":            {fstest.MapFS{"a/SKILL.md": md("a"), "a/%2e%2e.md": {}}, skills.RulePath, "skill://a/SKILL.md"},
		"backslash":          {fstest.MapFS{"a/SKILL.md": md("a"), `a/..\x.md`: {}}, skills.RulePath, "skill://a/SKILL.md"},
		"control char":       {fstest.MapFS{"a/SKILL.md": md("a"), "a/x\n.md": {}}, skills.RulePath, "skill://a/SKILL.md"},
		"top-level file":     {fstest.MapFS{"a/SKILL.md": md("a"), "README.md": {}}, skills.RuleFileKind, ""},
		"top-level symlink":  {fstest.MapFS{"a/SKILL.md": md("a"), "b": {Mode: fs.ModeSymlink}}, skills.RuleFileKind, ""},
		"total too big":      {fstest.MapFS{"a/SKILL.md": md("a"), "a/1": half, "b/SKILL.md": md("b"), "b/1": half, "c/SKILL.md": md("c"), "c/1": half, "d/SKILL.md": md("d"), "d/1": half}, skills.RuleTotalSize, "skill://d/SKILL.md"},
		"second bad spoils":  {fstest.MapFS{"a/SKILL.md": md("a"), "b/SKILL.md": md("c")}, skills.RuleNameMatch, "skill://b/SKILL.md"},
		"SKILL.md not file":  {fstest.MapFS{"a/SKILL.md/x": {}}, skills.RuleFrontmatter, "skill://a/SKILL.md"},
		"long description":   {fstest.MapFS{"a/SKILL.md": {Data: []byte("---\nname: a\ndescription: " + strings.Repeat("d", 1025) + "\n---\n")}}, skills.RuleDescription, "skill://a/SKILL.md"},
		"alias bomb":         {fstest.MapFS{"a/SKILL.md": {Data: []byte("---\nname: a\ndescription: d\nx: &x [1]\ny: [*x, *x]\n---\n")}}, skills.RuleFrontmatter, "skill://a/SKILL.md"},
		"metadata not a map": {fstest.MapFS{"a/SKILL.md": {Data: []byte("---\nname: a\ndescription: d\nmetadata: [1]\n---\n")}}, skills.RuleMetadata, "skill://a/SKILL.md"},
	} {
		t.Run(name, func(t *testing.T) {
			s, x := newSkillsServer(t, nil, opts)
			err := x.AddFS(tc.fsys, "")
			var re *skills.RuleError
			if !errors.As(err, &re) || re.Rule != tc.rule || re.Skill != tc.skill {
				t.Fatalf("AddFS = %v, want rule %s for skill %q", err, tc.rule, tc.skill)
			}
			if !strings.Contains(err.Error(), string(tc.rule)) {
				t.Fatalf("the message %q does not name the rule", err)
			}
			if n := len(x.Skills()); n != 0 {
				t.Fatalf("%d skills registered after a failed AddFS", n)
			}
			p := mcptest.NewPair(t, s, nil)
			if res, err := p.Client.ListResources(p.Context(), nil); err == nil && len(res.Resources) != 0 {
				t.Fatalf("resources registered after a failed AddFS: %+v", res.Resources)
			}
		})
	}
}

func TestAddSkillRefuses(t *testing.T) {
	_, x := newSkillsServer(t, nil, nil)
	good := fstest.MapFS{"SKILL.md": md("refunds")}
	for _, p := range []string{"", "/refunds", "refunds/", "a//refunds", "../refunds", "a/../refunds", "a/./refunds", "a?b/refunds", "a b/refunds"} {
		if err := x.AddSkill(p, good); err == nil {
			t.Errorf("AddSkill(%q) registered", p)
		}
	}
	if err := x.AddSkill("acme/billing/refunds", good); err != nil {
		t.Fatal(err)
	}
	var re *skills.RuleError
	for _, p := range []string{"acme/billing/refunds", "acme/billing/refunds/refunds", "acme"} {
		fsys := fstest.MapFS{"SKILL.md": md(p[strings.LastIndexByte(p, '/')+1:])}
		if err := x.AddSkill(p, fsys); !errors.As(err, &re) || re.Rule != skills.RuleDuplicate {
			t.Errorf("AddSkill(%q) over a served skill = %v, want %s", p, err, skills.RuleDuplicate)
		}
	}
	if err := x.AddSkill("acme/support/refunds", good); err != nil {
		t.Fatalf("a second skill of the same name elsewhere: %v", err)
	}
	if err := x.AddSkill("x", nil); err == nil {
		t.Error("nil fs registered")
	}
	if err := x.AddFS(fstest.MapFS{}, ""); err == nil {
		t.Error("empty fs registered")
	}
	if _, err := skills.NewServer(nil, nil); err == nil {
		t.Error("NewServer(nil)")
	}
	if _, err := skills.NewServer(server.New(nil), &skills.Options{MaxFileBytes: -1}); err == nil {
		t.Error("negative limit accepted")
	}
}

// TestAddFSOnDisk: a real directory; a symlink in it, even one pointing
// at a file inside the skill, is refused.
func TestAddFSOnDisk(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "demo", "refs"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "demo", "SKILL.md"), md("demo").Data, 0o644))
	must(os.WriteFile(filepath.Join(dir, "demo", "refs", "a.md"), []byte("a"), 0o644))
	_, x := newSkillsServer(t, nil, nil)
	must(x.AddFS(os.DirFS(dir), ""))
	if sk := x.Skills(); len(sk) != 1 || len(sk[0].Resources.Files) != 2 {
		t.Fatalf("on disk: %+v", sk)
	}
	must(os.Symlink(filepath.Join(dir, "demo", "refs", "a.md"), filepath.Join(dir, "demo", "refs", "b.md")))
	_, x = newSkillsServer(t, nil, nil)
	var re *skills.RuleError
	if err := x.AddFS(os.DirFS(dir), ""); !errors.As(err, &re) || re.Rule != skills.RuleFileKind || re.File != "refs/b.md" {
		t.Fatalf("symlink: %v", err)
	}
	must(os.Remove(filepath.Join(dir, "demo", "refs", "b.md")))
	must(os.Symlink(filepath.Join(dir, "demo"), filepath.Join(dir, "alias")))
	if err := x.AddFS(os.DirFS(dir), ""); !errors.As(err, &re) || re.Rule != skills.RuleFileKind || re.File != "alias" {
		t.Fatalf("top-level symlink: %v", err)
	}
}

// TestSkillsReturnsCopies: what Skills returns may be changed without
// changing what the server serves.
func TestSkillsReturnsCopies(t *testing.T) {
	s, x := newSkillsServer(t, nil, nil)
	if err := x.AddFS(skillsFS(), ""); err != nil {
		t.Fatal(err)
	}
	got := x.Skills()
	got[1].Frontmatter["name"] = "changed"
	got[1].Frontmatter["metadata"].(map[string]any)["version"] = "9"
	got[1].Resources.Files[0].Digest = "sha256:x"
	p := mcptest.NewPair(t, s, nil)
	list := call[skills.ListResult](t, p, skills.MethodList, nil)
	pdf := list.Skills[1]
	if pdf.Frontmatter.Name() != "pdf-processing" || pdf.Frontmatter["metadata"].(map[string]any)["version"] != "2.1" || pdf.Resources.Files[0].Digest != skills.Digest([]byte(pdfMD)) {
		t.Fatalf("served entry changed through Skills(): %+v", pdf)
	}
}
