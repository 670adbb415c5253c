// Command typed shows typed tool calls from both sides: the server's
// AddTool[In, Out] infers the input and output schemas from Go types and
// validates arguments before the handler runs; the client's
// CallTool[Out] validates the structured result against the tool's
// output schema and decodes it. Failures come back as typed errors: a
// tool error (also for arguments that break the input schema) and a
// result that breaks its output schema.
//
//	go run ./examples/typed
package main

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/memory"
)

type divideIn struct {
	A float64 `json:"a" jsonschema:"dividend"`
	B float64 `json:"b" jsonschema:"divisor"`
}

type divideOut struct {
	Quotient float64 `json:"quotient"`
}

func newServer() (*server.Server, error) {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "math", Version: "1.0.0"}})
	return s, errors.Join(
		server.AddTool(s, &mcp.Tool{Name: "divide", Description: "Divides a by b."},
			func(ctx context.Context, req *server.CallToolRequest, in divideIn) (divideOut, error) {
				if in.B == 0 {
					// Any error is a tool error (isError), for the model to read.
					return divideOut{}, errors.New("division by zero")
				}
				return divideOut{Quotient: in.A / in.B}, nil
			}),
		// A raw tool whose result breaks its own output schema, to show
		// the client's check.
		s.AddRawTool(&mcp.Tool{
			Name:         "broken",
			OutputSchema: jsontext.Value(`{"type":"object","properties":{"quotient":{"type":"number"}},"required":["quotient"]}`),
		}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				Content:           mcp.Contents{&mcp.TextContent{Text: `{"quotient":"many"}`}},
				StructuredContent: jsontext.Value(`{"quotient":"many"}`),
			}, nil
		}),
	)
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

	c, err := client.Connect(ctx, clientEnd, nil)
	if err != nil {
		return err
	}
	defer c.Close()

	// The schemas the server inferred from divideIn and divideOut.
	for tool, err := range c.Tools(ctx) {
		if err != nil {
			return err
		}
		if tool.Name == "divide" {
			fmt.Printf("input schema:  %s\noutput schema: %s\n", tool.InputSchema, tool.OutputSchema)
		}
	}

	out, _, err := client.CallTool[divideOut](ctx, c, "divide", divideIn{A: 1, B: 8})
	if err != nil {
		return err
	}
	fmt.Println("1 / 8 =", out.Quotient)

	// A map works as well as a struct for the arguments.
	_, _, err = client.CallTool[divideOut](ctx, c, "divide", map[string]any{"a": 1, "b": 0})
	var toolErr *client.ToolError
	if errors.As(err, &toolErr) {
		fmt.Printf("tool error from %s: %s\n", toolErr.Tool, toolErr.Text)
	}

	// Arguments that break the input schema never reach the handler:
	// they are a tool error too, which the model can correct (SEP-1303).
	_, _, err = client.CallTool[divideOut](ctx, c, "divide", map[string]any{"a": "one", "b": 2})
	if errors.As(err, &toolErr) {
		fmt.Printf("tool error from %s: %s\n", toolErr.Tool, toolErr.Text)
	}

	// A result that breaks the tool's output schema.
	_, _, err = client.CallTool[divideOut](ctx, c, "broken", nil)
	var schemaErr *client.OutputSchemaError
	if errors.As(err, &schemaErr) {
		fmt.Printf("%s: result does not match its output schema\n", schemaErr.Tool)
	}
	return nil
}
