package streamhttp

// server.Options.ProtocolVersions on the 2024-11-05 HTTP+SSE transport:
// initialize offers the newest legacy revision served, and a server that
// serves no legacy revision refuses it, naming what it serves.

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

func TestLegacySSEProtocolVersions(t *testing.T) {
	serve := func(versions ...string) *sseClient {
		s := server.New(&server.Options{ProtocolVersions: versions})
		e := newHTTPEnv(t, s, &Options{LegacySSE: true})
		c, _ := openSSE(t, e, nil)
		return c
	}
	c := serve(mcp.Version20260728, mcp.Version20250618)
	if status, _ := c.post(initBody(1, mcp.Version20241105, `{}`), nil); status != http.StatusAccepted {
		t.Fatalf("POST initialize: %d", status)
	}
	var r mcp.InitializeResult
	if m := c.next(); json.Unmarshal(m.Result, &r) != nil || r.ProtocolVersion != mcp.Version20250618 {
		t.Errorf("asked for 2024-11-05 (not served): answered %s, want 2025-06-18 offered", m.Raw)
	}

	c = serve(mcp.Version20260728)
	if status, _ := c.post(initBody(1, mcp.Version20241105, `{}`), nil); status != http.StatusAccepted {
		t.Fatalf("POST initialize: %d", status)
	}
	m := c.next()
	if m.Error == nil || m.Error.Code != mcp.CodeInvalidParams {
		t.Fatalf("initialize answered %s, want -32602", m.Raw)
	}
	var d mcp.UnsupportedProtocolVersionData
	if err := json.Unmarshal(m.Error.Data, &d); err != nil || !slices.Equal(d.Supported, []string{mcp.Version20260728}) || d.Requested != mcp.Version20241105 {
		t.Errorf("data %s, want supported [2026-07-28], requested 2024-11-05", m.Error.Data)
	}
}
