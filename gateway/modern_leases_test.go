package gateway

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
)

// TestModernHTTPLogsPerCall: the log messages of a 2026-07-28 upstream
// reached over Streamable HTTP reach the call that caused them, with
// several calls in flight at once. Each call runs on a call connection
// the gateway leases (forwardModernLeased), and what arrives on it, the
// messages on the call's response stream, is the call's. The gateway
// used to run such calls on its control connection, where a log message
// names no request, and gave one to a call only when that call was alone
// in flight: with two clients' calls at once both lost their logs (found
// by the combination matrix: logging through a 2026-07-28 upstream, issue
// 33 item 5). Here each call logs while the other is in flight (the
// upstream holds both until both logged).
func TestModernHTTPLogsPerCall(t *testing.T) {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "up", Version: "1"}, Logging: true})
	logged := make(chan struct{}, 2)
	both := make(chan struct{})
	must(t, server.AddTool(s, &mcp.Tool{Name: "say"}, func(ctx context.Context, req *server.CallToolRequest, in echoIn) (echoOut, error) {
		req.Log(ctx, mcp.LevelInfo, "say", in.Text)
		logged <- struct{}{}
		select {
		case <-both:
		case <-ctx.Done():
			return echoOut{}, ctx.Err()
		}
		return echoOut(in), nil
	}))
	srv := httptest.NewServer(streamhttp.NewHandler(s, nil))
	t.Cleanup(srv.Close)
	g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "u", URL: srv.URL, ProtocolVersion: mcp.Version20260728, HealthInterval: -1}}})

	type caller struct {
		p    *mcptest.Pair
		text string
		logs chan string
		done chan error
	}
	var callers []*caller
	for i, down := range mcptest.Eras() {
		c := &caller{text: []string{"first", "second"}[i%2] + "-" + down.String(), logs: make(chan string, 8), done: make(chan error, 1)}
		c.p = mcptest.NewPair(t, g.Server(), &mcptest.Options{Era: down, Client: &client.Options{
			OnLog: func(_ context.Context, m *mcp.LoggingMessageParams) {
				if s, ok := m.Data.(string); ok {
					c.logs <- s
				}
			},
		}})
		must(t, c.p.Client.SetLoggingLevel(c.p.Context(), mcp.LevelDebug))
		callers = append(callers, c)
	}
	if len(callers) < 2 {
		t.Fatalf("%d client eras: the test needs two calls", len(callers))
	}
	for _, c := range callers {
		go func() {
			_, err := c.p.Client.CallTool(c.p.Context(), &mcp.CallToolParams{Name: "say", Arguments: jsontext.Value(`{"text":"` + c.text + `"}`)})
			c.done <- err
		}()
	}
	for range callers {
		waitFor(t, logged, "a call logging upstream")
	}
	close(both)
	for _, c := range callers {
		must(t, waitFor(t, c.done, "the call of "+c.text))
		if got := waitFor(t, c.logs, "the log message of "+c.text); got != c.text {
			t.Fatalf("the client calling with %q heard %q", c.text, got)
		}
	}
}

// TestModernLogsOnlyLoggingCallsCount: on a 2026 upstream's control
// connection (a command or a Connect transport, where a log message names
// no request) only the calls whose clients asked for logs can be a log
// message's source: a 2026 server sends none for a request without a
// level, and the gateway sends a call's level only when its client set
// one. A call without one in flight at the same time does not make the
// other's messages ambiguous. The gateway used to give every call the
// connection's debug level and count every call, so one client's long
// call kept every other client's log messages away.
func TestModernLogsOnlyLoggingCallsCount(t *testing.T) {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "up", Version: "1"}, Logging: true})
	started := make(chan struct{}, 1)
	must(t, server.AddTool(s, &mcp.Tool{Name: "block"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (echoOut, error) {
		req.Log(ctx, mcp.LevelInfo, "block", "from block") // no level asked: not sent
		started <- struct{}{}
		<-ctx.Done()
		return echoOut{}, ctx.Err()
	}))
	must(t, server.AddTool(s, &mcp.Tool{Name: "say"}, func(ctx context.Context, req *server.CallToolRequest, in echoIn) (echoOut, error) {
		req.Log(ctx, mcp.LevelInfo, "say", in.Text)
		return echoOut(in), nil
	}))
	mu := newMemUpstream(t, s)
	g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "u", Connect: mu.connect, ProtocolVersion: mcp.Version20260728, HealthInterval: -1}}})
	<-mu.connected

	quiet := mcptest.NewPair(t, g.Server(), &mcptest.Options{Era: client.EraModern})
	ctx, cancel := context.WithCancel(quiet.Context())
	done := make(chan error, 1)
	go func() {
		_, err := quiet.Client.CallTool(ctx, &mcp.CallToolParams{Name: "block"})
		done <- err
	}()
	defer func() { cancel(); <-done }()
	<-started

	logs := make(chan string, 8)
	p := mcptest.NewPair(t, g.Server(), &mcptest.Options{Client: &client.Options{
		OnLog: func(_ context.Context, m *mcp.LoggingMessageParams) {
			if s, ok := m.Data.(string); ok {
				logs <- s
			}
		},
	}})
	must(t, p.Client.SetLoggingLevel(p.Context(), mcp.LevelDebug))
	mcptest.CallTool[echoOut](t, p, "say", echoIn{Text: "mine"})
	if got := waitFor(t, logs, "the log message of say"); got != "mine" {
		t.Fatalf("heard %q", got)
	}
}
