package streamhttp

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// Test support copied from the server package's own tests (fixtures,
// 2026-07-28 request builders and checks, a manual clock), which an
// external package cannot reach.

func benchServer() *server.Server {
	s := server.New(nil)
	server.AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, req *server.CallToolRequest, in httpenv.BenchIn) (httpenv.BenchOut, error) {
		return httpenv.BenchOut{City: in.City, Forecast: []float64{21.5, 22, 19.25}, Summary: "mild"}, nil
	})
	return s
}

// principalMiddleware names the principal from a test header, as
// authentication middleware would from a token.
func principalMiddleware(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if pr := r.Header.Get("X-Test-Principal"); pr != "" {
			r = r.WithContext(server.WithPrincipal(r.Context(), pr))
		}
		h.ServeHTTP(w, r)
	})
}

// xhSchema annotates string, integer and boolean arguments, one of them
// nested, with x-mcp-header (SEP-2243).
const xhSchema = `{"type":"object","properties":{` +
	`"region":{"type":"string","x-mcp-header":"Region"},` +
	`"level":{"type":"integer","x-mcp-header":"Level"},` +
	`"dry":{"type":"boolean","x-mcp-header":"Dry-Run"},` +
	`"scope":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},` +
	`"note":{"type":"string"}}}`

// modernEnv is the 2026-07-28 view of an httpEnv (httpenv.Modern).
type modernEnv struct {
	*httpenv.Modern
	legacy *httpEnv
	srv    *server.Server
	h      *Handler
}

func newModernEnv(t testing.TB, srv *server.Server, opts *Options) *modernEnv {
	t.Helper()
	legacy := newHTTPEnv(t, srv, opts)
	return &modernEnv{Modern: httpenv.NewModern(t, &legacy.Env, ""), legacy: legacy, srv: legacy.srv, h: legacy.h}
}

// xhServer serves one tool, xh, whose input schema annotates two
// arguments with x-mcp-header (SEP-2243: Mcp-Param-Region and
// Mcp-Param-Level); runs counts its calls.
func xhServer(runs *atomic.Int32) *server.Server {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "xh", Version: "1"}})
	s.AddRawTool(&mcp.Tool{Name: "xh", InputSchema: jsontext.Value(xhSchema)},
		func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
			runs.Add(1)
			return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "xh ok"}}}, nil
		})
	return s
}
