package e2e

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// TestSetHandlerStartsListener: over Streamable HTTP, a legacy client
// connected without handlers opens no GET stream; setting its first
// handler after Connect opens it, and the handler answers the server's
// requests (here inside a call).
func TestSetHandlerStartsListener(t *testing.T) {
	t.Parallel()
	srv := server.New(&server.Options{Info: mcp.Implementation{Name: "late", Version: "1"}})
	server.AddTool(srv, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		res, err := req.ListRoots(ctx)
		if err != nil {
			return "", err
		}
		return res.Roots[0].URI, nil
	})
	h := streamhttp.NewHandler(srv, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	tr := streamable.New(ts.URL, nil)
	c, err := client.Connect(testCtx(t), tr, &client.Options{ProtocolVersion: mcp.LatestLegacy})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if running, _ := tr.ListenerStatus(); running {
		t.Fatal("Connect without handlers started the listener")
	}
	c.SetListRootsHandler(func(context.Context) (*mcp.ListRootsResult, error) {
		return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///late"}}}, nil
	})
	select {
	case <-tr.Listening():
	case <-testCtx(t).Done():
		t.Fatal("setting the first handler did not open the GET stream")
	}
	// The capability was not declared at initialize (a legacy session
	// keeps what it declared), so this server refuses to ask.
	res, err := c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "roots"})
	if err != nil || !res.IsError {
		t.Fatalf("CallTool = %v, %v; want the tool error of an undeclared capability", res, err)
	}
}
