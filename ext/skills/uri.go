package skills

import (
	"strings"
)

// SkillURI returns the URI of the SKILL.md of the skill at skillPath
// under the skill:// scheme.
func SkillURI(skillPath string) string { return Scheme + skillPath + "/" + SkillFile }

// ParseSkillURI checks the URI of a SKILL.md, under any scheme, and
// returns its skill path and the skill's name (the path's final
// segment): <scheme>://<skill-path>/SKILL.md, the path one or more clean
// segments (CheckPath), the first a valid RFC 3986 reg-name, the last
// a valid name (ValidName). A bad URI is a *RuleError (RuleURI or
// RuleName).
func ParseSkillURI(uri string) (skillPath, name string, err error) {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok || !validScheme(scheme) {
		return "", "", ruleErr(RuleURI, "%q is not <scheme>://<skill-path>/%s", uri, SkillFile)
	}
	skillPath, ok = strings.CutSuffix(rest, "/"+SkillFile)
	if !ok || skillPath == "" {
		return "", "", ruleErr(RuleURI, "%q does not end in /<skill-name>/%s", uri, SkillFile)
	}
	if err := CheckPath(skillPath); err != nil {
		return "", "", ruleErr(RuleURI, "skill path of %q: %s", uri, err.(*RuleError).Detail)
	}
	segs := strings.Split(skillPath, "/")
	if !validRegName(segs[0]) {
		return "", "", ruleErr(RuleURI, "the first segment %q of %q is not an RFC 3986 reg-name", segs[0], uri)
	}
	name = segs[len(segs)-1]
	if err := ValidName(name); err != nil {
		return "", "", err
	}
	return skillPath, name, nil
}

// Root returns the URI of the skill's root directory: the SKILL.md URI
// without /SKILL.md ("" if uri does not end in it).
func Root(skillURI string) string {
	r, ok := strings.CutSuffix(skillURI, "/"+SkillFile)
	if !ok {
		return ""
	}
	return r
}

// Within reports whether uri is the skill's SKILL.md or a file inside
// the skill's directory, by a clean relative path.
func Within(skillURI, uri string) bool {
	if uri == skillURI {
		return true
	}
	root := Root(skillURI)
	if root == "" {
		return false
	}
	rel, ok := strings.CutPrefix(uri, root+"/")
	return ok && CheckPath(rel) == nil
}

// RelPath returns the path of uri relative to the skill's root, when
// Within(skillURI, uri).
func RelPath(skillURI, uri string) (string, bool) {
	if !Within(skillURI, uri) {
		return "", false
	}
	return strings.TrimPrefix(uri, Root(skillURI)+"/"), true
}

// CheckPath checks a '/'-separated relative path (a skill path or a
// file's path inside a skill): not empty, no leading or trailing '/',
// no empty, "." or ".." segment, no '\\', '?', '#' or '%', and no
// control character. A bad path is a *RuleError
// (RulePath). It is what keeps a file of a skill inside the skill.
func CheckPath(p string) error {
	if p == "" {
		return ruleErr(RulePath, "empty path")
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch seg {
		case "":
			return ruleErr(RulePath, "%q has an empty segment (a leading, trailing or double '/')", p)
		case ".", "..":
			return ruleErr(RulePath, "%q has a %q segment", p, seg)
		}
	}
	for _, r := range p {
		switch {
		case r < 0x20 || r == 0x7f:
			return ruleErr(RulePath, "%q has a control character", p)
		case r == '\\' || r == '?' || r == '#' || r == '%':
			return ruleErr(RulePath, "%q has the character %q", p, r)
		}
	}
	return nil
}

func validScheme(s string) bool {
	if s == "" || !isLower(s[0]) && !isUpper(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isLower(c) && !isUpper(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// validRegName: unreserved and sub-delims characters (no percent
// escapes: CheckPath refuses '%').
func validRegName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isLower(c) || isUpper(c) || isDigit(c) || strings.IndexByte("-._~!$&'()*+,;=", c) >= 0 {
			continue
		}
		return false
	}
	return s != ""
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
