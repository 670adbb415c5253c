// Package httpenv is test support for the Streamable HTTP tests of
// server and server/streamhttp: a real loopback server (httptest) around
// a handler, raw net/http requests, a raw SSE frame reader that also sees
// comments and retry lines, and wire checks against the official
// 2025-11-25 schema. It must not import server or server/streamhttp (the
// server's own tests use it); callers hand it their handler.
package httpenv

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

	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
)

// HangGuard bounds every wait of these tests. It is never a
// synchronisation: a test that reaches it has failed.
const HangGuard = 20 * time.Second

const AcceptBoth = "application/json, text/event-stream"

// Env is one Handler served over loopback, with a client that
// keeps its connections alive.
type Env struct {
	T      testing.TB
	TS     *httptest.Server
	TR     *http.Transport
	Client *http.Client
	Ctx    context.Context
	WC     *wirecheck.Checker
	Obs    func(dir string, msg []byte)
	// Shutdown closes the handler, drains the HTTP server and checks
	// that nothing is left; it runs at the end of the test, or earlier.
	Shutdown func()
	*Shared
}

// Handler is the handler an Env serves: a streamhttp.Handler.
type Handler interface {
	http.Handler
	Close() error
	SessionCount() int
}

// Shared is the state the per-subtest views of an Env share.
type Shared struct {
	NextID atomic.Int64
	ConnMu sync.Mutex
	Closed map[string]chan struct{} // client addr → closed when the server closed that connection
}

// Sub returns a view of e whose failures belong to t (a subtest).
func (e *Env) Sub(t testing.TB) *Env {
	c := *e
	c.T = t
	return &c
}

// New serves the handler newHandler returns over loopback. At the end of the test it closes the
// handler, checks that the HTTP server drains (every handler returned),
// that the handler and, through serverSessions (nil: not checked), the
// server hold no session, and that no goroutine is left.
func New(t testing.TB, newHandler func() Handler, serverSessions func() int) *Env {
	t.Helper()
	before := goleak.IgnoreCurrent()                   // a benchmark's runner, an earlier test's own leak (reported there)
	t.Cleanup(func() { goleak.VerifyNone(t, before) }) // registered first: runs last
	h := newHandler()
	ctx, cancel := context.WithTimeout(context.Background(), HangGuard)
	e := &Env{T: t, Ctx: ctx, Shared: &Shared{Closed: make(map[string]chan struct{})}}
	e.WC = wirecheck.For(t, mcp.Version20251125)
	e.Obs = e.WC.Observe(t)
	e.TS = httptest.NewUnstartedServer(h)
	e.TS.Config.ConnState = e.connState
	e.TS.Start()
	e.TR = &http.Transport{MaxIdleConnsPerHost: 64}
	e.Client = &http.Client{Transport: e.TR}
	e.Shutdown = sync.OnceFunc(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Handler.Close: %v", err)
		}
		drained := make(chan struct{})
		go func() { e.TS.Close(); close(drained) }()
		select {
		case <-drained:
		case <-time.After(HangGuard):
			t.Error("the HTTP server did not drain after Handler.Close: a handler is still running")
			cancel() // unblock the clients so that the server can drain
			<-drained
		}
		cancel()
		e.TR.CloseIdleConnections()
		if n := h.SessionCount(); n != 0 {
			t.Errorf("SessionCount after Close = %d, want 0", n)
		}
		if serverSessions != nil {
			if n := serverSessions(); n != 0 {
				t.Errorf("Server.Sessions after Close: %d, want 0", n)
			}
		}
	})
	t.Cleanup(e.Shutdown)
	return e
}

func (e *Env) connState(c net.Conn, s http.ConnState) {
	if s != http.StateClosed && s != http.StateHijacked {
		return
	}
	e.ConnMu.Lock()
	defer e.ConnMu.Unlock()
	addr := c.RemoteAddr().String()
	ch := e.Closed[addr]
	if ch == nil {
		ch = make(chan struct{})
		e.Closed[addr] = ch
	}
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// ServerClosed returns a channel closed once the server has closed its
// end of the connection whose client address is clientAddr, which net/http
// does only after the handler serving it returned.
func (e *Env) ServerClosed(clientAddr string) <-chan struct{} {
	e.ConnMu.Lock()
	defer e.ConnMu.Unlock()
	ch := e.Closed[clientAddr]
	if ch == nil {
		ch = make(chan struct{})
		e.Closed[clientAddr] = ch
	}
	return ch
}

func (e *Env) ID() int64 { return e.NextID.Add(1) }

// ReqOpt changes a request before it is sent.
type ReqOpt func(*http.Request)

func WithHeader(k, v string) ReqOpt {
	return func(r *http.Request) {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header.Set(k, v)
		}
	}
}

func WithHost(h string) ReqOpt { return func(r *http.Request) { r.Host = h } }

func WithCtx(ctx context.Context) ReqOpt {
	return func(r *http.Request) { *r = *r.WithContext(ctx) }
}

// WithConnAddr records the local address of the connection the request
// uses.
func WithConnAddr(addr *string) ReqOpt {
	return func(r *http.Request) {
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
			*addr = info.Conn.LocalAddr().String()
		}}
		*r = *r.WithContext(httptrace.WithClientTrace(r.Context(), trace))
	}
}

// NewRequest builds a request to the endpoint. POST gets the JSON
// content type and both Accept types, GET gets Accept: text/event-stream;
// a non-empty sid is sent with the negotiated protocol version. Options
// run last.
func (e *Env) NewRequest(method, sid, body string, opts ...ReqOpt) *http.Request {
	e.T.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(e.Ctx, method, e.TS.URL, rd)
	if err != nil {
		e.T.Fatal(err)
	}
	switch method {
	case http.MethodPost:
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", AcceptBoth)
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

// Do sends a request (see NewRequest) and returns the response.
func (e *Env) Do(method, sid, body string, opts ...ReqOpt) *http.Response {
	e.T.Helper()
	resp, err := e.Client.Do(e.NewRequest(method, sid, body, opts...))
	if err != nil {
		e.T.Fatalf("%s: %v", method, err)
	}
	return resp
}

// Post sends one client message, observed by the wire checker.
func (e *Env) Post(sid, body string, opts ...ReqOpt) *http.Response {
	e.T.Helper()
	e.Obs(wirecheck.ClientToServer, []byte(body))
	return e.Do(http.MethodPost, sid, body, opts...)
}

// InitBody is an initialize request declaring caps.
func InitBody(id int64, caps string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25",`+
		`"capabilities":%s,"clientInfo":{"name":"http-test","version":"1.0.0"}}}`, id, caps)
}

// Initialize opens a session (initialize, then notifications/initialized)
// and returns its id.
func (e *Env) Initialize(caps string) string {
	e.T.Helper()
	if caps == "" {
		caps = "{}"
	}
	body := InitBody(e.ID(), caps)
	resp := e.Post("", body)
	msg := e.ReadJSON(resp)
	e.Obs(wirecheck.ServerToClient, []byte(msg.Raw))
	if msg.Error != nil {
		e.T.Fatalf("initialize answered with an error: %s", msg.Raw)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		e.T.Fatal("initialize: no Mcp-Session-Id header")
	}
	e.Expect202(e.Post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return sid
}

// Expect202 checks an accepted notification or response: 202, no body.
func (e *Env) Expect202(resp *http.Response) {
	e.T.Helper()
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		e.T.Fatalf("status %d, want 202 (body %q)", resp.StatusCode, body)
	}
	if len(body) != 0 {
		e.T.Errorf("202 with a body: %q", body)
	}
}

// ExpectStatus reads and closes resp, checks its status and, when the
// body is a JSON-RPC error, that it conforms to the schema; it returns
// the error (nil when the body is empty).
func (e *Env) ExpectStatus(resp *http.Response, want int) *RPCMsg {
	e.T.Helper()
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		e.T.Fatalf("reading the body: %v", err)
	}
	if resp.StatusCode != want {
		e.T.Fatalf("status %d, want %d (body %q)", resp.StatusCode, want, body)
	}
	if len(body) == 0 {
		return nil
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		e.T.Errorf("error body with Content-Type %q", ct)
	}
	if err := e.WC.Check(body); err != nil {
		e.T.Errorf("error body does not conform: %v\n%s", err, body)
	}
	m := ParseMsg(e.T, body)
	if m.Error == nil {
		e.T.Errorf("status %d with a body that is not a JSON-RPC error: %s", want, body)
	}
	return m
}

// ReadJSON reads a JSON answer (200, application/json, one message).
func (e *Env) ReadJSON(resp *http.Response) *RPCMsg {
	e.T.Helper()
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		e.T.Fatalf("reading the body: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		e.T.Fatalf("status %d, want 200 (body %q)", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		e.T.Fatalf("Content-Type %q, want application/json (body %q)", ct, body)
	}
	if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
		e.T.Errorf("Content-Length %q for a %d-byte body", cl, len(body))
	}
	if err := e.WC.Check(body); err != nil {
		e.T.Errorf("answer does not conform: %v\n%s", err, body)
	}
	return ParseMsg(e.T, body)
}

// RPC posts a request and reads its JSON answer; both are checked by the
// wire observer, the answer as the result of that request.
func (e *Env) RPC(sid, body string, opts ...ReqOpt) *RPCMsg {
	e.T.Helper()
	m := e.ReadJSON(e.Post(sid, body, opts...))
	e.Obs(wirecheck.ServerToClient, []byte(m.Raw))
	return m
}

// RPCMsg is a decoded JSON-RPC message.
type RPCMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Raw string
}

func ParseMsg(t testing.TB, data []byte) *RPCMsg {
	t.Helper()
	var m RPCMsg
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("not a JSON-RPC message: %v: %q", err, data)
	}
	m.Raw = string(data)
	return &m
}

// ToolText returns the text of the first content block of a tools/call
// result and its isError flag.
func ToolText(t testing.TB, m *RPCMsg) (string, bool) {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("tools/call answered with an error: %s", m.Raw)
	}
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("not a tools/call result with content: %s", m.Raw)
	}
	return r.Content[0].Text, r.IsError
}

// ToolCall is a tools/call request; a non-empty token asks for progress.
func ToolCall(id int64, name, args, token string) string {
	if args == "" {
		args = "{}"
	}
	meta := ""
	if token != "" {
		meta = fmt.Sprintf(`"_meta":{"progressToken":%q},`, token)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s"name":%q,"arguments":%s}}`, id, meta, name, args)
}

// SSEFrame is one block of an event stream up to its blank line.
type SSEFrame struct {
	ID, Data, Retry          string
	HasID, HasData, HasRetry bool
	Comments                 []string
}

func (f SSEFrame) String() string {
	return fmt.Sprintf("{id:%q(%v) retry:%q(%v) data:%q(%v) comments:%q}", f.ID, f.HasID, f.Retry, f.HasRetry, f.Data, f.HasData, f.Comments)
}

// SSEStream reads an event stream frame by frame.
type SSEStream struct {
	E    *Env
	Resp *http.Response
	BR   *bufio.Reader
	// Plain: check each message on its own, not as part of the observed
	// conversation (for replays of responses already observed).
	Plain bool
}

// OpenSSE checks that resp is an event stream and returns its reader.
func (e *Env) OpenSSE(resp *http.Response) *SSEStream {
	e.T.Helper()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		e.T.Fatalf("status %d, want 200 with an event stream (body %q)", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		e.T.Fatalf("Content-Type %q, want text/event-stream (body %q)", ct, body)
	}
	return &SSEStream{E: e, Resp: resp, BR: bufio.NewReader(resp.Body)}
}

func (s *SSEStream) Close() { s.Resp.Body.Close() }

// Frame reads the next frame; io.EOF at the end of the stream. The
// server writes LF line ends only: a CR is a finding.
func (s *SSEStream) Frame() (SSEFrame, error) {
	var f SSEFrame
	started := false
	for {
		line, err := s.BR.ReadString('\n')
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
			f.Comments = append(f.Comments, strings.TrimPrefix(line[1:], " "))
			continue
		}
		name, val, _ := strings.Cut(line, ":")
		val = strings.TrimPrefix(val, " ")
		switch name {
		case "id":
			f.ID, f.HasID = val, true
		case "data":
			if f.HasData {
				f.Data += "\n"
			}
			f.Data, f.HasData = f.Data+val, true
		case "retry":
			f.Retry, f.HasRetry = val, true
		default:
			return f, fmt.Errorf("unexpected field %q", line)
		}
	}
}

// MustFrame reads the next frame, failing the test at the end.
func (s *SSEStream) MustFrame() SSEFrame {
	s.E.T.Helper()
	f, err := s.Frame()
	if err != nil {
		s.E.T.Fatalf("reading the event stream: %v", err)
	}
	return f
}

// Prime reads the priming event: an id, an empty data field and a retry
// delay; it returns the stream id and checks the sequence number.
func (s *SSEStream) Prime(wantSeq uint64) string {
	s.E.T.Helper()
	f := s.MustFrame()
	if !f.HasID || !f.HasData || f.Data != "" || !f.HasRetry || len(f.Comments) > 0 {
		s.E.T.Fatalf("first frame %v is not a priming event (id, empty data, retry)", f)
	}
	if ms, err := strconv.Atoi(f.Retry); err != nil || ms <= 0 {
		s.E.T.Errorf("priming retry %q is not a positive number of milliseconds", f.Retry)
	}
	stream, seq := SplitEventID(s.E.T, f.ID)
	if seq != wantSeq {
		s.E.T.Errorf("priming event id %q: sequence %d, want %d", f.ID, seq, wantSeq)
	}
	return stream
}

// Message reads the next event with data, skipping comment frames; it
// checks the message against the schema.
func (s *SSEStream) Message() (SSEFrame, *RPCMsg) {
	s.E.T.Helper()
	for {
		f := s.MustFrame()
		if !f.HasData {
			if f.HasID || f.HasRetry {
				s.E.T.Fatalf("unexpected frame without data %v", f)
			}
			continue
		}
		if f.Data == "" {
			s.E.T.Fatalf("unexpected empty event %v", f)
		}
		if s.Plain {
			if err := s.E.WC.Check([]byte(f.Data)); err != nil {
				s.E.T.Errorf("event does not conform: %v\n%s", err, f.Data)
			}
		} else {
			s.E.Obs(wirecheck.ServerToClient, []byte(f.Data))
		}
		return f, ParseMsg(s.E.T, []byte(f.Data))
	}
}

// End reads the rest of the stream, which must hold no more events
// (comments and a final retry are allowed); it reports whether a retry
// line came last.
func (s *SSEStream) End() (retried bool) {
	s.E.T.Helper()
	defer s.Close()
	for {
		f, err := s.Frame()
		if errors.Is(err, io.EOF) {
			return retried
		}
		if err != nil {
			s.E.T.Fatalf("reading the event stream: %v", err)
		}
		if f.HasData || f.HasID {
			s.E.T.Fatalf("unexpected event %v at the end of the stream", f)
		}
		retried = f.HasRetry
	}
}

// SplitEventID parses "<stream>_<seq>".
func SplitEventID(t testing.TB, id string) (string, uint64) {
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

// RecvT receives from ch, failing the test at the hang guard.
func RecvT[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(HangGuard)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// ProgressOf returns the token and progress of a progress notification.
func ProgressOf(t testing.TB, m *RPCMsg) (string, float64) {
	t.Helper()
	if m.Method != mcp.NotificationProgress {
		t.Fatalf("got %s, want a progress notification", m.Raw)
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

// AsyncAnswer is an HTTP answer obtained off the test goroutine.
type AsyncAnswer struct {
	Resp *http.Response
	Body []byte // the whole body, for DoAsync; Resp.Body is then closed
	Err  error
}

// PostAsync sends a POST on its own goroutine and reads the whole answer;
// nothing there touches the test's t except the (concurrency-safe) wire
// observer.
func (e *Env) PostAsync(sid, body string, opts ...ReqOpt) <-chan AsyncAnswer {
	e.Obs(wirecheck.ClientToServer, []byte(body))
	return e.DoAsync(http.MethodPost, sid, body, opts...)
}

// DoAsync is Do on its own goroutine, reading the whole answer.
func (e *Env) DoAsync(method, sid, body string, opts ...ReqOpt) <-chan AsyncAnswer {
	req := e.NewRequest(method, sid, body, opts...)
	ch := make(chan AsyncAnswer, 1)
	go func() {
		resp, err := e.Client.Do(req)
		if err != nil {
			ch <- AsyncAnswer{Err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		ch <- AsyncAnswer{Resp: resp, Body: b, Err: err}
	}()
	return ch
}

// PostHeaders sends a POST on its own goroutine and delivers the
// response once its headers have arrived (for a handler that must be
// driven before it answers anything); the caller reads the body.
func (e *Env) PostHeaders(sid, body string, opts ...ReqOpt) <-chan AsyncAnswer {
	e.Obs(wirecheck.ClientToServer, []byte(body))
	req := e.NewRequest(http.MethodPost, sid, body, opts...)
	ch := make(chan AsyncAnswer, 1)
	go func() {
		resp, err := e.Client.Do(req)
		ch <- AsyncAnswer{Resp: resp, Err: err}
	}()
	return ch
}

// Headers waits for a response started by PostHeaders.
func (e *Env) Headers(ch <-chan AsyncAnswer) *http.Response {
	e.T.Helper()
	a := RecvT(e.T, ch, "the response headers")
	if a.Err != nil {
		e.T.Fatalf("request: %v", a.Err)
	}
	return a.Resp
}

// SSEOf returns a reader of an event stream read whole by DoAsync.
func (e *Env) SSEOf(a AsyncAnswer) *SSEStream {
	e.T.Helper()
	if a.Err != nil {
		e.T.Fatalf("request: %v", a.Err)
	}
	a.Resp.Body = io.NopCloser(bytes.NewReader(a.Body))
	return e.OpenSSE(a.Resp)
}

// MessageFrame reads the next message and checks its method.
func (s *SSEStream) MessageFrame(t testing.TB, method string) SSEFrame {
	t.Helper()
	f, m := s.Message()
	if m.Method != method {
		t.Fatalf("got %s, want %s", m.Raw, method)
	}
	return f
}

// ElicitCaps are the client capabilities of a client that answers form
// elicitations.
const ElicitCaps = `{"elicitation":{"form":{}}}`

// Subscribe subscribes the session to uri.
func (e *Env) Subscribe(sid, uri string) {
	e.T.Helper()
	if m := e.RPC(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/subscribe","params":{"uri":%q}}`, e.ID(), uri)); m.Error != nil {
		e.T.Fatalf("resources/subscribe: %s", m.Raw)
	}
}

// ExpectNext reads the next message of a standalone stream and checks it
// is the notification method: a marker sent after the traffic under test
// proves that nothing else reached the stream before it.
func ExpectNext(t testing.TB, st *SSEStream, method string) *RPCMsg {
	t.Helper()
	_, m := st.Message()
	if m.Method != method || len(m.ID) != 0 {
		t.Fatalf("the GET stream carried %s; want %s next", m.Raw, method)
	}
	return m
}
