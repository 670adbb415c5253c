package e2e

// The 2024-11-05 HTTP+SSE transport end to end: a server that speaks only
// that transport (the handler with LegacySSE, refusing Streamable HTTP
// POSTs as old servers do) is reached by client.Connect with no option —
// the transport falls back after the refused first POST — in each era
// choice, and serves tool calls, an elicitation inside a call and
// progress on the one stream.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// sseOnly serves srv over the 2024-11-05 transport only: a POST without
// ?sessionId is refused 405, as a server of that transport refuses it.
func sseOnly(t *testing.T, srv *server.Server) string {
	t.Helper()
	h := streamhttp.NewHandler(srv, &streamhttp.Options{LegacySSE: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && !r.URL.Query().Has("sessionId") {
			w.Header().Set("Allow", "GET")
			http.Error(w, "only the HTTP+SSE transport here", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	return ts.URL + "/sse"
}

func TestLegacySSEFallback(t *testing.T) {
	t.Parallel()
	srv := server.New(&server.Options{Info: mcp.Implementation{Name: "old", Version: "1"}})
	server.AddTool(srv, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		ans, ok, err := req.ElicitResult("name")
		if err != nil {
			return "", err
		}
		if !ok {
			return "", server.NeedInput().Elicit("name", &mcp.ElicitParams{Message: "Name?",
				RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		}
		if err := req.Progress(ctx, 1, 1, "greeting"); err != nil {
			return "", err
		}
		return "hello " + ans.Content["name"].(string), nil
	})
	for _, version := range []string{"", mcp.LatestLegacy, mcp.Version20241105} {
		t.Run("version "+version, func(t *testing.T) {
			tr := streamable.New(sseOnly(t, srv), nil)
			progress := make(chan float64, 4)
			c, err := client.Connect(testCtx(t), tr, &client.Options{
				ProtocolVersion: version,
				ElicitHandler: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
				},
			})
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer c.Close()
			if !tr.Legacy() {
				t.Fatal("the transport did not fall back to the 2024-11-05 transport")
			}
			ctx := client.WithProgress(testCtx(t), func(p *mcp.ProgressParams) { progress <- p.Progress })
			res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "greet"})
			if err != nil || text(res) != "hello Ada" {
				t.Fatalf("CallTool = %v (%+v), %v", text(res), res, err)
			}
			if c.Era() == client.EraLegacy {
				if got := recv(t, progress, "progress"); got != 1 {
					t.Errorf("progress %v", got)
				}
				want := version
				if want == "" {
					want = mcp.LatestLegacy
				}
				if c.ProtocolVersion() != want {
					t.Errorf("negotiated %s, want %s", c.ProtocolVersion(), want)
				}
			}
		})
	}
}
