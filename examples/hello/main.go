// Command hello is a minimal MCP server on stdio: point an MCP host at
// `go run ./examples/hello`.
package main

import (
	"context"
	"log"
	"os"
	"os/signal"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"description=who to greet"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

func main() {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "hello", Version: "1.0.0"}})
	err := server.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greets someone by name."},
		func(ctx context.Context, req *server.CallToolRequest, in greetIn) (greetOut, error) {
			return greetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := s.Serve(ctx, stdio.New(nil)); err != nil {
		log.Fatal(err)
	}
}
