package redisstore

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/ratelimit"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
)

// TestRateLimitRedisDown: with the limiter's Redis stopped, a limited
// request is refused (fail closed) with 503 and a -32603 "Service
// Unavailable" body that names neither the Redis socket nor the bucket's
// key, on a session-less legacy POST, a 2026-07-28 POST and in a legacy
// session.
func TestRateLimitRedisDown(t *testing.T) {
	redistest.Need(t)
	srv, err := redistest.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Sock})
	defer rc.Close()
	const p = "rldown:"
	newServer := func() *server.Server {
		s := server.New(&server.Options{Interceptors: []intercept.Interceptor{ratelimit.Interceptor(ratelimit.Options{
			Limiter: NewRateLimiter(rc, &RateLimiterOptions{Prefix: p}),
			Tool:    ratelimit.Every(time.Second, 100),
		})}})
		server.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			return "echo", nil
		})
		return s
	}
	serve := func(opts *streamhttp.Options) string {
		h := streamhttp.NewHandler(newServer(), opts)
		ts := httptest.NewServer(h)
		t.Cleanup(func() { h.Close(); ts.Close() })
		return ts.URL
	}
	stateless, stateful := serve(&streamhttp.Options{Stateless: true}), serve(nil)
	post := func(url, body string, headers map[string]string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	modern := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	mh := map[string]string{"MCP-Protocol-Version": mcp.Version20260728, "Mcp-Method": "tools/call", "Mcp-Name": "echo"}
	legacy := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	lh := map[string]string{"MCP-Protocol-Version": mcp.LatestLegacy}

	// A legacy session, opened while Redis is up; a call works.
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + mcp.LatestLegacy + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	r, body := post(stateful, init, nil)
	sid := r.Header.Get("Mcp-Session-Id")
	if r.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %s %s", r.Status, body)
	}
	sh := map[string]string{"MCP-Protocol-Version": mcp.LatestLegacy, "Mcp-Session-Id": sid}
	post(stateful, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sh)
	if r, body := post(stateful, legacy, sh); r.StatusCode != 200 || !strings.Contains(body, `"echo"`) {
		t.Fatalf("with Redis up: %s %s", r.Status, body)
	}

	srv.Stop()
	for _, c := range []struct {
		what, url, body string
		headers         map[string]string
	}{
		{"session-less legacy", stateless, legacy, lh},
		{"2026-07-28", stateless, modern, mh},
		{"legacy session", stateful, legacy, sh},
	} {
		r, body := post(c.url, c.body, c.headers)
		if r.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, `"code":-32603`) || !strings.Contains(body, "Service Unavailable") {
			t.Errorf("%s with Redis down: %s %s; want 503 and -32603 Service Unavailable", c.what, r.Status, body)
		}
		for _, leak := range []string{srv.Sock, "redis", p, "t:echo", "dial"} {
			if strings.Contains(body, leak) {
				t.Errorf("%s: the answer tells the client %q: %s", c.what, leak, body)
			}
		}
	}
}
