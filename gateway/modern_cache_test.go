package gateway

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
)

// TestLeasedReadNotStale: a client that re-reads a resource through the
// gateway after its resources/updated gets the new content, from a 2026
// upstream reached by URL that marks its results cacheable for an hour.
// Such reads run on leased call connections (forwardModernLeased), which
// hear no resources/updated (the control connection's listen stream
// does), so they must not answer from a cache of their own: with one, the
// second read returned the first's content (found in review of the
// leased connections).
func TestLeasedReadNotStale(t *testing.T) {
	const uri = "file:///a.txt"
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "up", Version: "1"}, CacheTTL: time.Hour})
	var version atomic.Int64
	version.Store(1)
	must(t, s.AddResource(&mcp.Resource{URI: uri, Name: "a"}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		text := "v1"
		if version.Load() == 2 {
			text = "v2"
		}
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: text}}}, nil
	}))
	srv := httptest.NewServer(streamhttp.NewHandler(s, nil))
	t.Cleanup(srv.Close)
	g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "u", URL: srv.URL, ProtocolVersion: mcp.Version20260728, HealthInterval: -1}}})
	updates := make(chan string, 16)
	p := mcptest.NewPair(t, g.Server(), &mcptest.Options{Era: client.EraLegacy, Client: &client.Options{
		OnResourceUpdated: func(_ context.Context, u string) {
			select {
			case updates <- u:
			default:
			}
		},
	}})
	must(t, p.Client.Subscribe(p.Context(), uri))
	read := func() string {
		t.Helper()
		res, err := p.Client.ReadResource(p.Context(), &mcp.ReadResourceParams{URI: uri})
		must(t, err)
		return res.Contents[0].(*mcp.TextResourceContents).Text
	}
	if got := read(); got != "v1" {
		t.Fatalf("first read %q", got)
	}
	version.Store(2)
	s.ResourceUpdated(uri)
	waitFor(t, updates, "resources/updated")
	if got := read(); got != "v2" {
		t.Fatalf("read after resources/updated: %q, want v2", got)
	}
}
