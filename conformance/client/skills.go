package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/skills"
)

// runSkills is the host of the SEP-2640 client scenarios. It lists the
// server's skills, which reads no file (sep-2640-client-no-prefetch);
// for the verify scenarios it then loads the first skill, as a host does
// when the model asks for it: its SKILL.md is read and verified (digest,
// size, frontmatter) and, only when that passes, the files the skill
// lists are read, each verified. A tampered SKILL.md fails the scenario
// with the client's *skills.VerifyError, and nothing after it is read.
func runSkills(ctx context.Context, e *env) error {
	c, err := e.connect(ctx, client.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	sc := skills.NewClient(c, nil)
	if !sc.Supported(ctx) {
		return errors.New("the server does not declare " + skills.ExtensionID)
	}
	var listed []skills.Skill
	for s, err := range sc.Skills(ctx) {
		if err != nil {
			return err
		}
		listed = append(listed, s)
	}
	if e.scenario == "sep-2640-client-no-prefetch" {
		return nil // listing is not loading: nothing is fetched
	}
	if len(listed) == 0 {
		return errors.New("no skill is listed")
	}
	s := &listed[0]
	if _, err := sc.Read(ctx, s, ""); err != nil {
		return fmt.Errorf("loading %s: %w", s.URI, err)
	}
	for _, f := range s.Resources.Files {
		if f.URI == s.URI {
			continue
		}
		if _, err := sc.Read(ctx, s, f.URI); err != nil {
			return err
		}
	}
	return nil
}
