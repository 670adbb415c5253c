package jsonrpc

// Tests of what a Conn does with the messages it reads and writes:
// duplicate and reused ids, malformed input, a response followed by EOF,
// the in-flight limit, notifications in order, observing both
// directions, result decoding, a Conn over stdio, oversized transport
// messages, and the string ids of ConnOptions.IDPrefix. The helpers are
// in conn_test.go.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

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
		c := NewConn(st, nil)
		c.Start()
		callErr := make(chan error, 1)
		var s string
		go func() { callErr <- c.Call(context.Background(), "bye", nil, &s) }()
		req, e := decode(wait(t, st.written, "the request"), Limits{})
		if e != nil {
			t.Fatal(e)
		}
		out, err := encodeResult(req.ID, "goodbye")
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
// under the request's own id, read from the line's first bytes, so that
// the caller hears at once, while the connection goes on.
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
	ta := stdio.NewConn(aIn, aOut, &stdio.Options{MaxMessageBytes: 512})
	tb := stdio.NewConn(bIn, bOut, &stdio.Options{MaxMessageBytes: 512})
	bErrors := make(chan *Message, 1)
	observeB := func(in bool, msg []byte) {
		if m, e := decode(msg, Limits{}); !in && e == nil && m.Error != nil {
			select {
			case bErrors <- m:
			default:
				t.Errorf("unexpected extra error from B: %v", m.Error)
			}
		}
	}
	a := NewConn(ta, &ConnOptions{Handler: echoHandler("a")})
	b := NewConn(tb, &ConnOptions{Handler: echoHandler("b"), Observe: observeB})
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

	// A request too large for B's transport: B reads its id from the
	// line's first bytes and answers it, so A's call ends at once.
	err = a.Call(ctx, "echo", echoParams{From: strings.Repeat("x", 1000)}, nil)
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeInvalidRequest {
		t.Fatalf("oversized call = %v, want B's -32600", err)
	}
	if m := wait(t, bErrors, "B's answer to the oversized request"); !m.ID.IsValid() {
		t.Errorf("B answered with no id: %v", m.Error)
	}
	var r echoResult
	if err := a.Call(ctx, "echo", echoParams{From: "after", N: 1}, &r); err != nil || r.From != "after" {
		t.Errorf("call after an oversized message: %+v %v", r, err)
	}
}

// TestConnOversizedTransportMessage: a transport ErrMessageTooLarge is
// answered with an Invalid Request error under the request's id (id null
// where its first bytes name none), and reading goes on.
func TestConnOversizedTransportMessage(t *testing.T) {
	leakCheck(t)
	pr, pw := io.Pipe() // test -> Conn
	rr, rw := io.Pipe() // Conn -> test
	tc := stdio.NewConn(pr, rw, &stdio.Options{MaxMessageBytes: 64})
	h := funcs{req: func(ctx context.Context, m *Message) (any, error) { return "pong", nil }}
	c := NewConn(tc, &ConnOptions{Handler: h})
	c.Start()
	defer closeWithin(t, c)
	peer := stdio.NewConn(rr, pw, nil)
	defer peer.Close()
	send(t, peer, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`+strings.Repeat("x", 100)+`"}}`)
	m := recv(t, peer)
	if m.Error == nil || m.Error.Code != mcp.CodeInvalidRequest || m.ID != mcp.IntID(1) {
		t.Fatalf("oversized message: got %v %v, want -32600 with id 1", m, m.Error)
	}
	send(t, peer, `{"jsonrpc":"2.0","params":{"pad":"`+strings.Repeat("x", 2000)+`"},"method":"ping","id":9}`)
	if m := recv(t, peer); m.Error == nil || m.ID.IsValid() {
		t.Fatalf("oversized message naming no method first: got %v %v, want id null", m, m.Error)
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
