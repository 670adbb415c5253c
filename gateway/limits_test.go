package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
)

func TestClientKeys(t *testing.T) {
	ctx := context.Background()
	if k := DefaultClientKey(ctx, nil); k != "" {
		t.Fatalf("anonymous: %q", k)
	}
	if k := DefaultClientKey(WithClientKey(ctx, "198.51.100.7"), nil); k != "key:198.51.100.7" {
		t.Fatalf("keyed: %q", k)
	}
	if k := DefaultClientKey(server.WithPrincipal(WithClientKey(ctx, "198.51.100.7"), "ann"), nil); k != "principal:ann" {
		t.Fatalf("principal: %q", k)
	}
	var got string
	h := ClientAddressKeys(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = DefaultClientKey(r.Context(), nil)
	}))
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.RemoteAddr = "192.0.2.1:4242"
	h.ServeHTTP(httptest.NewRecorder(), r)
	if got != "key:192.0.2.1" {
		t.Fatalf("by address: %q", got)
	}
}

func TestLimitDefaults(t *testing.T) {
	g, err := New(&Options{Upstreams: []Upstream{
		{Name: "cmd", Prefix: "c", Command: []string{"true"}},
		{Name: "url", Prefix: "u", URL: "http://127.0.0.1:1/mcp"},
		{Name: "small", Prefix: "s", URL: "http://127.0.0.1:1/mcp", MaxInFlight: 4},
		{Name: "one", Prefix: "o", Command: []string{"true"}, MaxConnections: 1},
	}})
	must(t, err)
	if g.opts.MaxPendingPerClient != DefaultMaxPendingPerClient || g.opts.MaxInFlightPerClient != DefaultMaxInFlightPerClient {
		t.Fatalf("options: %+v", g.opts)
	}
	for i, want := range []struct{ conns, legacyCap, modernCap int }{
		{DefaultMaxCommandConnections, 8, 8},
		{DefaultMaxInFlight, 8, 8},
		{4, 2, 2},
		{1, 1, 8},
	} {
		u := g.ups[i]
		if u.cfg.MaxConnections != want.conns || u.cfg.QueueTimeout != DefaultQueueTimeout {
			t.Fatalf("%s: %+v", u.cfg.Name, u.cfg)
		}
		if a, b := u.perClientCap(true), u.perClientCap(false); a != want.legacyCap || b != want.modernCap {
			t.Fatalf("%s: per-client caps %d, %d", u.cfg.Name, a, b)
		}
	}
}

// A 2026 upstream's log message reaches a call only when it certainly is
// that call's: not while a call the gateway gave up on (on an in-memory
// connection, as on stdio) may still have messages on their way, that is
// until the upstream has answered the server/discover the gateway sends
// after the cancellation (modern.go, settle). The test holds that answer.
func TestModernLogsOnlyWhenCertain(t *testing.T) {
	var armed atomic.Bool
	probed, release := make(chan struct{}, 4), make(chan struct{})
	hold := func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, c *intercept.Call) (any, error) {
			if c.Inbound && c.Method == mcp.MethodServerDiscover && armed.Load() {
				probed <- struct{}{}
				<-release
			}
			return next(ctx, c)
		}
	}
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "up", Version: "1"}, Logging: true, Interceptors: []intercept.Interceptor{hold}})
	started := make(chan struct{}, 1)
	must(t, server.AddTool(s, &mcp.Tool{Name: "block"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (echoOut, error) {
		started <- struct{}{}
		<-ctx.Done()
		return echoOut{}, ctx.Err()
	}))
	must(t, server.AddTool(s, &mcp.Tool{Name: "say"}, func(ctx context.Context, req *server.CallToolRequest, in echoIn) (echoOut, error) {
		req.Log(ctx, mcp.LevelInfo, "say", in.Text)
		return echoOut(in), nil
	}))
	mu := newMemUpstream(t, s)
	g, err := New(&Options{Upstreams: []Upstream{{Name: "u", Connect: mu.connect, ProtocolVersion: mcp.Version20260728, HealthInterval: -1}}})
	must(t, err)
	settled := make(chan struct{}, 4)
	g.settleHook = func() { settled <- struct{}{} }
	must(t, g.Start(t.Context()))
	t.Cleanup(func() { g.Close() })
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	logs := make(chan string, 8)
	p := mcptest.NewPair(t, g.Server(), &mcptest.Options{Client: &client.Options{
		OnLog: func(_ context.Context, m *mcp.LoggingMessageParams) { logs <- m.Data.(string) },
	}})
	must(t, p.Client.SetLoggingLevel(p.Context(), mcp.LevelDebug))

	armed.Store(true)
	ctx, cancel := context.WithCancel(p.Context())
	done := make(chan error, 1)
	go func() {
		_, err := p.Client.CallTool(ctx, &mcp.CallToolParams{Name: "block"})
		done <- err
	}()
	<-started
	cancel() // given up on: messages of it may still be on their way
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("block: %v", err)
	}
	<-probed // the gateway's server/discover after the cancellation, held
	mcptest.CallTool[echoOut](t, p, "say", echoIn{Text: "uncertain"})
	close(release)
	<-settled
	mcptest.CallTool[echoOut](t, p, "say", echoIn{Text: "certain"})
	// Messages reach the client in order: the first it hears is the
	// second call's.
	select {
	case got := <-logs:
		if got != "certain" {
			t.Fatalf("the client heard %q", got)
		}
	case <-p.Context().Done():
		t.Fatal("no log message")
	}
}

// recordHandler is a slog handler that passes each record to a channel.
type recordHandler struct{ ch chan slog.Record }

func (h recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	select {
	case h.ch <- r:
	default:
	}
	return nil
}
func (h recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordHandler) WithGroup(string) slog.Handler      { return h }

// A log message of an upstream that no call claims goes to the gateway's
// log at the level the upstream gave it (an info line at Info, which
// mcpkit gateway shows by default), with the upstream's name (issue 33,
// item 5).
func TestUnclaimedLogAtItsLevel(t *testing.T) {
	s, _, started := gatedServer(t)
	must(t, server.AddTool(s, &mcp.Tool{Name: "say"}, func(ctx context.Context, req *server.CallToolRequest, in echoIn) (echoOut, error) {
		req.Log(ctx, mcp.LevelWarning, "say", in.Text)
		return echoOut(in), nil
	}))
	mu := newMemUpstream(t, s)
	records := make(chan slog.Record, 64)
	g, err := New(&Options{
		Upstreams: []Upstream{{Name: "u", Connect: mu.connect, ProtocolVersion: mcp.Version20260728, HealthInterval: -1}},
		Logger:    slog.New(recordHandler{records}),
	})
	must(t, err)
	must(t, g.Start(t.Context()))
	t.Cleanup(func() { g.Close() })
	p := mcptest.NewPair(t, g.Server(), nil)
	must(t, p.Client.SetLoggingLevel(p.Context(), mcp.LevelDebug))

	ctx, cancel := context.WithCancel(p.Context())
	done := make(chan error, 1)
	go func() {
		_, err := p.Client.CallTool(ctx, &mcp.CallToolParams{Name: "block"})
		done <- err
	}()
	<-started
	// "block" is still in flight, so the log line of "say" has two
	// possible sources and is claimed by neither: it goes to the
	// gateway's log. (Waiting on the upstream's handler, not on a clock.)
	mcptest.CallTool[echoOut](t, p, "say", echoIn{Text: "unclaimed"})
	defer func() { cancel(); <-done }()
	for {
		select {
		case r := <-records:
			if r.Message != "gateway: upstream log message" {
				continue
			}
			attrs := map[string]string{}
			r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
			if r.Level != slog.LevelWarn || attrs["upstream"] != "u" || attrs["data"] != "unclaimed" {
				t.Fatalf("logged at %v: %v", r.Level, attrs)
			}
			return
		case <-p.Context().Done():
			t.Fatal("the upstream's log line was not logged")
		}
	}
}
