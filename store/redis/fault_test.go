package redisstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/clustertest"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
)

// TestRedisRestartMidSession: two instances share a Redis that dies in
// the middle of a legacy session. While it is down, the session's
// requests fail at once with a clear error (503, "session store is
// unreachable"), none hangs. Redis comes back empty (no persistence):
// the session is gone, the server answers 404, the client initializes a
// new session by itself, and calls — an elicitation answered across
// instances included, so the brokers have subscribed again — work.
func TestRedisRestartMidSession(t *testing.T) {
	redistest.Need(t)
	srv, err := redistest.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	const p = "restart:"
	c := clustertest.New(t, 2, func(int) clustertest.Backend {
		rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Sock})
		b, err := NewBroker(context.Background(), rdb, &BrokerOptions{Prefix: p})
		if err != nil {
			t.Fatal(err)
		}
		return clustertest.Backend{
			Sessions: NewSessionStore(rdb, &SessionStoreOptions{Prefix: p}),
			Events:   NewEventStore(rdb, &EventStoreOptions{Prefix: p}),
			Broker:   b,
			Close:    func() { _ = b.Close(); _ = rdb.Close() },
		}
	})
	cl := clustertest.Connect(t, c, &client.Options{ProtocolVersion: mcp.LatestLegacy, ElicitHandler: clustertest.Greet})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ask := &mcp.CallToolParams{Name: "ask"}
	res, err := cl.CallTool(ctx, ask)
	if err != nil {
		t.Fatal(err)
	}
	if got := clustertest.Text(t, res); got != "hello Ada" {
		t.Fatalf("before the outage: %q", got)
	}

	srv.Stop()
	// Past SessionCheckInterval, the session's copies read the store.
	c.Advance(streamhttp.DefaultSessionCheckInterval)
	for range 2 {
		start := time.Now()
		_, err = cl.CallTool(ctx, ask)
		if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "session store is unreachable") {
			t.Fatalf("call with Redis down: %v, want 503 and the reason", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("the failing call took %v", d)
		}
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	var last error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		res, last = cl.CallTool(ctx, ask)
		if last == nil {
			if got := clustertest.Text(t, res); got != "hello Ada" {
				t.Fatalf("after the restart: %q", got)
			}
			break
		}
		t.Logf("after the restart: %v", last)
	}
	if last != nil {
		t.Fatalf("no call succeeded within 30 s of Redis coming back: %v", last)
	}
}
