package mcpotel

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// telemetry is one side's instrumentation with in-memory exporters.
type telemetry struct {
	*Telemetry
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
}

func newTelemetry(t *testing.T, transport string) *telemetry {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	reader := sdkmetric.NewManualReader()
	tel, err := New(&Options{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)),
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		Transport:      transport,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &telemetry{tel, spans, reader}
}

// find returns the ended spans named name of the given kind.
func (tl *telemetry) find(name string, kind trace.SpanKind) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range tl.spans.GetSpans() {
		if s.Name == name && s.SpanKind == kind {
			out = append(out, s)
		}
	}
	return out
}

// histogramCount returns how many values the histogram name recorded
// with attribute key=value ("" key: any).
func (tl *telemetry) histogramCount(t *testing.T, name string, key attribute.Key, value string) uint64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tl.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				if v, ok := dp.Attributes.Value(key); key == "" || (ok && v.String() == value) {
					n += dp.Count
				}
			}
		}
	}
	return n
}

func attr(s tracetest.SpanStub, key attribute.Key) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.String()
		}
	}
	return ""
}

// greetServer has "greet", which asks who is there (multi round-trip).
func greetServer(tl *telemetry, keys []server.RequestStateKey) *server.Server {
	s := server.New(&server.Options{Interceptors: []intercept.Interceptor{tl.Interceptor()}, RequestStateKeys: keys})
	server.AddTool(s, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
		who, ok, err := req.ElicitResult("who")
		if err != nil {
			return "", err
		}
		if !ok {
			return "", server.NeedInput().Elicit("who", &mcp.ElicitParams{Message: "Who?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		}
		return fmt.Sprint("hello ", who.Content["name"]), nil
	})
	return s
}

func clientOptions(tl *telemetry, version string) *client.Options {
	return &client.Options{
		ProtocolVersion: version,
		Interceptors:    []intercept.Interceptor{tl.Interceptor()},
		ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
	}
}

func callGreet(t *testing.T, c *client.Client, ctx context.Context) {
	t.Helper()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "greet"})
	if err != nil {
		t.Fatal(err)
	}
	if txt, ok := res.Content[0].(*mcp.TextContent); !ok || txt.Text != "hello Ada" {
		t.Fatalf("greet = %+v", res.Content)
	}
}

// rootSpan starts the caller's span, from a provider of its own.
func rootSpan(ctx context.Context) (context.Context, trace.Span) {
	return sdktrace.NewTracerProvider().Tracer("test").Start(ctx, "caller")
}

// TestLegacyTrace: over a legacy session, one trace runs from the
// caller through the client's tools/call, the server's, the shim's
// elicitation request and the client's answer to it; the durations and
// the session's are recorded.
func TestLegacyTrace(t *testing.T) {
	srvTel, cliTel := newTelemetry(t, TransportPipe), newTelemetry(t, TransportPipe)
	s := greetServer(srvTel, nil)
	a, b := memory.NewPair()
	ss := s.Connect(b)
	ctx, root := rootSpan(context.Background())
	c, err := client.Connect(ctx, a, clientOptions(cliTel, mcp.LatestLegacy))
	if err != nil {
		t.Fatal(err)
	}
	callGreet(t, c, ctx)
	root.End()

	cliCall := cliTel.find("tools/call greet", trace.SpanKindClient)
	srvCall := srvTel.find("tools/call greet", trace.SpanKindServer)
	srvLeg := srvTel.find("elicitation/create", trace.SpanKindClient)
	cliLeg := cliTel.find("elicitation/create", trace.SpanKindServer)
	if len(cliCall) != 1 || len(srvCall) != 1 || len(srvLeg) != 1 || len(cliLeg) != 1 {
		t.Fatalf("spans: client call %d, server call %d, server leg %d, client leg %d", len(cliCall), len(srvCall), len(srvLeg), len(cliLeg))
	}
	traceID := root.SpanContext().TraceID()
	chain := []struct {
		name         string
		span         tracetest.SpanStub
		parent       trace.SpanContext
		remoteParent bool
	}{
		{"client tools/call", cliCall[0], root.SpanContext(), false},
		{"server tools/call", srvCall[0], cliCall[0].SpanContext, true},
		{"server elicitation/create", srvLeg[0], srvCall[0].SpanContext, false},
		{"client elicitation/create", cliLeg[0], srvLeg[0].SpanContext, true},
	}
	for _, l := range chain {
		if l.span.SpanContext.TraceID() != traceID || l.span.Parent.SpanID() != l.parent.SpanID() || l.span.Parent.IsRemote() != l.remoteParent {
			t.Errorf("%s: trace %s parent %s (remote %v); want trace %s parent %s", l.name, l.span.SpanContext.TraceID(), l.span.Parent.SpanID(), l.span.Parent.IsRemote(), traceID, l.parent.SpanID())
		}
	}
	sc := srvCall[0]
	if attr(sc, "mcp.method.name") != "tools/call" || attr(sc, "gen_ai.tool.name") != "greet" || attr(sc, "mcp.session.id") != ss.ID() ||
		attr(sc, "mcp.protocol.version") != mcp.LatestLegacy || attr(sc, "jsonrpc.request.id") == "" || attr(sc, "network.transport") != "pipe" {
		t.Errorf("server span attributes: %v", sc.Attributes)
	}
	if n := srvTel.histogramCount(t, "mcp.server.operation.duration", "gen_ai.tool.name", "greet"); n != 1 {
		t.Errorf("server tools/call durations: %d, want 1", n)
	}
	if n := cliTel.histogramCount(t, "mcp.client.operation.duration", "gen_ai.tool.name", "greet"); n != 1 {
		t.Errorf("client tools/call durations: %d, want 1", n)
	}
	if n := srvTel.histogramCount(t, "mcp.server.session.duration", "", ""); n != 0 {
		t.Errorf("a session duration before the session ended")
	}
	cliTel.WatchClient(c)
	c.Close()
	ss.Wait()
	waitFor(t, "the session durations", func() bool {
		return srvTel.histogramCount(t, "mcp.server.session.duration", "", "") == 1 &&
			cliTel.histogramCount(t, "mcp.client.session.duration", "", "") == 1
	})
}

// TestModernTraceAcrossInstances: a 2026-07-28 multi round-trip call
// whose two rounds land on two instances (round robin): each round is a
// client span under the caller's, each server span the child of its
// round's client span, all one trace; errors carry error.type.
func TestModernTraceAcrossInstances(t *testing.T) {
	srvTel, cliTel := newTelemetry(t, TransportTCP), newTelemetry(t, TransportTCP)
	keys := []server.RequestStateKey{{1, 2, 3}} // shared by both instances
	var handlers []http.Handler
	for range 2 {
		h := streamhttp.NewHandler(greetServer(srvTel, keys), &streamhttp.Options{Stateless: true})
		t.Cleanup(func() { h.Close() })
		handlers = append(handlers, h)
	}
	var n atomic.Int64
	hits := make([]atomic.Int64, 2)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1) % 2
		hits[i].Add(1)
		handlers[i].ServeHTTP(w, r)
	}))
	defer ts.Close()
	ctx, root := rootSpan(context.Background())
	var conn transport.Conn = streamable.New(ts.URL, nil)
	c, err := client.Connect(ctx, conn, clientOptions(cliTel, mcp.Version20260728))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	callGreet(t, c, ctx)
	root.End()
	if hits[0].Load() == 0 || hits[1].Load() == 0 {
		t.Fatalf("both instances should have served: %d and %d", hits[0].Load(), hits[1].Load())
	}
	cliCalls := cliTel.find("tools/call greet", trace.SpanKindClient)
	srvCalls := srvTel.find("tools/call greet", trace.SpanKindServer)
	if len(cliCalls) != 2 || len(srvCalls) != 2 {
		t.Fatalf("%d client and %d server tools/call spans, want 2 each (two rounds)", len(cliCalls), len(srvCalls))
	}
	for i := range 2 {
		cs := cliCalls[i]
		if cs.SpanContext.TraceID() != root.SpanContext().TraceID() || cs.Parent.SpanID() != root.SpanContext().SpanID() {
			t.Errorf("client round %d is not a child of the caller", i)
		}
		var child bool
		for _, ss := range srvCalls {
			if ss.Parent.SpanID() == cs.SpanContext.SpanID() && ss.SpanContext.TraceID() == cs.SpanContext.TraceID() && ss.Parent.IsRemote() {
				child = true
			}
		}
		if !child {
			t.Errorf("client round %d has no server span as its child", i)
		}
		if attr(cs, "mcp.protocol.version") != mcp.Version20260728 || attr(cs, "network.transport") != "tcp" {
			t.Errorf("client span attributes: %v", cs.Attributes)
		}
	}
	if answered := cliTel.find("elicitation/create", trace.SpanKindServer); len(answered) != 1 || answered[0].Parent.SpanID() != root.SpanContext().SpanID() {
		t.Errorf("the input request's span: %+v", answered)
	}
	// An error: error.type is the JSON-RPC code.
	if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "missing"}); err == nil {
		t.Fatal("calling a missing tool succeeded")
	}
	failed := srvTel.find("tools/call missing", trace.SpanKindServer)
	if len(failed) != 1 || attr(failed[0], "error.type") == "" || attr(failed[0], "rpc.response.status_code") == "" {
		t.Errorf("failed call's span: %+v", failed)
	}
	if n := srvTel.histogramCount(t, "mcp.server.operation.duration", "gen_ai.tool.name", "greet"); n != 2 {
		t.Errorf("server durations for greet: %d, want 2", n)
	}
}

// waitFor polls cond (a measurement recorded by a goroutine) until it
// holds, without a fixed sleep deciding the outcome.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
