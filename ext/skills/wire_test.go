package skills

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
)

func TestSkillWire(t *testing.T) {
	in := Skill{
		URI:         "skill://acme/refunds/SKILL.md",
		Frontmatter: Frontmatter{"name": "refunds", "description": "Refund things"},
		Resources:   Resources{Files: []File{{URI: "skill://acme/refunds/SKILL.md", Digest: Digest([]byte("x")), Size: 1}}},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"uri":"skill://acme/refunds/SKILL.md","frontmatter":{"description":"Refund things","name":"refunds"},"resources":[{"uri":"skill://acme/refunds/SKILL.md","digest":"sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881","size":1}]}`
	if string(b) != want {
		t.Fatalf("encoded\n%s\nwant\n%s", b, want)
	}
	var out Skill
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.URI != in.URI || !out.Frontmatter.Equal(in.Frontmatter) || len(out.Resources.Files) != 1 || out.Resources.Files[0] != in.Resources.Files[0] {
		t.Fatalf("round trip: %+v", out)
	}
	dyn, _ := json.Marshal(Skill{URI: "skill://d/SKILL.md", Frontmatter: Frontmatter{"name": "d"}, Resources: Resources{Dynamic: true}})
	if !strings.Contains(string(dyn), `"resources":"dynamic"`) {
		t.Fatalf("dynamic: %s", dyn)
	}
	if err := json.Unmarshal(dyn, &out); err != nil || !out.Resources.Dynamic {
		t.Fatalf("dynamic decode: %v %+v", err, out)
	}
}

func TestSkillWireRefusesInvalidEntries(t *testing.T) {
	for name, body := range map[string]string{
		"no resources":      `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a"}}`,
		"resources string":  `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a"},"resources":"static"}`,
		"resources object":  `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a"},"resources":{}}`,
		"resources null":    `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a"},"resources":null}`,
		"no uri":            `{"frontmatter":{"name":"a"},"resources":[]}`,
		"no frontmatter":    `{"uri":"skill://a/SKILL.md","resources":[]}`,
		"frontmatter array": `{"uri":"skill://a/SKILL.md","frontmatter":[],"resources":[]}`,
	} {
		var s Skill
		if err := json.Unmarshal([]byte(body), &s); err == nil {
			t.Errorf("%s: decoded %+v", name, s)
		}
	}
}

func TestDigest(t *testing.T) {
	d := Digest([]byte("hello"))
	if d != "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" || !ValidDigest(d) {
		t.Fatalf("Digest = %s", d)
	}
	for _, bad := range []string{"", "sha256:", "sha256:" + strings.Repeat("A", 64), "sha512:" + strings.Repeat("a", 64), "sha256:" + strings.Repeat("a", 63), "sha256:" + strings.Repeat("g", 64)} {
		if ValidDigest(bad) {
			t.Errorf("ValidDigest(%q) = true", bad)
		}
	}
}

func TestParseSkillURI(t *testing.T) {
	for uri, want := range map[string][2]string{
		"skill://git-workflow/SKILL.md":         {"git-workflow", "git-workflow"},
		"skill://acme/billing/refunds/SKILL.md": {"acme/billing/refunds", "refunds"},
		"github://owner/repo/x/SKILL.md":        {"owner/repo/x", "x"},
	} {
		p, n, err := ParseSkillURI(uri)
		if err != nil || p != want[0] || n != want[1] {
			t.Errorf("ParseSkillURI(%q) = %q, %q, %v", uri, p, n, err)
		}
	}
	for uri, rule := range map[string]Rule{
		"skill://SKILL.md":              RuleURI,
		"skill:///a/SKILL.md":           RuleURI,
		"skill://a/../b/SKILL.md":       RuleURI,
		"skill://a/./b/SKILL.md":        RuleURI,
		"skill://a//b/SKILL.md":         RuleURI,
		"skill://a/b/skill.md":          RuleURI,
		"skill://a%2fb/c/SKILL.md":      RuleURI,
		"skill://a?x/SKILL.md":          RuleURI,
		"skill://a/B_C/SKILL.md":        RuleName,
		"skill://a/-x/SKILL.md":         RuleName,
		"1x://a/SKILL.md":               RuleURI,
		"a/SKILL.md":                    RuleURI,
		"skill://a b/c/SKILL.md":        RuleURI,
		"skill://a/b\\c/d/SKILL.md":     RuleURI,
		"skill://ok/bad--name/SKILL.md": RuleName,
	} {
		_, _, err := ParseSkillURI(uri)
		var re *RuleError
		if !errors.As(err, &re) || re.Rule != rule {
			t.Errorf("ParseSkillURI(%q) = %v, want rule %s", uri, err, rule)
		}
	}
}

func TestWithin(t *testing.T) {
	s := "skill://acme/x/SKILL.md"
	for uri, want := range map[string]bool{
		s:                             true,
		"skill://acme/x/a/b.md":       true,
		"skill://acme/x/../y/a.md":    false,
		"skill://acme/xy/a.md":        false,
		"skill://acme/x/":             false,
		"skill://acme/x":              false,
		"skill://acme/x/a//b.md":      false,
		"skill://other/acme/x/a.md":   false,
		"skill://acme/x/a/./b.md":     false,
		"skill://acme/x/a%2f..%2f.md": false,
	} {
		if got := Within(s, uri); got != want {
			t.Errorf("Within(%q) = %v, want %v", uri, got, want)
		}
	}
	if rel, ok := RelPath(s, "skill://acme/x/a/b.md"); !ok || rel != "a/b.md" {
		t.Errorf("RelPath = %q, %v", rel, ok)
	}
}
