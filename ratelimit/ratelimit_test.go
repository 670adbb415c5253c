package ratelimit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// clock is a manual clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestMemoryBucket(t *testing.T) {
	clk := &clock{now: time.Unix(1000, 0)}
	m := NewMemory(&MemoryOptions{Now: clk.Now})
	r := Every(time.Second, 2) // 1/s, burst 2
	ctx := context.Background()
	for i := range 2 {
		if wait, _ := m.Take(ctx, "k", r); wait != 0 {
			t.Fatalf("take %d: wait %v, want a token (burst)", i, wait)
		}
	}
	if wait, _ := m.Take(ctx, "k", r); wait != time.Second {
		t.Fatalf("empty bucket: wait %v, want 1s", wait)
	}
	clk.advance(400 * time.Millisecond)
	if wait, _ := m.Take(ctx, "k", r); wait != 600*time.Millisecond {
		t.Fatalf("after 400ms: wait %v, want 600ms", wait)
	}
	clk.advance(600 * time.Millisecond)
	if wait, _ := m.Take(ctx, "k", r); wait != 0 {
		t.Fatalf("after 1s: wait %v, want a token", wait)
	}
	if wait, _ := m.Take(ctx, "other", r); wait != 0 {
		t.Fatalf("another key: wait %v, want its own full bucket", wait)
	}
	if wait, _ := m.Take(ctx, "k", Rate{}); wait != 0 {
		t.Fatalf("the zero Rate limited: %v", wait)
	}
}

func TestMemoryMaxKeys(t *testing.T) {
	clk := &clock{now: time.Unix(1000, 0)}
	m := NewMemory(&MemoryOptions{Now: clk.Now, MaxKeys: 3})
	r := Every(time.Second, 1)
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		if _, err := m.Take(ctx, k, r); err != nil {
			t.Fatal(err)
		}
		if n := m.Len(); n > 3 {
			t.Fatalf("%d buckets kept, MaxKeys 3", n)
		}
	}
}

// TestInterceptor: each kind of bucket refuses its own traffic with
// CodeRateLimited and retryAfterMs, and only server inbound requests
// count.
func TestInterceptor(t *testing.T) {
	clk := &clock{now: time.Unix(1000, 0)}
	ic := Interceptor(Options{
		Limiter:   NewMemory(&MemoryOptions{Now: clk.Now}),
		Principal: Every(time.Second, 3),
		Session:   Every(time.Second, 2),
		Tool:      Every(time.Second, 1),
	})
	var served int
	h := ic(func(context.Context, *intercept.Call) (any, error) { served++; return "ok", nil })
	call := func(c intercept.Call) error {
		c.Side, c.Inbound = intercept.Server, true
		_, err := h(context.Background(), &c)
		return err
	}
	wantLimited := func(err error, ms string) {
		t.Helper()
		var e *jsonrpc.Error
		if !errors.As(err, &e) || e.Code != mcp.CodeRateLimited || string(e.Data) != `{"retryAfterMs":`+ms+`}` {
			t.Fatalf("got %v, want CodeRateLimited retryAfterMs %s", err, ms)
		}
	}
	// Tool: one call of "slow", all callers together.
	if err := call(intercept.Call{Method: mcp.MethodToolsCall, Name: "slow", Principal: "ann"}); err != nil {
		t.Fatal(err)
	}
	wantLimited(call(intercept.Call{Method: mcp.MethodToolsCall, Name: "slow", Principal: "bob"}), "1000")
	// Session: two requests of session s1 (ann's second and third).
	if err := call(intercept.Call{Method: mcp.MethodToolsList, SessionID: "s1", Principal: "ann"}); err != nil {
		t.Fatal(err)
	}
	if err := call(intercept.Call{Method: mcp.MethodToolsList, SessionID: "s1", Principal: "ann"}); err != nil {
		t.Fatal(err)
	}
	// Principal ann has had three: the fourth is refused, in any session.
	wantLimited(call(intercept.Call{Method: mcp.MethodToolsList, SessionID: "s2", Principal: "ann"}), "1000")
	// Session s1 is empty too, for another principal.
	wantLimited(call(intercept.Call{Method: mcp.MethodToolsList, SessionID: "s1", Principal: "cy"}), "1000")
	// Notifications, pings and outbound messages are not counted.
	for range 5 {
		if err := call(intercept.Call{Method: mcp.MethodPing, Principal: "ann"}); err != nil {
			t.Fatal(err)
		}
		if err := call(intercept.Call{Method: "notifications/initialized", Notification: true, Principal: "ann"}); err != nil {
			t.Fatal(err)
		}
	}
	clk.advance(time.Second)
	if err := call(intercept.Call{Method: mcp.MethodToolsCall, Name: "slow", Principal: "bob"}); err != nil {
		t.Fatalf("after a second: %v", err)
	}
	if served != 14 {
		t.Errorf("served %d, want 14", served)
	}
}
