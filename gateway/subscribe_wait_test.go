package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
)

// TestSubscribeWaitsForUpstream: a client's resources/subscribe (or its
// listen naming a resource) is answered only once the gateway's own
// subscription upstream is in place, so that an update made as soon as
// the client is told it is subscribed reaches it. The gateway used to
// subscribe upstream in the background after answering, and such an
// update was lost (found by the combination matrix: resource-subscribe
// through the gateway). The upstream holds the subscription request here
// until the test releases it.
func TestSubscribeWaitsForUpstream(t *testing.T) {
	const inner = "file:///held.txt"
	eraPairs(t, func(t *testing.T, up, down client.Era) {
		held := make(chan struct{}, 4)
		release := make(chan struct{})
		hold := func(next intercept.Handler) intercept.Handler {
			return func(ctx context.Context, c *intercept.Call) (any, error) {
				if c.Inbound && (c.Method == mcp.MethodResourcesSubscribe || c.Method == mcp.MethodSubscriptionsListen) &&
					strings.Contains(string(c.Raw), inner) {
					held <- struct{}{}
					select {
					case <-release:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return next(ctx, c)
			}
		}
		s := server.New(&server.Options{Info: mcp.Implementation{Name: "held", Version: "1"}, Interceptors: []intercept.Interceptor{hold}})
		must(t, s.AddResource(&mcp.Resource{URI: inner, Name: "held"}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: inner, Text: "x"}}}, nil
		}))
		mu := newMemUpstream(t, s)
		g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "h", Prefix: "h", Connect: mu.connect, ProtocolVersion: version(up), HealthInterval: -1}}})
		<-mu.connected
		updates := make(chan string, 16)
		p := mcptest.NewPair(t, g.Server(), &mcptest.Options{Era: down, Client: &client.Options{
			OnResourceUpdated: func(_ context.Context, uri string) {
				select {
				case updates <- uri:
				default:
				}
			},
		}})
		const uri = "h+" + inner
		done := make(chan error, 1)
		go func() {
			if down == client.EraModern {
				sub, err := p.Client.Listen(p.Context(), mcp.SubscriptionFilter{ResourceSubscriptions: []string{uri}})
				if err == nil {
					t.Cleanup(func() { sub.Close() })
				}
				done <- err
				return
			}
			done <- p.Client.Subscribe(p.Context(), uri)
		}()
		waitFor(t, held, "the upstream's subscription request")
		select {
		case err := <-done:
			t.Fatalf("the client's subscription was answered (err %v) before the gateway's upstream was in place", err)
		default:
		}
		close(release)
		must(t, waitFor(t, done, "the client's subscription"))
		s.ResourceUpdated(inner) // once: it must arrive
		if got := waitFor(t, updates, "the update"); got != uri {
			t.Fatalf("update for %q, want %q", got, uri)
		}
	})
}

// waitFor receives one value, failing the test at a bound only a failing
// test reaches.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(20 * time.Second)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("no %s", what)
		panic("unreachable")
	}
}

// TestListenSwitchKeepsSubscriptions: a 2026 upstream's listen stream is
// replaced when clients subscribe to more resources; the old stream stays
// open until the new one is acknowledged, so that an update of a resource
// already subscribed to, made in between, still arrives. The gateway used
// to close the old stream first (found by the combination matrix:
// resource-subscribe through a 2026-07-28 upstream, with other cells
// subscribing at the same time). The upstream holds the new stream's
// listen request here while the update is made.
func TestListenSwitchKeepsSubscriptions(t *testing.T) {
	const first, second = "file:///first.txt", "file:///second.txt"
	for _, down := range mcptest.Eras() {
		t.Run(down.String(), func(t *testing.T) {
			held := make(chan struct{}, 4)
			release := make(chan struct{})
			hold := func(next intercept.Handler) intercept.Handler {
				return func(ctx context.Context, c *intercept.Call) (any, error) {
					if c.Inbound && c.Method == mcp.MethodSubscriptionsListen && strings.Contains(string(c.Raw), second) {
						held <- struct{}{}
						select {
						case <-release:
						case <-ctx.Done():
							return nil, ctx.Err()
						}
					}
					return next(ctx, c)
				}
			}
			s := server.New(&server.Options{Info: mcp.Implementation{Name: "switch", Version: "1"}, Interceptors: []intercept.Interceptor{hold}})
			for _, uri := range []string{first, second} {
				must(t, s.AddResource(&mcp.Resource{URI: uri, Name: uri}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: "x"}}}, nil
				}))
			}
			mu := newMemUpstream(t, s)
			g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "w", Prefix: "w", Connect: mu.connect, ProtocolVersion: mcp.Version20260728, HealthInterval: -1}}})
			<-mu.connected
			updates := make(chan string, 16)
			p := mcptest.NewPair(t, g.Server(), &mcptest.Options{Era: down, Client: &client.Options{
				OnResourceUpdated: func(_ context.Context, uri string) {
					select {
					case updates <- uri:
					default:
					}
				},
			}})
			subscribe := func(uri string) error {
				if down == client.EraModern {
					sub, err := p.Client.Listen(p.Context(), mcp.SubscriptionFilter{ResourceSubscriptions: []string{uri}})
					if err == nil {
						t.Cleanup(func() { sub.Close() })
					}
					return err
				}
				return p.Client.Subscribe(p.Context(), uri)
			}
			must(t, subscribe("w+"+first))
			done := make(chan error, 1)
			go func() { done <- subscribe("w+" + second) }()
			waitFor(t, held, "the new stream's listen request")
			s.ResourceUpdated(first) // between the two streams: the old one must carry it
			if got := waitFor(t, updates, "the update of the first resource"); got != "w+"+first {
				t.Fatalf("update for %q", got)
			}
			close(release)
			must(t, waitFor(t, done, "the second subscription"))
		})
	}
}

// TestListenSwitchHintsOldResources: when a 2026 upstream's listen stream
// is replaced, the subscribers of the resources the old stream covered
// are told those resources may have changed. An update the upstream wrote
// on the old stream just before the new one was registered can be lost
// with it (two HTTP streams keep no order between them: the new stream's
// acknowledgement may be read first, and closing the old stream drops
// what it still held), so the gateway gives the hint that makes the
// client read again. Found by the combination matrix (resource-subscribe
// through a 2026-07-28 upstream over Streamable HTTP, about 1 run in 8);
// here no upstream update is made at all, and the hint must still come.
func TestListenSwitchHintsOldResources(t *testing.T) {
	const first, second = "file:///first.txt", "file:///second.txt"
	for _, down := range mcptest.Eras() {
		t.Run(down.String(), func(t *testing.T) {
			s := server.New(&server.Options{Info: mcp.Implementation{Name: "hint", Version: "1"}})
			for _, uri := range []string{first, second} {
				must(t, s.AddResource(&mcp.Resource{URI: uri, Name: uri}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: "x"}}}, nil
				}))
			}
			mu := newMemUpstream(t, s)
			g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "w", Prefix: "w", Connect: mu.connect, ProtocolVersion: mcp.Version20260728, HealthInterval: -1}}})
			<-mu.connected
			updates := make(chan string, 16)
			p := mcptest.NewPair(t, g.Server(), &mcptest.Options{Era: down, Client: &client.Options{
				OnResourceUpdated: func(_ context.Context, uri string) {
					select {
					case updates <- uri:
					default:
					}
				},
			}})
			subscribe := func(uri string) error {
				if down == client.EraModern {
					sub, err := p.Client.Listen(p.Context(), mcp.SubscriptionFilter{ResourceSubscriptions: []string{uri}})
					if err == nil {
						t.Cleanup(func() { sub.Close() })
					}
					return err
				}
				return p.Client.Subscribe(p.Context(), uri)
			}
			must(t, subscribe("w+"+first))
			must(t, subscribe("w+"+second)) // replaces the stream that covered first
			if got := waitFor(t, updates, "the hint for the first resource"); got != "w+"+first {
				t.Fatalf("update for %q, want the first resource", got)
			}
		})
	}
}
