package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/apps"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// TestDemoApp: the demo server advertises MCP Apps in both eras, links
// the roll tool to the dice view, and serves the view.
func TestDemoApp(t *testing.T) {
	for _, era := range []string{mcp.LatestLegacy, mcp.Version20260728} {
		t.Run(era, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			s, err := newDemoServer(slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			a, b := memory.NewPair()
			ss := s.Connect(b)
			defer ss.Close()
			opts := &client.Options{ProtocolVersion: era}
			apps.Declare(opts)
			c, err := client.Connect(ctx, a, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Era() == client.EraModern {
				if _, err := c.Discover(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if !apps.Supported(c) {
				t.Fatal("the demo server does not advertise io.modelcontextprotocol/ui")
			}
			var roll *mcp.Tool
			for tool, err := range c.Tools(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				if tool.Name == "roll" {
					roll = &tool
				}
			}
			if roll == nil {
				t.Fatal("no roll tool")
			}
			ui, err := apps.FetchUI(ctx, c, roll)
			if err != nil {
				t.Fatal(err)
			}
			if ui.URI != diceViewURI || !strings.Contains(ui.HTML, "ui/notifications/tool-result") {
				t.Fatalf("view %s: %.80s", ui.URI, ui.HTML)
			}
			out, _, err := client.CallTool[rollOut](ctx, c, "roll", rollIn{Dice: 3})
			if err != nil || len(out.Rolls) != 3 || out.Total < 3 || out.Total > 18 {
				t.Fatalf("roll = %+v, %v", out, err)
			}
		})
	}
}
