package jsonrpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// hangGuard bounds every wait in these tests. It is never the thing being
// measured: reaching it means the code under test hung.
const hangGuard = 10 * time.Second

func leakCheck(t *testing.T) {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t) })
}

// funcs is a Handler built from functions.
type funcs struct {
	req  func(ctx context.Context, m *Message) (any, error)
	note func(ctx context.Context, m *Message)
}

func (f funcs) HandleRequest(ctx context.Context, m *Message) (any, error) {
	if f.req == nil {
		return nil, ErrMethodNotFound
	}
	return f.req(ctx, m)
}

func (f funcs) HandleNotification(ctx context.Context, m *Message) {
	if f.note != nil {
		f.note(ctx, m)
	}
}

// pair starts two Conns over a memory pair; both are closed at cleanup.
func pair(t *testing.T, a, b ConnOptions) (*Conn, *Conn) {
	t.Helper()
	ta, tb := memory.NewPair()
	ca, cb := NewConn(ta, a), NewConn(tb, b)
	ca.Start()
	cb.Start()
	t.Cleanup(func() {
		closeWithin(t, ca)
		closeWithin(t, cb)
	})
	return ca, cb
}

// rawPeer starts a Conn over a memory pair and returns the other end for
// the test to speak the wire protocol on.
func rawPeer(t *testing.T, opts ConnOptions) (*Conn, transport.Conn) {
	t.Helper()
	ta, tb := memory.NewPair()
	c := NewConn(ta, opts)
	c.Start()
	t.Cleanup(func() {
		closeWithin(t, c)
		tb.Close()
	})
	return c, tb
}

func closeWithin(t *testing.T, c *Conn) {
	t.Helper()
	done := make(chan struct{})
	go func() { c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(hangGuard):
		t.Fatal("Close hung")
	}
}

func ctxGuard(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	return ctx
}

// recv reads and decodes one message from a raw end.
func recv(t *testing.T, tc transport.Conn) *Message {
	t.Helper()
	data, err := tc.Read(ctxGuard(t))
	if err != nil {
		t.Fatalf("raw Read: %v", err)
	}
	m, e := Decode(data, Limits{})
	if e != nil {
		t.Fatalf("the Conn wrote an invalid message %s: %v", data, e)
	}
	return m
}

func send(t *testing.T, tc transport.Conn, msg string) {
	t.Helper()
	if err := tc.Write(ctxGuard(t), transport.Message{Data: []byte(msg)}); err != nil {
		t.Fatalf("raw Write: %v", err)
	}
}

// wait receives from ch or fails after hangGuard.
func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangGuard):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// wire records what an Observe hook sees.
type wire struct {
	mu   sync.Mutex
	msgs []wireMsg
}

type wireMsg struct {
	in  bool
	raw string
}

func (w *wire) observe(in bool, msg []byte) {
	w.mu.Lock()
	w.msgs = append(w.msgs, wireMsg{in, string(msg)})
	w.mu.Unlock()
}

// decoded returns the recorded messages of one direction, decoded.
func (w *wire) decoded(t *testing.T, in bool) []*Message {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*Message
	for _, m := range w.msgs {
		if m.in != in {
			continue
		}
		d, e := Decode([]byte(m.raw), Limits{})
		if e != nil {
			t.Fatalf("invalid message on the wire %s: %v", m.raw, e)
		}
		out = append(out, d)
	}
	return out
}

type echoParams struct {
	From string `json:"from"`
	N    int    `json:"n"`
}

type echoResult struct {
	By   string `json:"by"`
	From string `json:"from"`
	N    int    `json:"n"`
}

func echoHandler(name string) funcs {
	return funcs{req: func(ctx context.Context, m *Message) (any, error) {
		var p echoParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return nil, NewError(mcp.CodeInvalidParams, err.Error())
		}
		return echoResult{By: name, From: p.From, N: p.N}, nil
	}}
}

// TestConnConcurrentBothDirections runs many calls at once in both
// directions, more than MaxInFlight on each side, and checks that each gets
// its own answer.
func TestConnConcurrentBothDirections(t *testing.T) {
	leakCheck(t)
	for _, maxInFlight := range []int{0, 4, 1} {
		t.Run(fmt.Sprintf("MaxInFlight=%d", maxInFlight), func(t *testing.T) {
			a, b := pair(t,
				ConnOptions{Handler: echoHandler("a"), MaxInFlight: maxInFlight},
				ConnOptions{Handler: echoHandler("b"), MaxInFlight: maxInFlight})
			const n = 200
			ctx := ctxGuard(t)
			errs := make(chan error, 2*n)
			var wg sync.WaitGroup
			for i := range n {
				for _, side := range []struct {
					c        *Conn
					from, by string
				}{{a, "a", "b"}, {b, "b", "a"}} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var r echoResult
						if err := side.c.Call(ctx, "echo", echoParams{From: side.from, N: i}, &r); err != nil {
							errs <- fmt.Errorf("%s call %d: %w", side.from, i, err)
							return
						}
						if r != (echoResult{By: side.by, From: side.from, N: i}) {
							errs <- fmt.Errorf("%s call %d got %+v", side.from, i, r)
						}
					}()
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

func TestConnHandlerErrors(t *testing.T) {
	leakCheck(t)
	custom := Errorf(-1, "custom failure").WithData(map[string]any{"retry": true, "n": 3})
	h := funcs{req: func(ctx context.Context, m *Message) (any, error) {
		switch m.Method {
		case "custom":
			return nil, custom
		case "wrapped":
			return nil, fmt.Errorf("while working: %w", NewError(mcp.CodeInvalidParams, "bad params"))
		case "plain":
			return nil, errors.New("disk on fire")
		case "panic":
			panic("handler bug")
		case "panic-error":
			panic(NewError(-5, "not what it seems"))
		case "notfound":
			return nil, ErrMethodNotFound
		case "raw":
			return jsontext.Value("{\n  \"pretty\": [1, 2]\n}"), nil
		case "nil":
			return nil, nil
		case "unencodable":
			return func() {}, nil
		}
		return "ok", nil
	}}
	a, _ := pair(t, ConnOptions{}, ConnOptions{Handler: h})
	ctx := ctxGuard(t)

	err := a.Call(ctx, "custom", nil, nil)
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("custom: %v is not an *Error", err)
	}
	if e.Code != -1 || e.Message != "custom failure" {
		t.Errorf("custom: got %d %q", e.Code, e.Message)
	}
	var data struct {
		Retry bool `json:"retry"`
		N     int  `json:"n"`
	}
	if err := json.Unmarshal(e.Data, &data); err != nil || !data.Retry || data.N != 3 {
		t.Errorf("custom: data %s decoded as %+v (%v)", e.Data, data, err)
	}

	for _, tc := range []struct {
		method string
		code   int64
		msg    string // substring of the message
	}{
		{"wrapped", mcp.CodeInvalidParams, "bad params"},
		{"plain", mcp.CodeInternalError, "disk on fire"},
		{"panic", mcp.CodeInternalError, "panic"},
		{"panic-error", mcp.CodeInternalError, "panic"},
		{"notfound", mcp.CodeMethodNotFound, "Method not found"},
		{"unencodable", mcp.CodeInternalError, "encode"},
	} {
		err := a.Call(ctx, tc.method, nil, nil)
		e, ok := AsError(err)
		if !ok {
			t.Errorf("%s: %v is not an *Error", tc.method, err)
			continue
		}
		if e.Code != tc.code || !strings.Contains(e.Message, tc.msg) {
			t.Errorf("%s: got %d %q, want %d containing %q", tc.method, e.Code, e.Message, tc.code, tc.msg)
		}
	}

	// The Conn keeps serving after a panic.
	var s string
	if err := a.Call(ctx, "ok", nil, &s); err != nil || s != "ok" {
		t.Errorf("call after panic: %q, %v", s, err)
	}
	var raw jsontext.Value
	// A jsontext.Value result is sent verbatim (the memory transport does
	// not reframe it).
	if err := a.Call(ctx, "raw", nil, &raw); err != nil || string(raw) != "{\n  \"pretty\": [1, 2]\n}" {
		t.Errorf("raw result: %q, %v", raw, err)
	}
	if err := a.Call(ctx, "nil", nil, &raw); err != nil {
		t.Errorf("nil result: %v", err)
	}
	// A result that does not fit the destination is a decoding error, not
	// an *Error.
	var n int
	err = a.Call(ctx, "ok", nil, &n)
	if err == nil {
		t.Error("decoding a string result into an int succeeded")
	} else if _, isRPC := AsError(err); isRPC {
		t.Errorf("decoding failure reported as a JSON-RPC error: %v", err)
	}
}

func TestConnNilHandler(t *testing.T) {
	leakCheck(t)
	a, b := pair(t, ConnOptions{}, ConnOptions{})
	ctx := ctxGuard(t)
	for _, c := range []*Conn{a, b} {
		if err := c.Notify(ctx, "notifications/whatever", map[string]int{"x": 1}); err != nil {
			t.Fatalf("Notify: %v", err)
		}
		err := c.Call(ctx, "tools/list", nil, nil)
		e, ok := AsError(err)
		if !ok || e.Code != mcp.CodeMethodNotFound || !strings.Contains(e.Message, "tools/list") {
			t.Errorf("Call with nil peer handler: %v, want %d naming the method", err, mcp.CodeMethodNotFound)
		}
	}
}

// blocker is a handler whose "block" requests wait for their context (or
// for release) and report what they saw.
type blocker struct {
	started  chan *Message
	finished chan error // context.Cause when the ctx ended, nil when released
	release  chan struct{}
}

func newBlocker() *blocker {
	return &blocker{started: make(chan *Message, 100), finished: make(chan error, 100), release: make(chan struct{})}
}

func (bl *blocker) handler() funcs {
	return funcs{req: func(ctx context.Context, m *Message) (any, error) {
		if m.Method == "ping" {
			return "pong", nil
		}
		bl.started <- m
		select {
		case <-ctx.Done():
			bl.finished <- context.Cause(ctx)
			return "late answer", nil // must not be sent after a peer cancellation
		case <-bl.release:
			bl.finished <- nil
			return "released", nil
		}
	}}
}

// waitHandlers waits for every handler goroutine of c, including the write
// of its response, to finish. No request may be arriving meanwhile.
func waitHandlers(t *testing.T, c *Conn) {
	t.Helper()
	done := make(chan struct{})
	go func() { c.handlers.Wait(); close(done) }()
	wait(t, done, "handlers to finish")
}

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
	c := NewConn(ta, ConnOptions{})
	closeWithin(t, c)
	if err := c.Call(context.Background(), "x", nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Call after Close = %v", err)
	}
	if _, err := tb.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("peer Read after Close = %v, want io.EOF", err)
	}
}

func TestConnDuplicateInFlightID(t *testing.T) {
	leakCheck(t)
	bl := newBlocker()
	_, raw := rawPeer(t, ConnOptions{Handler: bl.handler()})
	send(t, raw, `{"jsonrpc":"2.0","id":5,"method":"block"}`)
	wait(t, bl.started, "the first request")
	send(t, raw, `{"jsonrpc":"2.0","id":5,"method":"block"}`)
	m := recv(t, raw)
	if m.Error == nil || m.Error.Code != mcp.CodeInvalidRequest || m.ID != mcp.IntID(5) {
		t.Fatalf("duplicate id: got %v %v, want -32600 for id 5", m, m.Error)
	}
	// The same digits as a string are a different id.
	send(t, raw, `{"jsonrpc":"2.0","id":"5","method":"ping"}`)
	if m := recv(t, raw); m.ID != mcp.StringID("5") || string(m.Result) != `"pong"` {
		t.Fatalf(`id "5": got %v %s`, m, m.Result)
	}
	bl.release <- struct{}{}
	if m := recv(t, raw); m.ID != mcp.IntID(5) || string(m.Result) != `"released"` {
		t.Fatalf("first request: got %v %s %v", m, m.Result, m.Error)
	}
}

// TestConnIDReusableAfterResponse: an id is free again as soon as its
// response has been received (JSON-RPC only requires uniqueness among
// requests in flight).
func TestConnIDReusableAfterResponse(t *testing.T) {
	leakCheck(t)
	h := funcs{req: func(ctx context.Context, m *Message) (any, error) { return "pong", nil }}
	_, raw := rawPeer(t, ConnOptions{Handler: h})
	for i := range 500 {
		send(t, raw, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		m := recv(t, raw)
		if m.Error != nil || string(m.Result) != `"pong"` {
			t.Fatalf("round %d: reusing id 1 after its response: %v", i, m.Error)
		}
	}
}

func TestConnMalformedInput(t *testing.T) {
	leakCheck(t)
	h := funcs{req: func(ctx context.Context, m *Message) (any, error) { return "pong", nil }}
	_, raw := rawPeer(t, ConnOptions{Handler: h, Limits: Limits{MaxBytes: 200}})
	for _, tc := range []struct {
		in   string
		code int64
		id   mcp.ID
	}{
		{`{"jsonrpc":"2.0","id":1,"method":`, mcp.CodeParseError, mcp.ID{}},
		{"\xff\xfe", mcp.CodeParseError, mcp.ID{}},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, mcp.CodeInvalidRequest, mcp.ID{}},
		{`{"jsonrpc":"2.0","id":9,"method":1}`, mcp.CodeInvalidRequest, mcp.IntID(9)},
		{`{"jsonrpc":"1.0","id":"s","method":"ping"}`, mcp.CodeInvalidRequest, mcp.StringID("s")},
		{`{"jsonrpc":"2.0","id":10,"method":"ping","params":"` + strings.Repeat("x", 200) + `"}`, mcp.CodeParseError, mcp.ID{}},
	} {
		send(t, raw, tc.in)
		m := recv(t, raw)
		if m.Error == nil || m.Error.Code != tc.code || m.ID != tc.id {
			t.Errorf("%.40q: got %v (%v), want code %d id %s", tc.in, m, m.Error, tc.code, tc.id)
		}
		// Still serving.
		send(t, raw, `{"jsonrpc":"2.0","id":"after","method":"ping"}`)
		if m := recv(t, raw); m.ID != mcp.StringID("after") || string(m.Result) != `"pong"` {
			t.Fatalf("after %.40q: got %v", tc.in, m)
		}
	}
	// Responses to nothing and stray error responses are dropped silently.
	send(t, raw, `{"jsonrpc":"2.0","id":12345,"result":{}}`)
	send(t, raw, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`)
	send(t, raw, `{"jsonrpc":"2.0","id":"after2","method":"ping"}`)
	if m := recv(t, raw); m.ID != mcp.StringID("after2") {
		t.Fatalf("after stray responses: got %v", m)
	}
}

// scripted is a transport.Conn driven by the test: Read returns what the
// test queues, and Write hands each message to the test and returns only
// when the test says so.
type scripted struct {
	reads   chan readResult
	written chan []byte
	proceed chan struct{}
	closed  chan struct{}
	once    sync.Once
}

type readResult struct {
	data []byte
	err  error
}

func newScripted() *scripted {
	return &scripted{
		reads:   make(chan readResult, 10),
		written: make(chan []byte),
		proceed: make(chan struct{}),
		closed:  make(chan struct{}),
	}
}

func (s *scripted) Read(ctx context.Context) ([]byte, error) {
	select {
	case r := <-s.reads:
		return r.data, r.err
	case <-s.closed:
		return nil, transport.ErrClosed
	}
}

func (s *scripted) Write(ctx context.Context, msg transport.Message) error {
	select {
	case s.written <- bytes.Clone(msg.Data):
	case <-s.closed:
		return transport.ErrClosed
	}
	<-s.proceed
	return nil
}

func (s *scripted) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

// TestConnResponseThenEOF: a response that arrives just before the peer
// ends the stream is delivered, not replaced by ErrClosed. The transport
// holds Call's write until the response and the EOF have both been read,
// so Call finds both ready.
func TestConnResponseThenEOF(t *testing.T) {
	leakCheck(t)
	for i := range 100 {
		st := newScripted()
		c := NewConn(st, ConnOptions{})
		c.Start()
		callErr := make(chan error, 1)
		var s string
		go func() { callErr <- c.Call(context.Background(), "bye", nil, &s) }()
		req, e := Decode(wait(t, st.written, "the request"), Limits{})
		if e != nil {
			t.Fatal(e)
		}
		out, err := EncodeResult(req.ID, "goodbye")
		if err != nil {
			t.Fatal(err)
		}
		st.reads <- readResult{data: out}
		st.reads <- readResult{err: io.EOF}
		wait(t, c.Done(), "the Conn to end")
		close(st.proceed)
		if err := wait(t, callErr, "Call"); err != nil || s != "goodbye" {
			t.Fatalf("round %d: Call = %q, %v; want the response sent before EOF", i, s, err)
		}
		closeWithin(t, c)
	}
}

func TestConnMaxInFlight(t *testing.T) {
	leakCheck(t)
	const limit, calls = 3, 12
	var running, peak atomic.Int32
	started := make(chan struct{}, calls)
	release := make(chan struct{})
	h := funcs{req: func(ctx context.Context, m *Message) (any, error) {
		now := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if now <= p || peak.CompareAndSwap(p, now) {
				break
			}
		}
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, nil
	}}
	a, _ := pair(t, ConnOptions{}, ConnOptions{Handler: h, MaxInFlight: limit})
	errs := make(chan error, calls)
	for range calls {
		go func() { errs <- a.Call(ctxGuard(t), "work", nil, nil) }()
	}
	for range limit {
		wait(t, started, "handlers to start")
	}
	if r := running.Load(); r != limit {
		t.Errorf("%d handlers running, want %d", r, limit)
	}
	// Let them through one at a time.
	for range calls - limit {
		release <- struct{}{}
		wait(t, started, "the next handler")
		if r := running.Load(); r > limit {
			t.Errorf("%d handlers running, limit %d", r, limit)
		}
	}
	for range limit {
		release <- struct{}{}
	}
	for range calls {
		if err := wait(t, errs, "calls"); err != nil {
			t.Error(err)
		}
	}
	if p := peak.Load(); p != limit {
		t.Errorf("peak concurrency %d, want %d", p, limit)
	}
}

func TestConnNotificationsInOrder(t *testing.T) {
	leakCheck(t)
	var mu sync.Mutex
	var got []int
	h := funcs{
		req: func(ctx context.Context, m *Message) (any, error) { return nil, nil },
		note: func(ctx context.Context, m *Message) {
			var p struct{ I int }
			if err := json.Unmarshal(m.Params, &p); err != nil {
				t.Error(err)
			}
			mu.Lock()
			got = append(got, p.I)
			mu.Unlock()
		},
	}
	a, _ := pair(t, ConnOptions{}, ConnOptions{Handler: h})
	const n = 500
	ctx := ctxGuard(t)
	for i := range n {
		if err := a.Notify(ctx, "notifications/seq", map[string]int{"I": i}); err != nil {
			t.Fatal(err)
		}
	}
	// A round trip orders after every notification before it.
	if err := a.Call(ctx, "barrier", nil, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n {
		t.Fatalf("got %d notifications, want %d", len(got), n)
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("notification %d carried %d: out of order", i, v)
		}
	}
}

func TestConnObserveBothDirections(t *testing.T) {
	leakCheck(t)
	var wa wire
	a, b := pair(t,
		ConnOptions{Observe: wa.observe, Handler: echoHandler("a")},
		ConnOptions{Handler: funcs{
			req:  echoHandler("b").req,
			note: func(context.Context, *Message) {},
		}})
	ctx := ctxGuard(t)
	if err := a.Call(ctx, "fromA", echoParams{From: "a"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Call(ctx, "fromB", echoParams{From: "b"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Notify(ctx, "note", nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Call(ctx, "barrier", echoParams{}, nil); err != nil {
		t.Fatal(err)
	}
	type seen struct {
		in     bool
		method string
		resp   bool
	}
	var all []seen
	for _, in := range []bool{false, true} {
		for _, m := range wa.decoded(t, in) {
			all = append(all, seen{in, m.Method, m.IsResponse()})
		}
	}
	want := []seen{
		{false, "fromA", false}, // A's request out
		{true, "", true},        // its response in
		{true, "fromB", false},  // B's request in
		{false, "", true},       // A's response out
		{false, "note", false},  // A's notification out
	}
	for _, w := range want {
		found := false
		for _, s := range all {
			if s == w {
				found = true
			}
		}
		if !found {
			t.Errorf("Observe did not see %+v; saw %+v", w, all)
		}
	}
}

func TestConnResultDecoding(t *testing.T) {
	leakCheck(t)
	h := funcs{req: func(ctx context.Context, m *Message) (any, error) {
		return map[string]any{"tools": []any{map[string]any{"name": "echo"}}}, nil
	}}
	a, _ := pair(t, ConnOptions{}, ConnOptions{Handler: h})
	ctx := ctxGuard(t)
	var typed struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := a.Call(ctx, "tools/list", nil, &typed); err != nil || len(typed.Tools) != 1 || typed.Tools[0].Name != "echo" {
		t.Errorf("typed result: %+v, %v", typed, err)
	}
	var raw jsontext.Value
	if err := a.Call(ctx, "tools/list", nil, &raw); err != nil || string(raw) != `{"tools":[{"name":"echo"}]}` {
		t.Errorf("raw result: %s, %v", raw, err)
	}
	if err := a.Call(ctx, "tools/list", func() {}, nil); err == nil {
		t.Error("Call with unencodable params succeeded")
	}
}

// TestConnOverStdio runs two Conns over newline-framed OS pipes, and
// checks that a line over the transport's cap is answered with an error
// (id null) while the connection goes on.
func TestConnOverStdio(t *testing.T) {
	leakCheck(t)
	aIn, bOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	bIn, aOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ta := stdio.NewConn(aIn, aOut, stdio.Options{MaxMessageBytes: 512})
	tb := stdio.NewConn(bIn, bOut, stdio.Options{MaxMessageBytes: 512})
	bNullErrors := make(chan *Message, 1)
	observeB := func(in bool, msg []byte) {
		if m, e := Decode(msg, Limits{}); !in && e == nil && m.Error != nil && !m.ID.IsValid() {
			select {
			case bNullErrors <- m:
			default:
				t.Errorf("unexpected extra error from B: %v", m.Error)
			}
		}
	}
	a := NewConn(ta, ConnOptions{Handler: echoHandler("a")})
	b := NewConn(tb, ConnOptions{Handler: echoHandler("b"), Observe: observeB})
	a.Start()
	b.Start()
	defer closeWithin(t, b)
	defer closeWithin(t, a)
	ctx := ctxGuard(t)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			var r echoResult
			if err := a.Call(ctx, "echo", echoParams{From: "a", N: i}, &r); err != nil || r.By != "b" || r.N != i {
				t.Errorf("a call %d: %+v %v", i, r, err)
			}
		}()
		go func() {
			defer wg.Done()
			var r echoResult
			if err := b.Call(ctx, "echo", echoParams{From: "b", N: i}, &r); err != nil || r.By != "a" || r.N != i {
				t.Errorf("b call %d: %+v %v", i, r, err)
			}
		}()
	}
	wg.Wait()

	// A request too large for B's transport: B cannot read its id, so it
	// answers with id null, A's call stays pending until its ctx ends, and
	// later calls work.
	oversized, cancel := context.WithCancel(ctx)
	callErr := make(chan error, 1)
	go func() {
		callErr <- a.Call(oversized, "echo", echoParams{From: strings.Repeat("x", 1000)}, nil)
	}()
	m := wait(t, bNullErrors, "B's answer to the oversized request")
	if m.Error.Code != mcp.CodeInvalidRequest {
		t.Errorf("B answered %v", m.Error)
	}
	select {
	case err := <-callErr:
		t.Fatalf("the oversized call got an answer: %v", err)
	default:
	}
	cancel()
	if err := wait(t, callErr, "the oversized call"); !errors.Is(err, context.Canceled) {
		t.Errorf("oversized call = %v, want context.Canceled", err)
	}
	var r echoResult
	if err := a.Call(ctx, "echo", echoParams{From: "after", N: 1}, &r); err != nil || r.From != "after" {
		t.Errorf("call after an oversized message: %+v %v", r, err)
	}
}

// TestConnOversizedTransportMessage: a transport ErrMessageTooLarge is
// answered with an Invalid Request error with id null, and reading goes on.
func TestConnOversizedTransportMessage(t *testing.T) {
	leakCheck(t)
	pr, pw := io.Pipe() // test -> Conn
	rr, rw := io.Pipe() // Conn -> test
	tc := stdio.NewConn(pr, rw, stdio.Options{MaxMessageBytes: 64})
	h := funcs{req: func(ctx context.Context, m *Message) (any, error) { return "pong", nil }}
	c := NewConn(tc, ConnOptions{Handler: h})
	c.Start()
	defer closeWithin(t, c)
	peer := stdio.NewConn(rr, pw, stdio.Options{})
	defer peer.Close()
	send(t, peer, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`+strings.Repeat("x", 100)+`"}}`)
	m := recv(t, peer)
	if m.Error == nil || m.Error.Code != mcp.CodeInvalidRequest || m.ID.IsValid() {
		t.Fatalf("oversized message: got %v %v, want -32600 with id null", m, m.Error)
	}
	send(t, peer, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := recv(t, peer); m.ID != mcp.IntID(2) || string(m.Result) != `"pong"` {
		t.Fatalf("after the oversized message: %v %s", m, m.Result)
	}
}

// TestIDPrefix: with ConnOptions.IDPrefix the ids of outgoing requests
// are strings that start with it, distinct per call, and their responses
// complete the calls.
func TestIDPrefix(t *testing.T) {
	leakCheck(t)
	var mu sync.Mutex
	var seen []mcp.ID
	a, _ := pair(t, ConnOptions{IDPrefix: "inst1-"}, ConnOptions{Handler: funcs{req: func(ctx context.Context, m *Message) (any, error) {
		mu.Lock()
		seen = append(seen, m.ID)
		mu.Unlock()
		return "ok", nil
	}}})
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	for range 2 {
		var got string
		if err := a.Call(ctx, "m", nil, &got); err != nil || got != "ok" {
			t.Fatalf("Call = %q, %v", got, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] == seen[1] {
		t.Fatalf("ids %v", seen)
	}
	for _, id := range seen {
		if !id.IsString() || !strings.HasPrefix(id.Str(), "inst1-") {
			t.Errorf("id %s: want a string starting with inst1-", id)
		}
	}
}
