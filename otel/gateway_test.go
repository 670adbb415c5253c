package mcpotel

import (
	"context"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// TestGatewayTrace: one trace runs from the caller through the client's
// tools/call, the gateway's server span, the gateway's call to its
// upstream and the upstream's server span, whatever era each side speaks
// (the upstream's input request and its answer included).
func TestGatewayTrace(t *testing.T) {
	for _, upVersion := range []string{mcp.LatestLegacy, mcp.Version20260728} {
		for _, downVersion := range []string{mcp.LatestLegacy, mcp.Version20260728} {
			t.Run(upVersion+"/"+downVersion, func(t *testing.T) {
				caller, front, back, upstream := newTelemetry(t, ""), newTelemetry(t, ""), newTelemetry(t, ""), newTelemetry(t, "")
				up := greetServer(upstream, nil)
				// The gateway connects more than once (a legacy upstream's
				// calls each have a connection of their own).
				var served sync.WaitGroup
				g, err := gateway.New(&gateway.Options{
					Server:       &server.Options{Interceptors: []intercept.Interceptor{front.Interceptor()}},
					Interceptors: []intercept.Interceptor{back.Interceptor()},
					Upstreams: []gateway.Upstream{{Name: "u", ProtocolVersion: upVersion, HealthInterval: -1, Connect: func(context.Context) (transport.Conn, error) {
						a, b := memory.NewPair()
						served.Add(1)
						go func() {
							defer served.Done()
							up.Serve(context.Background(), b)
						}()
						return a, nil
					}}},
				})
				if err != nil {
					t.Fatal(err)
				}
				if err := g.Start(t.Context()); err != nil {
					t.Fatal(err)
				}
				defer func() { g.Close(); served.Wait() }()
				a, b := memory.NewPair()
				sess := g.Server().Connect(b)
				defer sess.Close()
				c, err := client.Connect(t.Context(), a, clientOptions(caller, downVersion))
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				ctx, root := rootSpan(t.Context())
				callGreet(t, c, ctx)
				root.End()

				traceID := root.SpanContext().TraceID()
				hops := []struct {
					tl   *telemetry
					kind trace.SpanKind
				}{{caller, trace.SpanKindClient}, {front, trace.SpanKindServer}, {back, trace.SpanKindClient}, {upstream, trace.SpanKindServer}}
				// Each hop has a span per round (a multi round-trip call has
				// several); every one is the child of one of the previous hop's.
				// A legacy upstream's call starts in the first round, so it is
				// the child of that round's span.
				parents := map[trace.SpanID]bool{root.SpanContext().SpanID(): true}
				for i, h := range hops {
					spans := h.tl.find("tools/call greet", h.kind)
					if len(spans) == 0 {
						t.Fatalf("hop %d: no span", i)
					}
					next := map[trace.SpanID]bool{}
					for _, s := range spans {
						if s.SpanContext.TraceID() != traceID || !parents[s.Parent.SpanID()] {
							t.Fatalf("hop %d: span in trace %s with parent %s, not a child of the previous hop", i, s.SpanContext.TraceID(), s.Parent.SpanID())
						}
						next[s.SpanContext.SpanID()] = true
					}
					parents = next
				}
			})
		}
	}
}
