// Command progress shows progress notifications and cancellation, in
// both eras over an in-memory connection: a tool reports its progress as
// it counts; a second, endless tool is cancelled by its caller, and its
// handler sees its context end.
//
//	go run ./examples/progress
package main

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/memory"
)

func newServer(stopped chan<- error) (*server.Server, error) {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "counter", Version: "1.0.0"}})
	return s, errors.Join(
		server.AddTool(s, &mcp.Tool{Name: "count", Description: "Counts to three, reporting progress."},
			func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
				for i := 1; i <= 3; i++ {
					// Sent only when the caller asked for progress (a
					// progress token); otherwise Progress does nothing.
					if err := req.Progress(ctx, float64(i), 3, fmt.Sprintf("step %d", i)); err != nil {
						return "", err
					}
				}
				return "counted to three", nil
			}),
		server.AddTool(s, &mcp.Tool{Name: "forever", Description: "Works until cancelled."},
			func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
				if err := req.Progress(ctx, 0, 0, "started"); err != nil {
					return "", err
				}
				<-ctx.Done()                  // the client's cancellation ends the context
				stopped <- context.Cause(ctx) // why: the peer cancelled
				return "", ctx.Err()
			}),
	)
}

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	stopped := make(chan error, 1)
	s, err := newServer(stopped)
	if err != nil {
		return err
	}
	for _, version := range []string{mcp.LatestLegacy, mcp.Version20260728} {
		if err := session(ctx, s, version, stopped); err != nil {
			return err
		}
	}
	return nil
}

func session(ctx context.Context, s *server.Server, version string, stopped <-chan error) error {
	clientEnd, serverEnd := memory.NewPair()
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, serverEnd) }()
	defer func() { cancel(); <-served }()

	c, err := client.Connect(ctx, clientEnd, &client.Options{ProtocolVersion: version})
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Printf("%s (%s)\n", c.Era(), c.ProtocolVersion())

	// Progress: the callback runs on the client's reader, in order, before
	// the call returns.
	pctx := client.WithProgress(ctx, func(p *mcp.ProgressParams) {
		fmt.Printf("  progress %v/%v %s\n", p.Progress, *p.Total, p.Message)
	})
	out, _, err := client.CallTool[string](pctx, c, "count", nil)
	if err != nil {
		return err
	}
	fmt.Println("  count:", out)

	// Cancellation: ending the call's context cancels the request on the
	// server (notifications/cancelled); here as soon as it has started.
	callCtx, stop := context.WithCancel(ctx)
	defer stop()
	callCtx = client.WithProgress(callCtx, func(*mcp.ProgressParams) { stop() })
	_, _, err = client.CallTool[string](callCtx, c, "forever", nil)
	fmt.Println("  forever: call ended:", errors.Is(err, context.Canceled))
	fmt.Println("  forever: handler stopped:", <-stopped)
	return nil
}
