package skills

import (
	"fmt"
	"strings"
)

// Rule names a rule a skill broke. Server registration and client
// verification report a broken rule as a *RuleError carrying one.
type Rule string

// The rules.
const (
	// RuleFrontmatter: SKILL.md begins with a --- delimited YAML block
	// that is a mapping of JSON-compatible values.
	RuleFrontmatter Rule = "frontmatter"
	// RuleName: name is present and follows the Agent Skills naming
	// rules (1-64 of a-z, 0-9 and '-', no leading, trailing or double
	// hyphen).
	RuleName Rule = "name"
	// RuleNameMatch: the final segment of the skill path equals name.
	RuleNameMatch Rule = "name-matches-path"
	// RuleDescription: description is a non-empty string of at most
	// MaxDescriptionLen characters.
	RuleDescription Rule = "description"
	// RuleCompatibility: compatibility, when present, is a string of at
	// most MaxCompatibilityLen characters.
	RuleCompatibility Rule = "compatibility"
	// RuleMetadata: metadata, when present, maps strings to strings.
	RuleMetadata Rule = "metadata"
	// RuleURI: a skill URI is <scheme>://<skill-path>/SKILL.md with
	// clean segments.
	RuleURI Rule = "uri"
	// RulePath: a file path is relative, '/'-separated, with no empty,
	// "." or ".." segment and no '\\', '?', '#', '%' or control character.
	RulePath Rule = "path"
	// RuleFileKind: a skill holds regular files and directories only
	// (no symlink, device, pipe or socket).
	RuleFileKind Rule = "file-kind"
	// RuleFileSize: a file is at most the configured bytes.
	RuleFileSize Rule = "file-size"
	// RuleFileCount: a skill holds at most the configured number of files.
	RuleFileCount Rule = "file-count"
	// RuleSkillSize: a skill's files total at most the configured bytes.
	RuleSkillSize Rule = "skill-size"
	// RuleTotalSize: all skills of a server total at most the configured
	// bytes.
	RuleTotalSize Rule = "total-size"
	// RuleDuplicate: a skill URI is registered once.
	RuleDuplicate Rule = "duplicate"
	// RuleDigest: a file's bytes match the manifest's digest.
	RuleDigest Rule = "digest"
	// RuleSize: a file's length matches the manifest's size.
	RuleSize Rule = "size"
	// RuleFrontmatterMatch: SKILL.md's frontmatter is identical to the
	// entry's.
	RuleFrontmatterMatch Rule = "frontmatter-match"
)

// RuleError reports a broken rule: the skill (its path or URI, "" when
// unknown), the file when one is at fault, the rule and what is wrong.
type RuleError struct {
	Skill  string
	File   string
	Rule   Rule
	Detail string
}

func (e *RuleError) Error() string {
	var b strings.Builder
	b.WriteString("skills: ")
	if e.Skill != "" {
		fmt.Fprintf(&b, "skill %q: ", e.Skill)
	}
	if e.File != "" {
		fmt.Fprintf(&b, "file %q: ", e.File)
	}
	fmt.Fprintf(&b, "rule %s: %s", e.Rule, e.Detail)
	return b.String()
}

func ruleErr(rule Rule, format string, args ...any) *RuleError {
	return &RuleError{Rule: rule, Detail: fmt.Sprintf(format, args...)}
}
