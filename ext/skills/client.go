package skills

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// DefaultMaxListPages bounds one listing walk of the client: the pages
// of skills/list that Skills reads, and of resources/directory/read that
// ReadDirectory reads (ClientOptions.MaxListPages). The client's other
// limits default to the SEP's, as the server's do: DefaultMaxSkillFiles
// and DefaultMaxSkillBytes.
const DefaultMaxListPages = 256

// ClientOptions bound what a Client accepts from a server. The zero value
// (and a zero or negative field) applies the defaults, which are the
// limits every conforming host must support (SEP-2640); larger values
// accept larger skills.
type ClientOptions struct {
	// MaxListPages bounds the pages of one listing (Skills,
	// ReadDirectory); a server still handing out cursors past it fails
	// the walk with ErrTooManyPages. Default DefaultMaxListPages.
	MaxListPages int
	// MaxSkillFiles bounds the files one skill entry may list (the
	// SEP's limit counts SKILL.md). Default DefaultMaxSkillFiles.
	MaxSkillFiles int
	// MaxSkillBytes bounds the total size of one skill's files, declared
	// (an array manifest, checked before any read) or read (a dynamic
	// skill). Default DefaultMaxSkillBytes. One file also stays within
	// the connection's message limit (jsonrpc.DefaultMaxMessageBytes
	// unless the transport says otherwise).
	MaxSkillBytes int64
}

func (o *ClientOptions) maxPages() int {
	if o.MaxListPages > 0 {
		return o.MaxListPages
	}
	return DefaultMaxListPages
}

func (o *ClientOptions) maxFiles() int {
	if o.MaxSkillFiles > 0 {
		return o.MaxSkillFiles
	}
	return DefaultMaxSkillFiles
}

func (o *ClientOptions) maxSkillBytes() int64 {
	if o.MaxSkillBytes > 0 {
		return o.MaxSkillBytes
	}
	return DefaultMaxSkillBytes
}

// Client is the host side of the Skills extension over a connected
// *client.Client: it lists and gets skills, and reads their files on
// demand, each verified against the skill's entry (size, digest and, for
// SKILL.md, frontmatter) before it is handed over. It never reads a file
// it was not asked for. Approval, origin tagging and when to load a skill
// stay with the host. A Client is safe for concurrent use.
type Client struct {
	c    *client.Client
	opts ClientOptions

	discovered atomic.Bool // a server/discover was made for Supported
}

// NewClient returns the skills client of c; opts may be nil.
func NewClient(c *client.Client, opts *ClientOptions) *Client {
	sc := &Client{c: c}
	if opts != nil {
		sc.opts = *opts
	}
	return sc
}

// Supported reports whether the server declared the extension: in
// initialize (legacy), in its last server/discover (modern). A modern
// connection that made none (a pinned revision) makes one, once, to
// find out.
func (sc *Client) Supported(ctx context.Context) bool {
	_, ok := sc.settings(ctx)
	return ok
}

// DirectoryRead reports whether the server declared directoryRead, that
// is, serves resources/directory/read.
func (sc *Client) DirectoryRead(ctx context.Context) bool {
	s, ok := sc.settings(ctx)
	return ok && s.DirectoryRead
}

func (sc *Client) settings(ctx context.Context) (Settings, bool) {
	raw, ok := sc.c.ServerExtension(ExtensionID)
	if !ok && sc.c.Era() == client.EraModern && sc.discovered.CompareAndSwap(false, true) {
		if _, err := sc.c.Discover(ctx); err == nil {
			raw, ok = sc.c.ServerExtension(ExtensionID)
		}
	}
	var s Settings
	if !ok || json.Unmarshal(raw, &s) != nil {
		return Settings{}, ok
	}
	return s, true
}

// ErrNotSupported is returned for a call the server did not declare: a
// skills method against a server without the extension, or
// ReadDirectory against one without directoryRead.
var ErrNotSupported = errors.New("skills: the server does not declare it")

// List returns one page of skills/list (cursor "" for the first), as the
// server sent it: its entries are not checked (Skills and Validate do).
func (sc *Client) List(ctx context.Context, cursor string) (*ListResult, error) {
	if !sc.Supported(ctx) {
		return nil, fmt.Errorf("%w: %s", ErrNotSupported, ExtensionID)
	}
	res, err := client.CallMethod[ListResult](ctx, sc.c, MethodList, &ListParams{Cursor: cursor})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// Skills iterates over every skill the server lists, page by page. Each
// entry is checked (Validate): an invalid one is yielded with a
// *VerifyError (CheckEntry or CheckLimit; a URI listed a second time,
// CheckEntry) and the walk goes on if the caller continues. A failed
// page, a repeated cursor or a walk past MaxListPages ends it with an
// error (ErrTooManyPages). Nothing but skills/list is sent.
func (sc *Client) Skills(ctx context.Context) iter.Seq2[Skill, error] {
	return func(yield func(Skill, error) bool) {
		cursor := ""
		seen := make(map[string]bool)   // cursors
		listed := make(map[string]bool) // skill URIs
		for page := 0; ; page++ {
			if page == sc.opts.maxPages() {
				yield(Skill{}, fmt.Errorf("%w: %d pages of %s", ErrTooManyPages, page, MethodList))
				return
			}
			res, err := sc.List(ctx, cursor)
			if err != nil {
				yield(Skill{}, err)
				return
			}
			for _, s := range res.Skills {
				err := sc.Validate(&s)
				if err == nil && listed[s.URI] {
					err = verifyErr(s.URI, CheckEntry, "listed twice")
				}
				listed[s.URI] = true
				if !yield(s, err) {
					return
				}
			}
			if res.NextCursor == "" {
				return
			}
			if seen[res.NextCursor] {
				yield(Skill{}, fmt.Errorf("skills: %s repeated the cursor %q", MethodList, res.NextCursor))
				return
			}
			seen[res.NextCursor] = true
			cursor = res.NextCursor
		}
	}
}

// Get returns the entry of the skill whose SKILL.md is at uri, listed or
// not (skills/get), checked (Validate). An entry for another URI is a
// *VerifyError.
func (sc *Client) Get(ctx context.Context, uri string) (*Skill, error) {
	if !sc.Supported(ctx) {
		return nil, fmt.Errorf("%w: %s", ErrNotSupported, ExtensionID)
	}
	res, err := client.CallMethod[GetResult](ctx, sc.c, MethodGet, &GetParams{URI: uri})
	if err != nil {
		return nil, err
	}
	if res.Skill.URI != uri {
		return nil, verifyErr(uri, CheckEntry, "skills/get answered with the entry of %s", res.Skill.URI)
	}
	if err := sc.Validate(&res.Skill); err != nil {
		return nil, err
	}
	return &res.Skill, nil
}

// Validate checks an entry against the SEP's rules and the client's
// limits, before any of its files is read: its uri names a SKILL.md whose
// last path segment is frontmatter.name, a valid skill name; the
// frontmatter has a name and a description; and, unless the skill is
// dynamic, resources lists SKILL.md and only files under the skill's
// root, each once, by a safe relative path, with a well-formed digest and
// a size, within MaxSkillFiles and MaxSkillBytes. The error is a *VerifyError.
func (sc *Client) Validate(s *Skill) error {
	_, name, err := ParseSkillURI(s.URI)
	if err != nil {
		return verifyErr(s.URI, CheckEntry, "%v", err)
	}
	if fm := s.Frontmatter.Name(); fm != name {
		return verifyErr(s.URI, CheckEntry, "frontmatter.name %q differs from the last path segment %q", fm, name)
	}
	if s.Frontmatter.Description() == "" {
		return verifyErr(s.URI, CheckEntry, "frontmatter has no description")
	}
	if s.Resources.Dynamic {
		return nil
	}
	files := s.Resources.Files
	if n := len(files); n > sc.opts.maxFiles() {
		return verifyErr(s.URI, CheckLimit, "%d files, over the limit of %d (ClientOptions.MaxSkillFiles)", n, sc.opts.maxFiles())
	}
	var total int64
	paths := make(map[string]bool, len(files))
	hasSkillFile := false
	for _, f := range files {
		p, err := relPath(s.URI, f.URI)
		if err != nil {
			return err
		}
		if p == SkillFile {
			hasSkillFile = true
		}
		if paths[p] {
			return verifyErr(f.URI, CheckEntry, "listed twice")
		}
		paths[p] = true
		if !ValidDigest(f.Digest) {
			return verifyErr(f.URI, CheckEntry, "digest %q is not %s and 64 lowercase hex digits", f.Digest, DigestPrefix)
		}
		if f.Size < 0 {
			return verifyErr(f.URI, CheckEntry, "negative size %d", f.Size)
		}
		if f.Size > sc.opts.maxSkillBytes()-total {
			return verifyErr(f.URI, CheckLimit, "the skill's files add up to more than %d bytes (ClientOptions.MaxSkillBytes)", sc.opts.maxSkillBytes())
		}
		total += f.Size
	}
	if !hasSkillFile {
		return verifyErr(s.URI, CheckEntry, "resources does not list the skill's %s", SkillFile)
	}
	// A path listed as a file and as the directory of another file could
	// not be written out.
	for p := range paths {
		for dir := p; ; {
			i := strings.LastIndexByte(dir, '/')
			if i < 0 {
				break
			}
			dir = dir[:i]
			if paths[dir] {
				return verifyErr(Root(s.URI)+"/"+dir, CheckEntry, "listed as a file and as a directory")
			}
		}
	}
	return nil
}

// Content is a skill file as the client read and verified it.
type Content struct {
	// URI is the file's resource URI, as the entry spells it.
	URI string
	// Path is its path relative to the skill's root (SKILL.md for the
	// skill's own).
	Path string
	// MIMEType is what the server said it is.
	MIMEType string
	// Data is the file's raw bytes: exactly those the entry's digest
	// covers.
	Data []byte
	// Verified: size and digest matched the entry. False only for a
	// dynamic skill, whose entry publishes none (its SKILL.md's
	// frontmatter is still compared).
	Verified bool
}

// Read reads one file of skill s with resources/read and verifies it
// before returning it: ref is the file's path relative to the skill's
// root (references/FORMS.md) or its URI, "" for the SKILL.md. The file
// must be listed in the entry (checked before any request); its byte
// length must be the entry's size and its SHA-256 the entry's digest; the
// SKILL.md's frontmatter must equal the entry's. A dynamic skill's files
// are read unverified (Verified false), except for that frontmatter
// check, and within MaxSkillBytes each. Any failure is a *VerifyError and
// returns no content.
func (sc *Client) Read(ctx context.Context, s *Skill, ref string) (*Content, error) {
	if err := sc.Validate(s); err != nil {
		return nil, err
	}
	uri := s.URI
	switch {
	case ref == "":
	case strings.Contains(ref, "://"):
		uri = ref
	default:
		uri = Root(s.URI) + "/" + strings.TrimPrefix(ref, "./")
	}
	path, err := relPath(s.URI, uri)
	if err != nil {
		return nil, err
	}
	var want *File
	if !s.Resources.Dynamic {
		f, ok := s.File(uri)
		if !ok {
			return nil, verifyErr(uri, CheckUnlisted, "not among the files of the entry of %s", s.URI)
		}
		want = &f
	}
	data, mime, err := sc.fetch(ctx, uri)
	if err != nil {
		return nil, err
	}
	if want != nil {
		if int64(len(data)) != want.Size {
			return nil, verifyErr(uri, CheckSize, "read %d bytes, the entry says %d", len(data), want.Size)
		}
		if got := Digest(data); got != want.Digest {
			return nil, verifyErr(uri, CheckDigest, "read %s, the entry says %s", got, want.Digest)
		}
	} else if int64(len(data)) > sc.opts.maxSkillBytes() {
		return nil, verifyErr(uri, CheckLimit, "%d bytes, over the limit of %d (ClientOptions.MaxSkillBytes)", len(data), sc.opts.maxSkillBytes())
	}
	if uri == s.URI {
		if err := compareFrontmatter(uri, data, s.Frontmatter); err != nil {
			return nil, err
		}
	}
	return &Content{URI: uri, Path: path, MIMEType: mime, Data: data, Verified: want != nil}, nil
}

// fetch reads uri and returns the raw bytes of its one contents item for
// that URI: text as UTF-8, a blob decoded.
func (sc *Client) fetch(ctx context.Context, uri string) ([]byte, string, error) {
	res, err := sc.c.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, "", err
	}
	var found mcp.ResourceContents
	for _, rc := range res.Contents {
		if rc == nil || rc.ResourceURI() != uri {
			continue
		}
		if found != nil {
			return nil, "", verifyErr(uri, CheckContents, "resources/read answered with the file twice")
		}
		found = rc
	}
	switch rc := found.(type) {
	case *mcp.TextResourceContents:
		if !utf8.ValidString(rc.Text) {
			return nil, "", verifyErr(uri, CheckContents, "text is not valid UTF-8")
		}
		return []byte(rc.Text), rc.MIMEType, nil
	case *mcp.BlobResourceContents:
		return rc.Blob, rc.MIMEType, nil
	case nil:
		return nil, "", verifyErr(uri, CheckContents, "resources/read answered without contents for the file")
	default:
		return nil, "", verifyErr(uri, CheckContents, "contents of an unknown kind %T", found)
	}
}

// ReadDirectory lists the direct children of the directory resource uri
// (resources/directory/read), every page, within MaxListPages: files with
// their resource metadata, subdirectories with DirectoryMIMEType. Only
// against a server that declared directoryRead (else ErrNotSupported). A
// child listed there but not in a skill's entry is not a file of that
// skill: Read refuses it.
func (sc *Client) ReadDirectory(ctx context.Context, uri string) ([]mcp.Resource, error) {
	if !sc.DirectoryRead(ctx) {
		return nil, fmt.Errorf("%w: directoryRead", ErrNotSupported)
	}
	var out []mcp.Resource
	cursor := ""
	seen := make(map[string]bool)
	for page := 0; ; page++ {
		if page == sc.opts.maxPages() {
			return nil, fmt.Errorf("%w: %d pages of %s %s", ErrTooManyPages, page, MethodDirectoryRead, uri)
		}
		res, err := client.CallMethod[DirectoryReadResult](ctx, sc.c, MethodDirectoryRead, &DirectoryReadParams{URI: uri, Cursor: cursor})
		if err != nil {
			return nil, err
		}
		out = append(out, res.Resources...)
		if res.NextCursor == "" {
			return out, nil
		}
		if seen[res.NextCursor] {
			return nil, fmt.Errorf("skills: %s %s repeated the cursor %q", MethodDirectoryRead, uri, res.NextCursor)
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
}
