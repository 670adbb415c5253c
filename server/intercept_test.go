package server

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/httpenv"
)

// noopInterceptor is an interceptor that does nothing but call next.
func noopInterceptor(next intercept.Handler) intercept.Handler {
	return func(ctx context.Context, c *intercept.Call) (any, error) { return next(ctx, c) }
}

// forecastSession is a ready legacy session of a server with the
// benchmarked forecast tool and the given interceptors.
func forecastSession(ics ...intercept.Interceptor) *Session {
	s := New(&Options{Interceptors: ics})
	AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, req *CallToolRequest, in httpenv.BenchIn) (httpenv.BenchOut, error) {
		return httpenv.BenchOut{City: in.City, Forecast: []float64{21.5, 22, 19.25}, Summary: "mild"}, nil
	})
	ss := newSession(s)
	ss.state, ss.version = stateReady, mcp.LatestLegacy
	return ss
}

// serveOnce decodes request, serves it on ss and encodes the answer.
func serveOnce(tb testing.TB, ss *Session, request []byte) {
	msg, derr := wire.Decode(request, jsonrpc.Limits{})
	if derr != nil {
		tb.Fatal(derr)
	}
	res, err := ss.handleRequest(context.Background(), msg)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := wire.EncodeResult(msg.ID, res); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkIntercept compares a tools/call of each era with no
// interceptor (only the built-in intercept.Recover) and with one no-op
// interceptor: the cost of the chain itself.
func BenchmarkIntercept(b *testing.B) {
	for _, era := range []struct {
		name    string
		request []byte
	}{{"legacy", httpenv.BenchRequest}, {"modern", httpenv.BenchModernRequest}} {
		for _, c := range []struct {
			name string
			ics  []intercept.Interceptor
		}{{"none", nil}, {"noopInterceptor", []intercept.Interceptor{noopInterceptor}}} {
			b.Run(era.name+"/"+c.name, func(b *testing.B) {
				ss := forecastSession(c.ics...)
				b.ReportAllocs()
				for b.Loop() {
					serveOnce(b, ss, era.request)
				}
			})
		}
	}
}
