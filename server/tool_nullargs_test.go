package server

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/httpenv"
)

// TestToolsCallNullArguments: "arguments": null (go-sdk's encoding of a
// nil map) is served as if arguments were absent, in both eras, by
// typed tools without inputs and with optional ones; a non-object is
// still a tool error.
func TestToolsCallNullArguments(t *testing.T) {
	s := New(&Options{Info: mcp.Implementation{Name: "fixture26", Version: "1"}})
	AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *CallToolRequest, in struct {
		Text string `json:"text,omitempty"`
	}) (string, error) {
		return "echo:" + in.Text, nil
	})
	p := newStdioPeer(t, s)
	init := httpenv.RawReq(1, mcp.MethodInitialize, map[string]any{"protocolVersion": mcp.Version20251125,
		"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "legacy", "version": "1"}})
	if m := p.answer(init, sendLegacy, 1); m.Error != nil {
		t.Fatalf("initialize: %s", m.Raw)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sendLegacy)

	// Sent as malformed: the 2025-11-25 schema says arguments is an
	// object, and null is what real clients send anyway.
	m := p.answer(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":null}}`, sendMalformed, 2)
	if m.Error != nil {
		t.Fatalf("legacy tools/call with null arguments: %s", m.Raw)
	}
	if text, isErr := httpenv.ResultText(t, legacyResult(t, m)); isErr || text != "echo:" {
		t.Errorf("legacy: answered %q (isError %v), want the echo of no text", text, isErr)
	}

	m = p.answer(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":"text"}}`, sendMalformed, 3)
	if text, isErr := httpenv.ResultText(t, legacyResult(t, m)); !isErr {
		t.Errorf("legacy: a string as arguments answered %q, want a tool error", text)
	}

	body := httpenv.Req26(4, mcp.MethodToolsCall, map[string]any{"name": "echo", "arguments": nil})
	r := httpenv.CheckModernResult(t, p.answer(body, sendMalformed, 4), 4, "fixture26")
	if text, isErr := httpenv.ResultText(t, r); isErr || text != "echo:" {
		t.Errorf("modern: answered %q (isError %v)", text, isErr)
	}
}

func legacyResult(t *testing.T, m *httpenv.WireMsg) map[string]json.RawMessage {
	t.Helper()
	var r map[string]json.RawMessage
	if m.Error != nil || json.Unmarshal(m.Result, &r) != nil {
		t.Fatalf("want a result, got %s", m.Raw)
	}
	return r
}
