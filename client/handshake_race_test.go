package client_test

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// TestNotificationDuringHandshake: a server may send a notification right
// after its initialize response, while Connect is still finishing the
// handshake; the client's reader then runs it through the interceptors,
// which read the connection's era and revision. Connect set the era with
// a plain write the reader's read was not ordered with: a data race,
// caught under -race (found by the combination matrix, through the
// gateway, whose upstream clients have interceptors). The fake sends the
// notification only once the response is on the wire, so that the
// reader always handles it after delivering the response.
func TestNotificationDuringHandshake(t *testing.T) {
	a, b := memory.NewPair()
	var srv *jsonrpc.Conn
	answered := make(chan struct{})
	srv = jsonrpc.NewConn(b, &jsonrpc.ConnOptions{
		Handler: &fakeServer{handle: func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
			if msg.Method == mcp.MethodInitialize {
				return initializeResult(), nil
			}
			return nil, jsonrpc.ErrMethodNotFound
		}, got: make(chan *jsonrpc.Message, 16)},
		Observe: func(in bool, msg []byte) {
			if !in {
				select {
				case <-answered:
				default:
					close(answered) // the first message written: the initialize response
				}
			}
		},
	})
	srv.Start()
	t.Cleanup(func() { srv.Close() })
	go func() {
		<-answered
		_ = srv.Notify(context.Background(), mcp.NotificationToolsListChanged, nil)
	}()
	seen := make(chan intercept.Era, 1)
	changed := make(chan struct{}, 1)
	c := connect(t, a, &client.Options{
		ProtocolVersion: mcp.LatestLegacy,
		Interceptors: []intercept.Interceptor{func(next intercept.Handler) intercept.Handler {
			return func(ctx context.Context, ic *intercept.Call) (any, error) {
				if ic.Inbound && ic.Method == mcp.NotificationToolsListChanged {
					select {
					case seen <- ic.Era:
					default:
					}
				}
				return next(ctx, ic)
			}
		}},
		OnToolsListChanged: func(context.Context) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	recv(t, changed, "notifications/tools/list_changed")
	if era := recv(t, seen, "the interceptor's call"); era != 0 && era != client.EraLegacy {
		t.Errorf("the interceptor saw era %v", era)
	}
	if c.Era() != client.EraLegacy {
		t.Errorf("Era() = %v after Connect", c.Era())
	}
}
