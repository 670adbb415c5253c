package server_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/memory"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// connect serves s in memory and connects a client with opts; stop ends
// both.
func connect(s *server.Server, opts *client.Options) (c *client.Client, stop func()) {
	clientEnd, serverEnd := memory.NewPair()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, serverEnd) }()
	c, err := client.Connect(ctx, clientEnd, opts)
	if err != nil {
		log.Fatal(err)
	}
	return c, func() { c.Close(); cancel(); <-served }
}

// A stdio server: what an MCP host launches as a process.
func ExampleServer_Serve() {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "hello", Version: "1.0.0"}})
	// Register tools, prompts and resources here, then serve until the
	// client closes standard input.
	if err := s.Serve(context.Background(), stdio.New(nil)); err != nil {
		log.Fatal(err)
	}
}

// A typed tool: the input schema is inferred from the In type and
// checked before the handler runs; the Out value is the structured
// result, with an output schema inferred from it.
func ExampleAddTool() {
	type addIn struct {
		A float64 `json:"a" jsonschema:"first addend"`
		B float64 `json:"b" jsonschema:"second addend"`
	}
	type addOut struct {
		Sum float64 `json:"sum"`
	}
	s := server.New(nil)
	err := server.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers."},
		func(ctx context.Context, req *server.CallToolRequest, in addIn) (addOut, error) {
			return addOut{Sum: in.A + in.B}, nil
		})
	if err != nil {
		log.Fatal(err) // a malformed tag or schema: nothing registered
	}

	c, stop := connect(s, nil)
	defer stop()
	out, _, err := client.CallTool[addOut](context.Background(), c, "add", addIn{A: 2, B: 40})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Sum)
	// Output: 42
}

// Asking the user for a form inferred from a Go struct. The handler is
// written once for both eras: until the answer is there, Ask returns the
// question as an error, which the handler returns.
func ExampleAsk() {
	type contact struct {
		Email string `json:"email" jsonschema:"format=email"`
	}
	s := server.New(nil)
	err := server.AddTool(s, &mcp.Tool{Name: "subscribe"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			v, err := server.Ask[contact](req.Request, "contact", "Where should we write to you?")
			if err != nil {
				return "", err // the question, or a declined form (a tool error)
			}
			return "subscribed " + v.Email, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	c, stop := connect(s, &client.Options{
		ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			fmt.Println("asked:", p.Message)
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"email": "ada@example.com"}}, nil
		},
	})
	defer stop()
	out, _, err := client.CallTool[string](context.Background(), c, "subscribe", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	// Output:
	// asked: Where should we write to you?
	// subscribed ada@example.com
}

// Asking the client's model for a completion (sampling), in the multi
// round-trip style: the answer is read back by key when the handler runs
// again.
func ExampleNeedInput() {
	s := server.New(nil)
	err := server.AddTool(s, &mcp.Tool{Name: "haiku"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			m, ok, err := req.CreateMessageResult("draft")
			if err != nil {
				return "", err
			}
			if !ok {
				return "", server.NeedInput().CreateMessage("draft", &mcp.CreateMessageParams{
					Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "A haiku about Go"})}},
					MaxTokens: 60,
				})
			}
			return m.Content.Blocks[0].(*mcp.TextContent).Text, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	c, stop := connect(s, &client.Options{
		CreateMessageHandler: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "example",
				Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "gophers dig / channels hum / done"})}, nil
		},
	})
	defer stop()
	out, _, err := client.CallTool[string](context.Background(), c, "haiku", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	// Output: gophers dig / channels hum / done
}

// Narrowing the revisions a server speaks: here only 2026-07-28, so a
// legacy client's initialize is refused with the revisions served
// (docs/design/revisions.md).
func ExampleOptions_protocolVersions() {
	// Modern clients only: legacy clients get an initialize error naming 2026-07-28.
	s := server.New(&server.Options{ProtocolVersions: []string{mcp.Version20260728}})
	fmt.Println(s.ProtocolVersions())
	// Output: [2026-07-28]
}
