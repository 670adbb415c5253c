package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/skills"
)

// mcpkit skills [flags] [--fetch DIR] TARGET [SKILL]
//
// Without SKILL it lists the server's skills (skills/list, every page);
// with SKILL (the URI of its SKILL.md, or its name when one listed skill
// has it) it shows the skill's entry (skills/get) and its SKILL.md,
// verified; with --fetch DIR it writes every file of the skill into the
// new directory DIR, each verified first, nothing written when one fails.
// Files are read only when shown or fetched (SEP-2640's lazy retrieval).

// skillsRun checks the arguments of mcpkit skills and returns the run.
func (c *cli) skillsRun(pos []string, fetchDir string) (func(context.Context, *client.Client) error, error) {
	switch {
	case len(pos) > 1:
		return nil, usageErr("skills takes TARGET and at most one SKILL (its SKILL.md URI or its name)")
	case fetchDir != "" && len(pos) == 0:
		return nil, usageErr("skills --fetch needs the SKILL to fetch")
	case len(pos) == 0:
		return c.skillsList, nil
	}
	if fetchDir != "" {
		if _, err := os.Lstat(fetchDir); err == nil {
			return nil, usageErr("--fetch %s: it exists; name a new directory", fetchDir)
		}
	}
	ref := pos[0]
	return func(ctx context.Context, cl *client.Client) error {
		sc := skills.NewClient(cl, nil)
		s, err := c.findSkill(ctx, sc, ref)
		if err != nil {
			return err
		}
		if fetchDir != "" {
			return c.skillsFetch(ctx, sc, s, fetchDir)
		}
		return c.skillsShow(ctx, sc, s)
	}, nil
}

// skillsErr gives a refused skill the protocol exit code: the server's
// answer was wrong, not the connection.
func skillsErr(err error) error {
	var ve *skills.VerifyError
	if errors.As(err, &ve) || errors.Is(err, skills.ErrTooManyPages) || errors.Is(err, skills.ErrNotSupported) ||
		errors.Is(err, skills.ErrDynamic) {
		return &exitError{code: exitProtocol, err: err}
	}
	return err
}

func (c *cli) skillsList(ctx context.Context, cl *client.Client) error {
	sc := skills.NewClient(cl, nil)
	if !sc.Supported(ctx) {
		return skillsErr(fmt.Errorf("%w: %s", skills.ErrNotSupported, skills.ExtensionID))
	}
	var all []skills.Skill
	for s, err := range sc.Skills(ctx) {
		var ve *skills.VerifyError
		if errors.As(err, &ve) {
			// One bad entry does not hide the others: say so, go on.
			fmt.Fprintf(c.stderr, "mcpkit: refused: %v\n", err)
			continue
		}
		if err != nil {
			return skillsErr(err)
		}
		all = append(all, s)
	}
	if c.f.json {
		return c.printJSON(all)
	}
	if len(all) == 0 {
		fmt.Fprintln(c.stdout, "no skills")
		return nil
	}
	for _, s := range all {
		fmt.Fprintf(c.stdout, "%s  %s\n", s.Frontmatter.Name(), s.URI)
		if d := s.Frontmatter.Description(); d != "" {
			fmt.Fprintf(c.stdout, "    %s\n", oneLine(d))
		}
		fmt.Fprintf(c.stdout, "    %s\n", filesSummary(&s))
	}
	return nil
}

// findSkill returns the entry of ref: a URI is asked for with
// skills/get; a name is looked up in the listing, and must name one
// skill only (names are labels, not identifiers).
func (c *cli) findSkill(ctx context.Context, sc *skills.Client, ref string) (*skills.Skill, error) {
	if !sc.Supported(ctx) {
		return nil, skillsErr(fmt.Errorf("%w: %s", skills.ErrNotSupported, skills.ExtensionID))
	}
	if strings.Contains(ref, "://") {
		s, err := sc.Get(ctx, ref)
		return s, skillsErr(err)
	}
	var found []skills.Skill
	for s, err := range sc.Skills(ctx) {
		var ve *skills.VerifyError
		if errors.As(err, &ve) {
			if s.Frontmatter.Name() == ref {
				return nil, skillsErr(err)
			}
			continue
		}
		if err != nil {
			return nil, skillsErr(err)
		}
		if s.Frontmatter.Name() == ref {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return nil, &exitError{code: exitProtocol, err: fmt.Errorf("no listed skill is named %q (give its SKILL.md URI for an unlisted one)", ref)}
	case 1:
		return &found[0], nil
	}
	uris := make([]string, len(found))
	for i, s := range found {
		uris[i] = s.URI
	}
	return nil, usageErr("%d skills are named %q: give one URI of %s", len(found), ref, strings.Join(uris, ", "))
}

func (c *cli) skillsShow(ctx context.Context, sc *skills.Client, s *skills.Skill) error {
	md, err := sc.Read(ctx, s, "")
	if err != nil {
		return skillsErr(err)
	}
	if c.f.json {
		return c.printJSON(struct {
			Skill   *skills.Skill `json:"skill"`
			SkillMD string        `json:"skillMd"`
		}{s, string(md.Data)})
	}
	fmt.Fprintf(c.stdout, "skill %s  %s\n", s.Frontmatter.Name(), s.URI)
	fmt.Fprintf(c.stdout, "  %s\n", oneLine(s.Frontmatter.Description()))
	if s.Resources.Dynamic {
		fmt.Fprintln(c.stdout, "  files: dynamic (no manifest: contents are not verified)")
	} else {
		for _, f := range s.Resources.Files {
			fmt.Fprintf(c.stdout, "  %8d  %s\n", f.Size, f.URI)
		}
	}
	verified := "verified"
	if !md.Verified {
		verified = "frontmatter checked, unverified content"
	}
	fmt.Fprintf(c.stdout, "--- %s (%s)\n%s", skills.SkillFile, verified, md.Data)
	if len(md.Data) > 0 && md.Data[len(md.Data)-1] != '\n' {
		fmt.Fprintln(c.stdout)
	}
	return nil
}

func (c *cli) skillsFetch(ctx context.Context, sc *skills.Client, s *skills.Skill, dir string) error {
	paths, err := sc.Materialize(ctx, s, dir)
	if err != nil {
		return skillsErr(err)
	}
	if c.f.json {
		return c.printJSON(struct {
			URI   string   `json:"uri"`
			Dir   string   `json:"dir"`
			Files []string `json:"files"`
		}{s.URI, dir, paths})
	}
	for _, p := range paths {
		fmt.Fprintln(c.stdout, p)
	}
	fmt.Fprintf(c.stderr, "fetched %s into %s: %d files, each verified\n", s.URI, dir, len(paths))
	return nil
}

func filesSummary(s *skills.Skill) string {
	if s.Resources.Dynamic {
		return "files: dynamic"
	}
	var total int64
	for _, f := range s.Resources.Files {
		total += f.Size
	}
	return fmt.Sprintf("files: %d, %d bytes", len(s.Resources.Files), total)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
