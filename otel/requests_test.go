package mcpotel

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// requestCounts returns the request counter's points: count by
// "version|era|client".
func requestCounts(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != RequestsMetric {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				get := func(k attribute.Key) string { v, _ := dp.Attributes.Value(k); return v.AsString() }
				out[get("mcp.protocol.version")+"|"+get(EraKey)+"|"+get(ClientNameKey)] += dp.Value
			}
		}
	}
	return out
}

// TestRequestCounter: requests are counted by revision, era and client
// name, in both eras; names beyond MaxClientNames count as _OTHER; a
// legacy client a modern-only server refuses is still counted, under
// the revision it asked for.
func TestRequestCounter(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	tel, err := New(&Options{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), MaxClientNames: 2})
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(&server.Options{Interceptors: []intercept.Interceptor{tel.Interceptor()}})
	if err := server.AddTool(s, &mcp.Tool{Name: "hi"}, func(context.Context, *server.CallToolRequest, struct{}) (string, error) { return "hi", nil }); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	connect := func(srv *server.Server, name, version string) (*client.Client, error) {
		a, b := memory.NewPair()
		ss := srv.Connect(b)
		t.Cleanup(func() { _ = ss.Close() })
		c, err := client.Connect(ctx, a, &client.Options{Info: mcp.Implementation{Name: name, Version: "1"}, ProtocolVersion: version})
		if err == nil {
			t.Cleanup(func() { _ = c.Close() })
		}
		return c, err
	}
	call := func(name, version string, n int) {
		t.Helper()
		c, err := connect(s, name, version)
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "hi"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := func() map[string]int64 { return requestCounts(t, reader) }
	b0 := before()
	call("old-app", mcp.Version20250618, 3)
	call("new-app", mcp.Version20260728, 2)
	call("third-app", mcp.Version20251125, 1) // over MaxClientNames
	got := requestCounts(t, reader)
	delta := func(k string) int64 { return got[k] - b0[k] }
	// A legacy client: initialize and its calls (nothing else of its
	// counts under its name).
	if n := delta("2025-06-18|legacy|old-app"); n != 4 {
		t.Errorf("old-app: %d requests counted, want 4 (initialize, 3 calls); all: %v", n, got)
	}
	if n := delta("2026-07-28|modern|new-app"); n < 2 {
		t.Errorf("new-app: %d requests counted, want at least its 2 calls; all: %v", n, got)
	}
	if n := delta("2025-11-25|legacy|" + OtherValue); n != 2 {
		t.Errorf("a third name over MaxClientNames 2: %d under %s, want 2; all: %v", n, OtherValue, got)
	}
	for k := range got {
		if v := k[len(k)-len("third-app"):]; v == "third-app" {
			t.Errorf("a name over the cap has its own series: %s", k)
		}
	}

	// A modern-only server refuses a legacy client; the operator still
	// sees who tried, and with what.
	mo := server.New(&server.Options{Interceptors: []intercept.Interceptor{tel.Interceptor()}, ProtocolVersions: []string{mcp.Version20260728}})
	if _, err := connect(mo, "old-app", mcp.Version20250618); err == nil {
		t.Fatal("a modern-only server accepted a legacy client")
	}
	if n := requestCounts(t, reader)["2025-06-18|legacy|old-app"] - got["2025-06-18|legacy|old-app"]; n != 1 {
		t.Errorf("the refused initialize: %d counted, want 1", n)
	}
}

// TestRequestCounterUnknownVersion: a revision the SDK does not know is
// counted as _OTHER, so that a peer cannot make new series with it.
func TestRequestCounterUnknownVersion(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	tel, err := New(&Options{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"9999-01-01", "v1", mcp.Version20251125} {
		tel.countRequest(context.Background(), &intercept.Call{Side: intercept.Server, Inbound: true, Method: mcp.MethodToolsList, Era: intercept.EraLegacy, Version: v}, nil)
	}
	got := requestCounts(t, reader)
	if got[OtherValue+"|legacy|"] != 2 || got["2025-11-25|legacy|"] != 1 || len(got) != 2 {
		t.Errorf("counts %v, want 2 under %s and 1 under 2025-11-25", got, OtherValue)
	}
}
