package e2e

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/ratelimit"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
)

// limitedServer has one tool, "echo", limited to one call per hour.
func limitedServer() *server.Server {
	s := server.New(&server.Options{Interceptors: []intercept.Interceptor{
		ratelimit.Interceptor(ratelimit.Options{
			Limiter: ratelimit.NewMemory(&ratelimit.MemoryOptions{Now: func() time.Time { return time.Unix(1_700_000_000, 0) }}),
			Tool:    ratelimit.Every(time.Hour, 1),
		}),
	}})
	server.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
		return "echo", nil
	})
	return s
}

// TestRateLimitBothEras: the second call is refused with
// CodeRateLimited and its retryAfterMs, in both eras over memory and
// HTTP.
func TestRateLimitBothEras(t *testing.T) {
	for _, tc := range icCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := icConnect(t, tc, limitedServer(), &client.Options{})
			icWant(t, c, "echo", nil, "echo")
			_, err := icCall(testCtx(t), c, "echo", nil)
			var e *jsonrpc.Error
			if !errors.As(err, &e) || e.Code != mcp.CodeRateLimited || string(e.Data) != `{"retryAfterMs":3600000}` {
				t.Fatalf("second call: %v, want CodeRateLimited with retryAfterMs 3600000 (the clock stands still)", err)
			}
		})
	}
}

// TestRateLimitHTTP: on Streamable HTTP a refused 2026-07-28 request is
// 429 with Retry-After; a refused legacy one keeps status 200 (the error
// travels in the body) and has Retry-After too.
func TestRateLimitHTTP(t *testing.T) {
	h := streamhttp.NewHandler(limitedServer(), &streamhttp.Options{Stateless: true})
	ts := httptest.NewServer(h)
	defer func() {
		h.Close()
		ts.Close()
	}()
	post := func(body string, headers map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	modern := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	mh := map[string]string{"MCP-Protocol-Version": mcp.Version20260728, "Mcp-Method": "tools/call", "Mcp-Name": "echo"}
	if r := post(modern, mh); r.StatusCode != 200 || r.Header.Get("Retry-After") != "" {
		t.Fatalf("first call: %s, Retry-After %q", r.Status, r.Header.Get("Retry-After"))
	}
	r := post(modern, mh)
	body, _ := io.ReadAll(r.Body)
	if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") != "3600" || !strings.Contains(string(body), `"code":-32029`) {
		t.Fatalf("modern refused: %s, Retry-After %q, %s", r.Status, r.Header.Get("Retry-After"), body)
	}
	legacy := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	r = post(legacy, map[string]string{"MCP-Protocol-Version": mcp.LatestLegacy})
	body, _ = io.ReadAll(r.Body)
	if r.StatusCode != http.StatusOK || r.Header.Get("Retry-After") != "3600" || !strings.Contains(string(body), `"code":-32029`) {
		t.Fatalf("legacy refused: %s, Retry-After %q, %s", r.Status, r.Header.Get("Retry-After"), body)
	}
}
