package jsonrpc

// Tests of Conn, the JSON-RPC connection over a transport: calls in both
// directions at once, handler errors and a nil handler. This file has the
// helpers (a memory pair, a raw peer, the blocker shared with
// busy_test.go and drain_test.go, the wire observer); cancellation,
// timeouts and closing are in conn_cancel_test.go, what a Conn does with
// the messages it reads and writes in conn_wire_test.go.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
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
	ca, cb := NewConn(ta, &a), NewConn(tb, &b)
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
	c := NewConn(ta, &opts)
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
	m, e := decode(data, Limits{})
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
		d, e := decode([]byte(m.raw), Limits{})
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
