package server

import (
	"context"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestListenEndsGracefullyOnSessionClose: closing a stdio session ends
// its open subscriptions/listen requests with their result (2026
// subscriptions: a graceful end), not by dropping them.
func TestListenEndsGracefullyOnSessionClose(t *testing.T) {
	s := modernServer()
	p := newModernPeer(t, s, true)
	ss := s.Sessions()[0]
	done := make(chan error, 1)
	var res mcp.EmptyResult
	go func() {
		done <- p.conn.Call(context.Background(), mcp.MethodSubscriptionsListen, map[string]any{
			"_meta":         httpenv.EnvelopeMeta(nil),
			"notifications": map[string]any{"toolsListChanged": true},
		}, &res)
	}()
	select {
	case n := <-p.notes:
		if n.Method != mcp.NotificationSubscriptionsAcknowledged {
			t.Fatalf("first message %s", n.Method)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no acknowledgement")
	}
	go ss.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("listen ended with %v, want its result", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("listen not ended")
	}
	raw, _ := json.Marshal(res)
	if res.ResultType != mcp.ResultComplete {
		t.Errorf("listen result %s", raw)
	}
	if id, ok := res.Meta.SubscriptionID(); !ok || !id.IsValid() {
		t.Errorf("listen result without subscription id: %s", raw)
	}
}
