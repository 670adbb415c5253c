package server

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/httpenv"
	"github.com/mcpkit/mcpkit/transport"
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

	// The 2025-11-25 schema says arguments is an object, and null is
	// what real clients send anyway: only the answers are checked.
	m := p.answerLegacyRaw(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":null}}`, 2)
	if m.Error != nil {
		t.Fatalf("legacy tools/call with null arguments: %s", m.Raw)
	}
	if text, isErr := httpenv.ResultText(t, legacyResult(t, m)); isErr || text != "echo:" {
		t.Errorf("legacy: answered %q (isError %v), want the echo of no text", text, isErr)
	}

	m = p.answerLegacyRaw(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":"text"}}`, 3)
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

// answerLegacyRaw sends a legacy request the schema refuses and reads its
// answer, which must come next and conform to the 2025-11-25 schema
// (CheckResult: the one for tools/call).
func (p *stdioPeer) answerLegacyRaw(body string, id int) *httpenv.WireMsg {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), httpenv.HangGuard)
	defer cancel()
	if err := p.conn.Write(ctx, transport.Message{Data: []byte(body)}); err != nil {
		p.t.Fatalf("write: %v", err)
	}
	var raw []byte
	select {
	case raw = <-p.in:
	case <-ctx.Done():
		p.t.Fatal("timed out waiting for the answer")
	}
	m := httpenv.ParseWire(p.t, raw)
	if string(m.ID) != httpenv.IDJSON(id) {
		p.t.Fatalf("got %s, want the answer to %d", raw, id)
	}
	if err := wirecheck.For(p.t, mcp.Version20251125).CheckResult(mcp.MethodToolsCall, raw); err != nil {
		p.t.Errorf("answer does not conform: %v", err)
	}
	return m
}
