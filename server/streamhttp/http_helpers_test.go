package streamhttp

// Test support for the Streamable HTTP handler tests: a real loopback
// server (httptest), raw net/http requests, a raw SSE frame reader that
// also sees comments and retry lines, and wire checks against the
// official 2025-11-25 schema.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server"

	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
)

// httpHangGuard bounds every wait of these tests. It is never a
// synchronisation: a test that reaches it has failed.
const httpHangGuard = 20 * time.Second

const acceptBoth = "application/json, text/event-stream"

// httpEnv is one Handler served over loopback, with a client that
// keeps its connections alive.
type httpEnv struct {
	t      testing.TB
	srv    *server.Server
	h      *Handler
	ts     *httptest.Server
	tr     *http.Transport
	client *http.Client
	ctx    context.Context
	wc     *wirecheck.Checker
	obs    func(dir string, msg []byte)
	// shutdown closes the handler, drains the HTTP server and checks
	// that nothing is left; it runs at the end of the test, or earlier.
	shutdown func()
	*httpShared
}

// httpShared is the state the per-subtest views of an httpEnv share.
type httpShared struct {
	nextID atomic.Int64
	connMu sync.Mutex
	closed map[string]chan struct{} // client addr → closed when the server closed that connection
}

// sub returns a view of e whose failures belong to t (a subtest).
func (e *httpEnv) sub(t testing.TB) *httpEnv {
	c := *e
	c.t = t
	return &c
}

// newHTTPEnv serves srv (a fresh server with logging when nil). At the
// end of the test it closes the handler, checks that the HTTP server
// drains (every handler returned), and verifies that no goroutine is
// left.
func newHTTPEnv(t testing.TB, srv *server.Server, opts *Options) *httpEnv {
	t.Helper()
	before := goleak.IgnoreCurrent()                   // a benchmark's runner, an earlier test's own leak (reported there)
	t.Cleanup(func() { goleak.VerifyNone(t, before) }) // registered first: runs last
	if srv == nil {
		srv = server.New(&server.Options{Logging: true})
	}
	ctx, cancel := context.WithTimeout(context.Background(), httpHangGuard)
	e := &httpEnv{t: t, srv: srv, ctx: ctx, httpShared: &httpShared{closed: make(map[string]chan struct{})}}
	e.wc = wirecheck.For(t, mcp.Version20251125)
	e.obs = e.wc.Observe(t)
	e.h = NewHandler(srv, opts)
	e.ts = httptest.NewUnstartedServer(e.h)
	e.ts.Config.ConnState = e.connState
	e.ts.Start()
	e.tr = &http.Transport{MaxIdleConnsPerHost: 64}
	e.client = &http.Client{Transport: e.tr}
	e.shutdown = sync.OnceFunc(func() {
		if err := e.h.Close(); err != nil {
			t.Errorf("Handler.Close: %v", err)
		}
		drained := make(chan struct{})
		go func() { e.ts.Close(); close(drained) }()
		select {
		case <-drained:
		case <-time.After(httpHangGuard):
			t.Error("the HTTP server did not drain after Handler.Close: a handler is still running")
			cancel() // unblock the clients so that the server can drain
			<-drained
		}
		cancel()
		e.tr.CloseIdleConnections()
		if n := e.h.SessionCount(); n != 0 {
			t.Errorf("SessionCount after Close = %d, want 0", n)
		}
		if n := len(e.srv.Sessions()); n != 0 {
			t.Errorf("Server.Sessions after Close: %d, want 0", n)
		}
	})
	t.Cleanup(e.shutdown)
	return e
}

func (e *httpEnv) connState(c net.Conn, s http.ConnState) {
	if s != http.StateClosed && s != http.StateHijacked {
		return
	}
	e.connMu.Lock()
	defer e.connMu.Unlock()
	addr := c.RemoteAddr().String()
	ch := e.closed[addr]
	if ch == nil {
		ch = make(chan struct{})
		e.closed[addr] = ch
	}
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// serverClosed returns a channel closed once the server has closed its
// end of the connection whose client address is clientAddr, which net/http
// does only after the handler serving it returned.
func (e *httpEnv) serverClosed(clientAddr string) <-chan struct{} {
	e.connMu.Lock()
	defer e.connMu.Unlock()
	ch := e.closed[clientAddr]
	if ch == nil {
		ch = make(chan struct{})
		e.closed[clientAddr] = ch
	}
	return ch
}

func (e *httpEnv) id() int64 { return e.nextID.Add(1) }

// reqOpt changes a request before it is sent.
type reqOpt func(*http.Request)

func withHeader(k, v string) reqOpt {
	return func(r *http.Request) {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header.Set(k, v)
		}
	}
}

func withHost(h string) reqOpt { return func(r *http.Request) { r.Host = h } }

func withCtx(ctx context.Context) reqOpt {
	return func(r *http.Request) { *r = *r.WithContext(ctx) }
}

// withConnAddr records the local address of the connection the request
// uses.
func withConnAddr(addr *string) reqOpt {
	return func(r *http.Request) {
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
			*addr = info.Conn.LocalAddr().String()
		}}
		*r = *r.WithContext(httptrace.WithClientTrace(r.Context(), trace))
	}
}

// newRequest builds a request to the endpoint. POST gets the JSON
// content type and both Accept types, GET gets Accept: text/event-stream;
// a non-empty sid is sent with the negotiated protocol version. Options
// run last.
func (e *httpEnv) newRequest(method, sid, body string, opts ...reqOpt) *http.Request {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(e.ctx, method, e.ts.URL, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	switch method {
	case http.MethodPost:
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", acceptBoth)
	case http.MethodGet:
		req.Header.Set("Accept", "text/event-stream")
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", mcp.Version20251125)
	}
	for _, o := range opts {
		o(req)
	}
	return req
}

// do sends a request (see newRequest) and returns the response.
func (e *httpEnv) do(method, sid, body string, opts ...reqOpt) *http.Response {
	e.t.Helper()
	resp, err := e.client.Do(e.newRequest(method, sid, body, opts...))
	if err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
	return resp
}

// post sends one client message, observed by the wire checker.
func (e *httpEnv) post(sid, body string, opts ...reqOpt) *http.Response {
	e.t.Helper()
	e.obs(wirecheck.ClientToServer, []byte(body))
	return e.do(http.MethodPost, sid, body, opts...)
}

// initBody is an initialize request declaring caps.
func initBody(id int64, caps string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25",`+
		`"capabilities":%s,"clientInfo":{"name":"http-test","version":"1.0.0"}}}`, id, caps)
}

// initialize opens a session (initialize, then notifications/initialized)
// and returns its id.
func (e *httpEnv) initialize(caps string) string {
	e.t.Helper()
	if caps == "" {
		caps = "{}"
	}
	body := initBody(e.id(), caps)
	resp := e.post("", body)
	msg := e.readJSON(resp)
	e.obs(wirecheck.ServerToClient, []byte(msg.raw))
	if msg.Error != nil {
		e.t.Fatalf("initialize answered with an error: %s", msg.raw)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		e.t.Fatal("initialize: no Mcp-Session-Id header")
	}
	e.expect202(e.post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return sid
}

// expect202 checks an accepted notification or response: 202, no body.
func (e *httpEnv) expect202(resp *http.Response) {
	e.t.Helper()
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		e.t.Fatalf("status %d, want 202 (body %q)", resp.StatusCode, body)
	}
	if len(body) != 0 {
		e.t.Errorf("202 with a body: %q", body)
	}
}

// expectStatus reads and closes resp, checks its status and, when the
// body is a JSON-RPC error, that it conforms to the schema; it returns
// the error (nil when the body is empty).
func (e *httpEnv) expectStatus(resp *http.Response, want int) *rpcMsg {
	e.t.Helper()
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		e.t.Fatalf("reading the body: %v", err)
	}
	if resp.StatusCode != want {
		e.t.Fatalf("status %d, want %d (body %q)", resp.StatusCode, want, body)
	}
	if len(body) == 0 {
		return nil
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		e.t.Errorf("error body with Content-Type %q", ct)
	}
	if err := e.wc.Check(body); err != nil {
		e.t.Errorf("error body does not conform: %v\n%s", err, body)
	}
	m := parseMsg(e.t, body)
	if m.Error == nil {
		e.t.Errorf("status %d with a body that is not a JSON-RPC error: %s", want, body)
	}
	return m
}

// readJSON reads a JSON answer (200, application/json, one message).
func (e *httpEnv) readJSON(resp *http.Response) *rpcMsg {
	e.t.Helper()
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		e.t.Fatalf("reading the body: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("status %d, want 200 (body %q)", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		e.t.Fatalf("Content-Type %q, want application/json (body %q)", ct, body)
	}
	if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
		e.t.Errorf("Content-Length %q for a %d-byte body", cl, len(body))
	}
	if err := e.wc.Check(body); err != nil {
		e.t.Errorf("answer does not conform: %v\n%s", err, body)
	}
	return parseMsg(e.t, body)
}

// rpc posts a request and reads its JSON answer; both are checked by the
// wire observer, the answer as the result of that request.
func (e *httpEnv) rpc(sid, body string, opts ...reqOpt) *rpcMsg {
	e.t.Helper()
	m := e.readJSON(e.post(sid, body, opts...))
	e.obs(wirecheck.ServerToClient, []byte(m.raw))
	return m
}

// rpcMsg is a decoded JSON-RPC message.
type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw string
}

func parseMsg(t testing.TB, data []byte) *rpcMsg {
	t.Helper()
	var m rpcMsg
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("not a JSON-RPC message: %v: %q", err, data)
	}
	m.raw = string(data)
	return &m
}

// toolText returns the text of the first content block of a tools/call
// result and its isError flag.
func toolText(t testing.TB, m *rpcMsg) (string, bool) {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("tools/call answered with an error: %s", m.raw)
	}
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("not a tools/call result with content: %s", m.raw)
	}
	return r.Content[0].Text, r.IsError
}

// toolCall is a tools/call request; a non-empty token asks for progress.
func toolCall(id int64, name, args, token string) string {
	if args == "" {
		args = "{}"
	}
	meta := ""
	if token != "" {
		meta = fmt.Sprintf(`"_meta":{"progressToken":%q},`, token)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s"name":%q,"arguments":%s}}`, id, meta, name, args)
}

// sseFrame is one block of an event stream up to its blank line.
type sseFrame struct {
	id, data, retry         string
	hasID, hasData, hasRtry bool
	comments                []string
}

func (f sseFrame) String() string {
	return fmt.Sprintf("{id:%q(%v) retry:%q(%v) data:%q(%v) comments:%q}", f.id, f.hasID, f.retry, f.hasRtry, f.data, f.hasData, f.comments)
}

// sseStream reads an event stream frame by frame.
type sseStream struct {
	e    *httpEnv
	resp *http.Response
	br   *bufio.Reader
	// plain: check each message on its own, not as part of the observed
	// conversation (for replays of responses already observed).
	plain bool
}

// openSSE checks that resp is an event stream and returns its reader.
func (e *httpEnv) openSSE(resp *http.Response) *sseStream {
	e.t.Helper()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		e.t.Fatalf("status %d, want 200 with an event stream (body %q)", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		e.t.Fatalf("Content-Type %q, want text/event-stream (body %q)", ct, body)
	}
	return &sseStream{e: e, resp: resp, br: bufio.NewReader(resp.Body)}
}

func (s *sseStream) close() { s.resp.Body.Close() }

// frame reads the next frame; io.EOF at the end of the stream. The
// server writes LF line ends only: a CR is a finding.
func (s *sseStream) frame() (sseFrame, error) {
	var f sseFrame
	started := false
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && line != "" {
				return f, fmt.Errorf("unterminated line %q at the end of the stream", line)
			}
			if errors.Is(err, io.EOF) && started {
				return f, fmt.Errorf("unterminated frame %v at the end of the stream", f)
			}
			return f, err
		}
		line = strings.TrimSuffix(line, "\n")
		if strings.Contains(line, "\r") {
			return f, fmt.Errorf("CR in line %q", line)
		}
		if line == "" {
			if started {
				return f, nil
			}
			continue
		}
		started = true
		if line[0] == ':' {
			f.comments = append(f.comments, strings.TrimPrefix(line[1:], " "))
			continue
		}
		name, val, _ := strings.Cut(line, ":")
		val = strings.TrimPrefix(val, " ")
		switch name {
		case "id":
			f.id, f.hasID = val, true
		case "data":
			if f.hasData {
				f.data += "\n"
			}
			f.data, f.hasData = f.data+val, true
		case "retry":
			f.retry, f.hasRtry = val, true
		default:
			return f, fmt.Errorf("unexpected field %q", line)
		}
	}
}

// mustFrame reads the next frame, failing the test at the end.
func (s *sseStream) mustFrame() sseFrame {
	s.e.t.Helper()
	f, err := s.frame()
	if err != nil {
		s.e.t.Fatalf("reading the event stream: %v", err)
	}
	return f
}

// prime reads the priming event: an id, an empty data field and a retry
// delay; it returns the stream id and checks the sequence number.
func (s *sseStream) prime(wantSeq uint64) string {
	s.e.t.Helper()
	f := s.mustFrame()
	if !f.hasID || !f.hasData || f.data != "" || !f.hasRtry || len(f.comments) > 0 {
		s.e.t.Fatalf("first frame %v is not a priming event (id, empty data, retry)", f)
	}
	if ms, err := strconv.Atoi(f.retry); err != nil || ms <= 0 {
		s.e.t.Errorf("priming retry %q is not a positive number of milliseconds", f.retry)
	}
	stream, seq := splitEventID(s.e.t, f.id)
	if seq != wantSeq {
		s.e.t.Errorf("priming event id %q: sequence %d, want %d", f.id, seq, wantSeq)
	}
	return stream
}

// message reads the next event with data, skipping comment frames; it
// checks the message against the schema.
func (s *sseStream) message() (sseFrame, *rpcMsg) {
	s.e.t.Helper()
	for {
		f := s.mustFrame()
		if !f.hasData {
			if f.hasID || f.hasRtry {
				s.e.t.Fatalf("unexpected frame without data %v", f)
			}
			continue
		}
		if f.data == "" {
			s.e.t.Fatalf("unexpected empty event %v", f)
		}
		if s.plain {
			if err := s.e.wc.Check([]byte(f.data)); err != nil {
				s.e.t.Errorf("event does not conform: %v\n%s", err, f.data)
			}
		} else {
			s.e.obs(wirecheck.ServerToClient, []byte(f.data))
		}
		return f, parseMsg(s.e.t, []byte(f.data))
	}
}

// end reads the rest of the stream, which must hold no more events
// (comments and a final retry are allowed); it reports whether a retry
// line came last.
func (s *sseStream) end() (retried bool) {
	s.e.t.Helper()
	defer s.close()
	for {
		f, err := s.frame()
		if errors.Is(err, io.EOF) {
			return retried
		}
		if err != nil {
			s.e.t.Fatalf("reading the event stream: %v", err)
		}
		if f.hasData || f.hasID {
			s.e.t.Fatalf("unexpected event %v at the end of the stream", f)
		}
		retried = f.hasRtry
	}
}

// splitEventID parses "<stream>_<seq>".
func splitEventID(t testing.TB, id string) (string, uint64) {
	t.Helper()
	i := strings.LastIndexByte(id, '_')
	if i <= 0 {
		t.Fatalf("event id %q is not <stream>_<seq>", id)
	}
	seq, err := strconv.ParseUint(id[i+1:], 10, 64)
	if err != nil {
		t.Fatalf("event id %q is not <stream>_<seq>: %v", id, err)
	}
	return id[:i], seq
}

// recvT receives from ch, failing the test at the hang guard.
func recvT[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(httpHangGuard)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// progressOf returns the token and progress of a progress notification.
func progressOf(t testing.TB, m *rpcMsg) (string, float64) {
	t.Helper()
	if m.Method != mcp.NotificationProgress {
		t.Fatalf("got %s, want a progress notification", m.raw)
	}
	var p struct {
		Token    string  `json:"progressToken"`
		Progress float64 `json:"progress"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatal(err)
	}
	return p.Token, p.Progress
}

// session returns the handler's state of session sid.
func (e *httpEnv) session(sid string) *httpSession {
	e.t.Helper()
	e.h.mu.Lock()
	defer e.h.mu.Unlock()
	hs := e.h.sessions[sid]
	if hs == nil {
		e.t.Fatalf("no session %s", sid)
	}
	return hs
}

// streams reports how many POST streams a session still tracks, by
// request id and by stream id.
func (hs *httpSession) streams() (byReq, byID int) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	byID = len(hs.byID)
	if hs.get != nil {
		byID-- // the standalone stream lives as long as the session
	}
	return len(hs.byReq), byID
}

// asyncAnswer is an HTTP answer obtained off the test goroutine.
type asyncAnswer struct {
	resp *http.Response
	body []byte // the whole body, for doAsync; resp.Body is then closed
	err  error
}

// postAsync sends a POST on its own goroutine and reads the whole answer;
// nothing there touches the test's t except the (concurrency-safe) wire
// observer.
func (e *httpEnv) postAsync(sid, body string, opts ...reqOpt) <-chan asyncAnswer {
	e.obs(wirecheck.ClientToServer, []byte(body))
	return e.doAsync(http.MethodPost, sid, body, opts...)
}

// doAsync is do on its own goroutine, reading the whole answer.
func (e *httpEnv) doAsync(method, sid, body string, opts ...reqOpt) <-chan asyncAnswer {
	req := e.newRequest(method, sid, body, opts...)
	ch := make(chan asyncAnswer, 1)
	go func() {
		resp, err := e.client.Do(req)
		if err != nil {
			ch <- asyncAnswer{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		ch <- asyncAnswer{resp: resp, body: b, err: err}
	}()
	return ch
}

// postHeaders sends a POST on its own goroutine and delivers the
// response once its headers have arrived (for a handler that must be
// driven before it answers anything); the caller reads the body.
func (e *httpEnv) postHeaders(sid, body string, opts ...reqOpt) <-chan asyncAnswer {
	e.obs(wirecheck.ClientToServer, []byte(body))
	req := e.newRequest(http.MethodPost, sid, body, opts...)
	ch := make(chan asyncAnswer, 1)
	go func() {
		resp, err := e.client.Do(req)
		ch <- asyncAnswer{resp: resp, err: err}
	}()
	return ch
}

// headers waits for a response started by postHeaders.
func (e *httpEnv) headers(ch <-chan asyncAnswer) *http.Response {
	e.t.Helper()
	a := recvT(e.t, ch, "the response headers")
	if a.err != nil {
		e.t.Fatalf("request: %v", a.err)
	}
	return a.resp
}

// sseOf returns a reader of an event stream read whole by doAsync.
func (e *httpEnv) sseOf(a asyncAnswer) *sseStream {
	e.t.Helper()
	if a.err != nil {
		e.t.Fatalf("request: %v", a.err)
	}
	a.resp.Body = io.NopCloser(bytes.NewReader(a.body))
	return e.openSSE(a.resp)
}
