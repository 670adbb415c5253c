// Command resources shows resources, a resource template and
// subscriptions to updates, in both eras over an in-memory connection: a
// legacy client subscribes with resources/subscribe and hears
// notifications/resources/updated; a 2026-07-28 client opens a
// subscriptions/listen stream for the same URI.
//
//	go run ./examples/resources
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"sync"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// notes is the server's data: a list that a tool appends to.
type notes struct {
	mu    sync.Mutex
	items []string
}

func (n *notes) add(s string) {
	n.mu.Lock()
	n.items = append(n.items, s)
	n.mu.Unlock()
}

func (n *notes) text() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.items, "; ")
}

func newServer(n *notes) (*server.Server, error) {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "notes", Version: "1.0.0"}})
	return s, errors.Join(
		// A fixed resource.
		s.AddResource(&mcp.Resource{URI: "notes://all", Name: "all notes", MIMEType: "text/plain"},
			func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{
					&mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: n.text()},
				}}, nil
			}),
		// A template (RFC 6570): its variables arrive in req.Vars.
		s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "notes://tag/{tag}", Name: "notes by tag"},
			func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				tag := req.Vars["tag"]
				if tag != "work" {
					return nil, mcp.ErrResourceNotFound
				}
				return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{
					&mcp.TextResourceContents{URI: req.Params.URI, Text: "tagged " + tag + ": " + n.text()},
				}}, nil
			}),
		// A tool that changes the resource and tells its subscribers.
		server.AddTool(s, &mcp.Tool{Name: "add_note"},
			func(ctx context.Context, req *server.CallToolRequest, in struct {
				Text string `json:"text"`
			}) (string, error) {
				n.add(in.Text)
				s.ResourceUpdated("notes://all")
				return "added", nil
			}),
	)
}

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	n := &notes{items: []string{"buy milk"}}
	s, err := newServer(n)
	if err != nil {
		return err
	}
	for _, version := range []string{mcp.LatestLegacy, mcp.Version20260728} {
		if err := session(ctx, s, version, "note from "+version); err != nil {
			return err
		}
	}
	return nil
}

func session(ctx context.Context, s *server.Server, version, note string) error {
	clientEnd, serverEnd := memory.NewPair()
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, serverEnd) }()
	defer func() { cancel(); <-served }()

	updated := make(chan string, 1)
	c, err := client.Connect(ctx, clientEnd, &client.Options{
		ProtocolVersion: version,
		// Legacy servers send updates of subscribed resources here (so
		// do listen streams, in addition to the Subscription).
		OnResourceUpdated: func(ctx context.Context, uri string) {
			select {
			case updated <- uri:
			default:
			}
		},
	})
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Printf("%s (%s)\n", c.Era(), c.ProtocolVersion())

	for r, err := range c.Resources(ctx) {
		if err != nil {
			return err
		}
		fmt.Printf("  resource %s (%s)\n", r.URI, r.Name)
	}
	for t, err := range c.ResourceTemplates(ctx) {
		if err != nil {
			return err
		}
		fmt.Printf("  template %s (%s)\n", t.URITemplate, t.Name)
	}
	if err := show(ctx, c, "notes://tag/work"); err != nil {
		return err
	}
	if _, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://tag/home"}); errors.Is(err, mcp.ErrResourceNotFound) {
		fmt.Println("  notes://tag/home: not found")
	} else {
		return fmt.Errorf("notes://tag/home: %v", err)
	}

	// Subscribe: resources/subscribe on a legacy session, a
	// subscriptions/listen stream on a modern connection.
	if c.Era() == client.EraLegacy {
		if err := c.Subscribe(ctx, "notes://all"); err != nil {
			return err
		}
	} else {
		sub, err := c.Listen(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{"notes://all"}})
		if err != nil {
			return err
		}
		defer sub.Close()
	}
	if _, _, err := client.CallTool[string](ctx, c, "add_note", map[string]any{"text": note}); err != nil {
		return err
	}
	select {
	case uri := <-updated:
		fmt.Println("  updated:", uri)
	case <-ctx.Done():
		return ctx.Err()
	}
	return show(ctx, c, "notes://all")
}

func show(ctx context.Context, c *client.Client, uri string) error {
	res, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return err
	}
	fmt.Printf("  %s: %s\n", uri, res.Contents[0].(*mcp.TextResourceContents).Text)
	return nil
}
