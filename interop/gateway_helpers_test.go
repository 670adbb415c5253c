package interop

// Helpers of the gateway tests: a gateway in front of real upstreams,
// served on Streamable HTTP over loopback, and mcpkit clients of either
// era that record what reaches them through it.

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// clientEras are the two eras a client of the gateway speaks, by the
// revision it pins.
var clientEras = []struct {
	name    string
	version string
	era     client.Era
}{
	{"2026-07-28", mcp.Version20260728, client.EraModern},
	{"2025-11-25", mcp.LatestLegacy, client.EraLegacy},
}

// testGateway is a started gateway served on an httptest loopback server.
type testGateway struct {
	*gateway.Gateway
	URL string

	mu       sync.Mutex
	versions map[string]bool // MCP-Protocol-Version headers seen
}

// versionsSeen returns the MCP-Protocol-Version headers of the requests
// the gateway received since the last call, sorted, and forgets them:
// which revision the clients really spoke.
func (tg *testGateway) versionsSeen() []string {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	out := slices.Sorted(maps.Keys(tg.versions))
	clear(tg.versions)
	return out
}

// startGateway starts a gateway in front of ups (waiting for each to be
// tried once) and serves it on Streamable HTTP. Everything is closed at
// the end of the test, the clients first.
func startGateway(t *testing.T, opts *gateway.Options) *testGateway {
	t.Helper()
	o := *opts
	if o.RestartMin == 0 {
		// Reconnection is what some tests wait for: no need to pause long.
		o.RestartMin = 20 * time.Millisecond
	}
	g, err := gateway.New(&o)
	if err != nil {
		t.Fatalf("gateway.New: %v", err)
	}
	if err := g.Start(testCtx(t)); err != nil {
		t.Fatalf("gateway Start: %v", err)
	}
	t.Cleanup(func() { g.Close() })
	tg := &testGateway{Gateway: g, versions: map[string]bool{}}
	h := streamhttp.NewHandler(g.Server(), nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("MCP-Protocol-Version"); v != "" {
			tg.mu.Lock()
			tg.versions[v] = true
			tg.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	tg.URL = ts.URL + "/mcp"
	return tg
}

// requireReady fails the test unless every upstream is ready.
func (tg *testGateway) requireReady(t *testing.T) {
	t.Helper()
	for _, h := range tg.Health() {
		if h.State != gateway.StateReady {
			t.Fatalf("upstream %s is %s: %s", h.Name, h.State, h.Err)
		}
	}
}

// everythingUpstream is the reference everything server over stdio.
func everythingUpstream(t *testing.T, name, prefix string) gateway.Upstream {
	return gateway.Upstream{Name: name, Prefix: prefix, Command: peerCmd(t, "server-everything", "index.js", "stdio").Args}
}

// gwClient is mcpkit's client of the gateway, in one era, with a handler
// for every input request an upstream may make, recording what reached
// it.
type gwClient struct {
	*client.Client
	logs        chan *mcp.LoggingMessageParams
	toolsChange chan struct{}

	mu      sync.Mutex
	elicits []*mcp.ElicitParams
	samples []*mcp.CreateMessageParams
}

// connectGateway connects a client of the given revision to the gateway.
func connectGateway(t *testing.T, url, version string) *gwClient {
	t.Helper()
	gc := &gwClient{logs: make(chan *mcp.LoggingMessageParams, 64), toolsChange: make(chan struct{}, 64)}
	tr := streamable.New(url, nil)
	c, err := client.Connect(testCtx(t), tr, &client.Options{
		Info:            mcp.Implementation{Name: "mcpkit-interop", Version: "1"},
		ProtocolVersion: version,
		Listen:          true,
		ElicitHandler: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			gc.mu.Lock()
			gc.elicits = append(gc.elicits, p)
			gc.mu.Unlock()
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
		ElicitationDefaults: true,
		CreateMessageHandler: func(_ context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			gc.mu.Lock()
			gc.samples = append(gc.samples, p)
			gc.mu.Unlock()
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "test-model",
				Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "sampled through the gateway"})}, nil
		},
		OnLog: func(_ context.Context, p *mcp.LoggingMessageParams) {
			select {
			case gc.logs <- p:
			default:
			}
		},
		OnToolsListChanged: func(context.Context) {
			select {
			case gc.toolsChange <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		t.Fatalf("Connect to the gateway (%s): %v", version, err)
	}
	t.Cleanup(func() { c.Close() })
	if c.Era() == client.EraLegacy {
		// List changes come on the GET stream, which Connect does not wait
		// for: a change before it opens would not reach the client.
		select {
		case <-tr.Listening():
		case <-testCtx(t).Done():
			t.Fatal("the legacy client's GET stream never opened")
		}
	}
	if c.Era() == client.EraModern {
		// A pinned revision skips the probe: ask what the gateway offers.
		if _, err := c.Discover(testCtx(t)); err != nil {
			t.Fatalf("server/discover: %v", err)
		}
		// List changes come on a subscriptions/listen stream (they reach
		// OnToolsListChanged too); it lasts as long as the test.
		sub, err := c.Listen(t.Context(), mcp.SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true, ResourcesListChanged: true})
		if err != nil {
			t.Fatalf("subscriptions/listen: %v", err)
		}
		drained := make(chan struct{})
		go func() { // ends with the subscription
			defer close(drained)
			for range sub.Notifications() {
			}
		}()
		t.Cleanup(func() {
			sub.Close()
			<-drained
		})
	}
	gc.Client = c
	return gc
}

// logDuringCall makes call (a tool call whose upstream starts sending a
// log message before it answers, without waiting for it to be written)
// until a log message reaches the client, at most 20 times, and returns
// it (nil if none came): a message that leaves the upstream after the
// answer belongs to no call and is not passed on.
func (gc *gwClient) logDuringCall(call func(), want func(*mcp.LoggingMessageParams) bool) *mcp.LoggingMessageParams {
	for range 20 {
		call()
		for drained := false; !drained; {
			select {
			case p := <-gc.logs:
				if want(p) {
					return p
				}
			default:
				drained = true
			}
		}
	}
	return nil
}

// toolNames lists the gateway's tools, every page.
func toolNames(t *testing.T, ctx context.Context, c *client.Client) []string {
	t.Helper()
	var names []string
	for tool, err := range c.Tools(ctx) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// withPrefix returns the names that start with prefix.
func withPrefix(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// callText calls a tool through the gateway and returns its text,
// failing the test on an error or a tool error.
func callText(t *testing.T, ctx context.Context, c *client.Client, name, args string) string {
	t.Helper()
	p := &mcp.CallToolParams{Name: name}
	if args != "" {
		p.Arguments = []byte(args)
	}
	res, err := c.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %q", name, allText(res))
	}
	return allText(res)
}
