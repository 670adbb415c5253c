package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestCallWithSentBeforeWrite: CallOptions.Sent learns each request's id
// before the peer can read the request, so before it can answer or name
// the id in anything it sends; a call that writes nothing does not call
// it.
func TestCallWithSentBeforeWrite(t *testing.T) {
	leakCheck(t)
	c, peer := rawPeer(t, ConnOptions{IDPrefix: "c-"})
	for i := range 2 {
		sent := make(chan mcp.ID, 2)
		done := make(chan error, 1)
		go func() {
			done <- c.CallWith(ctxGuard(t), "listen", nil, nil, CallOptions{Sent: func(id mcp.ID) { sent <- id }})
		}()
		req := recv(t, peer)
		select {
		case id := <-sent:
			if id != req.ID {
				t.Fatalf("call %d: Sent saw %v, the request has id %v", i, id, req.ID)
			}
		default:
			t.Fatalf("call %d: the peer read request %v before Sent was called", i, req.ID)
		}
		send(t, peer, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, req.ID))
		if err := wait(t, done, "the call to return"); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if len(sent) != 0 {
			t.Fatalf("call %d: Sent was called more than once", i)
		}
	}

	ctx, cancel := context.WithCancel(ctxGuard(t))
	cancel()
	called := false
	err := c.CallWith(ctx, "listen", nil, nil, CallOptions{Sent: func(mcp.ID) { called = true }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("CallWith with an ended context = %v, want context.Canceled", err)
	}
	if called {
		t.Error("Sent was called for a request that was never written")
	}
}
