package clustertest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/store"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

type gwName struct {
	Name string `json:"name"`
}

// gatewayUpstream is the server behind every gateway instance: "greet"
// asks for a name.
func gatewayUpstream(t *testing.T) *server.Server {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "upstream", Version: "1"}})
	err := server.AddTool(s, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (gwName, error) {
		f, err := server.Ask[gwName](req.Request, "who", "Who are you?")
		if err != nil {
			return gwName{}, err
		}
		return gwName{Name: "hello " + f.Name}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// gatewayCluster is two gateway instances in front of the same upstream
// (each with its own connection: "l" spoken to in 2025-11-25, "m" in
// 2026-07-28), sharing session and event stores, request-state keys and
// brokers, behind a proxy that sends each HTTP request to the next
// instance in turn. hits records the instance of each tools/call.
type gatewayCluster struct {
	url  string
	mu   sync.Mutex
	hits []int
}

func newGatewayCluster(t *testing.T, backend func(i int) GatewayBackend) *gatewayCluster {
	up := gatewayUpstream(t)
	var serving sync.WaitGroup
	t.Cleanup(serving.Wait)
	connect := func(ctx context.Context) (transport.Conn, error) {
		a, b := memory.NewPair()
		serving.Add(1)
		go func() {
			defer serving.Done()
			_ = up.Serve(context.Background(), b) // ends when the test closes b
		}()
		return a, nil
	}
	key := server.RequestStateKey([]byte("gateway-cluster-state-key-32byte"))
	c := &gatewayCluster{}
	var backends []*url.URL
	for i := range 2 {
		b := backend(i)
		g, err := gateway.New(&gateway.Options{
			Server: &server.Options{RequestStateKeys: []server.RequestStateKey{key}},
			Broker: b.GatewayBroker,
			Upstreams: []gateway.Upstream{
				{Name: "l", Prefix: "l", Connect: connect, ProtocolVersion: mcp.LatestLegacy, HealthInterval: -1},
				{Name: "m", Prefix: "m", Connect: connect, ProtocolVersion: mcp.Version20260728, HealthInterval: -1},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		sctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		err = g.Start(sctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		h := streamhttp.NewHandler(g.Server(), &streamhttp.Options{SessionStore: b.Sessions, EventStore: b.Events, Broker: b.Broker})
		ts := httptest.NewServer(h)
		t.Cleanup(func() {
			ts.CloseClientConnections()
			ts.Close()
			_ = h.Shutdown(context.Background())
			g.Close()
			if b.Close != nil {
				b.Close()
			}
		})
		u, _ := url.Parse(ts.URL)
		backends = append(backends, u)
	}
	var next atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(next.Add(1)-1) % len(backends)
		if r.Header.Get("Mcp-Method") == "tools/call" || strings.Contains(r.Header.Get("Mcp-Name"), "greet") {
			c.mu.Lock()
			c.hits = append(c.hits, i)
			c.mu.Unlock()
		}
		httputil.NewSingleHostReverseProxy(backends[i]).ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		proxy.CloseClientConnections()
		proxy.Close()
	})
	c.url = proxy.URL
	return c
}

// GatewayBackend is what one gateway instance shares with the other: the
// HTTP handler's stores and broker (Backend), and the gateway's own
// broker (gateway.Options.Broker).
type GatewayBackend struct {
	Backend
	GatewayBroker store.Broker
}

// Gateway runs two gateway instances in front of one upstream, behind a
// round-robin proxy: a 2026 client's rounds of one call land on different
// instances, for an upstream held pending (legacy: the round goes to the
// instance holding the call, through the gateway's broker) and for a
// relayed one (2026: the upstream's state travels in the sealed request
// state); a legacy client's session spans both.
func Gateway(t *testing.T, backend func(i int) GatewayBackend) {
	c := newGatewayCluster(t, backend)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for _, tool := range []string{"l_greet", "m_greet"} {
		t.Run("modern/"+tool, func(t *testing.T) {
			cl, err := client.Connect(ctx, streamable.New(c.url, nil), &client.Options{
				ProtocolVersion: mcp.Version20260728,
				ManualInput:     true,
				ElicitHandler:   func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) { return nil, errors.New("unused") },
			})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			c.mu.Lock()
			c.hits = nil
			c.mu.Unlock()
			_, err = cl.CallTool(ctx, &mcp.CallToolParams{Name: tool})
			var ire *client.InputRequiredError
			if !errors.As(err, &ire) || len(ire.Result.InputRequests) != 1 {
				t.Fatalf("first round: %v", err)
			}
			rs := mcp.InputResponses{}
			for k := range ire.Result.InputRequests {
				if err := rs.Set(k, &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}); err != nil {
					t.Fatal(err)
				}
			}
			res, err := cl.CallTool(ctx, &mcp.CallToolParams{Name: tool, InputResponses: rs, RequestState: ire.Result.RequestState})
			if err != nil {
				t.Fatal(err)
			}
			if txt := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, "hello Ada") {
				t.Fatalf("result = %s", txt)
			}
			c.mu.Lock()
			hits := c.hits
			c.mu.Unlock()
			if len(hits) != 2 || hits[0] == hits[1] {
				t.Fatalf("the rounds reached instances %v, want two different ones", hits)
			}
		})
	}
	t.Run("legacy session", func(t *testing.T) {
		cl, err := client.Connect(ctx, streamable.New(c.url, nil), &client.Options{
			ProtocolVersion: mcp.LatestLegacy,
			ElicitHandler: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Bo"}}, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		for _, tool := range []string{"l_greet", "m_greet", "l_greet"} {
			res, err := cl.CallTool(ctx, &mcp.CallToolParams{Name: tool})
			if err != nil {
				t.Fatal(err)
			}
			if txt := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, "hello Bo") {
				t.Fatalf("%s = %s", tool, txt)
			}
		}
	})
}
