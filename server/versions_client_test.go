package server_test

// Options.ProtocolVersions against mcpkit's own client with automatic
// era selection: a legacy-only server's -32022 to the server/discover
// probe sends the client to initialize, and a modern-only server's
// refusal of initialize names the revision it serves.

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/memory"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

func connectTo(t *testing.T, versions []string, clientVersion string) (*client.Client, error) {
	t.Helper()
	s := server.New(&server.Options{ProtocolVersions: versions})
	a, b := memory.NewPair()
	ss := s.Connect(b)
	t.Cleanup(func() { _ = ss.Close() })
	c, err := client.Connect(context.Background(), a, &client.Options{ProtocolVersion: clientVersion})
	if err == nil {
		t.Cleanup(func() { _ = c.Close() })
	}
	return c, err
}

func TestProtocolVersionsWithClient(t *testing.T) {
	c, err := connectTo(t, []string{mcp.Version20250618}, "")
	if err != nil {
		t.Fatalf("automatic era selection against a legacy-only server: %v", err)
	}
	if v := c.ProtocolVersion(); v != mcp.Version20250618 {
		t.Errorf("negotiated %q, want 2025-06-18 (the only revision served)", v)
	}

	c, err = connectTo(t, []string{mcp.Version20260728}, "")
	if err != nil {
		t.Fatalf("automatic era selection against a modern-only server: %v", err)
	}
	if v := c.ProtocolVersion(); v != mcp.Version20260728 {
		t.Errorf("chose %q, want 2026-07-28", v)
	}

	_, err = connectTo(t, []string{mcp.Version20260728}, mcp.LatestLegacy)
	if err == nil || !strings.Contains(err.Error(), "Unsupported protocol version") {
		t.Errorf("a legacy client against a modern-only server: %v, want the refusal", err)
	}
}

// Over Streamable HTTP the probe of a legacy-only server gets 400 with
// -32022 listing legacy revisions only; the client falls back to
// initialize.
func TestProtocolVersionsWithClientHTTP(t *testing.T) {
	s := server.New(&server.Options{ProtocolVersions: []string{mcp.Version20251125}})
	h := streamhttp.NewHandler(s, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() { ts.Close(); _ = h.Close() })
	c, err := client.Connect(context.Background(), streamable.New(ts.URL, nil), nil)
	if err != nil {
		t.Fatalf("automatic era selection against a legacy-only server: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if v := c.ProtocolVersion(); v != mcp.Version20251125 {
		t.Errorf("negotiated %q, want 2025-11-25", v)
	}
}
