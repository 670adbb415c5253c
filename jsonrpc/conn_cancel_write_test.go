package jsonrpc

// Tests of a call cancelled while its request is still being written:
// the request may have reached the peer, so the peer is told.

import (
	"context"
	"errors"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// heldWrite is a carrier whose writes of a request deliver the request to
// the peer and then wait for the caller's context, as an HTTP POST whose
// body the server read but whose answer's headers it holds: the write
// fails with the context's error although the peer has the request.
type heldWrite struct {
	transport.Conn
	delivered chan struct{}
}

func (h *heldWrite) Write(ctx context.Context, m transport.Message) error {
	if err := h.Conn.Write(ctx, m); err != nil {
		return err
	}
	if dm, derr := decode(m.Data, Limits{}); derr != nil || !dm.IsRequest() {
		return nil
	}
	h.delivered <- struct{}{}
	<-ctx.Done()
	return ctx.Err()
}

// reading reads every message the Conn writes to its raw peer tb, in
// order, until tb is closed (by the test's cleanup): the memory carrier
// hands a message over only while its peer reads.
func reading(t *testing.T, tb transport.Conn) <-chan *Message {
	out := make(chan *Message, 16)
	go func() {
		defer close(out)
		for {
			data, err := tb.Read(context.Background())
			if err != nil {
				return
			}
			m, e := decode(data, Limits{})
			if e != nil {
				t.Errorf("the Conn wrote an invalid message %s: %v", data, e)
				return
			}
			out <- m
		}
	}()
	return out
}

func TestConnCancelDuringWriteSendsNotification(t *testing.T) {
	leakCheck(t)
	ta, tb := memory.NewPair()
	h := &heldWrite{Conn: ta, delivered: make(chan struct{}, 1)}
	c := NewConn(h, &ConnOptions{})
	c.Start()
	t.Cleanup(func() {
		closeWithin(t, c)
		tb.Close()
	})

	peer := reading(t, tb)
	ctx, cancel := context.WithCancelCause(ctxGuard(t))
	callErr := make(chan error, 1)
	go func() { callErr <- c.Call(ctx, "slow", nil, nil) }()
	req := wait(t, peer, "the request")
	wait(t, h.delivered, "the request to be delivered")
	cause := errors.New("user gave up")
	cancel(cause)
	if err := wait(t, callErr, "Call to return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call = %v, want context.Canceled", err)
	}
	n := wait(t, peer, "the cancellation")
	if n.Method != MethodCancelled || !n.IsNotification() {
		t.Fatalf("after the cancelled write the peer got %v, want notifications/cancelled", n)
	}
	var p struct {
		RequestID mcp.ID `json:"requestId"`
		Reason    string `json:"reason"`
	}
	if err := json.Unmarshal(n.Params, &p); err != nil {
		t.Fatal(err)
	}
	if p.RequestID != req.ID || p.Reason != cause.Error() {
		t.Errorf("cancellation = %+v, want requestId %s and reason %q", p, req.ID, cause)
	}
}

// TestConnCallWithEndedContextWritesNothing: a call whose context has
// already ended writes neither the request nor a cancellation of it.
func TestConnCallWithEndedContextWritesNothing(t *testing.T) {
	leakCheck(t)
	c, tb := rawPeer(t, ConnOptions{})
	peer := reading(t, tb)
	ctx, cancel := context.WithCancel(ctxGuard(t))
	cancel()
	if err := c.Call(ctx, "slow", nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call = %v, want context.Canceled", err)
	}
	if err := c.Notify(ctxGuard(t), "marker", nil); err != nil {
		t.Fatal(err)
	}
	// The carrier keeps order: the marker is the first thing written.
	if m := wait(t, peer, "the marker"); m.Method != "marker" {
		t.Fatalf("first message = %v, want the marker", m)
	}
}

// TestConnInitializeCancelledDuringWrite: initialize is never cancelled
// (2025-11-25), even when its write is cut short.
func TestConnInitializeCancelledDuringWrite(t *testing.T) {
	leakCheck(t)
	ta, tb := memory.NewPair()
	h := &heldWrite{Conn: ta, delivered: make(chan struct{}, 1)}
	c := NewConn(h, &ConnOptions{})
	c.Start()
	t.Cleanup(func() {
		closeWithin(t, c)
		tb.Close()
	})
	peer := reading(t, tb)
	ctx, cancel := context.WithCancel(ctxGuard(t))
	callErr := make(chan error, 1)
	go func() { callErr <- c.Call(ctx, methodInitialize, nil, nil) }()
	wait(t, peer, "the request")
	wait(t, h.delivered, "the request to be delivered")
	cancel()
	wait(t, callErr, "Call to return")
	if err := c.Notify(ctxGuard(t), "marker", nil); err != nil {
		t.Fatal(err)
	}
	if m := wait(t, peer, "the marker"); m.Method != "marker" {
		t.Fatalf("after the cut initialize the peer got %v, want the marker", m)
	}
}
