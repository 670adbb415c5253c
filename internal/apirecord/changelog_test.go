package apirecord

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// sectionOrder is the order of a release's sections: breaking changes
// first (README, Versioning).
var sectionOrder = []string{"Removed", "Changed", "Deprecated", "Added", "Fixed", "Security"}

var (
	versionHeading = regexp.MustCompile(`^## \[([^\]]+)\]`)
	semver         = regexp.MustCompile(`^\d+\.\d+\.\d+$`)
)

// checkChangelog returns what is wrong with the shape of a changelog: the
// first release heading must be [Unreleased] (where a change to the API
// record is described), the others versions, each with its link at the
// end; within a release the sections come in sectionOrder.
func checkChangelog(doc string) []string {
	var problems []string
	var versions []string
	last := -1
	sc := bufio.NewScanner(strings.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := versionHeading.FindStringSubmatch(line); m != nil {
			v := m[1]
			switch {
			case len(versions) == 0 && v != "Unreleased":
				problems = append(problems, fmt.Sprintf("line %d: the first release must be [Unreleased], not [%s]", n, v))
			case len(versions) > 0 && !semver.MatchString(v):
				problems = append(problems, fmt.Sprintf("line %d: [%s] is not a version (MAJOR.MINOR.PATCH)", n, v))
			}
			versions = append(versions, v)
			last = -1
			continue
		}
		name, ok := strings.CutPrefix(line, "### ")
		if !ok {
			continue
		}
		word, _, _ := strings.Cut(name, " ")
		i := slices.Index(sectionOrder, word)
		switch {
		case len(versions) == 0:
			problems = append(problems, fmt.Sprintf("line %d: section %q before any release", n, name))
		case i < 0:
			problems = append(problems, fmt.Sprintf("line %d: section %q is none of %s", n, name, strings.Join(sectionOrder, ", ")))
		case i < last:
			problems = append(problems, fmt.Sprintf("line %d: section %q comes after %q; the order is %s (breaking changes first)", n, name, sectionOrder[last], strings.Join(sectionOrder, ", ")))
		default:
			last = i
		}
	}
	if len(versions) == 0 {
		problems = append(problems, "no release heading (## [Unreleased])")
	}
	for _, v := range versions {
		if !strings.Contains(doc, "\n["+v+"]: ") {
			problems = append(problems, fmt.Sprintf("[%s] has no link line (\"[%s]: URL\") at the end", v, v))
		}
	}
	return problems
}

// TestChangelog keeps CHANGELOG.md in the shape the API record's failure
// message points to: an [Unreleased] release first, sections in order.
func TestChangelog(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkChangelog(string(b)) {
		t.Error("CHANGELOG.md: " + p)
	}
}

func TestCheckChangelogCatches(t *testing.T) {
	good := "# C\n\n## [Unreleased]\n\n### Removed\n\n### Added\n\n## [0.1.0]\n\n### Changed (x)\n\n[Unreleased]: u\n[0.1.0]: v\n"
	if p := checkChangelog(good); len(p) != 0 {
		t.Fatalf("a good changelog: %q", p)
	}
	for name, doc := range map[string]string{
		"no unreleased": "## [0.1.0]\n\n[0.1.0]: v\n",
		"order":         "## [Unreleased]\n\n### Added\n\n### Removed\n\n[Unreleased]: u\n",
		"unknown":       "## [Unreleased]\n\n### Misc\n\n[Unreleased]: u\n",
		"no link":       "## [Unreleased]\n\n### Added\n",
		"not a version": "## [Unreleased]\n\n## [next]\n\n[Unreleased]: u\n[next]: v\n",
	} {
		if p := checkChangelog(doc); len(p) == 0 {
			t.Errorf("%s: no problem found", name)
		}
	}
}
