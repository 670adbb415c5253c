package httpenv

// The benchmarked tools/call of the server's and server/streamhttp's
// benchmarks: a "forecast" tool taking BenchIn and returning BenchOut,
// called with BenchRequest (legacy) or BenchModernRequest (2026-07-28),
// so that both packages measure the same call.

// BenchIn is the forecast tool's input.
type BenchIn struct {
	City  string   `json:"city"`
	Days  int      `json:"days" jsonschema:"minimum=1,maximum=14"`
	Units string   `json:"units,omitzero" jsonschema:"enum=metric|imperial"`
	Tags  []string `json:"tags,omitempty"`
}

// BenchOut is the forecast tool's result.
type BenchOut struct {
	City     string    `json:"city"`
	Forecast []float64 `json:"forecast"`
	Summary  string    `json:"summary"`
}

// BenchRequest calls the forecast tool on a legacy session.
var BenchRequest = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"_meta":{"progressToken":"tok-1"},` +
	`"name":"forecast","arguments":{"city":"Lisbon","days":3,"units":"metric","tags":["coast","sunny"]}}}`)

// BenchModernRequest is BenchRequest on the 2026 wire: the envelope in
// _meta, beside the progress token.
var BenchModernRequest = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"_meta":{"progressToken":"tok-1",` +
	`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}},` +
	`"name":"forecast","arguments":{"city":"Lisbon","days":3,"units":"metric","tags":["coast","sunny"]}}}`)
