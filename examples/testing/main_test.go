package main

import (
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/mcptest"
)

func TestOrder(t *testing.T) {
	s, err := newServer()
	if err != nil {
		t.Fatal(err)
	}
	// The same test in both eras: the handler asks the same way, and the
	// script answers a 2026-07-28 input-required result or a 2025-11-25
	// elicitation request alike.
	for _, era := range mcptest.Eras() {
		t.Run(era.String(), func(t *testing.T) {
			script := new(mcptest.Script).Elicit(
				mcptest.Accept(map[string]any{"street": "1 Main St", "city": "Springfield"}),
				mcptest.Decline(),
			)
			p := mcptest.NewPair(t, s, &mcptest.Options{Era: era, Script: script})

			out := mcptest.CallTool[orderOut](t, p, "order", orderIn{Item: "lamp"})
			if want := "lamp to 1 Main St, Springfield"; out.Confirmation != want {
				t.Errorf("confirmation = %q; want %q", out.Confirmation, want)
			}
			if got := script.ElicitRequests(); len(got) != 1 || got[0].Message != "Where should we send the lamp?" {
				t.Errorf("asked %+v", got)
			}

			// The second answer declines: a tool error for the model.
			if msg := mcptest.ToolError(t, p, "order", orderIn{Item: "chair"}); !strings.Contains(msg, "declined") {
				t.Errorf("declined order: %q", msg)
			}
			if msg := mcptest.ToolError(t, p, "order", orderIn{}); msg != "nothing to order" {
				t.Errorf("empty order: %q", msg)
			}
		})
	}
}
