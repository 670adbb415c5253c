package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// The extension's identifiers and fixed names (SEP-2640).
const (
	// ExtensionID identifies the Skills extension in
	// capabilities.extensions.
	ExtensionID = "io.modelcontextprotocol/skills"
	// MethodList enumerates the skills a server serves (paginated).
	MethodList = "skills/list"
	// MethodGet returns one skill's entry by the URI of its SKILL.md.
	MethodGet = "skills/get"
	// MethodDirectoryRead lists the direct children of a directory
	// resource; only against a server that declared directoryRead.
	MethodDirectoryRead = "resources/directory/read"

	// Scheme begins the URI of every skill file mcpkit serves. Other
	// schemes are allowed by the SEP, and the URI rules below apply to
	// them too.
	Scheme = "skill://"
	// SkillFile is the file every skill has at its root.
	SkillFile = "SKILL.md"
	// MIMEType is the media type of a SKILL.md resource.
	MIMEType = "text/markdown"
	// DirectoryMIMEType marks a directory resource.
	DirectoryMIMEType = "inode/directory"
	// Dynamic is the value of resources for a skill whose content is
	// generated, so that no digests can be published.
	Dynamic = "dynamic"
	// DigestPrefix begins every digest: sha256:{64 lowercase hex}.
	DigestPrefix = "sha256:"
	// MetaPrefix is the reverse-domain prefix of skill resources' _meta
	// keys.
	MetaPrefix = "io.modelcontextprotocol.skills/"
	// ReservedMetadataPrefix begins frontmatter metadata keys reserved
	// for MCP extensions (none is defined yet).
	ReservedMetadataPrefix = "io.modelcontextprotocol/"
)

// The SEP's per-skill limits: every conforming host accepts a skill up
// to both, a server should not serve one beyond either.
const (
	// SpecMaxFiles is the number of resources entries of one skill,
	// SKILL.md included.
	SpecMaxFiles = 512
	// SpecMaxBytes is the sum of the sizes of one skill's files (16 MiB).
	SpecMaxBytes = 16 << 20
)

// Settings is the extension's entry in capabilities.extensions. The zero
// value (an empty object) declares the extension with no optional
// feature.
type Settings struct {
	// DirectoryRead: the server implements resources/directory/read.
	DirectoryRead bool `json:"directoryRead,omitzero"`
}

// File is one file of a skill: its resource URI, the SHA-256 digest of
// its raw bytes and its length in bytes.
type File struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// Resources is a skill's manifest: the complete list of its files, or,
// for a generated skill, Dynamic (no files, no integrity).
type Resources struct {
	// Dynamic: the wire value is the string "dynamic"; Files is empty.
	Dynamic bool
	// Files lists SKILL.md and every supporting file, each once.
	Files []File
}

// MarshalJSON encodes the manifest as an array of files or "dynamic".
func (r Resources) MarshalJSON() ([]byte, error) {
	if r.Dynamic {
		return []byte(`"` + Dynamic + `"`), nil
	}
	if r.Files == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(r.Files)
}

// UnmarshalJSON decodes an array of files or the string "dynamic"; any
// other value is an error (the SEP makes such an entry invalid).
func (r *Resources) UnmarshalJSON(b []byte) error {
	v := jsontext.Value(b)
	switch v.Kind() {
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s != Dynamic {
			return fmt.Errorf("skills: resources is the string %q, not %q or an array", s, Dynamic)
		}
		*r = Resources{Dynamic: true}
		return nil
	case '[':
		var files []File
		if err := json.Unmarshal(b, &files); err != nil {
			return err
		}
		*r = Resources{Files: files}
		return nil
	}
	return fmt.Errorf("skills: resources must be an array or %q", Dynamic)
}

// Skill is a skill entry, the same in skills/list and skills/get.
type Skill struct {
	// URI is the resource URI of the skill's SKILL.md.
	URI string `json:"uri"`
	// Frontmatter is SKILL.md's YAML frontmatter as a JSON object,
	// verbatim: name and description and every other field.
	Frontmatter Frontmatter `json:"frontmatter"`
	// Resources is the manifest (required on the wire).
	Resources Resources `json:"resources"`
}

type wireSkill struct {
	URI         string         `json:"uri"`
	Frontmatter Frontmatter    `json:"frontmatter"`
	Resources   jsontext.Value `json:"resources"`
}

// UnmarshalJSON decodes an entry; one without uri, frontmatter or
// resources is an error.
func (s *Skill) UnmarshalJSON(b []byte) error {
	var w wireSkill
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	switch {
	case w.URI == "":
		return fmt.Errorf("skills: a skill entry has no uri")
	case w.Frontmatter == nil:
		return fmt.Errorf("skills: skill entry %q has no frontmatter object", w.URI)
	case len(w.Resources) == 0:
		return fmt.Errorf("skills: skill entry %q has no resources", w.URI)
	}
	var r Resources
	if err := r.UnmarshalJSON(w.Resources); err != nil {
		return fmt.Errorf("skill entry %q: %w", w.URI, err)
	}
	*s = Skill{URI: w.URI, Frontmatter: w.Frontmatter, Resources: r}
	return nil
}

// MarshalJSON encodes the entry.
func (s Skill) MarshalJSON() ([]byte, error) {
	fm := s.Frontmatter
	if fm == nil {
		fm = Frontmatter{}
	}
	res, err := s.Resources.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return json.Marshal(wireSkill{URI: s.URI, Frontmatter: fm, Resources: res}, json.Deterministic(true))
}

// File returns the manifest's entry for uri.
func (s *Skill) File(uri string) (File, bool) {
	for _, f := range s.Resources.Files {
		if f.URI == uri {
			return f, true
		}
	}
	return File{}, false
}

// ListParams are the params of skills/list.
type ListParams struct {
	Meta   mcp.Meta `json:"_meta,omitzero"`
	Cursor string   `json:"cursor,omitzero"`
}

// ListResult is the result of skills/list. From 2026-07-28 it carries
// the list caching attributes ttlMs and cacheScope.
type ListResult struct {
	Skills     []Skill        `json:"skills"`
	NextCursor string         `json:"nextCursor,omitzero"`
	TTLMs      *int64         `json:"ttlMs,omitzero"`
	CacheScope mcp.CacheScope `json:"cacheScope,omitzero"`
	Meta       mcp.Meta       `json:"_meta,omitzero"`
}

// GetParams are the params of skills/get.
type GetParams struct {
	Meta mcp.Meta `json:"_meta,omitzero"`
	// URI is the URI of the skill's SKILL.md.
	URI string `json:"uri"`
}

// GetResult is the result of skills/get: one entry, no cursor, with
// ttlMs and cacheScope from 2026-07-28.
type GetResult struct {
	Skill      Skill          `json:"skill"`
	TTLMs      *int64         `json:"ttlMs,omitzero"`
	CacheScope mcp.CacheScope `json:"cacheScope,omitzero"`
	Meta       mcp.Meta       `json:"_meta,omitzero"`
}

// DirectoryReadParams are the params of resources/directory/read.
type DirectoryReadParams struct {
	Meta   mcp.Meta `json:"_meta,omitzero"`
	URI    string   `json:"uri"`
	Cursor string   `json:"cursor,omitzero"`
}

// DirectoryReadResult lists a directory's direct children: files with
// their resource metadata, subdirectories with DirectoryMIMEType.
type DirectoryReadResult struct {
	Resources  []mcp.Resource `json:"resources"`
	NextCursor string         `json:"nextCursor,omitzero"`
	Meta       mcp.Meta       `json:"_meta,omitzero"`
}

// Digest returns the SEP's digest of b: sha256: and 64 lowercase hex
// digits.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return DigestPrefix + hex.EncodeToString(sum[:])
}

// ValidDigest reports whether d has the digest format.
func ValidDigest(d string) bool {
	h, ok := strings.CutPrefix(d, DigestPrefix)
	if !ok || len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
