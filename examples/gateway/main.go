// Command gateway puts a legacy-only MCP server behind the gateway
// package and serves it over Streamable HTTP to clients of both eras. The
// upstream speaks 2025-11-25 only (here in memory; a command or a URL in
// real use) and asks for a confirmation (elicitation) during a call: the
// 2026-07-28 client gets it as an input-required result, the 2025-11-25
// client as a real request, and both see the upstream's tool under the
// "legacy_" prefix. It prints what each client sees and shuts down.
//
//	go run ./examples/gateway
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

type orderIn struct {
	Item string `json:"item" jsonschema:"what to order"`
}

type confirmForm struct {
	Confirm bool `json:"confirm" jsonschema:"title=Place the order?"`
}

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

// newUpstream is the server behind the gateway: one tool that asks for a
// confirmation before it answers.
func newUpstream() (*server.Server, error) {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "shop", Version: "1.0.0"}})
	err := server.AddTool(s, &mcp.Tool{Name: "order", Description: "Orders an item, after a confirmation."},
		func(ctx context.Context, req *server.CallToolRequest, in orderIn) (string, error) {
			form, err := server.Ask[confirmForm](req.Request, "confirm", "Order "+in.Item+"?")
			if err != nil {
				return "", err
			}
			if !form.Confirm {
				return "order of " + in.Item + " canceled", nil
			}
			return "ordered " + in.Item, nil
		})
	return s, err
}

func run(ctx context.Context) error {
	up, err := newUpstream()
	if err != nil {
		return err
	}
	// Each connection to the upstream is an in-memory pair whose server
	// side the upstream serves until the gateway closes it.
	var serving sync.WaitGroup
	defer serving.Wait()
	connect := func(ctx context.Context) (transport.Conn, error) {
		a, b := memory.NewPair()
		serving.Go(func() { _ = up.Serve(context.Background(), b) })
		return a, nil
	}

	g, err := gateway.New(&gateway.Options{
		Upstreams: []gateway.Upstream{{
			Name:            "shop",
			Prefix:          "legacy",
			Connect:         connect, // or Command: []string{"npx", "…"}, or URL: "https://…"
			ProtocolVersion: mcp.LatestLegacy,
		}},
		Server: &server.Options{Info: mcp.Implementation{Name: "example-gateway", Version: "1.0.0"}},
	})
	if err != nil {
		return err
	}
	defer g.Close()
	if err := g.Start(ctx); err != nil {
		return err
	}
	for _, h := range g.Health() {
		fmt.Printf("upstream %s: %s, %s era, %d tool(s)\n", h.Name, h.State, h.Era, h.Tools)
	}

	h := streamhttp.NewHandler(g.Server(), nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	url := "http://" + ln.Addr().String() + "/mcp"

	for _, version := range []string{mcp.Version20260728, mcp.LatestLegacy} {
		if err := order(ctx, url, version); err != nil {
			return err
		}
	}

	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := errors.Join(h.Shutdown(sctx), srv.Shutdown(sctx)); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Println("gateway stopped")
	return nil
}

// order connects a client of the given revision to the gateway and calls
// the upstream's tool, confirming when asked.
func order(ctx context.Context, url, version string) error {
	c, err := client.Connect(ctx, streamable.New(url, nil), &client.Options{
		Info:            mcp.Implementation{Name: "example-client", Version: "1.0.0"},
		ProtocolVersion: version,
		ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			fmt.Printf("  asked: %s\n", p.Message)
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"confirm": true}}, nil
		},
	})
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Printf("%s client (%s):\n", c.Era(), c.ProtocolVersion())
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "legacy_order", Arguments: jsontext.Value(`{"item":"a teapot"}`)})
	if err != nil {
		return err
	}
	for _, b := range res.Content {
		if t, ok := b.(*mcp.TextContent); ok {
			fmt.Printf("  %s\n", t.Text)
		}
	}
	return nil
}
