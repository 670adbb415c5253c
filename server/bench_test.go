package server

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

type benchIn struct {
	City  string   `json:"city"`
	Days  int      `json:"days" jsonschema:"minimum=1,maximum=14"`
	Units string   `json:"units,omitzero" jsonschema:"enum=metric|imperial"`
	Tags  []string `json:"tags,omitempty"`
}

type benchOut struct {
	City     string    `json:"city"`
	Forecast []float64 `json:"forecast"`
	Summary  string    `json:"summary"`
}

var benchRequest = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"_meta":{"progressToken":"tok-1"},` +
	`"name":"forecast","arguments":{"city":"Lisbon","days":3,"units":"metric","tags":["coast","sunny"]}}}`)

// BenchmarkToolsCall measures one legacy tools/call through the server
// without a transport: strict decode of the request, lifecycle and
// dispatch, argument validation against the compiled schema, decoding
// into the typed input, the handler, and encoding of the result.
func BenchmarkToolsCall(b *testing.B) {
	s := New(nil)
	AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, req *CallToolRequest, in benchIn) (benchOut, error) {
		return benchOut{City: in.City, Forecast: []float64{21.5, 22, 19.25}, Summary: "mild"}, nil
	})
	ss := newSession(s)
	ss.state, ss.version = stateReady, mcp.LatestLegacy
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRequest)))
	for b.Loop() {
		msg, derr := jsonrpc.Decode(benchRequest, jsonrpc.Limits{})
		if derr != nil {
			b.Fatal(derr)
		}
		res, err := ss.handleRequest(ctx, msg)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := jsonrpc.EncodeResult(msg.ID, res); err != nil {
			b.Fatal(err)
		}
	}
}
