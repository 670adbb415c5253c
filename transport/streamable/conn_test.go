package streamable

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// TestJSONAnswersAndHeaders: initialize, notification and request over
// plain JSON; the session id and protocol version go on every request
// after initialize; Options.Header on every request; DELETE on Close.
func TestJSONAnswersAndHeaders(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		switch {
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		case in.Msg.Method == "initialize":
			answerInit(w, in, "sess-1")
		case in.Msg.IsRequest():
			writeJSON(w, http.StatusOK, result(in.Msg.ID, `{"tools":[]}`))
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
	c := newConn(t, f, &Options{Header: http.Header{"Authorization": {"Bearer t0k"}, "X-Extra": {"a", "b"}}})
	if c.SessionID() != "" || c.ProtocolVersion() != "" {
		t.Fatalf("before initialize: session %q version %q", c.SessionID(), c.ProtocolVersion())
	}

	initMsg := request(mcp.IntID(1), "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	mustWrite(t, c, initMsg)
	if m := readMsg(t, c); m.ID != mcp.IntID(1) || !strings.Contains(string(m.Result), `"2025-11-25"`) {
		t.Fatalf("initialize answer = %v %s", m, m.Result)
	}
	if c.SessionID() != "sess-1" || c.ProtocolVersion() != "2025-11-25" {
		t.Fatalf("after initialize: session %q version %q", c.SessionID(), c.ProtocolVersion())
	}
	mustWrite(t, c, notification("notifications/initialized"))
	mustWrite(t, c, request(mcp.StringID("two"), "tools/list", ""))
	if m := readMsg(t, c); m.ID != mcp.StringID("two") || string(m.Result) != `{"tools":[]}` {
		t.Fatalf("tools/list answer = %v %s", m, m.Result)
	}
	if err := closeConn(t, c); err != nil {
		t.Fatalf("Close = %v", err)
	}

	posts := f.of(http.MethodPost)
	if len(posts) != 3 {
		t.Fatalf("%d POSTs, want 3", len(posts))
	}
	for i, p := range posts {
		h := p.Header
		if ct := h.Get("Content-Type"); ct != "application/json" {
			t.Errorf("POST %d Content-Type %q", i, ct)
		}
		if a := h.Get("Accept"); !strings.Contains(a, "application/json") || !strings.Contains(a, "text/event-stream") {
			t.Errorf("POST %d Accept %q", i, a)
		}
		if h.Get("Authorization") != "Bearer t0k" || strings.Join(h.Values("X-Extra"), ",") != "a,b" {
			t.Errorf("POST %d lacks Options.Header: %v", i, h)
		}
		wantSession, wantVersion := "sess-1", "2025-11-25"
		if i == 0 {
			wantSession, wantVersion = "", ""
		}
		if got := h.Get("Mcp-Session-Id"); got != wantSession {
			t.Errorf("POST %d (%v) Mcp-Session-Id %q, want %q", i, p, got, wantSession)
		}
		if got := h.Get("MCP-Protocol-Version"); got != wantVersion {
			t.Errorf("POST %d (%v) MCP-Protocol-Version %q, want %q", i, p, got, wantVersion)
		}
	}
	if string(posts[0].Body) != initMsg {
		t.Errorf("initialize body %s, want it verbatim", posts[0].Body)
	}
	dels := f.of(http.MethodDelete)
	if len(dels) != 1 || dels[0].Header.Get("Mcp-Session-Id") != "sess-1" || dels[0].Header.Get("Authorization") != "Bearer t0k" {
		t.Fatalf("DELETEs = %v", dels)
	}

	// After Close.
	if _, err := c.Read(context.Background()); !isClosed(err) {
		t.Errorf("Read after Close = %v, want ErrClosed", err)
	}
	if err := c.Write(context.Background(), transport.Message{Data: []byte(notification("x"))}); !isClosed(err) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if n := f.count(http.MethodDelete); n != 1 {
		t.Errorf("%d DELETEs after two Closes, want 1", n)
	}
}

// TestSSEAnswers: answers as event streams. The initialize result on a
// stream sets the protocol version; priming events, comments, other event
// types and non-messages are skipped; messages come out in order.
func TestSSEAnswers(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		switch {
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		case in.Msg.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "sse-sess")
			sseStart(w)
			sseEvent(w, "i_0", time.Second, "")
			sseEvent(w, "i_1", 0, result(in.Msg.ID, initResult))
		case in.Msg.Method == "tools/call":
			sseStart(w)
			sseRaw(w, ": a comment\n\n")
			sseEvent(w, "c_0", 0, "") // priming
			sseEvent(w, "c_1", 0, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`)
			sseRaw(w, "event: other\ndata: "+notification("notifications/wrong-type")+"\n\n")
			sseEvent(w, "c_2", 0, `not json`)
			sseEvent(w, "c_3", 0, `[1,2]`)
			sseRaw(w, "event: message\ndata: "+notification("notifications/typed")+"\n\n")
			sseEvent(w, "c_4", 0, request(mcp.IntID(0), "ping", ""))
			sseEvent(w, "c_5", 0, result(in.Msg.ID, `{"content":[]}`))
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
	c := newConn(t, f, nil)
	mustWrite(t, c, request(mcp.IntID(1), "initialize", `{}`))
	if m := readMsg(t, c); m.ID != mcp.IntID(1) {
		t.Fatalf("initialize answer %v", m)
	}
	if c.SessionID() != "sse-sess" || c.ProtocolVersion() != "2025-11-25" {
		t.Fatalf("session %q version %q from an SSE initialize", c.SessionID(), c.ProtocolVersion())
	}
	mustWrite(t, c, notification("notifications/initialized"))
	mustWrite(t, c, request(mcp.IntID(2), "tools/call", `{"name":"x"}`))
	want := []string{"notification notifications/progress", "notification notifications/typed", "request ping id=0", "response id=2"}
	for _, w := range want {
		if m := readMsg(t, c); m.String() != w {
			t.Fatalf("Read %q, want %q", m.String(), w)
		}
	}
	posts := f.of(http.MethodPost)
	if h := posts[1].Header; h.Get("Mcp-Session-Id") != "sse-sess" || h.Get("Mcp-Protocol-Version") != "2025-11-25" {
		t.Errorf("the POST after an SSE initialize carried %v", h)
	}
}

// TestResponseGrace: a server that keeps a POST stream open after the
// response has it closed by the client ResponseGrace later. The grace
// timer is on a manual clock, so it elapses exactly when the test says.
func TestResponseGrace(t *testing.T) {
	clock := newIdleClock()
	gone := make(chan struct{})
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		sseStart(w)
		sseEvent(w, "", 0, result(in.Msg.ID, `{}`))
		hold(r)
		close(gone)
	})
	c := newConn(t, f, nil)
	c.graceAfter = clock.AfterFunc
	mustWrite(t, c, request(mcp.IntID(1), "tools/list", ""))
	readMsg(t, c) // the grace timer starts before the response is delivered
	clock.Advance(ResponseGrace - time.Millisecond)
	if n := clock.Fired(); n != 0 {
		t.Errorf("%d grace timers fired before ResponseGrace", n)
	}
	select {
	case <-gone:
		t.Error("the stream was closed before ResponseGrace")
	default:
	}
	clock.Advance(time.Millisecond)
	if n := clock.Fired(); n != 1 {
		t.Errorf("%d grace timers fired at ResponseGrace, want 1", n)
	}
	recv(t, gone, "the client to close the stream")
}

// TestDeleteOnClose: Close sends DELETE with the session id; 404 and 405
// are fine; another error status is reported; no session, no DELETE; a
// DELETE that hangs is bounded by DeleteTimeout.
func TestDeleteOnClose(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  int // 0: the DELETE hangs
		session string
		wantErr bool
	}{
		{"204", http.StatusNoContent, "s", false},
		{"200", http.StatusOK, "s", false},
		{"404 tolerated", http.StatusNotFound, "s", false},
		{"405 tolerated", http.StatusMethodNotAllowed, "s", false},
		{"500 reported", http.StatusInternalServerError, "s", true},
		{"no session", http.StatusInternalServerError, "", false},
		{"hangs", 0, "s", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
				switch {
				case r.Method == http.MethodDelete && tc.status == 0:
					hold(r)
				case r.Method == http.MethodDelete:
					w.WriteHeader(tc.status)
				case in.Msg.Method == "initialize":
					answerInit(w, in, tc.session)
				}
			})
			c := newConn(t, f, nil)
			mustWrite(t, c, request(mcp.IntID(1), "initialize", `{}`))
			readMsg(t, c)
			err := closeConn(t, c)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Close = %v, want error %v", err, tc.wantErr)
			}
			var se *StatusError
			if tc.status == http.StatusInternalServerError && tc.wantErr && (!errors.As(err, &se) || se.StatusCode != 500 || !strings.Contains(err.Error(), "500")) {
				t.Errorf("Close = %v, want a StatusError naming 500", err)
			}
			wantDeletes := 1
			if tc.session == "" {
				wantDeletes = 0
			}
			if n := f.count(http.MethodDelete); n != wantDeletes {
				t.Errorf("%d DELETEs, want %d", n, wantDeletes)
			}
			if err2 := c.Close(); !errors.Is(err2, err) && err2 != err {
				t.Errorf("second Close = %v, want %v again", err2, err)
			}
		})
	}
}

// TestHTTPErrors: a status without a JSON-RPC body fails Write, naming
// it; a JSON-RPC error answer to the request reaches the call (Read); an
// id-less JSON-RPC error body is part of Write's error.
func TestHTTPErrors(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		switch in.Msg.Method {
		case "plain500":
			w.WriteHeader(http.StatusInternalServerError)
		case "html502":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte("<h1>bad gateway</h1>"))
		case "rpc400":
			writeJSON(w, http.StatusBadRequest, rpcError(in.Msg.ID, -32602, "Invalid params: nope"))
		case "anon400":
			writeJSON(w, http.StatusBadRequest, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Bad Request: no"}}`)
		case "notify500":
			w.WriteHeader(http.StatusInternalServerError)
		case "weird":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("hello"))
		case "anon200":
			writeJSON(w, http.StatusOK, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"nope"}}`)
		}
	})
	c := newConn(t, f, nil)
	ctx := testCtx(t)

	err := c.Write(ctx, transport.Message{Data: []byte(request(mcp.IntID(1), "plain500", ""))})
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 500 || se.RPC != nil || !strings.Contains(err.Error(), "500 Internal Server Error") {
		t.Errorf("500 without body: Write = %v", err)
	}
	err = c.Write(ctx, transport.Message{Data: []byte(request(mcp.IntID(2), "html502", ""))})
	if !errors.As(err, &se) || se.StatusCode != 502 || !strings.Contains(err.Error(), "502") {
		t.Errorf("502 with HTML: Write = %v", err)
	}
	if err := c.Write(ctx, transport.Message{Data: []byte(notification("notify500"))}); !errors.As(err, &se) || se.StatusCode != 500 {
		t.Errorf("notification answered 500: Write = %v", err)
	}
	if err := c.Write(ctx, transport.Message{Data: []byte(request(mcp.IntID(3), "rpc400", ""))}); err != nil {
		t.Fatalf("400 with the request's JSON-RPC error: Write = %v, want nil (the error is queued)", err)
	}
	if m := readMsg(t, c); m.ID != mcp.IntID(3) || m.Error == nil || m.Error.Code != -32602 {
		t.Errorf("400 with a JSON-RPC error: Read %v", m)
	}
	err = c.Write(ctx, transport.Message{Data: []byte(request(mcp.IntID(4), "anon400", ""))})
	if !errors.As(err, &se) || se.StatusCode != 400 || se.RPC == nil || se.RPC.Code != -32600 {
		t.Errorf("400 with an id-less JSON-RPC error: Write = %v", err)
	}
	if e, ok := jsonrpc.AsError(err); !ok || e.Code != -32600 {
		t.Errorf("jsonrpc.AsError(%v) = %v %v", err, e, ok)
	}
	if err := c.Write(ctx, transport.Message{Data: []byte(request(mcp.IntID(5), "weird", ""))}); err == nil || !strings.Contains(err.Error(), "text/plain") {
		t.Errorf("text/plain answer: Write = %v", err)
	}
	err = c.Write(ctx, transport.Message{Data: []byte(request(mcp.IntID(6), "anon200", ""))})
	if e, ok := jsonrpc.AsError(err); !ok || e.Code != -32000 {
		t.Errorf("200 with an id-less error: Write = %v", err)
	}
	// Invalid outgoing messages are refused before anything is sent.
	before := f.count(http.MethodPost)
	if err := c.Write(ctx, transport.Message{Data: []byte(`{"jsonrpc":"2.0","id":1}`)}); err == nil {
		t.Error("Write of an invalid message succeeded")
	}
	if f.count(http.MethodPost) != before {
		t.Error("an invalid message was POSTed")
	}
}

// TestWriteContext: Write's context bounds the POST until its answer.
func TestWriteContext(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) { hold(r) })
	c := newConn(t, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Write(ctx, transport.Message{Data: []byte(request(mcp.IntID(1), "slow", ""))}) }()
	f.next(t, http.MethodPost)
	cancel()
	if err := recv(t, errc, "Write to return"); !errors.Is(err, context.Canceled) {
		t.Errorf("Write = %v, want context.Canceled", err)
	}
	// Close unblocks a pending Write too.
	go func() {
		errc <- c.Write(context.Background(), transport.Message{Data: []byte(request(mcp.IntID(2), "slow", ""))})
	}()
	f.next(t, http.MethodPost)
	_ = closeConn(t, c)
	if err := recv(t, errc, "Write to return"); !isClosed(err) {
		t.Errorf("Write during Close = %v, want ErrClosed", err)
	}
}

// TestReadQueueBound: when nobody reads, stream goroutines stop at
// ReadQueueSize messages (backpressure), and Close still ends them.
func TestReadQueueBound(t *testing.T) {
	const extra = 10
	wrote := make(chan int, 1)
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		sseStart(w)
		n := 0
		for i := range ReadQueueSize + extra {
			select {
			case <-r.Context().Done():
				wrote <- n
				return
			default:
			}
			sseEvent(w, "", 0, `{"jsonrpc":"2.0","method":"notifications/n","params":{"i":`+itoa(i)+`}}`)
			n++
		}
		hold(r)
		wrote <- n
	})
	c := newConn(t, f, nil)
	mustWrite(t, c, request(mcp.IntID(1), "flood", ""))
	// Read all the queue holds plus what comes while reading.
	for i := range ReadQueueSize + extra {
		m := readMsg(t, c)
		if !strings.Contains(string(m.Params), `"i":`+itoa(i)+`}`) {
			t.Fatalf("message %d = %s", i, m.Params)
		}
	}
	if len(c.queue) != 0 || cap(c.queue) != ReadQueueSize {
		t.Errorf("queue len %d cap %d, want 0 and ReadQueueSize", len(c.queue), cap(c.queue))
	}
	_ = closeConn(t, c)
	recv(t, wrote, "the handler to end")
}

func itoa(i int) string { return mcp.IntID(int64(i)).String() }

// TestConcurrentWrites: Write is safe for concurrent use.
func TestConcurrentWrites(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		if in.Msg.IsRequest() {
			if n, _ := in.Msg.ID.Int(); n%2 == 0 {
				writeJSON(w, http.StatusOK, result(in.Msg.ID, `{}`))
				return
			}
			sseStart(w)
			sseEvent(w, "", 0, result(in.Msg.ID, `{}`))
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	c := newConn(t, f, nil)
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := c.Write(testCtx(t), transport.Message{Data: []byte(request(mcp.IntID(int64(i)), "x", ""))}); err != nil {
				t.Error(err)
			}
			if err := c.Write(testCtx(t), transport.Message{Data: []byte(notification("y"))}); err != nil {
				t.Error(err)
			}
		})
	}
	seen := map[mcp.ID]bool{}
	for range n {
		seen[readMsg(t, c).ID] = true
	}
	wg.Wait()
	if len(seen) != n {
		t.Errorf("%d distinct responses, want %d", len(seen), n)
	}
}

// TestOversizedMessages: an SSE event over MaxEventBytes is dropped and
// the stream read on: Read returns a *transport.TooLargeError in its
// place (a notification's: no id; a response's: its id), then what
// followed it; a JSON body over it fails its Write; the connection goes
// on after each.
func TestOversizedMessages(t *testing.T) {
	const limit = 1024
	big := `{"jsonrpc":"2.0","method":"notifications/big","params":{"x":"` + strings.Repeat("x", 2*limit) + `"}}`
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		switch in.Msg.Method {
		case "sse":
			sseStart(w)
			sseEvent(w, "e_0", 0, "")
			sseEvent(w, "e_1", 0, big)
			sseEvent(w, "e_2", 0, result(in.Msg.ID, `{}`))
		case "sse-big-answer":
			sseStart(w)
			sseEvent(w, "e_0", 0, "")
			sseEvent(w, "e_1", 0, result(in.Msg.ID, `{"x":"`+strings.Repeat("w", 2*limit)+`"}`))
		case "json":
			writeJSON(w, http.StatusOK, `{"jsonrpc":"2.0","id":2,"result":{"x":"`+strings.Repeat("y", 2*limit)+`"}}`)
		case "fits":
			sseStart(w)
			sseEvent(w, "", 0, result(in.Msg.ID, `{"x":"`+strings.Repeat("z", limit-100)+`"}`))
		}
	})
	c := newConn(t, f, &Options{MaxEventBytes: limit})
	mustWrite(t, c, request(mcp.IntID(1), "sse", ""))
	readTooLarge(t, c, mcp.ID{}, true) // the notification
	if m := readMsg(t, c); m.ID != mcp.IntID(1) || m.Error != nil {
		t.Errorf("after an oversized notification: Read %v %v, want the response", m, m.Error)
	}
	mustWrite(t, c, request(mcp.IntID(4), "sse-big-answer", ""))
	readTooLarge(t, c, mcp.IntID(4), false)
	err := c.Write(testCtx(t), transport.Message{Data: []byte(request(mcp.IntID(2), "json", ""))})
	if !errors.Is(err, ErrEventTooLarge) {
		t.Errorf("oversized JSON body: Write = %v, want ErrEventTooLarge", err)
	}
	mustWrite(t, c, request(mcp.IntID(3), "fits", ""))
	if m := readMsg(t, c); m.ID != mcp.IntID(3) || m.Error != nil {
		t.Errorf("an event under the limit: %v", m)
	}
	if n := f.count(http.MethodGet); n != 0 {
		t.Errorf("%d GETs: an oversized event must not be resumed", n)
	}
}

// TestReadContract: Read observes its context between messages and
// returns ErrClosed once closed, even with messages queued.
func TestReadContract(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		writeJSON(w, http.StatusOK, result(in.Msg.ID, `{}`))
	})
	c := newConn(t, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Read(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Read with a cancelled context = %v", err)
	}
	mustWrite(t, c, request(mcp.IntID(1), "x", ""))
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		errc <- err
	}()
	if err := recv(t, errc, "Read"); err != nil {
		t.Fatal(err)
	}
	go func() {
		_, err := c.Read(context.Background())
		errc <- err
	}()
	_ = c.Close()
	if err := recv(t, errc, "Read to be unblocked by Close"); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("blocked Read after Close = %v", err)
	}
}

// TestNoGoroutineAfterClose: with a listener, a POST stream held open, a
// POST stream waiting to be resumed, and a Read pending, Close leaves no
// goroutine behind.
func TestNoGoroutineAfterClose(t *testing.T) {
	before := goleak.IgnoreCurrent()
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		switch {
		case r.Method == http.MethodGet:
			sseStart(w)
			hold(r)
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		case in.Msg.Method == "initialize":
			answerInit(w, in, "leak")
		case in.Msg.Method == "held":
			sseStart(w)
			sseEvent(w, "h_0", 0, "")
			hold(r)
		case in.Msg.Method == "cut":
			sseStart(w)
			sseEvent(w, "c_0", time.Minute, "") // resume in a minute
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
	c := New(f.URL, nil)
	mustWrite(t, c, request(mcp.IntID(1), "initialize", `{}`))
	readMsg(t, c)
	c.Listen()
	mustWrite(t, c, request(mcp.IntID(2), "held", ""))
	mustWrite(t, c, request(mcp.IntID(3), "cut", ""))
	f.next(t, http.MethodGet)
	readErr := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		readErr <- err
	}()
	if err := closeConn(t, c); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, readErr, "Read to return"); !isClosed(err) {
		t.Errorf("Read = %v", err)
	}
	f.Close()
	goleak.VerifyNone(t, before)
}
