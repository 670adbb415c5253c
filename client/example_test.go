package client_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/memory"
)

type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

// exampleServer serves a calculator in memory and returns the client's
// end of the connection; stop ends it.
func exampleServer() (conn *memory.Conn, stop func()) {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "calc", Version: "1.0.0"}})
	err := server.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers."},
		func(ctx context.Context, req *server.CallToolRequest, in addIn) (addOut, error) {
			return addOut{Sum: in.A + in.B}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	err = server.AddTool(s, &mcp.Tool{Name: "count", Description: "Counts to three."},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			for i := 1; i <= 3; i++ {
				if err := req.Progress(ctx, float64(i), 3, ""); err != nil {
					return "", err
				}
			}
			return "done", nil
		})
	if err != nil {
		log.Fatal(err)
	}
	clientEnd, serverEnd := memory.NewPair()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, serverEnd) }()
	return clientEnd, func() { cancel(); <-served }
}

// Connecting detects the server's era: a 2026-07-28 server is spoken to
// statelessly, an older one through initialize. Options.ProtocolVersion
// pins either.
func ExampleConnect() {
	conn, stop := exampleServer()
	defer stop()
	ctx := context.Background()
	c, err := client.Connect(ctx, conn, &client.Options{Info: mcp.Implementation{Name: "me", Version: "1.0.0"}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c.ServerInfo().Name, c.Era(), c.ProtocolVersion())

	legacyConn, stopLegacy := exampleServer()
	defer stopLegacy()
	legacy, err := client.Connect(ctx, legacyConn, &client.Options{ProtocolVersion: mcp.LatestLegacy})
	if err != nil {
		log.Fatal(err)
	}
	defer legacy.Close()
	fmt.Println(legacy.ServerInfo().Name, legacy.Era(), legacy.ProtocolVersion())
	// Output:
	// calc modern 2026-07-28
	// calc legacy 2025-11-25
}

// The typed call: arguments from any Go value, the structured result
// checked against the tool's output schema and decoded.
func ExampleCallTool() {
	conn, stop := exampleServer()
	defer stop()
	ctx := context.Background()
	c, err := client.Connect(ctx, conn, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	out, _, err := client.CallTool[addOut](ctx, c, "add", addIn{A: 2, B: 40})
	if err != nil {
		log.Fatal(err) // a *client.ToolError when the tool failed
	}
	fmt.Println(out.Sum)
	// Output: 42
}

// Listing with an iterator: pages are fetched as the loop goes.
func ExampleClient_Tools() {
	conn, stop := exampleServer()
	defer stop()
	ctx := context.Background()
	c, err := client.Connect(ctx, conn, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for tool, err := range c.Tools(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(tool.Name+":", tool.Description)
	}
	// Output:
	// add: Adds two numbers.
	// count: Counts to three.
}

// Progress: the callback runs for each notifications/progress of the
// call, in order, before the call returns.
func ExampleWithProgress() {
	conn, stop := exampleServer()
	defer stop()
	ctx := context.Background()
	c, err := client.Connect(ctx, conn, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	pctx := client.WithProgress(ctx, func(p *mcp.ProgressParams) {
		fmt.Printf("%v/%v\n", p.Progress, *p.Total)
	})
	out, _, err := client.CallTool[string](pctx, c, "count", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	// Output:
	// 1/3
	// 2/3
	// 3/3
	// done
}
