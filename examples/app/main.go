// Command app shows an MCP App (the io.modelcontextprotocol/ui
// extension, package ext/apps): a server links a tool to an HTML view
// served as a ui:// resource, with its Content Security Policy; a client
// that renders views finds the tool's view and fetches it, and the tool
// answers a client that does not with plain text.
//
//	go run ./examples/app
package main

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/apps"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/memory"
)

const chartHTML = `<!doctype html><html><body><canvas id="chart"></canvas><script src="https://cdn.example.com/chart.js"></script></body></html>`

func newServer() (*server.Server, error) {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "charts", Version: "1.0.0"}})
	// The view, with the origins its page may load from.
	err := apps.AddResource(s, &apps.Resource{
		URI:  "ui://charts/sales",
		Name: "sales chart",
		HTML: chartHTML,
		Meta: apps.ResourceMeta{CSP: &apps.CSP{ResourceDomains: []string{"https://cdn.example.com"}}},
	})
	if err != nil {
		return nil, err
	}
	// The tool, linked to the view before it is registered.
	tool := &mcp.Tool{Name: "sales", Description: "Shows this year's sales."}
	if err := apps.Link(tool, "ui://charts/sales"); err != nil {
		return nil, err
	}
	err = server.AddTool(s, tool, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
		if apps.ClientSupports(req.Request) {
			return "sales data for the chart: [3, 5, 8]", nil
		}
		return "sales rose from 3 to 8 this year", nil // text for clients without views
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
	for _, renders := range []bool{true, false} {
		if err := host(ctx, s, renders); err != nil {
			return err
		}
	}
	return nil
}

// host connects a client that renders views, or one that does not.
func host(ctx context.Context, s *server.Server, renders bool) error {
	clientEnd, serverEnd := memory.NewPair()
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, serverEnd) }()
	defer func() { cancel(); <-served }()

	opts := &client.Options{}
	if renders {
		apps.Declare(opts) // declares the extension with its MIME type
	}
	c, err := client.Connect(ctx, clientEnd, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Printf("client renders views: %v; server offers them: %v\n", renders, apps.Supported(c))

	for tool, err := range c.Tools(ctx) {
		if err != nil {
			return err
		}
		if renders {
			ui, err := apps.FetchUI(ctx, c, &tool)
			if errors.Is(err, apps.ErrNoUI) {
				continue
			}
			if err != nil {
				return err
			}
			fmt.Printf("  %s has view %s (%d bytes of HTML, scripts from %v)\n",
				tool.Name, ui.URI, len(ui.HTML), ui.Meta.CSP.ResourceDomains)
		}
		out, _, err := client.CallTool[string](ctx, c, tool.Name, nil)
		if err != nil {
			return err
		}
		fmt.Printf("  %s: %s\n", tool.Name, out)
	}
	return nil
}
