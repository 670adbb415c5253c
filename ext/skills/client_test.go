package skills_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/skills"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

const (
	cPDFURI   = "skill://pdf-processing/SKILL.md"
	cFormsURI = "skill://pdf-processing/references/FORMS.md"
	cPDFMD    = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\n# PDF\n\nSee references/FORMS.md.\n"
	cFormsMD  = "# Forms\n\nFill the fields in order.\n"
)

// hostile is a skills server under the test's control: it lists the
// entries it is given and serves, for each URI, whatever content it is
// given, however it relates to the entries. It records every
// resources/read and every listing page.
type hostile struct {
	entries []skills.Skill
	served  map[string]string // uri → text served by resources/read
	// endless: skills/list and resources/directory/read always hand out
	// a new cursor.
	endless bool

	mu        sync.Mutex
	reads     []string
	listPages int
	dirPages  int
}

// entry builds an honest entry for the files (uri → content), with the
// frontmatter of the SKILL.md at uri.
func entry(uri string, fm skills.Frontmatter, files map[string]string) skills.Skill {
	s := skills.Skill{URI: uri, Frontmatter: fm}
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, u := range keys {
		s.Resources.Files = append(s.Resources.Files, skills.File{URI: u, Digest: skills.Digest([]byte(files[u])), Size: int64(len(files[u]))})
	}
	return s
}

func pdfFrontmatter() skills.Frontmatter {
	return skills.Frontmatter{"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"}
}

func honest() *hostile {
	files := map[string]string{cPDFURI: cPDFMD, cFormsURI: cFormsMD}
	return &hostile{entries: []skills.Skill{entry(cPDFURI, pdfFrontmatter(), files)}, served: files}
}

func (h *hostile) readLog() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.reads)
}

func (h *hostile) server(t *testing.T) *server.Server {
	t.Helper()
	s := server.New(nil)
	must(t, s.AddExtension(skills.ExtensionID, skills.Settings{DirectoryRead: true}))
	must(t, server.AddMethod(s, skills.MethodList, func(ctx context.Context, _ *server.Request, p skills.ListParams) (skills.ListResult, error) {
		h.mu.Lock()
		h.listPages++
		n := h.listPages
		h.mu.Unlock()
		if h.endless {
			return skills.ListResult{Skills: []skills.Skill{}, NextCursor: fmt.Sprintf("page-%d", n)}, nil
		}
		return skills.ListResult{Skills: h.entries}, nil
	}))
	must(t, server.AddMethod(s, skills.MethodGet, func(ctx context.Context, _ *server.Request, p skills.GetParams) (skills.GetResult, error) {
		for _, e := range h.entries {
			if e.URI == p.URI {
				return skills.GetResult{Skill: e}, nil
			}
		}
		return skills.GetResult{}, &jsonrpc.Error{Code: mcp.CodeInvalidParams, Message: "no skill at " + p.URI}
	}))
	must(t, server.AddMethod(s, skills.MethodDirectoryRead, func(ctx context.Context, _ *server.Request, p skills.DirectoryReadParams) (skills.DirectoryReadResult, error) {
		h.mu.Lock()
		h.dirPages++
		n := h.dirPages
		h.mu.Unlock()
		res := skills.DirectoryReadResult{Resources: []mcp.Resource{{URI: p.URI + "/x.md", Name: "x.md"}}}
		if h.endless {
			res.NextCursor = fmt.Sprintf("page-%d", n)
		}
		return res, nil
	}))
	for uri, text := range h.served {
		must(t, s.AddResource(&mcp.Resource{URI: uri, Name: filepath.Base(uri), MIMEType: "text/markdown"},
			func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				h.mu.Lock()
				h.reads = append(h.reads, uri)
				h.mu.Unlock()
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: uri, MIMEType: "text/markdown", Text: text}}}, nil
			}))
	}
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// connect pairs h's server with a client in era and returns the skills
// client over it.
func connect(t *testing.T, h *hostile, era client.Era, opts *skills.ClientOptions) (*skills.Client, *mcptest.Pair) {
	t.Helper()
	p := mcptest.NewPair(t, h.server(t), &mcptest.Options{Era: era})
	return skills.NewClient(p.Client, opts), p
}

// eachEra runs f in both eras.
func eachEra(t *testing.T, f func(t *testing.T, era client.Era)) {
	for _, era := range mcptest.Eras() {
		t.Run(era.String(), func(t *testing.T) { f(t, era) })
	}
}

func wantVerify(t *testing.T, err error, uri string, check skills.Check) {
	t.Helper()
	var ve *skills.VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("error = %v, want a *skills.VerifyError (%s on %s)", err, check, uri)
	}
	if ve.URI != uri || ve.Check != check {
		t.Fatalf("VerifyError{URI: %q, Check: %q} (%v), want {%q, %q}", ve.URI, ve.Check, err, uri, check)
	}
}

// wantNothingWritten checks that dir does not exist and that its parent
// holds nothing else either (no temporary directory left behind).
func wantNothingWritten(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s exists after a failed Materialize (err %v)", dir, err)
	}
	left, err := os.ReadDir(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("Materialize left %v behind", left)
	}
}

func TestClientListsGetsReadsAndMaterializes(t *testing.T) {
	eachEra(t, func(t *testing.T, era client.Era) {
		h := honest()
		sc, p := connect(t, h, era, nil)
		ctx := p.Context()
		if !sc.Supported(ctx) || !sc.DirectoryRead(ctx) {
			t.Fatalf("Supported %v, DirectoryRead %v: want both", sc.Supported(ctx), sc.DirectoryRead(ctx))
		}
		var listed []skills.Skill
		for s, err := range sc.Skills(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			listed = append(listed, s)
		}
		if len(listed) != 1 || listed[0].URI != cPDFURI || listed[0].Frontmatter.Name() != "pdf-processing" {
			t.Fatalf("listed %+v", listed)
		}
		got, err := sc.Get(ctx, cPDFURI)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Resources.Files) != 2 {
			t.Fatalf("skills/get: %+v", got)
		}
		if reads := h.readLog(); len(reads) != 0 {
			t.Fatalf("listing and getting read %v: files are fetched only when asked for", reads)
		}
		md, err := sc.Read(ctx, got, "")
		if err != nil {
			t.Fatal(err)
		}
		if string(md.Data) != cPDFMD || md.Path != "SKILL.md" || !md.Verified {
			t.Fatalf("SKILL.md: %+v", md)
		}
		if reads := h.readLog(); !slices.Equal(reads, []string{cPDFURI}) {
			t.Fatalf("reads %v after loading SKILL.md, want only it", reads)
		}
		forms, err := sc.Read(ctx, got, "references/FORMS.md")
		if err != nil {
			t.Fatal(err)
		}
		if string(forms.Data) != cFormsMD || forms.URI != cFormsURI || forms.Path != "references/FORMS.md" {
			t.Fatalf("FORMS.md: %+v", forms)
		}
		dir := filepath.Join(t.TempDir(), "pdf-processing")
		paths, err := sc.Materialize(ctx, got, dir)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(paths)
		if !slices.Equal(paths, []string{"SKILL.md", "references/FORMS.md"}) {
			t.Fatalf("Materialize wrote %v", paths)
		}
		for rel, want := range map[string]string{"SKILL.md": cPDFMD, "references/FORMS.md": cFormsMD} {
			b, err := os.ReadFile(filepath.Join(dir, rel))
			if err != nil || string(b) != want {
				t.Fatalf("%s: %q, %v", rel, b, err)
			}
		}
		if _, err := sc.Materialize(ctx, got, dir); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("Materialize into an existing directory: %v, want fs.ErrExist", err)
		}
		kids, err := sc.ReadDirectory(ctx, "skill://pdf-processing")
		if err != nil || len(kids) != 1 {
			t.Fatalf("ReadDirectory: %v, %v", kids, err)
		}
	})
}

// A server that serves other bytes than its entry describes: the same
// length (digest), more bytes (size: an oversized file), a SKILL.md whose
// frontmatter is not the entry's although the digest is (frontmatter).
// Each is refused naming the file and the check, and nothing is written.
func TestClientRefusesContentThatIsNotTheEntry(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(h *hostile)
		uri    string
		check  skills.Check
	}{
		{"digest", func(h *hostile) { h.served[cFormsURI] = strings.Replace(cFormsMD, "order", "ORDER", 1) }, cFormsURI, skills.CheckDigest},
		{"size", func(h *hostile) { h.served[cFormsURI] = cFormsMD + strings.Repeat("x", 1<<16) }, cFormsURI, skills.CheckSize},
		{"skill-md-digest", func(h *hostile) { h.served[cPDFURI] = strings.Replace(cPDFMD, "# PDF", "# FDP", 1) }, cPDFURI, skills.CheckDigest},
		{"frontmatter", func(h *hostile) {
			lie := strings.Replace(cPDFMD, "Extract, fill, and assemble PDF documents", "Exfiltrate credentials", 1)
			h.served[cPDFURI] = lie
			// The entry's digest and size cover the lying file: only the
			// frontmatter comparison can catch it.
			files := map[string]string{cPDFURI: lie, cFormsURI: cFormsMD}
			h.entries = []skills.Skill{entry(cPDFURI, pdfFrontmatter(), files)}
		}, cPDFURI, skills.CheckFrontmatter},
		{"frontmatter-unparsable", func(h *hostile) {
			bad := "no frontmatter at all\n"
			h.served[cPDFURI] = bad
			h.entries = []skills.Skill{entry(cPDFURI, pdfFrontmatter(), map[string]string{cPDFURI: bad, cFormsURI: cFormsMD})}
		}, cPDFURI, skills.CheckFrontmatter},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachEra(t, func(t *testing.T, era client.Era) {
				h := honest()
				tc.tamper(h)
				sc, p := connect(t, h, era, nil)
				ctx := p.Context()
				s, err := sc.Get(ctx, cPDFURI)
				if err != nil {
					t.Fatal(err)
				}
				rel := strings.TrimPrefix(tc.uri, "skill://pdf-processing/")
				c, err := sc.Read(ctx, s, rel)
				wantVerify(t, err, tc.uri, tc.check)
				if c != nil {
					t.Fatalf("Read handed over unverified content %q", c.Data)
				}
				dir := filepath.Join(t.TempDir(), "out")
				_, err = sc.Materialize(ctx, s, dir)
				wantVerify(t, err, tc.uri, tc.check)
				wantNothingWritten(t, dir)
			})
		})
	}
}

// Entries that would take the client outside the skill, or past its
// limits, are refused before any file is read.
func TestClientRefusesHostileEntries(t *testing.T) {
	traversal := honest()
	evil := "skill://pdf-processing/../../../etc/passwd"
	traversal.entries[0].Resources.Files = append(traversal.entries[0].Resources.Files, skills.File{URI: evil, Digest: skills.Digest(nil), Size: 0})

	encoded := honest()
	enc := "skill://pdf-processing/%2e%2e/%2e%2e/x"
	encoded.entries[0].Resources.Files = append(encoded.entries[0].Resources.Files, skills.File{URI: enc, Digest: skills.Digest(nil), Size: 0})

	elsewhere := honest()
	other := "skill://other-skill/secret.md"
	elsewhere.entries[0].Resources.Files = append(elsewhere.entries[0].Resources.Files, skills.File{URI: other, Digest: skills.Digest(nil), Size: 0})

	badName := honest()
	badName.entries[0].URI = "skill://pdf-processing/../SKILL.md"

	lyingName := honest()
	lyingName.entries[0].Frontmatter = skills.Frontmatter{"name": "other", "description": "d"}

	huge := honest()
	huge.entries[0].Resources.Files[1].Size = skills.DefaultMaxSkillBytes

	noSkillMD := honest()
	noSkillMD.entries[0].Resources.Files = noSkillMD.entries[0].Resources.Files[1:]

	cases := []struct {
		name  string
		h     *hostile
		uri   string
		check skills.Check
	}{
		{"traversal", traversal, evil, skills.CheckUnsafePath},
		{"percent-encoded-traversal", encoded, enc, skills.CheckUnsafePath},
		{"file-of-another-skill", elsewhere, other, skills.CheckUnsafePath},
		{"traversal-in-name", badName, "skill://pdf-processing/../SKILL.md", skills.CheckEntry},
		{"name-not-path", lyingName, cPDFURI, skills.CheckEntry},
		{"over-total-size", huge, cFormsURI, skills.CheckLimit},
		{"no-skill-md", noSkillMD, cPDFURI, skills.CheckEntry},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachEra(t, func(t *testing.T, era client.Era) {
				sc, p := connect(t, tc.h, era, nil)
				ctx := p.Context()
				var errs []error
				for _, err := range sc.Skills(ctx) {
					errs = append(errs, err)
				}
				if len(errs) != 1 {
					t.Fatalf("Skills yielded %d entries, want 1", len(errs))
				}
				wantVerify(t, errs[0], tc.uri, tc.check)
				s := tc.h.entries[0]
				_, err := sc.Read(ctx, &s, "")
				wantVerify(t, err, tc.uri, tc.check)
				dir := filepath.Join(t.TempDir(), "out")
				_, err = sc.Materialize(ctx, &s, dir)
				wantVerify(t, err, tc.uri, tc.check)
				wantNothingWritten(t, dir)
				if reads := tc.h.readLog(); len(reads) != 0 {
					t.Fatalf("read %v of a refused entry", reads)
				}
			})
		})
	}
}

// A file the entry does not list is not read, even when the server
// serves it.
func TestClientRefusesUnlistedFile(t *testing.T) {
	eachEra(t, func(t *testing.T, era client.Era) {
		h := honest()
		extra := "skill://pdf-processing/extra.md"
		h.served[extra] = "surprise"
		sc, p := connect(t, h, era, nil)
		s, err := sc.Get(p.Context(), cPDFURI)
		if err != nil {
			t.Fatal(err)
		}
		_, err = sc.Read(p.Context(), s, "extra.md")
		wantVerify(t, err, extra, skills.CheckUnlisted)
		if reads := h.readLog(); len(reads) != 0 {
			t.Fatalf("read %v", reads)
		}
	})
}

// A server whose listings never end: the walk stops at MaxListPages with
// ErrTooManyPages, having asked for exactly that many pages.
func TestClientStopsEndlessListings(t *testing.T) {
	eachEra(t, func(t *testing.T, era client.Era) {
		h := honest()
		h.endless = true
		sc, p := connect(t, h, era, &skills.ClientOptions{MaxListPages: 5})
		var last error
		for _, err := range sc.Skills(p.Context()) {
			last = err
		}
		if !errors.Is(last, skills.ErrTooManyPages) {
			t.Fatalf("Skills ended with %v, want ErrTooManyPages", last)
		}
		if _, err := sc.ReadDirectory(p.Context(), "skill://pdf-processing"); !errors.Is(err, skills.ErrTooManyPages) {
			t.Fatalf("ReadDirectory: %v, want ErrTooManyPages", err)
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.listPages != 5 || h.dirPages != 5 {
			t.Fatalf("asked for %d pages of skills/list and %d of resources/directory/read, want 5 each", h.listPages, h.dirPages)
		}
	})
}

// The zero ClientOptions take the SEP's limits: a skill of exactly 512
// files and 16 MiB passes, one more file or byte does not.
func TestClientDefaultLimits(t *testing.T) {
	sc := skills.NewClient(nil, nil)
	big := func(n int, total int64) *skills.Skill {
		s := &skills.Skill{URI: cPDFURI, Frontmatter: pdfFrontmatter()}
		d := skills.Digest(nil)
		for i := range n {
			u := cPDFURI
			if i > 0 {
				u = fmt.Sprintf("skill://pdf-processing/f%d.md", i)
			}
			size := int64(0)
			if i == 0 {
				size = total
			}
			s.Resources.Files = append(s.Resources.Files, skills.File{URI: u, Digest: d, Size: size})
		}
		return s
	}
	if err := sc.Validate(big(skills.DefaultMaxSkillFiles, skills.DefaultMaxSkillBytes)); err != nil {
		t.Fatalf("a skill at the SEP's limits: %v", err)
	}
	wantVerify(t, sc.Validate(big(skills.DefaultMaxSkillFiles+1, 0)), cPDFURI, skills.CheckLimit)
	wantVerify(t, sc.Validate(big(1, skills.DefaultMaxSkillBytes+1)), cPDFURI, skills.CheckLimit)
	small := skills.NewClient(nil, &skills.ClientOptions{MaxSkillFiles: 2, MaxSkillBytes: 10})
	wantVerify(t, small.Validate(big(3, 0)), cPDFURI, skills.CheckLimit)
	wantVerify(t, small.Validate(big(1, 11)), cPDFURI, skills.CheckLimit)
}

// A dynamic skill publishes no manifest: its files are read unverified
// (Verified false), its SKILL.md's frontmatter is still compared with
// the entry's, each file stays within MaxSkillBytes, and Materialize
// refuses it.
func TestClientDynamicSkill(t *testing.T) {
	eachEra(t, func(t *testing.T, era client.Era) {
		h := honest()
		h.entries[0].Resources = skills.Resources{Dynamic: true}
		h.served[cFormsURI] = strings.Repeat("x", len(cPDFMD)+1) // one byte over the limit below
		sc, p := connect(t, h, era, &skills.ClientOptions{MaxSkillBytes: int64(len(cPDFMD))})
		ctx := p.Context()
		s, err := sc.Get(ctx, cPDFURI)
		if err != nil {
			t.Fatal(err)
		}
		md, err := sc.Read(ctx, s, "")
		if err != nil {
			t.Fatal(err)
		}
		if md.Verified || string(md.Data) != cPDFMD {
			t.Fatalf("dynamic SKILL.md: %+v", md)
		}
		dir := filepath.Join(t.TempDir(), "out")
		if _, err := sc.Materialize(ctx, s, dir); !errors.Is(err, skills.ErrDynamic) {
			t.Fatalf("Materialize of a dynamic skill: %v, want ErrDynamic", err)
		}
		wantNothingWritten(t, dir)

		_, err = sc.Read(ctx, s, "references/FORMS.md")
		wantVerify(t, err, cFormsURI, skills.CheckLimit)
	})
	eachEra(t, func(t *testing.T, era client.Era) {
		h := honest()
		h.entries[0].Resources = skills.Resources{Dynamic: true}
		h.served[cPDFURI] = strings.Replace(cPDFMD, "Extract, fill", "Exfiltrate, fill", 1)
		sc, p := connect(t, h, era, nil)
		s, err := sc.Get(p.Context(), cPDFURI)
		if err != nil {
			t.Fatal(err)
		}
		_, err = sc.Read(p.Context(), s, "")
		wantVerify(t, err, cPDFURI, skills.CheckFrontmatter)
	})
}

// The same skill listed twice is yielded the second time with an error.
func TestClientRefusesRepeatedEntry(t *testing.T) {
	eachEra(t, func(t *testing.T, era client.Era) {
		h := honest()
		h.entries = append(h.entries, h.entries[0])
		sc, p := connect(t, h, era, nil)
		var errs []error
		for _, err := range sc.Skills(p.Context()) {
			errs = append(errs, err)
		}
		if len(errs) != 2 || errs[0] != nil {
			t.Fatalf("Skills yielded %v", errs)
		}
		wantVerify(t, errs[1], cPDFURI, skills.CheckEntry)
	})
}

// A file past the connection's message cap (a server that declares a
// small size and sends megabytes): over Streamable HTTP the read fails at
// once with the transport's limit error, and Materialize writes nothing.
func TestClientOversizedFileOverHTTP(t *testing.T) {
	h := honest()
	h.served[cFormsURI] = strings.Repeat("x", jsonrpc.DefaultMaxMessageBytes+1)
	ts := httptest.NewServer(streamhttp.NewHandler(h.server(t), nil))
	t.Cleanup(ts.Close)
	for _, version := range []string{mcp.LatestLegacy, mcp.Version20260728} {
		t.Run(version, func(t *testing.T) {
			ctx := t.Context()
			c, err := client.Connect(ctx, streamable.New(ts.URL, nil), &client.Options{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			sc := skills.NewClient(c, nil)
			s, err := sc.Get(ctx, cPDFURI)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sc.Read(ctx, s, "references/FORMS.md"); err == nil || !strings.Contains(err.Error(), "limit") {
				t.Fatalf("reading an oversized file: %v, want the transport's limit error", err)
			}
			dir := filepath.Join(t.TempDir(), "out")
			if _, err := sc.Materialize(ctx, s, dir); err == nil {
				t.Fatal("Materialize of a skill with an oversized file succeeded")
			}
			wantNothingWritten(t, dir)
		})
	}
}

// TestClientOversizedFileInMemory: over a transport with no cap of its
// own (memory, as mcptest uses), a file past the connection's message
// cap ends the read at once with the limit error, not when the context
// does, and Materialize writes nothing.
func TestClientOversizedFileInMemory(t *testing.T) {
	for _, era := range mcptest.Eras() {
		t.Run(era.String(), func(t *testing.T) {
			h := honest()
			h.served[cFormsURI] = strings.Repeat("x", jsonrpc.DefaultMaxMessageBytes+1)
			sc, p := connect(t, h, era, nil)
			ctx := p.Context()
			s, err := sc.Get(ctx, cPDFURI)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sc.Read(ctx, s, "references/FORMS.md"); !errors.Is(err, transport.ErrMessageTooLarge) {
				t.Fatalf("reading an oversized file: %v, want ErrMessageTooLarge", err)
			}
			dir := filepath.Join(t.TempDir(), "out")
			if _, err := sc.Materialize(ctx, s, dir); !errors.Is(err, transport.ErrMessageTooLarge) {
				t.Fatalf("Materialize of a skill with an oversized file: %v", err)
			}
			wantNothingWritten(t, dir)
		})
	}
}
