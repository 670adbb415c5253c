package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
)

func TestBatchAnnouncesOnce(t *testing.T) {
	s := server.New(nil)
	changes := make(chan string, 100)
	p := mcptest.NewPair(t, s, &mcptest.Options{Era: client.EraLegacy, Client: &client.Options{
		OnToolsListChanged:   func(context.Context) { changes <- "tools" },
		OnPromptsListChanged: func(context.Context) { changes <- "prompts" },
	}})
	// A request answered: the session has read notifications/initialized,
	// so it hears list changes.
	if err := p.Client.Ping(p.Context()); err != nil {
		t.Fatal(err)
	}
	noop := func(context.Context, *server.CallToolRequest) (*mcp.CallToolResult, error) { return &mcp.CallToolResult{}, nil }
	s.Batch(func() {
		for i := range 50 {
			if err := s.AddRawTool(&mcp.Tool{Name: fmt.Sprint("t", i)}, noop); err != nil {
				t.Fatal(err)
			}
		}
		s.Batch(func() { s.RemoveTools("t0") }) // nested: announced by the outer one
		if err := s.AddPrompt(&mcp.Prompt{Name: "p"}, func(context.Context, *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		}); err != nil {
			t.Fatal(err)
		}
	})
	// A marker change after the batch: everything before it has arrived.
	s.RemovePrompts("p")
	var got []string
	for len(got) < 3 {
		select {
		case c := <-changes:
			got = append(got, c)
		case <-p.Context().Done():
			t.Fatalf("notifications = %v", got)
		}
	}
	if fmt.Sprint(got) != "[prompts tools prompts]" {
		t.Fatalf("notifications = %v", got)
	}
	n := 0
	for _, err := range p.Client.Tools(p.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 49 {
		t.Fatalf("%d tools", n)
	}
}
