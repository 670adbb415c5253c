package server

// The end of a stdio session (the client closes the server's standard
// input) and ping while every in-flight slot is busy, over stdio and over
// a legacy HTTP session.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// endingInput is standard input fed by a client that then closes it: it
// yields data, then closes eof and reports io.EOF.
type endingInput struct {
	r    io.Reader
	eof  chan struct{}
	once sync.Once
}

func (e *endingInput) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.once.Do(func() { close(e.eof) })
	}
	return n, err
}

// lockedBuffer is standard output.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// responses returns the responses written, by id (JSON).
func (b *lockedBuffer) responses(t *testing.T) map[string]*httpenv.RPCMsg {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]*httpenv.RPCMsg)
	for _, line := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		if line == "" {
			continue
		}
		m := httpenv.ParseMsg(t, []byte(line))
		if m.Method == "" {
			if _, dup := out[string(m.ID)]; dup {
				t.Errorf("two answers to id %s", m.ID)
			}
			out[string(m.ID)] = m
		}
	}
	return out
}

func lines(msgs ...any) string {
	var sb strings.Builder
	for _, m := range msgs {
		b, err := json.Marshal(m)
		if err != nil {
			panic(err)
		}
		sb.Write(b)
		sb.WriteByte('\n')
	}
	return sb.String()
}

func rpcReq(id any, method string, params any) map[string]any {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	return m
}

// TestServeAnswersBeforeEndOfInput: Serve over stdio fed by a finite
// input returns nil once every request read is answered: tool calls still
// running at the end (one queued behind MaxInFlight), one whose
// server→client request can no longer be answered, a ping, a 2026
// subscriptions/listen (ended gracefully), and notifications handled.
func TestServeAnswersBeforeEndOfInput(t *testing.T) {
	leakCheck(t)
	in := &endingInput{eof: make(chan struct{})}
	s := New(&Options{MaxInFlight: 2, DrainTimeout: time.Hour}) // the drain must not need its bound
	AddTool(s, &mcp.Tool{Name: "wait"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		<-in.eof // still running when the input ends; ignores ctx
		return "waited", nil
	})
	AddTool(s, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		_, err := req.ListRoots(ctx) // never answered: fails at the end of input
		return "", err
	})
	in.r = strings.NewReader(lines(
		rpcReq(0, mcp.MethodInitialize, map[string]any{"protocolVersion": mcp.Version20251125,
			"capabilities": map[string]any{"roots": map[string]any{}}, "clientInfo": map[string]any{"name": "t", "version": "1"}}),
		rpcReq(nil, mcp.NotificationInitialized, nil),
		rpcReq(1, mcp.MethodToolsCall, map[string]any{"name": "wait"}),
		rpcReq(2, mcp.MethodToolsCall, map[string]any{"name": "roots"}),
		rpcReq(3, mcp.MethodToolsCall, map[string]any{"name": "wait"}), // queued
		rpcReq(4, mcp.MethodPing, nil),
		rpcReq("listen", mcp.MethodSubscriptionsListen, map[string]any{"_meta": httpenv.EnvelopeMeta(nil),
			"notifications": map[string]any{"toolsListChanged": true}}),
	))
	out := serveToEnd(t, s, in, "the end of input")
	got := out.responses(t)
	for _, id := range []string{"1", "3"} {
		if m := got[id]; m == nil {
			t.Errorf("tools/call %s: no answer", id)
		} else if text, isErr := httpenv.ToolText(t, m); text != "waited" || isErr {
			t.Errorf("tools/call %s: %s", id, m.Raw)
		}
	}
	if m := got["2"]; m == nil {
		t.Error("tools/call 2 (waiting for roots/list): no answer")
	} else if m.Error == nil && !strings.Contains(m.Raw, `"isError":true`) {
		t.Errorf("tools/call 2: %s, want an error", m.Raw)
	}
	if m := got["0"]; m == nil || m.Error != nil {
		t.Errorf("initialize: %v", m)
	}
	if m := got["4"]; m == nil || string(m.Result) != "{}" {
		t.Errorf("ping: %v", m)
	}
	if m := got[`"listen"`]; m == nil || m.Error != nil {
		t.Errorf("subscriptions/listen: %v, want its result", m)
	}
	if n := len(s.Sessions()); n != 0 {
		t.Errorf("%d sessions after Serve, want 0", n)
	}
}

// TestServeEndOfInputDrainTimeout: a tool that does not finish does not
// keep Serve past DrainTimeout; its call is answered with an error and
// its context cancelled. (jsonrpc's TestConnEOFDrainTimeout has a handler
// that ignores its context.)
func TestServeEndOfInputDrainTimeout(t *testing.T) {
	leakCheck(t)
	s := New(&Options{DrainTimeout: time.Millisecond}) // what is tested, not a margin
	AddTool(s, &mcp.Tool{Name: "stuck"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		<-ctx.Done()
		return "late", nil
	})
	in := strings.NewReader(lines(
		rpcReq(0, mcp.MethodInitialize, map[string]any{"protocolVersion": mcp.Version20251125,
			"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}),
		rpcReq(1, mcp.MethodToolsCall, map[string]any{"name": "stuck"}),
	))
	out := serveToEnd(t, s, in, "DrainTimeout")
	if m := out.responses(t)["1"]; m == nil || m.Error == nil || m.Error.Code != mcp.CodeInternalError {
		t.Errorf("the stuck call: %v, want an internal error", m)
	}
}

// blockingServer has one slot, taken by "block" until release closes;
// started receives each call as it begins.
func blockingServer(release <-chan struct{}, started chan<- struct{}) *Server {
	s := New(&Options{MaxInFlight: 1})
	AddTool(s, &mcp.Tool{Name: "block"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "released", nil
	})
	return s
}

// TestPingWhileBusyStdio: with every slot held and a request waiting for
// one, a ping is still answered.
func TestPingWhileBusyStdio(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{}, 4)
	p := newStdioPeer(t, blockingServer(release, started))
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, sendLegacy)
	p.next(true)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sendLegacy)
	for id := 1; id <= 2; id++ {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"block"}}`, id), sendLegacy)
	}
	httpenv.RecvT(t, started, "the first call to start")
	p.send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`, sendLegacy)
	if m := p.next(true); string(m.ID) != `"ping"` || string(m.Result) != "{}" {
		t.Fatalf("got %s, want the ping's answer", m.Raw)
	}
	close(release)
	for range 2 {
		p.next(true)
	}
}

// TestPingWhileBusyHTTP: the same on a legacy HTTP session, where the
// handler hands each POSTed message to the session's connection.
func TestPingWhileBusyHTTP(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{}, 4)
	e := newHTTPEnv(t, blockingServer(release, started), nil)
	sid := e.Initialize("")
	answer := make(chan *http.Response, 1)
	go func() { answer <- e.Do(http.MethodPost, sid, httpenv.ToolCall(100, "block", "", "")) }()
	httpenv.RecvT(t, started, "the call to start")
	if m := e.RPC(sid, `{"jsonrpc":"2.0","id":"ping","method":"ping"}`); string(m.Result) != "{}" {
		t.Fatalf("ping: %s", m.Raw)
	}
	close(release)
	resp := httpenv.RecvT(t, answer, "the call's answer")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// TestModernPingWhileBusyHTTP: a 2026 request is served on its own POST's
// goroutine, without a session or its in-flight slots: with a blocked
// tool call in flight (and MaxInFlight 1), a 2026 ping — a method that
// revision removed — is answered -32601 (404) at once, and another call
// runs.
func TestModernPingWhileBusyHTTP(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{}, 4)
	s := blockingServer(release, started)
	AddTool(s, &mcp.Tool{Name: "quick"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		return "quick", nil
	})
	m := newModernEnv(t, s, nil)
	answer := make(chan *http.Response, 1)
	body := httpenv.Req26(m.ID(), mcp.MethodToolsCall, map[string]any{"name": "block", "arguments": map[string]any{}})
	go func() { answer <- m.Do(http.MethodPost, "", body, httpenv.H26(mcp.MethodToolsCall, "block")...) }()
	httpenv.RecvT(t, started, "the call to start")
	id := m.ID()
	m.WantErr(m.Send(httpenv.Req26(id, mcp.MethodPing, nil), false, httpenv.H26(mcp.MethodPing, "")...), http.StatusNotFound, mcp.CodeMethodNotFound, id)
	m.Call(m.ID(), mcp.MethodToolsCall, "quick", map[string]any{"name": "quick", "arguments": map[string]any{}})
	close(release)
	resp := httpenv.RecvT(t, answer, "the call's answer")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// serveToEnd serves the messages of in over stdio until Serve returns,
// which it must do by itself (after what) with a nil error; it returns
// what the server wrote.
func serveToEnd(t *testing.T, s *Server, in io.Reader, what string) *lockedBuffer {
	t.Helper()
	out := &lockedBuffer{}
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(context.Background(), stdio.NewConn(in, out, nil)) }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("Serve = %v, want nil", err)
		}
	case <-time.After(httpenv.HangGuard): // a hang guard, not a synchronisation
		t.Fatal("Serve did not return after " + what)
	}
	return out
}
