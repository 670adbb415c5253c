package main

import (
	"log/slog"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/skills"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

// TestServeDemoSkill: the demo server lists its skill in both eras, and
// each file reads back with the manifest's digest and size.
func TestServeDemoSkill(t *testing.T) {
	for _, era := range mcptest.Eras() {
		t.Run(era.String(), func(t *testing.T) {
			s, err := newDemoServer(slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			p := mcptest.NewPair(t, s, &mcptest.Options{Era: era})
			list, err := client.CallMethod[skills.ListResult](p.Context(), p.Client, skills.MethodList, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Skills) != 1 || list.Skills[0].URI != demoSkillURI || list.Skills[0].Frontmatter.Name() != "mcpkit-demo" || len(list.Skills[0].Resources.Files) != 2 {
				t.Fatalf("skills/list = %+v", list)
			}
			for _, f := range list.Skills[0].Resources.Files {
				rr, err := p.Client.ReadResource(p.Context(), &mcp.ReadResourceParams{URI: f.URI})
				if err != nil {
					t.Fatal(err)
				}
				text := rr.Contents[0].(*mcp.TextResourceContents).Text
				if skills.Digest([]byte(text)) != f.Digest || int64(len(text)) != f.Size {
					t.Fatalf("%s does not match its manifest entry", f.URI)
				}
			}
		})
	}
}
