package readmecheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var numberWords = []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
	"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
	"nineteen", "twenty"}

// examplesSentence matches the README's sentence that counts and names
// the examples, up to the end of its paragraph.
var examplesSentence = regexp.MustCompile("(?s)\\[examples/\\]\\(examples\\) holds (\\w+) runnable programs(.*?)\n\n")

// TestReadmeCountsExamples keeps the README's count and list of the
// examples true: the number word is the number of directories under
// examples/, and each is named in the sentence.
func TestReadmeCountsExamples(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(root, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	m := examplesSentence.FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md lacks the sentence \"[examples/](examples) holds N runnable programs…\"")
	}
	if len(dirs) >= len(numberWords) || string(m[1]) != numberWords[len(dirs)] {
		t.Errorf("README.md says examples/ holds %s programs; it holds %d: %s", m[1], len(dirs), strings.Join(dirs, ", "))
	}
	for _, d := range dirs {
		if !strings.Contains(string(m[2]), "`"+d+"`") {
			t.Errorf("README.md's list of examples does not name `%s`", d)
		}
	}
}
