package main

import (
	"embed"
	"io/fs"
	"log"

	"github.com/mcpkit/mcpkit/ext/skills"
	"github.com/mcpkit/mcpkit/server"
)

// skillFiles are the fixture's skills: pdf-processing (with a nested
// templates/regional directory) served at skill://pdf-processing, and
// refunds served under a prefix, at skill://acme/billing/refunds.
//
//go:embed skills
var skillFiles embed.FS

// addSkills declares the Skills extension (SEP-2640) and serves the
// fixture's skills, for the sep-2640-skills-* scenarios.
func addSkills(s *server.Server) {
	x, err := skills.NewServer(s, nil)
	if err != nil {
		log.Fatal(err)
	}
	pdf, err := fs.Sub(skillFiles, "skills/pdf-processing")
	if err != nil {
		log.Fatal(err)
	}
	refunds, err := fs.Sub(skillFiles, "skills/acme-refunds")
	if err != nil {
		log.Fatal(err)
	}
	if err := x.AddSkill("pdf-processing", pdf); err != nil {
		log.Fatal(err)
	}
	if err := x.AddSkill("acme/billing/refunds", refunds); err != nil {
		log.Fatal(err)
	}
}
