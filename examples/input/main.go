// Command input shows a tool that asks its caller for input — a form, a
// URL to visit, a model's completion and the client's roots — written
// once in the multi round-trip style, and a client that answers with one
// set of handlers. It runs the same call in both eras over an in-memory
// connection: with a 2026-07-28 client the server answers input-required
// results that the client fills in and sends again; with a 2025-11-25
// client the server sends elicitation, sampling and roots requests
// itself and runs the handler again with the answers.
//
//	go run ./examples/input
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// trip is the form the tool asks for, inferred from the struct.
type trip struct {
	City   string `json:"city" jsonschema:"title=City"`
	Nights int    `json:"nights,omitzero" jsonschema:"minimum=1,default=2"`
}

type planOut struct {
	Plan string `json:"plan"`
}

func newServer() (*server.Server, error) {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "planner", Version: "1.0.0"}})
	err := server.AddTool(s, &mcp.Tool{Name: "plan_trip", Description: "Plans a trip, asking what it needs."},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (planOut, error) {
			// 1. A form. Until it is answered, Ask returns the input
			//    request as its error; the handler returns it.
			t, err := server.Ask[trip](req.Request, "trip", "Where to?")
			if err != nil {
				return planOut{}, err
			}
			// 2. A page to visit (URL mode), 3. the client's model, 4. its
			//    roots: each asked once, its answer kept for the next runs.
			pay, ok, err := req.ElicitResult("pay")
			if err != nil {
				return planOut{}, err
			}
			if !ok {
				return planOut{}, server.NeedInput().Elicit("pay", &mcp.ElicitParams{
					Mode: mcp.ElicitModeURL, Message: "Pay the deposit", URL: "https://pay.example.com/deposit", ElicitationID: "deposit-1",
				})
			}
			idea, ok, err := req.CreateMessageResult("idea")
			if err != nil {
				return planOut{}, err
			}
			if !ok {
				return planOut{}, server.NeedInput().CreateMessage("idea", &mcp.CreateMessageParams{
					Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "One thing to do in " + t.City + "?"})}},
					MaxTokens: 50,
				})
			}
			roots, ok, err := req.ListRootsResult("roots")
			if err != nil {
				return planOut{}, err
			}
			if !ok {
				return planOut{}, server.NeedInput().ListRoots("roots")
			}
			text := idea.Content.Blocks[0].(*mcp.TextContent).Text
			return planOut{Plan: fmt.Sprintf("%d nights in %s, deposit %s, %s, notes in %s",
				t.Nights, t.City, pay.Action, text, roots.Roots[0].URI)}, nil
		})
	return s, err
}

// clientOptions are the answers of a person and a model at the client.
// The same handlers serve both eras.
func clientOptions(version string) *client.Options {
	return &client.Options{
		Info:                mcp.Implementation{Name: "traveller", Version: "1.0.0"},
		ProtocolVersion:     version,
		ElicitationURL:      true, // declares URL-mode elicitation
		ElicitationDefaults: true, // fills the form's defaults (nights) in
		ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			if p.EffectiveMode() == mcp.ElicitModeURL {
				fmt.Printf("  open %s (%s)\n", p.URL, p.Message)
				return &mcp.ElicitResult{Action: mcp.ElicitActionAccept}, nil
			}
			fmt.Printf("  form %q\n", p.Message)
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"city": "Lisbon"}}, nil
		},
		CreateMessageHandler: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			fmt.Printf("  model asked %q\n", p.Messages[0].Content.Blocks[0].(*mcp.TextContent).Text)
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "example-model",
				Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "ride tram 28"})}, nil
		},
		ListRootsHandler: func(ctx context.Context) (*mcp.ListRootsResult, error) {
			fmt.Println("  roots asked")
			return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///home/ada/trips", Name: "trips"}}}, nil
		},
	}
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
	for _, version := range []string{mcp.Version20260728, mcp.LatestLegacy} {
		if err := plan(ctx, s, version); err != nil {
			return err
		}
	}
	return nil
}

func plan(ctx context.Context, s *server.Server, version string) error {
	clientEnd, serverEnd := memory.NewPair()
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, serverEnd) }()
	defer func() { cancel(); <-served }()

	c, err := client.Connect(ctx, clientEnd, clientOptions(version))
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Printf("%s (%s):\n", c.Era(), c.ProtocolVersion())
	out, _, err := client.CallTool[planOut](ctx, c, "plan_trip", nil)
	var te *client.ToolError
	if errors.As(err, &te) {
		return errors.New(strings.TrimSpace(te.Text))
	}
	if err != nil {
		return err
	}
	fmt.Println("  plan:", out.Plan)
	return nil
}
