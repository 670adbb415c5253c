// Command http serves one MCP server over Streamable HTTP to clients of
// both eras at the same endpoint: a 2026-07-28 client (stateless
// requests) and a 2025-11-25 client (initialize, a session) call the same
// tool. It listens on a loopback port, connects both clients, prints what
// they see and shuts down.
//
//	go run ./examples/http
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "greeter", Version: "1.0.0"}})
	err := server.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greets someone by name."},
		func(ctx context.Context, req *server.CallToolRequest, in greetIn) (greetOut, error) {
			return greetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	if err != nil {
		return err
	}

	// The handler checks Host and Origin (DNS rebinding), caps bodies and
	// sessions, and serves both eras on one endpoint. Give the
	// http.Server its own timeouts too; WriteTimeout stays zero because
	// answers may stream (SSE).
	h := streamhttp.NewHandler(s, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	url := "http://" + ln.Addr().String() + "/mcp"

	for _, version := range []string{mcp.Version20260728, mcp.LatestLegacy} {
		if err := call(ctx, url, version); err != nil {
			return err
		}
	}

	// Shutdown: the MCP handler ends its sessions and streams, then the
	// HTTP server stops.
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := errors.Join(h.Shutdown(sctx), srv.Shutdown(sctx)); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Println("server stopped")
	return nil
}

// call connects a client in the given revision and calls the tool.
func call(ctx context.Context, url, version string) error {
	c, err := client.Connect(ctx, streamable.New(url, nil), &client.Options{
		Info:            mcp.Implementation{Name: "example-client", Version: "1.0.0"},
		ProtocolVersion: version, // "" would detect the era; pinned here to show both
	})
	if err != nil {
		return err
	}
	defer c.Close()
	out, _, err := client.CallTool[greetOut](ctx, c, "greet", greetIn{Name: "Ada"})
	if err != nil {
		return err
	}
	fmt.Printf("%s client (%s): %s\n", c.Era(), c.ProtocolVersion(), out.Greeting)
	return nil
}
