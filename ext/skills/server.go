package skills

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// The defaults of Options.
const (
	// DefaultMaxFileBytes is the largest file a skill may hold (8 MiB).
	DefaultMaxFileBytes = 8 << 20
	// DefaultMaxSkillBytes is the most bytes one skill's files may total:
	// the SEP's limit, 16 MiB.
	DefaultMaxSkillBytes = SpecMaxBytes
	// DefaultMaxSkillFiles is the most files one skill may hold, SKILL.md
	// included: the SEP's limit, 512.
	DefaultMaxSkillFiles = SpecMaxFiles
	// DefaultMaxTotalBytes is the most bytes all the skills of a Server
	// may total (256 MiB): they are held in memory.
	DefaultMaxTotalBytes = 256 << 20
	// DefaultMaxDepth is the deepest a file may lie below its skill's
	// root, in directories.
	DefaultMaxDepth = 16
	// DefaultPageSize is the number of entries per page of skills/list
	// and resources/directory/read.
	DefaultPageSize = 100
)

// Options configure a skills Server. The zero value is usable: each
// zero field takes its default; a negative limit is refused by
// NewServer.
type Options struct {
	// MaxFileBytes caps each file of a skill. Default DefaultMaxFileBytes.
	MaxFileBytes int64
	// MaxSkillBytes caps the sum of one skill's file sizes. Default
	// DefaultMaxSkillBytes (the SEP's 16 MiB); more is allowed, but hosts
	// need not load such a skill.
	MaxSkillBytes int64
	// MaxSkillFiles caps the files of one skill. Default
	// DefaultMaxSkillFiles (the SEP's 512).
	MaxSkillFiles int
	// MaxTotalBytes caps the bytes of all skills registered with the
	// Server. Default DefaultMaxTotalBytes.
	MaxTotalBytes int64
	// MaxDepth caps how deep a file lies below its skill's root.
	// Default DefaultMaxDepth.
	MaxDepth int
	// PageSize is the page size of skills/list and
	// resources/directory/read. Default DefaultPageSize.
	PageSize int
	// NoDirectoryRead leaves resources/directory/read out (the extension
	// is then declared without directoryRead).
	NoDirectoryRead bool
}

func (o *Options) withDefaults() (Options, error) {
	var v Options
	if o != nil {
		v = *o
	}
	if v.MaxFileBytes < 0 || v.MaxSkillBytes < 0 || v.MaxSkillFiles < 0 || v.MaxTotalBytes < 0 || v.MaxDepth < 0 || v.PageSize < 0 {
		return v, errors.New("skills: NewServer: a negative limit in Options")
	}
	def := func(p *int64, d int64) {
		if *p == 0 {
			*p = d
		}
	}
	def(&v.MaxFileBytes, DefaultMaxFileBytes)
	def(&v.MaxSkillBytes, DefaultMaxSkillBytes)
	def(&v.MaxTotalBytes, DefaultMaxTotalBytes)
	if v.MaxSkillFiles == 0 {
		v.MaxSkillFiles = DefaultMaxSkillFiles
	}
	if v.MaxDepth == 0 {
		v.MaxDepth = DefaultMaxDepth
	}
	if v.PageSize == 0 {
		v.PageSize = DefaultPageSize
	}
	return v, nil
}

// Server serves skills on a server.Server: it declares the extension
// (both eras), answers skills/list, skills/get and
// resources/directory/read, and registers every file of every skill as
// a resource. A skill's files are read, checked and digested once, at
// registration, and served from memory: what a host verifies is what
// it is served. Its methods are safe for concurrent use.
type Server struct {
	srv  *server.Server
	opts Options

	mu    sync.Mutex // serializes AddSkill, AddFS and Remove
	state atomic.Pointer[state]
}

// skill is one registered skill.
type skill struct {
	entry Skill
	root  string // URI of its root directory
	files []*file
	bytes int64
}

// file is one file of a registered skill.
type file struct {
	uri  string
	data []byte
	mime string
	text bool
}

// NewServer makes a skills Server on s: it declares the extension
// (with directoryRead unless Options.NoDirectoryRead) and registers the
// extension's methods. It serves no skill until AddFS or AddSkill.
func NewServer(s *server.Server, opts *Options) (*Server, error) {
	if s == nil {
		return nil, errors.New("skills: NewServer: nil server")
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	x := &Server{srv: s, opts: o}
	x.state.Store(&state{})
	if err := s.AddExtension(ExtensionID, Settings{DirectoryRead: !o.NoDirectoryRead}); err != nil {
		return nil, fmt.Errorf("skills: NewServer: %w", err)
	}
	if err := server.AddMethod(s, MethodList, x.list); err != nil {
		return nil, fmt.Errorf("skills: NewServer: %w", err)
	}
	if err := server.AddMethod(s, MethodGet, x.get); err != nil {
		return nil, fmt.Errorf("skills: NewServer: %w", err)
	}
	if !o.NoDirectoryRead {
		if err := server.AddMethod(s, MethodDirectoryRead, x.readDirectory); err != nil {
			return nil, fmt.Errorf("skills: NewServer: %w", err)
		}
	}
	return x, nil
}

// AddFS registers every skill of fsys: each directory at its top level
// is a skill (it must hold a SKILL.md), served at
// skill://<prefix>/<dir>/SKILL.md (prefix may be "": skill://<dir>/...).
// Anything else at the top level, a skill that breaks a rule (see
// AddSkill), or fsys holding no skill at all is an error, and then no
// skill of fsys is registered.
func (x *Server) AddFS(fsys fs.FS, prefix string) error {
	ents, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return fmt.Errorf("skills: AddFS: %w", err)
	}
	var loaded []*skill
	for _, e := range ents {
		if !e.IsDir() {
			return &RuleError{File: e.Name(), Rule: RuleFileKind, Detail: fmt.Sprintf("a %s at the top level: a skills directory holds skill directories only", kindName(e.Type()))}
		}
		sub, err := fs.Sub(fsys, e.Name())
		if err != nil {
			return fmt.Errorf("skills: AddFS %q: %w", e.Name(), err)
		}
		p := e.Name()
		if prefix != "" {
			p = prefix + "/" + e.Name()
		}
		sk, err := x.load(p, sub)
		if err != nil {
			return err
		}
		loaded = append(loaded, sk)
	}
	if len(loaded) == 0 {
		return errors.New("skills: AddFS: no skill directory found")
	}
	return x.register(loaded)
}

// AddSkill registers the skill whose directory is fsys, served at
// skill://<skillPath>/SKILL.md; the final segment of skillPath is the
// skill's name. Registration fails, registering nothing, with a
// *RuleError naming the skill, the file and the rule when: skillPath is
// not clean (CheckPath, RuleURI), SKILL.md is missing or its
// frontmatter is not a valid Agent Skills frontmatter (RuleFrontmatter,
// RuleName, RuleDescription, ...), the name differs from the path's
// final segment (RuleNameMatch), a file is a symlink or anything but a
// regular file or directory (RuleFileKind), a file name would not make
// a clean URI (RulePath), a limit of Options is exceeded (RuleSkillSize,
// RuleFileCount, RuleFileSize, RuleTotalSize, RulePath for the depth), or the skill's
// URI, or one inside it or around it, is already served (RuleDuplicate).
func (x *Server) AddSkill(skillPath string, fsys fs.FS) error {
	sk, err := x.load(skillPath, fsys)
	if err != nil {
		return err
	}
	return x.register([]*skill{sk})
}

// Remove unregisters skills by the URI of their SKILL.md and their
// files; resources/list_changed tells the clients. Unknown URIs are
// ignored.
func (x *Server) Remove(uris ...string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	st := x.state.Load()
	var gone []string
	keep := make([]*skill, 0, len(st.skills))
	for _, sk := range st.skills {
		if slices.Contains(uris, sk.entry.URI) {
			for _, f := range sk.files {
				gone = append(gone, f.uri)
			}
			continue
		}
		keep = append(keep, sk)
	}
	if len(gone) == 0 {
		return
	}
	x.state.Store(newState(keep))
	x.srv.RemoveResources(gone...)
}

// Skills returns copies of the entries of the registered skills,
// sorted by URI.
func (x *Server) Skills() []Skill {
	st := x.state.Load()
	out := make([]Skill, len(st.skills))
	for i, sk := range st.skills {
		e := sk.entry
		e.Frontmatter = cloneValue(map[string]any(e.Frontmatter)).(map[string]any)
		e.Resources.Files = slices.Clone(e.Resources.Files)
		out[i] = e
	}
	return out
}

// cloneValue deep-copies a frontmatter value.
func cloneValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = cloneValue(e)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = cloneValue(e)
		}
		return s
	}
	return v
}

// register adds loaded skills, all or none.
func (x *Server) register(loaded []*skill) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	st := x.state.Load()
	total := st.bytes
	all := slices.Clone(st.skills)
	for _, sk := range loaded {
		for _, other := range all {
			if overlaps(sk.root, other.root) {
				return &RuleError{Skill: sk.entry.URI, Rule: RuleDuplicate, Detail: fmt.Sprintf("the skill's directory %s is, holds or lies in that of %s, which is already served", sk.root, other.entry.URI)}
			}
		}
		total += sk.bytes
		if total > x.opts.MaxTotalBytes {
			return &RuleError{Skill: sk.entry.URI, Rule: RuleTotalSize, Detail: fmt.Sprintf("the skills would total more than %d bytes (Options.MaxTotalBytes)", x.opts.MaxTotalBytes)}
		}
		all = append(all, sk)
	}
	x.srv.Batch(func() {
		for _, sk := range loaded {
			for _, f := range sk.files {
				r := f.resource(sk)
				// AddResource fails only on an empty URI or a nil handler.
				_ = x.srv.AddResource(&r, f.read)
			}
		}
	})
	x.state.Store(newState(all))
	return nil
}

func ptr[T any](v T) *T { return &v }

// overlaps reports whether directory a is, holds or lies in b.
func overlaps(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

// read answers resources/read of the file from memory.
func (f *file) read(context.Context, *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	if f.text {
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: f.uri, MIMEType: f.mime, Text: string(f.data)}}}, nil
	}
	return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.BlobResourceContents{URI: f.uri, MIMEType: f.mime, Blob: f.data}}}, nil
}

// load reads, checks and digests the skill at skillPath from fsys.
func (x *Server) load(skillPath string, fsys fs.FS) (*skill, error) {
	uri := SkillURI(skillPath)
	fail := func(file string, rule Rule, format string, args ...any) error {
		return &RuleError{Skill: uri, File: file, Rule: rule, Detail: fmt.Sprintf(format, args...)}
	}
	if fsys == nil {
		return nil, fail("", RuleURI, "nil file system")
	}
	p, name, err := ParseSkillURI(uri)
	if err != nil || p != skillPath {
		var re *RuleError
		if errors.As(err, &re) {
			re.Skill = uri
			return nil, re
		}
		return nil, fail("", RuleURI, "the skill path %q is not clean", skillPath)
	}
	root := Root(uri)
	sk := &skill{root: root}
	var files []*file
	err = fs.WalkDir(fsys, ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return fail(rel, RuleFileKind, "cannot read: %v", err)
		}
		if rel == "." {
			if !d.IsDir() {
				return fail("", RuleFileKind, "the skill is not a directory")
			}
			return nil
		}
		if err := CheckPath(rel); err != nil {
			return fail(rel, RulePath, "%s", err.(*RuleError).Detail)
		}
		if strings.Count(rel, "/") >= x.opts.MaxDepth {
			return fail(rel, RulePath, "deeper than %d directories (Options.MaxDepth)", x.opts.MaxDepth)
		}
		switch t := d.Type(); {
		case t.IsDir():
			return nil
		case !t.IsRegular():
			return fail(rel, RuleFileKind, "a %s is not a regular file (symlinks, devices, pipes and sockets are refused)", kindName(t))
		}
		if len(files)+1 > x.opts.MaxSkillFiles {
			return fail(rel, RuleFileCount, "more than %d files (Options.MaxSkillFiles)", x.opts.MaxSkillFiles)
		}
		data, err := readFile(fsys, rel, x.opts.MaxFileBytes)
		if err != nil {
			var re *RuleError
			if errors.As(err, &re) {
				re.Skill, re.File = uri, rel
				return re
			}
			return fail(rel, RuleFileKind, "cannot read: %v", err)
		}
		sk.bytes += int64(len(data))
		if sk.bytes > x.opts.MaxSkillBytes {
			return fail(rel, RuleSkillSize, "the skill's files total more than %d bytes (Options.MaxSkillBytes)", x.opts.MaxSkillBytes)
		}
		text := utf8.Valid(data)
		files = append(files, &file{uri: root + "/" + rel, data: data, mime: mimeOf(rel, text), text: text})
		return nil
	})
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(files, func(f *file) bool { return f.uri == uri })
	if i < 0 {
		return nil, fail(SkillFile, RuleFrontmatter, "the skill has no %s at its root", SkillFile)
	}
	md := files[i]
	files = append(append([]*file{md}, files[:i]...), files[i+1:]...) // SKILL.md first
	fm, err := ParseFrontmatter(md.data)
	if err == nil {
		err = fm.Validate()
	}
	if err != nil {
		var re *RuleError
		errors.As(err, &re)
		re.Skill, re.File = uri, SkillFile
		return nil, re
	}
	if fm.Name() != name {
		return nil, fail(SkillFile, RuleNameMatch, "the frontmatter name %q differs from the path's final segment %q", fm.Name(), name)
	}
	md.mime = MIMEType
	sk.files = files
	manifest := make([]File, len(files))
	for i, f := range files {
		manifest[i] = File{URI: f.uri, Digest: Digest(f.data), Size: int64(len(f.data))}
	}
	sk.entry = Skill{URI: uri, Frontmatter: fm, Resources: Resources{Files: manifest}}
	return sk, nil
}

// readFile reads a regular file of at most limit bytes, checking what
// Open returns as well as what the directory said.
func readFile(fsys fs.FS, name string, limit int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &RuleError{Rule: RuleFileKind, Detail: fmt.Sprintf("a %s is not a regular file", kindName(info.Mode().Type()))}
	}
	if info.Size() > limit {
		return nil, &RuleError{Rule: RuleFileSize, Detail: fmt.Sprintf("%d bytes, more than %d (Options.MaxFileBytes)", info.Size(), limit)}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &RuleError{Rule: RuleFileSize, Detail: fmt.Sprintf("more than %d bytes (Options.MaxFileBytes)", limit)}
	}
	return data, nil
}

func kindName(t fs.FileMode) string {
	switch {
	case t&fs.ModeSymlink != 0:
		return "symlink"
	case t&fs.ModeNamedPipe != 0:
		return "named pipe"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeDevice != 0:
		return "device"
	case t.IsDir():
		return "directory"
	case t.IsRegular():
		return "regular file"
	}
	return "irregular file"
}

// mimeOf is the media type of a skill file, by its extension (a fixed
// table, the same on every machine).
func mimeOf(name string, text bool) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".markdown":
		return "text/markdown"
	case ".txt":
		return "text/plain"
	case ".json":
		return "application/json"
	case ".yaml", ".yml":
		return "application/yaml"
	case ".py":
		return "text/x-python"
	case ".sh":
		return "text/x-shellscript"
	case ".js", ".mjs":
		return "text/javascript"
	case ".ts":
		return "text/typescript"
	case ".html", ".htm":
		return "text/html"
	case ".css":
		return "text/css"
	case ".csv":
		return "text/csv"
	case ".xml":
		return "application/xml"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".gif":
		return "image/gif"
	case ".pdf":
		return "application/pdf"
	}
	if text {
		return "text/plain"
	}
	return "application/octet-stream"
}
