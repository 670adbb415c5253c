package interop

// Defects of the gateway these tests found, each shown by a test that
// failed while the defect was there; fixed, they stay as regression
// tests.

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// legacyMemUpstream is an mcpkit server behind the gateway over an
// in-memory connection, spoken to in the latest legacy revision; kill
// ends the current connection (the upstream dies).
type legacyMemUpstream struct {
	s  *server.Server
	mu sync.Mutex
	c  transport.Conn
	wg sync.WaitGroup
}

func (m *legacyMemUpstream) upstream(name, prefix string) gateway.Upstream {
	return gateway.Upstream{Name: name, Prefix: prefix, ProtocolVersion: mcp.LatestLegacy, Connect: func(context.Context) (transport.Conn, error) {
		a, b := memory.NewPair()
		m.mu.Lock()
		m.c = b
		m.mu.Unlock()
		m.wg.Add(1)
		go func() { // ends with the connection
			defer m.wg.Done()
			m.s.Serve(context.Background(), b)
		}()
		return a, nil
	}}
}

func (m *legacyMemUpstream) kill() {
	m.mu.Lock()
	c := m.c
	m.mu.Unlock()
	c.Close()
}

// A legacy upstream's log messages sent during a call reach that call's
// client, every one, also those sent just before the answer. (Fixed: the
// gateway attributed each to the call in flight when client.Options.OnLog
// ran, on a goroutine of its own, by which time the answer had often
// ended the call and the messages were dropped; it now taps them on the
// client's reader.)
func TestGatewayLegacyUpstreamLogsDuringCall(t *testing.T) {
	t.Parallel()
	const n = 50
	s := server.New(&server.Options{Logging: true})
	if err := server.AddTool(s, &mcp.Tool{Name: "chatty"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		for i := range n {
			if err := req.Log(ctx, mcp.LevelWarning, "chatty", i); err != nil {
				return "", err
			}
		}
		return "done", nil
	}); err != nil {
		t.Fatal(err)
	}
	m := &legacyMemUpstream{s: s}
	t.Cleanup(m.wg.Wait) // after the gateway's Close, which ends its connections
	tg := startGateway(t, &gateway.Options{Upstreams: []gateway.Upstream{m.upstream("mem", "m")}})
	for _, e := range clientEras {
		t.Run(e.name, func(t *testing.T) {
			gc := connectGateway(t, tg.URL, e.version)
			ctx := testCtx(t)
			if err := gc.SetLoggingLevel(ctx, mcp.LevelInfo); err != nil {
				t.Fatal(err)
			}
			callText(t, ctx, gc.Client, "m_chatty", "")
			for got := 0; got < n; got++ {
				select {
				case <-gc.logs:
				case <-ctx.Done():
					t.Fatalf("%d of the %d log messages the upstream sent during the call reached the client", got, n)
				}
			}
		})
	}
}

// A client told in initialize that the gateway has tools may call
// tools/list for as long as its session lasts. When the only upstream
// dies, the gateway withdraws every tool, and its server, which offers
// tools only while it has some, answers tools/list -32601 Method not
// found instead of an empty list, to the very clients it just sent
// notifications/tools/list_changed.
func TestGatewayToolsListWithNoUpstreamUp(t *testing.T) {
	t.Parallel()
	s := server.New(nil)
	if err := server.AddTool(s, &mcp.Tool{Name: "one"}, func(context.Context, *server.CallToolRequest, struct{}) (string, error) {
		return "1", nil
	}); err != nil {
		t.Fatal(err)
	}
	m := &legacyMemUpstream{s: s}
	t.Cleanup(m.wg.Wait) // after the gateway's Close, which ends its connections
	// A long pause before the reconnection: the upstream stays down while
	// the clients list.
	tg := startGateway(t, &gateway.Options{Upstreams: []gateway.Upstream{m.upstream("mem", "m")}, RestartMin: hangGuard})
	var clients []*gwClient
	for _, e := range clientEras {
		clients = append(clients, connectGateway(t, tg.URL, e.version))
	}
	m.kill()
	ctx := testCtx(t)
	for i, gc := range clients {
		// Each list_changed since connecting may predate the withdrawal:
		// list again on each until the upstream's tool is gone.
		for done := false; !done; {
			select {
			case <-gc.toolsChange:
			case <-ctx.Done():
				t.Fatalf("%s: no tools/list_changed withdrew the tools", clientEras[i].name)
			}
			res, err := gc.ListTools(ctx, nil)
			var je *jsonrpc.Error
			switch {
			case errors.As(err, &je) && je.Code == mcp.CodeMethodNotFound:
				t.Errorf("%s: tools/list with the upstream down: %v, want an empty list", clientEras[i].name, err)
				done = true
			case err != nil:
				t.Errorf("%s: tools/list: %v", clientEras[i].name, err)
				done = true
			default:
				done = len(res.Tools) == 0
			}
		}
	}
}
