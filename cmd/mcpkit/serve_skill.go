package main

import (
	"embed"
	"io/fs"

	"github.com/mcpkit/mcpkit/ext/skills"
	"github.com/mcpkit/mcpkit/server"
)

// The demo's skill (io.modelcontextprotocol/skills, SEP-2640):
// skill://mcpkit-demo/SKILL.md, how to use this server, and a reference
// file.

//go:embed demoskill
var demoSkillFiles embed.FS

const demoSkillURI = "skill://mcpkit-demo/SKILL.md"

func addDemoSkill(s *server.Server) error {
	x, err := skills.NewServer(s, nil)
	if err != nil {
		return err
	}
	dir, err := fs.Sub(demoSkillFiles, "demoskill")
	if err != nil {
		return err
	}
	return x.AddSkill("mcpkit-demo", dir)
}
