package server

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// BenchmarkToolsCall measures one legacy tools/call through the server
// without a transport: strict decode of the request, lifecycle and
// dispatch, argument validation against the compiled schema, decoding
// into the typed input, the handler, and encoding of the result.
func BenchmarkToolsCall(b *testing.B) {
	s := New(nil)
	AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, req *CallToolRequest, in httpenv.BenchIn) (httpenv.BenchOut, error) {
		return httpenv.BenchOut{City: in.City, Forecast: []float64{21.5, 22, 19.25}, Summary: "mild"}, nil
	})
	ss := newSession(s)
	ss.state, ss.version = stateReady, mcp.LatestLegacy
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(httpenv.BenchRequest)))
	for b.Loop() {
		msg, derr := wire.Decode(httpenv.BenchRequest, jsonrpc.Limits{})
		if derr != nil {
			b.Fatal(derr)
		}
		res, err := ss.handleRequest(ctx, msg)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := wire.EncodeResult(msg.ID, res); err != nil {
			b.Fatal(err)
		}
	}
}
