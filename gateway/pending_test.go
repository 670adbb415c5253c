package gateway

import (
	"context"
	"errors"

	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
)

// gatedServer is an upstream whose "ask" tool elicits and reports how its
// run ended, and whose "block" tool waits for its cancellation.
func gatedServer(t *testing.T) (*server.Server, chan string, chan struct{}) {
	ended := make(chan string, 16)
	started := make(chan struct{}, 16)
	s := upstreamServer(t, "g")
	must(t, server.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (echoOut, error) {
		// The legacy request itself (the upstream is pinned legacy), so
		// that its end is seen here.
		res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Who?", RequestedSchema: mustForm(t)})
		if err != nil {
			ended <- "error: " + err.Error()
			return echoOut{}, err
		}
		name, _ := res.Content["name"].(string)
		ended <- "answered " + name
		return echoOut{Text: name}, nil
	}))
	must(t, server.AddTool(s, &mcp.Tool{Name: "block"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (echoOut, error) {
		started <- struct{}{}
		<-ctx.Done()
		ended <- "cancelled"
		return echoOut{}, ctx.Err()
	}))
	return s, ended, started
}

func mustForm(t *testing.T) jsontext.Value {
	f, err := server.FormFor[nameForm]()
	must(t, err)
	return f
}

// manualPair is a modern client that answers input requests itself.
func manualPair(t *testing.T, g *Gateway) *mcptest.Pair {
	return mcptest.NewPair(t, g.Server(), &mcptest.Options{Client: &client.Options{
		ManualInput:   true,
		ElicitHandler: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) { return nil, errors.New("unused") },
	}})
}

// firstRound calls ask and returns the input-required answer.
func firstRound(t *testing.T, p *mcptest.Pair) *client.InputRequiredError {
	t.Helper()
	res, err := p.Client.CallTool(p.Context(), &mcp.CallToolParams{Name: "ask"})
	var ire *client.InputRequiredError
	if !errors.As(err, &ire) || len(ire.Result.InputRequests) != 1 {
		if res != nil && len(res.Content) > 0 {
			t.Fatalf("first round: %v %q", err, res.Content[0].(*mcp.TextContent).Text)
		}
		t.Fatalf("first round: %v", err)
	}
	return ire
}

func retry(p *mcptest.Pair, ire *client.InputRequiredError, name string) (*mcp.CallToolResult, error) {
	rs := mcp.InputResponses{}
	for k := range ire.Result.InputRequests {
		rs.Set(k, mcptest.Accept(map[string]any{"name": name}))
	}
	return p.Client.CallTool(p.Context(), &mcp.CallToolParams{Name: "ask", InputResponses: rs, RequestState: ire.Result.RequestState})
}

func TestPendingCallTimesOut(t *testing.T) {
	s, ended, _ := gatedServer(t)
	mu := newMemUpstream(t, s)
	g, err := New(&Options{Upstreams: []Upstream{{Name: "u", Connect: mu.connect, ProtocolVersion: mcp.LatestLegacy, HealthInterval: -1}}})
	must(t, err)
	ft := &fakeTimers{}
	g.afterFunc = ft.afterFunc
	must(t, g.Start(t.Context()))
	t.Cleanup(func() { g.Close() })
	p := manualPair(t, g)

	ire := firstRound(t, p)
	if h := g.Health()[0]; h.Pending != 1 {
		t.Fatalf("pending = %d", h.Pending)
	}
	if n := ft.fire(); n != 1 {
		t.Fatalf("%d timers fired", n)
	}
	if got := <-ended; !strings.HasPrefix(got, "error: ") {
		t.Fatalf("upstream run: %s", got)
	}
	_, err = retry(p, ire, "late")
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != mcp.CodeInvalidParams || !strings.Contains(je.Message, "no longer pending") {
		t.Fatalf("retry after the timeout: %v", err)
	}
	if h := g.Health()[0]; h.Pending != 0 {
		t.Fatalf("pending = %d", h.Pending)
	}

	// A fresh call still works, and a retry is accepted once only.
	ire = firstRound(t, p)
	res, err := retry(p, ire, "Ada")
	must(t, err)
	if txt := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, "Ada") {
		t.Fatalf("result = %q", txt)
	}
	if got := <-ended; got != "answered Ada" {
		t.Fatalf("upstream run: %s", got)
	}
	if _, err := retry(p, ire, "again"); !errors.As(err, &je) || je.Code != mcp.CodeInvalidParams {
		t.Fatalf("replayed retry: %v", err)
	}
}

func TestMaxPending(t *testing.T) {
	s, _, _ := gatedServer(t)
	mu1 := newMemUpstream(t, s)
	mu2 := newMemUpstream(t, s)
	g := newGateway(t, &Options{MaxPending: 1, Upstreams: []Upstream{
		{Name: "one", Prefix: "one", Connect: mu1.connect, ProtocolVersion: mcp.LatestLegacy, HealthInterval: -1},
		{Name: "two", Prefix: "two", Connect: mu2.connect, ProtocolVersion: mcp.LatestLegacy, HealthInterval: -1},
	}})
	p := manualPair(t, g)
	_, err := p.Client.CallTool(p.Context(), &mcp.CallToolParams{Name: "one_ask"})
	var ire *client.InputRequiredError
	if !errors.As(err, &ire) {
		t.Fatalf("first: %v", err)
	}
	_, err = p.Client.CallTool(p.Context(), &mcp.CallToolParams{Name: "two_ask"})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != mcp.CodeInternalError || !strings.Contains(je.Message, "too many") {
		t.Fatalf("second: %v", err)
	}
}

func TestCancellationPassesThrough(t *testing.T) {
	eraPairs(t, func(t *testing.T, up, down client.Era) {
		s, ended, started := gatedServer(t)
		mu := newMemUpstream(t, s)
		g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "u", Connect: mu.connect, ProtocolVersion: version(up), HealthInterval: -1}}})
		p := mcptest.NewPair(t, g.Server(), &mcptest.Options{Era: down})
		ctx, cancel := context.WithCancel(p.Context())
		done := make(chan error, 1)
		go func() {
			_, err := p.Client.CallTool(ctx, &mcp.CallToolParams{Name: "block"})
			done <- err
		}()
		<-started
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("call: %v", err)
		}
		if got := <-ended; got != "cancelled" {
			t.Fatalf("upstream: %s", got)
		}
	})
}

func TestLogsPassThrough(t *testing.T) {
	eraPairs(t, func(t *testing.T, up, down client.Era) {
		mu := newMemUpstream(t, upstreamServer(t, "l"))
		g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "u", Connect: mu.connect, ProtocolVersion: version(up), HealthInterval: -1}}})
		logs := make(chan string, 8)
		p := mcptest.NewPair(t, g.Server(), &mcptest.Options{Era: down, Client: &client.Options{
			OnLog: func(_ context.Context, m *mcp.LoggingMessageParams) {
				logs <- fmt.Sprintf("%s %s %s", m.Level, m.Logger, m.Data)
			},
		}})
		must(t, p.Client.SetLoggingLevel(p.Context(), mcp.LevelDebug))
		mcptest.CallTool[echoOut](t, p, "work", nil)
		select {
		case got := <-logs:
			if got != "info work working" {
				t.Fatalf("log = %s", got)
			}
		case <-p.Context().Done():
			t.Fatal("no log message")
		}
	})
}

// A call left waiting for an answer (the client went away) does not keep
// the upstream's next request from reaching the call that made it.
func TestParkedCallDoesNotBlockAttribution(t *testing.T) {
	s, _, _ := gatedServer(t)
	mu := newMemUpstream(t, s)
	g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "u", Connect: mu.connect, ProtocolVersion: mcp.LatestLegacy, HealthInterval: -1}}})
	firstRound(t, manualPair(t, g)) // abandoned
	script := (&mcptest.Script{}).Elicit(mcptest.Accept(map[string]any{"name": "Cy"}))
	p := mcptest.NewPair(t, g.Server(), &mcptest.Options{Script: script})
	if out := mcptest.CallTool[echoOut](t, p, "greet", nil); out.Text != "hello Cy" {
		t.Fatalf("greet = %q", out.Text)
	}
	if h := g.Health()[0]; h.Pending != 1 {
		t.Fatalf("pending = %d", h.Pending)
	}
}

// A call waiting for its client's answer holds no MaxInFlight slot (it
// keeps its connection): an abandoned one does not keep other calls from
// the upstream.
func TestParkedCallFreesItsSlot(t *testing.T) {
	s, _, _ := gatedServer(t)
	mu := newMemUpstream(t, s)
	g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "u", Connect: mu.connect, ProtocolVersion: mcp.LatestLegacy, HealthInterval: -1, MaxInFlight: 1, MaxConnections: 2}}})
	p := manualPair(t, g)
	ire := firstRound(t, p) // parked
	other := mcptest.NewPair(t, g.Server(), &mcptest.Options{Era: client.EraLegacy})
	if out := mcptest.CallTool[echoOut](t, other, "echo", echoIn{Text: "free"}); out.Text != "g:free" {
		t.Fatalf("echo = %q", out.Text)
	}
	res, err := retry(p, ire, "Di") // takes the slot again
	must(t, err)
	if txt := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, "Di") {
		t.Fatalf("result = %q", txt)
	}
}
