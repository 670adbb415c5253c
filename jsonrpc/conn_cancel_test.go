package jsonrpc

// Tests of how a Conn ends its calls: cancellation (the notification sent
// and not forwarded, initialize never cancelled), call timeouts, a peer
// that closes mid-call, Close unblocking everything and not waiting for
// a stuck handler, and a Conn never started. The helpers are in
// conn_test.go.

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport/memory"
)

func TestConnCancelSendsNotification(t *testing.T) {
	leakCheck(t)
	var wa, wb wire
	bl := newBlocker()
	a, b := pair(t, ConnOptions{Observe: wa.observe}, ConnOptions{Handler: bl.handler(), Observe: wb.observe})

	ctx, cancel := context.WithCancel(ctxGuard(t))
	callErr := make(chan error, 1)
	go func() { callErr <- a.Call(ctx, "block", map[string]string{"k": "v"}, nil) }()
	req := wait(t, bl.started, "the handler to start")
	cancel()
	if err := wait(t, callErr, "Call to return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call = %v, want context.Canceled", err)
	}
	if cause := wait(t, bl.finished, "the handler to see the cancellation"); cause != errPeerCancelled {
		t.Fatalf("handler ctx cause = %v, want errPeerCancelled", cause)
	}
	waitHandlers(t, b)

	// A sent notifications/cancelled naming the request's id.
	var cancels []*Message
	for _, m := range wa.decoded(t, false) {
		if m.Method == MethodCancelled {
			cancels = append(cancels, m)
		}
	}
	if len(cancels) != 1 {
		t.Fatalf("A sent %d cancellations, want 1", len(cancels))
	}
	if !cancels[0].IsNotification() {
		t.Errorf("cancellation is not a notification: %v", cancels[0])
	}
	var p struct {
		RequestID jsontext.Value `json:"requestId"`
		Reason    string         `json:"reason"`
	}
	if err := json.Unmarshal(cancels[0].Params, &p); err != nil {
		t.Fatal(err)
	}
	if got, err := mcp.ParseID(p.RequestID); err != nil || got != req.ID {
		t.Errorf("cancellation requestId = %s, want %s", p.RequestID, req.ID)
	}
	// B answered nothing for the cancelled request.
	for _, m := range wb.decoded(t, false) {
		if m.ID == req.ID {
			t.Errorf("B answered the cancelled request: %v", m)
		}
	}
	// B never passed notifications/cancelled to a handler and still works.
	var s string
	if err := a.Call(ctxGuard(t), "ping", nil, &s); err != nil || s != "pong" {
		t.Errorf("ping after cancel: %q %v", s, err)
	}
}

func TestConnCancelledNotificationNotForwarded(t *testing.T) {
	leakCheck(t)
	got := make(chan string, 10)
	h := funcs{
		req:  func(ctx context.Context, m *Message) (any, error) { return "pong", nil },
		note: func(ctx context.Context, m *Message) { got <- m.Method },
	}
	a, _ := pair(t, ConnOptions{}, ConnOptions{Handler: h})
	ctx := ctxGuard(t)
	for _, params := range []any{
		map[string]any{"requestId": 99},
		map[string]any{"requestId": nil},
		map[string]any{"requestId": 1.5},
		map[string]any{},
		[]int{1},
	} {
		if err := a.Notify(ctx, MethodCancelled, params); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Notify(ctx, "notifications/other", nil); err != nil {
		t.Fatal(err)
	}
	if m := wait(t, got, "a notification"); m != "notifications/other" {
		t.Errorf("handler got %q, want only notifications/other", m)
	}
	if err := a.Call(ctx, "ping", nil, nil); err != nil {
		t.Errorf("ping after bogus cancellations: %v", err)
	}
}

func TestConnInitializeNotCancelled(t *testing.T) {
	leakCheck(t)
	var wa wire
	bl := newBlocker()
	a, b := pair(t, ConnOptions{Observe: wa.observe}, ConnOptions{Handler: bl.handler()})

	ctx, cancel := context.WithCancel(ctxGuard(t))
	callErr := make(chan error, 1)
	go func() { callErr <- a.Call(ctx, "initialize", map[string]any{}, nil) }()
	wait(t, bl.started, "initialize to start")
	cancel()
	if err := wait(t, callErr, "Call to return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call = %v, want context.Canceled", err)
	}
	// B answers initialize on its reader goroutine (see Handler): B reads
	// on once the handler returns.
	close(bl.release)
	if cause := wait(t, bl.finished, "initialize to finish"); cause != nil {
		t.Errorf("initialize handler ctx ended: %v", cause)
	}
	// A round trip: B's reader has processed everything A sent before it.
	if err := a.Call(ctxGuard(t), "ping", nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, m := range wa.decoded(t, false) {
		if m.Method == MethodCancelled {
			t.Errorf("initialize was cancelled on the wire: %v", m)
		}
	}
	waitHandlers(t, b)
}

func TestConnCallTimeout(t *testing.T) {
	leakCheck(t)
	bl := newBlocker()
	a, _ := pair(t, ConnOptions{CallTimeout: 50 * time.Millisecond}, ConnOptions{Handler: bl.handler()})
	err := a.Call(context.Background(), "block", nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Call = %v, want context.DeadlineExceeded", err)
	}
	if _, ok := AsError(err); ok {
		t.Errorf("timeout reported as a JSON-RPC error: %v", err)
	}
	if cause := wait(t, bl.finished, "the handler to be cancelled"); cause != errPeerCancelled {
		t.Errorf("handler cause = %v, want errPeerCancelled", cause)
	}
	// Fast calls are unaffected.
	var s string
	if err := a.Call(context.Background(), "ping", nil, &s); err != nil || s != "pong" {
		t.Errorf("ping: %q %v", s, err)
	}
}

func TestConnPeerClosesMidCall(t *testing.T) {
	leakCheck(t)
	bl := newBlocker()
	a, b := pair(t, ConnOptions{}, ConnOptions{Handler: bl.handler()})
	const n = 5
	errs := make(chan error, n)
	for range n {
		go func() { errs <- a.Call(ctxGuard(t), "block", nil, nil) }()
	}
	for range n {
		wait(t, bl.started, "handlers to start")
	}
	closeWithin(t, b)
	for range n {
		err := wait(t, errs, "pending calls to fail")
		if !errors.Is(err, ErrClosed) {
			t.Errorf("pending Call = %v, want ErrClosed", err)
		}
		if !errors.Is(err, io.EOF) {
			t.Errorf("pending Call = %v, want it to carry io.EOF", err)
		}
	}
	wait(t, a.Done(), "A to end")
	if err := a.Err(); err != io.EOF || !IsEOF(err) {
		t.Errorf("A.Err() = %v, want io.EOF", err)
	}
	if err := a.Call(ctxGuard(t), "ping", nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Call after peer closed = %v, want ErrClosed", err)
	}
	if err := a.Notify(ctxGuard(t), "n", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Notify after peer closed = %v, want ErrClosed", err)
	}
	for range n {
		if cause := wait(t, bl.finished, "B's handlers to be cancelled"); cause == nil || cause == errPeerCancelled {
			t.Errorf("B handler cause = %v, want the connection's end", cause)
		}
	}
	if err := a.Wait(); err != io.EOF {
		t.Errorf("A.Wait() = %v, want io.EOF", err)
	}
}

// TestConnCloseUnblocksEverything closes a Conn with calls pending in both
// directions and handlers waiting on their contexts.
func TestConnCloseUnblocksEverything(t *testing.T) {
	leakCheck(t)
	blA, blB := newBlocker(), newBlocker()
	// B sees A's Close as the end of its input; its handlers wait for
	// their contexts, so B ends at once rather than drain them
	// (TestConnEOFDrain* cover the drain).
	a, b := pair(t, ConnOptions{Handler: blA.handler()}, ConnOptions{Handler: blB.handler(), DrainTimeout: -1})
	const n = 8
	aErrs, bErrs := make(chan error, n), make(chan error, n)
	for range n {
		go func() { aErrs <- a.Call(context.Background(), "block", nil, nil) }()
		go func() { bErrs <- b.Call(context.Background(), "block", nil, nil) }()
	}
	for range n {
		wait(t, blA.started, "A's handlers")
		wait(t, blB.started, "B's handlers")
	}
	closeWithin(t, a)
	// Close returned: A's handlers have all seen their contexts end.
	for range n {
		select {
		case cause := <-blA.finished:
			if cause == nil {
				t.Error("A handler released instead of cancelled")
			}
		default:
			t.Fatal("Close returned before A's handlers finished")
		}
		if err := wait(t, aErrs, "A's calls"); !errors.Is(err, ErrClosed) || errors.Is(err, io.EOF) {
			t.Errorf("A Call = %v, want exactly ErrClosed", err)
		}
		if err := wait(t, bErrs, "B's calls"); !errors.Is(err, ErrClosed) {
			t.Errorf("B Call = %v, want ErrClosed", err)
		}
	}
	if err := a.Err(); err != ErrClosed {
		t.Errorf("A.Err() = %v, want ErrClosed", err)
	}
	wait(t, b.Done(), "B to see the end")
	if !IsEOF(b.Err()) {
		t.Errorf("B.Err() = %v, want io.EOF", b.Err())
	}
	closeWithin(t, b)
	for range n {
		if cause := wait(t, blB.finished, "B's handlers"); cause == nil {
			t.Error("B handler released instead of cancelled")
		}
	}
	// Close is idempotent.
	if err := a.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// TestConnCloseStuckHandler: Close gives up on a handler that ignores its
// context after ShutdownTimeout.
func TestConnCloseStuckHandler(t *testing.T) {
	leakCheck(t)
	started, unstick := make(chan struct{}), make(chan struct{})
	exited := make(chan struct{})
	h := funcs{req: func(ctx context.Context, m *Message) (any, error) {
		defer close(exited)
		close(started)
		<-unstick // ignores ctx
		return nil, nil
	}}
	a, b := pair(t, ConnOptions{}, ConnOptions{Handler: h, ShutdownTimeout: 20 * time.Millisecond})
	go a.Call(context.Background(), "stuck", nil, nil) //nolint:errcheck // fails with ErrClosed
	wait(t, started, "the handler")
	closeWithin(t, b)
	select {
	case <-exited:
		t.Fatal("the stuck handler finished before it was released")
	default:
	}
	close(unstick)
	wait(t, exited, "the handler to exit")
	closeWithin(t, a)
	waitHandlers(t, b)
}

func TestConnNeverStarted(t *testing.T) {
	leakCheck(t)
	ta, tb := memory.NewPair()
	defer tb.Close()
	c := NewConn(ta, nil)
	closeWithin(t, c)
	if err := c.Call(context.Background(), "x", nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Call after Close = %v", err)
	}
	if _, err := tb.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("peer Read after Close = %v, want io.EOF", err)
	}
}
