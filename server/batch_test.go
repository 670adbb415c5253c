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
		OnToolsListChanged:     func(context.Context) { changes <- "tools" },
		OnPromptsListChanged:   func(context.Context) { changes <- "prompts" },
		OnResourcesListChanged: func(context.Context) { changes <- "resources" },
	}})
	// A request answered: the session has read notifications/initialized,
	// so it hears list changes.
	if err := p.Client.Ping(p.Context()); err != nil {
		t.Fatal(err)
	}
	noop := func(context.Context, *server.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
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
	// It is of another kind: a change of a kind still waiting for the
	// session is not announced twice (changes.go).
	if err := s.AddResource(&mcp.Resource{URI: "mem://marker", Name: "marker"}, func(context.Context, *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 3 {
		select {
		case c := <-changes:
			got = append(got, c)
		case <-p.Context().Done():
			t.Fatalf("notifications = %v", got)
		}
	}
	if fmt.Sprint(got) != "[prompts tools resources]" {
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
