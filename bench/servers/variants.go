package servers

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpkit/mcpkit/intercept"
	mcpotel "github.com/mcpkit/mcpkit/otel"
	"github.com/mcpkit/mcpkit/server/streamhttp"
)

// Variants are mcpkit's W1/W2/W3 server with interceptors, for the
// overhead figures of bench/README.md: "mcpkit-noop" has one interceptor
// that only calls the next, "mcpkit-otel" has OpenTelemetry on (a span
// per request, always sampled, batched to an exporter that discards
// them; the duration histograms on a reader never collected).
var Variants = []string{"mcpkit-noop", "mcpkit-otel"}

// Noop is an interceptor that only calls the next handler.
func Noop(next intercept.Handler) intercept.Handler {
	return func(ctx context.Context, c *intercept.Call) (any, error) { return next(ctx, c) }
}

// Tracing returns the interceptor of "mcpkit-otel" and a function that
// shuts its providers down.
func Tracing() (intercept.Interceptor, func(), error) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tel, err := mcpotel.New(&mcpotel.Options{TracerProvider: tp, MeterProvider: mp, Transport: mcpotel.TransportTCP})
	if err != nil {
		return nil, nil, err
	}
	return tel.Interceptor(), func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	}, nil
}

// variant returns the handlers of a variant and a function releasing
// them.
func variant(name string) (stateless, session *streamhttp.Handler, release func(), err error) {
	switch name {
	case "mcpkit-noop":
		sl, ss := MCPKitWith(Noop)
		return sl, ss, func() {}, nil
	case "mcpkit-otel":
		ic, shutdown, err := Tracing()
		if err != nil {
			return nil, nil, nil, err
		}
		sl, ss := MCPKitWith(ic)
		return sl, ss, shutdown, nil
	}
	return nil, nil, nil, fmt.Errorf("unknown variant %q", name)
}
