// Command prompts shows a prompt with arguments and the completion of
// those arguments as the user types, over an in-memory connection in the
// default era (the client detects a 2026-07-28 server).
//
//	go run ./examples/prompts
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/memory"
)

var languages = []string{"go", "gleam", "haskell", "python", "rust"}

func newServer() (*server.Server, error) {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "reviewer", Version: "1.0.0"}})
	err := s.AddPrompt(&mcp.Prompt{
		Name:        "review",
		Description: "Asks for a code review.",
		Arguments: []mcp.PromptArgument{
			{Name: "language", Required: true},
			{Name: "focus", Description: "what to look at first"},
		},
	}, func(ctx context.Context, req *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
		lang := req.Params.Arguments["language"]
		focus := req.Params.Arguments["focus"]
		if focus == "" {
			focus = "correctness"
		}
		return &mcp.GetPromptResult{
			Description: "A " + lang + " review",
			Messages: []mcp.PromptMessage{{
				Role:    mcp.RoleUser,
				Content: &mcp.TextContent{Text: fmt.Sprintf("Review this %s code, %s first.", lang, focus)},
			}},
		}, nil
	})
	// Completion of prompt arguments (and of template variables): the
	// values that start with what the user typed so far.
	s.SetCompletionHandler(func(ctx context.Context, req *server.CompleteRequest) (*mcp.CompleteResult, error) {
		p := req.Params
		if p.Ref.Type != mcp.RefPrompt || p.Argument.Name != "language" {
			return &mcp.CompleteResult{Completion: mcp.Completion{Values: []string{}}}, nil
		}
		var values []string
		for _, l := range languages {
			if strings.HasPrefix(l, p.Argument.Value) {
				values = append(values, l)
			}
		}
		return &mcp.CompleteResult{Completion: mcp.Completion{Values: values}}, nil
	})
	return s, err
}

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	s, err := newServer()
	if err != nil {
		return err
	}
	clientEnd, serverEnd := memory.NewPair()
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, serverEnd) }()
	defer func() { cancel(); <-served }()

	c, err := client.Connect(ctx, clientEnd, nil) // nil: detect the era
	if err != nil {
		return err
	}
	defer c.Close()

	for p, err := range c.Prompts(ctx) {
		if err != nil {
			return err
		}
		var args []string
		for _, a := range p.Arguments {
			args = append(args, a.Name)
		}
		fmt.Printf("prompt %s(%s): %s\n", p.Name, strings.Join(args, ", "), p.Description)
	}

	for _, typed := range []string{"g", "ha", "x"} {
		res, err := c.Complete(ctx, &mcp.CompleteParams{
			Ref:      mcp.CompleteReference{Type: mcp.RefPrompt, Name: "review"},
			Argument: mcp.CompleteArgument{Name: "language", Value: typed},
		})
		if err != nil {
			return err
		}
		fmt.Printf("complete language %q: %v\n", typed, res.Completion.Values)
	}

	got, err := c.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"language": "go"}})
	if err != nil {
		return err
	}
	fmt.Printf("%s: %s\n", got.Description, got.Messages[0].Content.(*mcp.TextContent).Text)

	// A required argument left out is the server's -32602.
	_, err = c.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		return fmt.Errorf("missing argument: %v", err)
	}
	fmt.Printf("without language: error %d\n", rpcErr.Code)
	return nil
}
