// Command interceptors shows the one hook around every message of a
// server and a client (package intercept), in both eras over an
// in-memory connection: the client stamps a trace id into each request's
// _meta, the server logs each request it serves with log/slog, and a tool
// handler logs to the client through slog (server.NewLogHandler).
//
//	go run ./examples/interceptors
package main

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/memory"
)

const traceKey = "example.com/trace-id"

// logRequests logs every request the server receives, with the trace id
// the client put in its _meta, after it is served.
func logRequests(logger *slog.Logger) intercept.Interceptor {
	return func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, c *intercept.Call) (any, error) {
			res, err := next(ctx, c)
			if c.Inbound && !c.Notification {
				trace, _ := c.MetaString(traceKey)
				logger.Info("served", "era", c.Era, "method", c.Method, "name", c.Name, "trace", trace, "err", err)
			}
			return res, err
		}
	}
}

// stampTrace adds a trace id to every request the client sends. (The
// SDK may build the chain per message: state lives outside it.)
func stampTrace() intercept.Interceptor {
	var n atomic.Int64
	return func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, c *intercept.Call) (any, error) {
			if !c.Inbound && !c.Notification {
				c.SetMeta(traceKey, fmt.Sprintf("t-%d", n.Add(1)))
			}
			return next(ctx, c)
		}
	}
}

func newServer(logger *slog.Logger) (*server.Server, error) {
	s := server.New(&server.Options{
		Info:         mcp.Implementation{Name: "logged", Version: "1.0.0"},
		Logging:      true, // lets handlers send log messages to the client
		Interceptors: []intercept.Interceptor{logRequests(logger)},
	})
	err := server.AddTool(s, &mcp.Tool{Name: "weather"},
		func(ctx context.Context, req *server.CallToolRequest, in struct {
			City string `json:"city"`
		}) (string, error) {
			// A slog.Logger whose records go to the client.
			clientLog := slog.New(server.NewLogHandler(req.Request, "weather"))
			clientLog.Info("fetching", "city", in.City)
			return "sunny in " + in.City, nil
		})
	return s, err
}

func main() {
	// The server's own log, without timestamps so that the output is the
	// same on every run.
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
	if err := run(context.Background(), logger); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, logger *slog.Logger) error {
	s, err := newServer(logger)
	if err != nil {
		return err
	}
	for _, version := range []string{mcp.LatestLegacy, mcp.Version20260728} {
		if err := session(ctx, s, version); err != nil {
			return err
		}
	}
	return nil
}

func session(ctx context.Context, s *server.Server, version string) error {
	clientEnd, serverEnd := memory.NewPair()
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, serverEnd) }()
	defer func() { cancel(); <-served }()

	logs := make(chan *mcp.LoggingMessageParams, 8)
	c, err := client.Connect(ctx, clientEnd, &client.Options{
		ProtocolVersion: version,
		Interceptors:    []intercept.Interceptor{stampTrace()},
		OnLog:           func(ctx context.Context, p *mcp.LoggingMessageParams) { logs <- p },
	})
	if err != nil {
		return err
	}
	defer c.Close()
	// Ask for log messages of level info and above (on a 2026-07-28
	// connection the level travels in each request's envelope).
	if err := c.SetLoggingLevel(ctx, mcp.LevelInfo); err != nil {
		return err
	}
	out, _, err := client.CallTool[string](ctx, c, "weather", map[string]any{"city": "Oslo"})
	if err != nil {
		return err
	}
	p := <-logs
	fmt.Printf("client got log %s from %s: %v\n", p.Level, p.Logger, p.Data)
	fmt.Println("client got result:", out)
	return nil
}
