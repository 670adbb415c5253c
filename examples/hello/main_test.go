package main

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport/command"
)

// serveEnv makes the test binary run the program (see TestMain).
const serveEnv = "HELLO_EXAMPLE_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestHello runs the program as an MCP host would — a process on stdio —
// in both eras, calls its tool, and ends it by closing its input.
func TestHello(t *testing.T) {
	for _, version := range []string{mcp.LatestLegacy, mcp.Version20260728} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), serveEnv+"=1")
			cmd.Stderr = os.Stderr
			conn, err := command.Start(ctx, cmd, nil)
			if err != nil {
				t.Fatal(err)
			}
			c, err := client.Connect(ctx, conn, &client.Options{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := client.CallTool[greetOut](ctx, c, "greet", greetIn{Name: "Ada"})
			if err != nil {
				t.Fatal(err)
			}
			if out.Greeting != "Hello, Ada!" {
				t.Errorf("greeting = %q", out.Greeting)
			}
			if err := c.Close(); err != nil { // closes stdin: the server exits
				t.Errorf("Close: %v", err)
			}
		})
	}
}
