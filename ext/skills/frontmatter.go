package skills

import (
	"bytes"
	"errors"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.yaml.in/yaml/v3"
)

// The Agent Skills specification's limits on frontmatter fields.
const (
	// MaxNameLen is the longest name, in characters.
	MaxNameLen = 64
	// MaxDescriptionLen is the longest description, in characters.
	MaxDescriptionLen = 1024
	// MaxCompatibilityLen is the longest compatibility, in characters.
	MaxCompatibilityLen = 500
	// maxDepth bounds the nesting of frontmatter values.
	maxDepth = 32
)

// Frontmatter is a SKILL.md's YAML frontmatter as a JSON object: every
// field the author wrote. Values are JSON values: nil, bool, string,
// int64 or float64 (float64 only, once decoded from JSON), []any and
// map[string]any.
type Frontmatter map[string]any

// Name is the name field ("" when absent or not a string).
func (f Frontmatter) Name() string { s, _ := f["name"].(string); return s }

// Description is the description field ("" when absent or not a
// string).
func (f Frontmatter) Description() string { s, _ := f["description"].(string); return s }

// ValidName checks a skill name against the Agent Skills naming rules:
// 1 to MaxNameLen characters, lowercase ASCII letters, digits and
// hyphens, no leading, trailing or consecutive hyphens. A bad name is a
// *RuleError (RuleName).
func ValidName(name string) error {
	switch {
	case name == "":
		return ruleErr(RuleName, "the name is empty")
	case len(name) > MaxNameLen:
		return ruleErr(RuleName, "the name %q is longer than %d characters", name, MaxNameLen)
	case name[0] == '-' || name[len(name)-1] == '-':
		return ruleErr(RuleName, "the name %q begins or ends with a hyphen", name)
	case bytes.Contains([]byte(name), []byte("--")):
		return ruleErr(RuleName, "the name %q has consecutive hyphens", name)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isLower(c) && !isDigit(c) && c != '-' {
			return ruleErr(RuleName, "the name %q has %q: only a-z, 0-9 and '-' are allowed", name, rune(c))
		}
	}
	return nil
}

// Validate checks the frontmatter against the Agent Skills
// specification: name (ValidName), a non-empty description of at most
// MaxDescriptionLen characters, compatibility (when present) a string
// of at most MaxCompatibilityLen characters, metadata (when present) a
// map of strings, license and allowed-tools (when present) strings. The
// first broken rule is a *RuleError.
func (f Frontmatter) Validate() error {
	name, ok := f["name"].(string)
	if !ok {
		return ruleErr(RuleName, "the frontmatter has no string name")
	}
	if err := ValidName(name); err != nil {
		return err
	}
	d, ok := f["description"].(string)
	switch {
	case !ok || d == "":
		return ruleErr(RuleDescription, "the frontmatter has no non-empty string description")
	case utf8.RuneCountInString(d) > MaxDescriptionLen:
		return ruleErr(RuleDescription, "the description is longer than %d characters", MaxDescriptionLen)
	}
	if v, present := f["compatibility"]; present {
		c, ok := v.(string)
		if !ok || c == "" || utf8.RuneCountInString(c) > MaxCompatibilityLen {
			return ruleErr(RuleCompatibility, "compatibility must be a non-empty string of at most %d characters", MaxCompatibilityLen)
		}
	}
	for _, k := range []string{"license", "allowed-tools"} {
		if v, present := f[k]; present {
			if _, ok := v.(string); !ok {
				return ruleErr(RuleFrontmatter, "%s must be a string", k)
			}
		}
	}
	if v, present := f["metadata"]; present {
		m, ok := v.(map[string]any)
		if !ok {
			return ruleErr(RuleMetadata, "metadata must be a mapping")
		}
		for k, mv := range m {
			if _, ok := mv.(string); !ok {
				return ruleErr(RuleMetadata, "metadata[%q] must be a string", k)
			}
		}
	}
	return nil
}

// SplitFrontmatter splits a SKILL.md into its YAML frontmatter block and
// the body after it. The document (after an optional UTF-8 byte order
// mark) must begin with a line "---"; the block ends at the next line
// that is "---" followed only by spaces or tabs. Lines end in "\n" or
// "\r\n". ok is false when there is no such block or it is empty.
func SplitFrontmatter(doc []byte) (block, body []byte, ok bool) {
	doc = bytes.TrimPrefix(doc, []byte("\uFEFF"))
	var rest []byte
	switch {
	case bytes.HasPrefix(doc, []byte("---\n")):
		rest = doc[4:]
	case bytes.HasPrefix(doc, []byte("---\r\n")):
		rest = doc[5:]
	default:
		return nil, nil, false
	}
	for off := 0; off < len(rest); {
		end := bytes.IndexByte(rest[off:], '\n')
		line, next := rest[off:], len(rest)
		if end >= 0 {
			line, next = rest[off:off+end], off+end+1
		}
		if closing(line) {
			if off == 0 {
				return nil, nil, false // "---" at once: no block
			}
			b := bytes.TrimSuffix(rest[:off-1], []byte("\r"))
			return b, rest[next:], true
		}
		off = next
	}
	return nil, nil, false
}

// closing reports whether line (without its "\n") closes the block.
func closing(line []byte) bool {
	line = bytes.TrimSuffix(line, []byte("\r"))
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	return ok && len(bytes.Trim(rest, " \t")) == 0
}

// ParseFrontmatter parses the frontmatter of a SKILL.md (see
// SplitFrontmatter) into a JSON object. The block must be one YAML
// mapping with string keys, each once; values are scalars (null,
// booleans, integers, finite floats, strings; timestamps are kept as
// written), sequences and mappings, nested at most 32 deep. Anchors,
// aliases, merge keys and custom tags are refused, so that every
// implementation renders the block alike. Any failure is a *RuleError
// (RuleFrontmatter). ParseFrontmatter does not Validate.
func ParseFrontmatter(doc []byte) (Frontmatter, error) {
	block, _, ok := SplitFrontmatter(doc)
	if !ok {
		return nil, ruleErr(RuleFrontmatter, "SKILL.md does not begin with a --- delimited YAML frontmatter block")
	}
	return parseBlock(block)
}

func parseBlock(block []byte) (Frontmatter, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(block))
	if err := dec.Decode(&doc); err != nil {
		return nil, ruleErr(RuleFrontmatter, "the frontmatter is not valid YAML: %v", err)
	}
	var extra yaml.Node
	if dec.Decode(&extra) == nil {
		return nil, ruleErr(RuleFrontmatter, "the frontmatter holds more than one YAML document")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, ruleErr(RuleFrontmatter, "the frontmatter is not a YAML mapping")
	}
	v, err := convert(doc.Content[0], 0)
	if err != nil {
		return nil, err
	}
	return Frontmatter(v.(map[string]any)), nil
}

func convert(n *yaml.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, ruleErr(RuleFrontmatter, "the frontmatter nests deeper than %d levels", maxDepth)
	}
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return nil, ruleErr(RuleFrontmatter, "line %d: YAML anchors and aliases are not allowed in frontmatter", n.Line)
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" || k.Anchor != "" {
				return nil, ruleErr(RuleFrontmatter, "line %d: a frontmatter key must be a string", k.Line)
			}
			if _, dup := m[k.Value]; dup {
				return nil, ruleErr(RuleFrontmatter, "line %d: the key %q appears twice", k.Line, k.Value)
			}
			v, err := convert(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := convert(c, depth+1)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case yaml.ScalarNode:
		return scalar(n)
	}
	return nil, ruleErr(RuleFrontmatter, "line %d: unsupported YAML node", n.Line)
}

func scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!str", "!!timestamp":
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, ruleErr(RuleFrontmatter, "line %d: %v", n.Line, err)
		}
		return b, nil
	case "!!int", "!!float":
		return coreNumber(n)
	case "!!merge":
		return nil, ruleErr(RuleFrontmatter, "line %d: YAML merge keys are not allowed in frontmatter", n.Line)
	}
	return nil, ruleErr(RuleFrontmatter, "line %d: the YAML tag %s is not allowed in frontmatter", n.Line, n.Tag)
}

// The YAML 1.2 core schema's numbers (what the other SDKs' parsers and
// the conformance suite read): the parser resolves some YAML 1.1 forms
// as numbers too (0755 as octal, 1_000, 0b101), which would make the
// same SKILL.md render differently here and there.
var (
	coreInt   = regexp.MustCompile(`^[-+]?[0-9]+$`)
	coreOct   = regexp.MustCompile(`^0o[0-7]+$`)
	coreHex   = regexp.MustCompile(`^0x[0-9a-fA-F]+$`)
	coreFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
	// coreSpecial: infinities and NaN, which JSON cannot carry.
	coreSpecial = regexp.MustCompile(`^([-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$`)
)

// coreNumber reads a scalar the parser took for a number as the core
// schema does: a decimal, 0o octal or 0x hexadecimal integer (one beyond
// 64 bits as a float, as JSON parsers do), a finite float, or else, a
// plain scalar that is no number there, the string written.
func coreNumber(n *yaml.Node) (any, error) {
	v := n.Value
	switch {
	case coreInt.MatchString(v):
		if i, err := strconv.ParseInt(v, 10, 64); err == nil {
			return i, nil
		}
	case coreOct.MatchString(v):
		if i, err := strconv.ParseInt(v[2:], 8, 64); err == nil {
			return i, nil
		}
		return nil, ruleErr(RuleFrontmatter, "line %d: the integer %s does not fit 64 bits", n.Line, v)
	case coreHex.MatchString(v):
		if i, err := strconv.ParseInt(v[2:], 16, 64); err == nil {
			return i, nil
		}
		return nil, ruleErr(RuleFrontmatter, "line %d: the integer %s does not fit 64 bits", n.Line, v)
	case coreSpecial.MatchString(v):
		return nil, ruleErr(RuleFrontmatter, "line %d: %q is not a finite number", n.Line, v)
	case !coreFloat.MatchString(v):
		if n.Style&yaml.TaggedStyle != 0 {
			return nil, ruleErr(RuleFrontmatter, "line %d: %q is not a YAML 1.2 number", n.Line, v)
		}
		return v, nil // 1_000, 0b101, 0755 in 1.1's octal reading: strings in 1.2
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, ruleErr(RuleFrontmatter, "line %d: %q is not a finite number", n.Line, v)
	}
	return f, nil
}

// canonical encodes v as JSON the way it reads back from the wire:
// numbers as float64, object members sorted.
func canonical(v any) (string, bool) {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return "", false
	}
	var back any
	if json.Unmarshal(b, &back) != nil {
		return "", false
	}
	b, err = json.Marshal(back, json.Deterministic(true))
	if err != nil {
		return "", false
	}
	out := jsontext.Value(b)
	if out.Canonicalize() != nil {
		return "", false
	}
	return string(out), true
}

// Diff returns the fields, sorted, in which a and b differ: a field
// present in one only, or with values that differ as JSON (the number 1
// and 1.0 are alike). nil means identical in content.
func Diff(a, b Frontmatter) []string {
	var out []string
	keys := make(map[string]bool, len(a)+len(b))
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for k := range keys {
		av, aok := a[k]
		bv, bok := b[k]
		if aok != bok {
			out = append(out, k)
			continue
		}
		ac, ok1 := canonical(av)
		bc, ok2 := canonical(bv)
		if !ok1 || !ok2 || ac != bc {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return slices.Clip(out)
}

// Equal reports whether f and g are identical in content (Diff is
// empty).
func (f Frontmatter) Equal(g Frontmatter) bool { return len(Diff(f, g)) == 0 }
