package e2e

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/command"
	"github.com/mcpkit/mcpkit/transport/memory"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// TestClientMessageCap: an answer over the cap of what the client reads
// (client.Options.Limits on any transport, the transport's own cap below
// it) fails only its call, with an error that says the message was too
// large, and the connection serves the next call; on every transport the
// client reads: in memory, a command over stdio, Streamable HTTP in both
// eras (a JSON body or an event stream, as the server answers).
func TestClientMessageCap(t *testing.T) {
	const limit = 1024
	greetServer := func() *server.Server {
		s := server.New(nil)
		if err := server.AddTool(s, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *server.CallToolRequest, in greetIn) (string, error) {
			return "hello " + in.Name, nil
		}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	httpURL := func(t *testing.T) string {
		h := streamhttp.NewHandler(greetServer(), nil)
		ts := httptest.NewServer(h)
		t.Cleanup(func() {
			h.Close()
			ts.Close()
		})
		return ts.URL
	}
	cases := []struct {
		name    string
		version string
		limits  jsonrpc.Limits
		dial    func(t *testing.T) transport.Conn
		want    string
	}{
		{"memory", mcp.LatestLegacy, jsonrpc.Limits{MaxBytes: limit}, func(t *testing.T) transport.Conn {
			a, b := memory.NewPair()
			ss := greetServer().Connect(b)
			t.Cleanup(func() { ss.Close() })
			return a
		}, "too large"},
		{"command", mcp.LatestLegacy, jsonrpc.Limits{}, func(t *testing.T) transport.Conn {
			return startChildWith(t, command.Options{MaxMessageBytes: limit})
		}, "too large"},
		{"streamable legacy", mcp.LatestLegacy, jsonrpc.Limits{}, func(t *testing.T) transport.Conn {
			return streamable.New(httpURL(t), &streamable.Options{MaxEventBytes: limit})
		}, "MaxEventBytes"},
		{"streamable modern", mcp.Version20260728, jsonrpc.Limits{}, func(t *testing.T) transport.Conn {
			return streamable.New(httpURL(t), &streamable.Options{MaxEventBytes: limit})
		}, "MaxEventBytes"},
		{"streamable, client Limits", mcp.LatestLegacy, jsonrpc.Limits{MaxBytes: limit}, func(t *testing.T) transport.Conn {
			return streamable.New(httpURL(t), nil)
		}, "too large"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := client.Connect(testCtx(t), tc.dial(t), &client.Options{ProtocolVersion: tc.version, Limits: tc.limits})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			call := func(name string) (*mcp.CallToolResult, error) {
				return c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "greet", Arguments: jsontext.Value(`{"name":"` + name + `"}`)})
			}
			for range 2 {
				_, err := call(strings.Repeat("x", 2*limit))
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("an answer over the cap: %v, want an error naming %q", err, tc.want)
				}
				res, err := call("small")
				if err != nil || text(res) != "hello small" {
					t.Fatalf("the next call: %v %v", res, err)
				}
			}
		})
	}
}
