package mcpotel_test

import (
	"context"
	"fmt"
	"log"
	"slices"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/mcp"
	mcpotel "github.com/mcpkit/mcpkit/otel"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// A server and a client traced with OpenTelemetry: one interceptor on
// each side. The client's span for tools/call and the server's span that
// served it share one trace, carried in params._meta. Spans go to an
// in-memory exporter here; a real program passes its OTLP exporter's
// TracerProvider (and a MeterProvider for the duration histograms).
func Example() {
	spans := tracetest.NewInMemoryExporter()
	tel, err := mcpotel.New(&mcpotel.Options{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)),
		Transport:      mcpotel.TransportPipe,
	})
	if err != nil {
		log.Fatal(err)
	}

	srv := server.New(&server.Options{Interceptors: []intercept.Interceptor{tel.Interceptor()}})
	type addIn struct{ A, B float64 }
	err = server.AddTool(srv, &mcp.Tool{Name: "add"}, func(ctx context.Context, req *server.CallToolRequest, in addIn) (string, error) {
		return fmt.Sprint(in.A + in.B), nil
	})
	if err != nil {
		log.Fatal(err)
	}
	a, b := memory.NewPair()
	ss := srv.Connect(b)
	defer ss.Close()

	ctx := context.Background()
	c, err := client.Connect(ctx, a, &client.Options{Interceptors: []intercept.Interceptor{tel.Interceptor()}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: []byte(`{"A":2,"B":3}`)}); err != nil {
		log.Fatal(err)
	}

	var names []string
	traces := map[string][]string{}
	for _, s := range spans.GetSpans() {
		if s.Name != "tools/call add" {
			continue
		}
		names = append(names, s.SpanKind.String())
		id := s.SpanContext.TraceID().String()
		traces[id] = append(traces[id], s.SpanKind.String())
	}
	slices.Sort(names)
	fmt.Println("tools/call add spans:", names)
	fmt.Println("traces:", len(traces))
	// Output:
	// tools/call add spans: [client server]
	// traces: 1
}
