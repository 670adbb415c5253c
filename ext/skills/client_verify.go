package skills

import (
	"errors"
	"fmt"
	"strings"
)

// Check names the verification a skill or one of its files failed on the
// client (VerifyError.Check).
type Check string

const (
	// CheckEntry: the skill entry itself breaks the SEP's rules (its uri,
	// its frontmatter name, its resources list); nothing of it is read.
	CheckEntry Check = "entry"
	// CheckLimit: the entry declares more files or more bytes than the
	// client's limits (ClientOptions), or a dynamic skill's content went
	// past MaxSkillBytes while it was read.
	CheckLimit Check = "limit"
	// CheckUnsafePath: a file's URI is not the skill's SKILL.md or a
	// clean relative path under the skill's root (CheckPath: traversal,
	// an empty or dot segment, a backslash, a percent escape, a control
	// character), so it could land outside the skill's directory.
	CheckUnsafePath Check = "path"
	// CheckUnlisted: the file is not in the entry's resources.
	CheckUnlisted Check = "unlisted"
	// CheckContents: resources/read answered without contents for the
	// file, or with contents that cannot be decoded.
	CheckContents Check = "contents"
	// CheckSize: the file's byte length differs from the entry's size.
	CheckSize Check = "size"
	// CheckDigest: the file's SHA-256 differs from the entry's digest.
	CheckDigest Check = "digest"
	// CheckFrontmatter: the SKILL.md's frontmatter cannot be parsed or
	// differs from the entry's frontmatter.
	CheckFrontmatter Check = "frontmatter"
)

// VerifyError is a skill or a skill file the client refused: URI names
// the file (or the skill's SKILL.md, for an entry), Check the rule it
// failed and Detail what was wrong. The content of a file that fails is
// never handed over, and Materialize writes nothing.
type VerifyError struct {
	URI    string
	Check  Check
	Detail string
}

func (e *VerifyError) Error() string {
	return fmt.Sprintf("skills: %s: %s check failed: %s", e.URI, e.Check, e.Detail)
}

// ErrTooManyPages is wrapped by the error of a listing (skills/list,
// resources/directory/read) that ran past ClientOptions.MaxListPages without
// an end: a server that hands out cursors forever.
var ErrTooManyPages = errors.New("skills: the listing did not end within the page limit")

func verifyErr(uri string, check Check, format string, args ...any) *VerifyError {
	return &VerifyError{URI: uri, Check: check, Detail: fmt.Sprintf(format, args...)}
}

// compareFrontmatter parses the frontmatter of a fetched SKILL.md and
// compares it field by field with the entry's.
func compareFrontmatter(uri string, data []byte, want Frontmatter) error {
	got, err := ParseFrontmatter(data)
	if err != nil {
		return verifyErr(uri, CheckFrontmatter, "%v", err)
	}
	if diff := Diff(got, want); len(diff) > 0 {
		return verifyErr(uri, CheckFrontmatter, "the file's frontmatter differs from the entry's in %s", strings.Join(diff, ", "))
	}
	return nil
}

// relPath returns the path of file uri relative to the root of the skill
// whose SKILL.md is at skillURI, or a *VerifyError (CheckUnsafePath).
func relPath(skillURI, uri string) (string, error) {
	if uri == skillURI {
		return SkillFile, nil
	}
	p, ok := RelPath(skillURI, uri)
	if !ok {
		return "", verifyErr(uri, CheckUnsafePath, "not a clean relative path under the skill's root %s", Root(skillURI))
	}
	return p, nil
}
