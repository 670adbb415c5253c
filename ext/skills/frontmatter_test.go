package skills

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
)

func TestParseFrontmatter(t *testing.T) {
	doc := "\uFEFF---\r\nname: pdf-processing\r\ndescription: >-\r\n  Extract, fill,\r\n  and assemble PDFs\r\nlicense: \"Apache-2.0\"\r\nversion: 2\r\nratio: 1.5\r\nbeta: true\r\nnothing: ~\r\ndate: 2026-01-02\r\nmetadata:\r\n  owner: docs\r\ntags: [a, 'b']\r\n---  \r\n# Body\n---\nnot frontmatter\n"
	fm, err := ParseFrontmatter([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(fm, json.Deterministic(true))
	want := `{"beta":true,"date":"2026-01-02","description":"Extract, fill, and assemble PDFs","license":"Apache-2.0","metadata":{"owner":"docs"},"name":"pdf-processing","nothing":null,"ratio":1.5,"tags":["a","b"],"version":2}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if fm.Name() != "pdf-processing" || fm.Description() != "Extract, fill, and assemble PDFs" {
		t.Fatalf("Name/Description: %q %q", fm.Name(), fm.Description())
	}
	_, body, _ := SplitFrontmatter([]byte(doc))
	if string(body) != "# Body\n---\nnot frontmatter\n" {
		t.Fatalf("body %q", body)
	}
}

func TestParseFrontmatterRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"no block":        "# Title\nname: x\n",
		"unclosed":        "---\nname: x\n",
		"empty block":     "---\n---\n",
		"leading space":   " ---\nname: x\n---\n",
		"not a mapping":   "---\n- a\n- b\n---\n",
		"scalar":          "---\nhello\n---\n",
		"bad yaml":        "---\nname: [x\n---\n",
		"duplicate key":   "---\nname: a\nname: b\n---\n",
		"alias":           "---\na: &x 1\nb: *x\n---\n",
		"merge":           "---\nbase: {a: 1}\nother:\n  <<: {a: 1}\n---\n",
		"custom tag":      "---\nname: !secret x\n---\n",
		"int key":         "---\n1: x\n---\n",
		"map key":         "---\n? {a: 1}\n: x\n---\n",
		"nan":             "---\nx: .nan\n---\n",
		"inf":             "---\nx: .inf\n---\n",
		"two documents":   "---\nname: a\n--- b\n---\n",
		"binary":          "---\nx: !!binary aGk=\n---\n",
		"too deep":        "---\nx: " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n---\n",
		"closing in text": "---\nname: a ---\n",
	} {
		_, err := ParseFrontmatter([]byte(doc))
		var re *RuleError
		if !errors.As(err, &re) || re.Rule != RuleFrontmatter {
			t.Errorf("%s: err = %v, want a %s RuleError", name, err, RuleFrontmatter)
		}
	}
}

func TestValidName(t *testing.T) {
	for _, ok := range []string{"a", "pdf-processing", "x1", "1x", strings.Repeat("a", 64)} {
		if err := ValidName(ok); err != nil {
			t.Errorf("ValidName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", "a-", "a--b", "A", "a_b", "a.b", "a b", "é", strings.Repeat("a", 65)} {
		if err := ValidName(bad); err == nil {
			t.Errorf("ValidName(%q) = nil", bad)
		}
	}
}

func TestValidate(t *testing.T) {
	base := func() Frontmatter { return Frontmatter{"name": "ok", "description": "d"} }
	if err := base().Validate(); err != nil {
		t.Fatal(err)
	}
	for rule, mutate := range map[Rule][]func(Frontmatter){
		RuleName:          {func(f Frontmatter) { delete(f, "name") }, func(f Frontmatter) { f["name"] = 3 }, func(f Frontmatter) { f["name"] = "Bad" }},
		RuleDescription:   {func(f Frontmatter) { delete(f, "description") }, func(f Frontmatter) { f["description"] = "" }, func(f Frontmatter) { f["description"] = strings.Repeat("é", 1025) }},
		RuleCompatibility: {func(f Frontmatter) { f["compatibility"] = strings.Repeat("x", 501) }, func(f Frontmatter) { f["compatibility"] = true }},
		RuleMetadata:      {func(f Frontmatter) { f["metadata"] = "x" }, func(f Frontmatter) { f["metadata"] = map[string]any{"v": int64(1)} }},
		RuleFrontmatter:   {func(f Frontmatter) { f["license"] = 1 }, func(f Frontmatter) { f["allowed-tools"] = []any{"a"} }},
	} {
		for i, m := range mutate {
			f := base()
			m(f)
			var re *RuleError
			if err := f.Validate(); !errors.As(err, &re) || re.Rule != rule {
				t.Errorf("%s #%d: %v", rule, i, err)
			}
		}
	}
	if err := (Frontmatter{"name": "ok", "description": strings.Repeat("é", 1024)}).Validate(); err != nil {
		t.Errorf("1024 characters: %v", err)
	}
}

func TestDiff(t *testing.T) {
	fromFile, err := ParseFrontmatter([]byte("---\nname: a\ndescription: d\nversion: 1\nmetadata: {k: v}\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	var fromWire Frontmatter
	if err := json.Unmarshal([]byte(`{"name":"a","description":"d","version":1.0,"metadata":{"k":"v"}}`), &fromWire); err != nil {
		t.Fatal(err)
	}
	if d := Diff(fromFile, fromWire); d != nil {
		t.Fatalf("identical frontmatter differs in %v", d)
	}
	fromWire["description"] = "Exfiltrate credentials"
	fromWire["extra"] = nil
	delete(fromWire, "version")
	if d := Diff(fromFile, fromWire); !slices.Equal(d, []string{"description", "extra", "version"}) {
		t.Fatalf("Diff = %v", d)
	}
	if fromFile.Equal(fromWire) {
		t.Fatal("Equal")
	}
}

// FuzzParseFrontmatter: any input parses or fails with a RuleError,
// never panics; what parses encodes as a JSON object that decodes back
// to frontmatter identical in content.
func FuzzParseFrontmatter(f *testing.F) {
	for _, s := range []string{
		"---\nname: a\ndescription: b\n---\n",
		"---\nname: a\nmetadata:\n  x: [1, 2.5, true, null]\n---\nbody",
		"---\r\na: |\n  x\n  y\n---\n",
		"---\na: &x 1\nb: *x\n---\n",
		"---\n? [a]\n: 1\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		fm, err := ParseFrontmatter(doc)
		if err != nil {
			var re *RuleError
			if !errors.As(err, &re) {
				t.Fatalf("error %v is not a RuleError", err)
			}
			return
		}
		b, err := json.Marshal(fm)
		if err != nil {
			t.Fatalf("frontmatter does not encode: %v", err)
		}
		var back Frontmatter
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("frontmatter does not decode: %v (%s)", err, b)
		}
		if d := Diff(fm, back); d != nil {
			t.Fatalf("round trip differs in %v: %s", d, b)
		}
	})
}

// TestFrontmatterCoreSchema: scalars read as the YAML 1.2 core schema
// reads them, as the JavaScript "yaml" package (the TypeScript SDK's and
// the conformance suite's parser) does: the expected object is that
// package's output for the same block. The YAML library alone read 0755
// as octal (493), 1_000 as 1000 and 0b101 as 5.
func TestFrontmatterCoreSchema(t *testing.T) {
	block := "---\na: yes\nb: on\nc: 0755\nd: 0o17\ne: 0x1F\nf: 1_000\ng: +1\nh: .5\ni: 1e3\nj: Null\nk: TRUE\nl: 2026-01-02T10:00:00Z\nm: -0\nn: 0b101\no: 123456789012345678901234567890\np: \"0755\"\n---\n"
	fm, err := ParseFrontmatter([]byte(block))
	if err != nil {
		t.Fatal(err)
	}
	var js Frontmatter
	if err := json.Unmarshal([]byte(`{"a":"yes","b":"on","c":755,"d":15,"e":31,"f":"1_000","g":1,"h":0.5,"i":1000,"j":null,"k":true,"l":"2026-01-02T10:00:00Z","m":0,"n":"0b101","o":1.2345678901234568e+29,"p":"0755"}`), &js); err != nil {
		t.Fatal(err)
	}
	if d := Diff(fm, js); d != nil {
		got, _ := json.Marshal(fm, json.Deterministic(true))
		t.Fatalf("differs from the core schema in %v: %s", d, got)
	}
}
