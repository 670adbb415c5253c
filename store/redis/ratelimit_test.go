package redisstore

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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

// manualClock is a clock tests move by hand.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// otherClient is a second connection to the test's redis-server, as
// another instance would have.
func otherClient(t *testing.T) *redis.Client {
	c := redis.NewClient(rdb.Options())
	t.Cleanup(func() { c.Close() })
	return c
}

// TestRateLimiterAcrossInstances: two limiters (two instances, two
// connections) share one bucket; it refills by the injected clock and
// expires once full again.
func TestRateLimiterAcrossInstances(t *testing.T) {
	redistest.Need(t)
	p := prefix(t)
	clk := &manualClock{now: time.UnixMilli(1_700_000_000_000)}
	a := NewRateLimiter(rdb, &RateLimiterOptions{Prefix: p, Now: clk.Now})
	b := NewRateLimiter(otherClient(t), &RateLimiterOptions{Prefix: p, Now: clk.Now})
	r := ratelimit.Every(time.Second, 2)
	ctx := context.Background()
	take := func(l *RateLimiter) time.Duration {
		t.Helper()
		wait, err := l.Take(ctx, "k", r)
		if err != nil {
			t.Fatal(err)
		}
		return wait
	}
	if w := take(a); w != 0 {
		t.Fatalf("a: %v", w)
	}
	if w := take(b); w != 0 {
		t.Fatalf("b: %v", w)
	}
	if w := take(a); w != time.Second {
		t.Fatalf("a, bucket empty: wait %v, want 1s", w)
	}
	clk.advance(250 * time.Millisecond)
	if w := take(b); w != 750*time.Millisecond {
		t.Fatalf("b after 250ms: wait %v, want 750ms", w)
	}
	clk.advance(750 * time.Millisecond)
	if w := take(b); w != 0 {
		t.Fatalf("b after 1s: wait %v", w)
	}
	ttl, err := rdb.PTTL(ctx, p+"k").Result()
	if err != nil || ttl <= 0 || ttl > 3*time.Second {
		t.Errorf("bucket TTL %v, %v; want until full again plus a second", ttl, err)
	}
}

// TestRateLimitInterceptorAcrossInstances: two servers limited by one
// Redis bucket per tool: a 2026-07-28 call on one instance uses the
// token, and a legacy (session-less) call on the other is refused with
// Retry-After.
func TestRateLimitInterceptorAcrossInstances(t *testing.T) {
	redistest.Need(t)
	p := prefix(t)
	clk := &manualClock{now: time.UnixMilli(1_700_000_000_000)}
	instance := func(rc redis.UniversalClient) string {
		s := server.New(&server.Options{Interceptors: []intercept.Interceptor{ratelimit.Interceptor(ratelimit.Options{
			Limiter: NewRateLimiter(rc, &RateLimiterOptions{Prefix: p, Now: clk.Now}),
			Tool:    ratelimit.Every(time.Minute, 1),
		})}})
		server.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			return "echo", nil
		})
		h := streamhttp.NewHandler(s, &streamhttp.Options{Stateless: true})
		ts := httptest.NewServer(h)
		t.Cleanup(func() {
			h.Close()
			ts.Close()
		})
		return ts.URL
	}
	urlA, urlB := instance(rdb), instance(otherClient(t))
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
	if r, body := post(urlA, modern, mh); r.StatusCode != 200 || strings.Contains(body, "error") {
		t.Fatalf("instance A: %s %s", r.Status, body)
	}
	r, body := post(urlB, legacy, lh)
	if !strings.Contains(body, `"code":-32029`) || r.Header.Get("Retry-After") != "60" {
		t.Fatalf("instance B, legacy: %s, Retry-After %q, %s", r.Status, r.Header.Get("Retry-After"), body)
	}
	r, body = post(urlB, modern, mh)
	if r.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, `"code":-32029`) {
		t.Fatalf("instance B, modern: %s %s", r.Status, body)
	}
	clk.advance(time.Minute)
	if r, body := post(urlB, legacy, lh); strings.Contains(body, "error") {
		t.Fatalf("instance B a minute later: %s %s", r.Status, body)
	}
}
