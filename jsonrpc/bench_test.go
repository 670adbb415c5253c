package jsonrpc

import (
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/mcp"
)

// toolsCall is a realistic tools/call request: _meta with a progress token
// and nested arguments.
const toolsCall = `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"_meta":{"progressToken":"tok-42-7f3a9c"},"name":"search_documents","arguments":{"query":"quarterly revenue by region","filters":{"year":2024,"tags":["finance","q3","emea"],"limit":25},"options":{"highlight":true,"language":"en","sort":{"field":"date","order":"desc"}}}}}`

func BenchmarkDecodeToolsCall(b *testing.B) {
	data := []byte(toolsCall)
	if m, e := decode(data, Limits{}); e != nil || m.Method != "tools/call" {
		b.Fatalf("fixture does not decode: %v", e)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		m, e := decode(data, Limits{})
		if e != nil || !m.IsRequest() {
			b.Fatal(e)
		}
	}
}

// The shape of an MCP CallToolResult.
type benchTextContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type benchWeather struct {
	City        string   `json:"city"`
	Temperature float64  `json:"temperature"`
	Conditions  string   `json:"conditions"`
	Humidity    int      `json:"humidity"`
	Alerts      []string `json:"alerts"`
}

type benchCallToolResult struct {
	Content           []benchTextContent `json:"content"`
	StructuredContent benchWeather       `json:"structuredContent"`
	IsError           bool               `json:"isError,omitzero"`
}

func BenchmarkEncodeResult(b *testing.B) {
	result := benchCallToolResult{
		Content: []benchTextContent{{Type: "text", Text: `{"city":"Lisbon","temperature":21.5,"conditions":"partly cloudy","humidity":64,"alerts":[]}`}},
		StructuredContent: benchWeather{
			City: "Lisbon", Temperature: 21.5, Conditions: "partly cloudy", Humidity: 64, Alerts: []string{},
		},
	}
	id := mcp.IntID(42)
	out, err := encodeResult(id, result)
	if err != nil {
		b.Fatal(err)
	}
	m, e := decode(out, Limits{})
	if e != nil || m.ID != id {
		b.Fatalf("output %s does not decode: %v", out, e)
	}
	var back benchCallToolResult
	if err := json.Unmarshal(m.Result, &back); err != nil || back.StructuredContent.City != "Lisbon" || len(back.Content) != 1 {
		b.Fatalf("result %s does not round-trip: %v", m.Result, err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(out)))
	for b.Loop() {
		if _, err := encodeResult(id, result); err != nil {
			b.Fatal(err)
		}
	}
}
