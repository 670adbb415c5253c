package streamhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/store"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// pollTool is a tool the test drives step by step: it runs the actions
// the test sends on steps in order and answers once steps is closed.
// An action is "progress", "close" (Request.CloseStream), "log", or
// anything else to do nothing.
type pollTool struct {
	steps    chan string
	done     chan struct{} // an action has completed
	ctxErr   chan error    // the handler's ctx error when it answered
	progress float64
}

func addPollTool(s *server.Server) *pollTool {
	p := &pollTool{steps: make(chan string), done: make(chan struct{}), ctxErr: make(chan error, 1)}
	s.AddRawTool(&mcp.Tool{Name: "poll"}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		for {
			var step string
			var more bool
			select {
			case step, more = <-p.steps:
			case <-ctx.Done(): // the session ended (a failed test)
				p.ctxErr <- ctx.Err()
				return nil, ctx.Err()
			}
			if !more {
				break
			}
			switch step {
			case "progress":
				p.progress++
				if err := req.Progress(ctx, p.progress, 0, ""); err != nil {
					return nil, err
				}
			case "log":
				if err := req.Log(ctx, mcp.LevelInfo, "poll", "note"); err != nil {
					return nil, err
				}
			case "close":
				req.CloseStream()
			}
			p.done <- struct{}{}
		}
		p.ctxErr <- ctx.Err()
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "polled"}}}, nil
	})
	return p
}

// do runs one action of the tool and waits for it to complete.
func (p *pollTool) do(t testing.TB, step string) {
	t.Helper()
	select {
	case p.steps <- step:
	case <-time.After(httpHangGuard):
		t.Fatalf("the tool did not take step %s", step)
	}
	recvT(t, p.done, "step "+step)
}

// finish lets the tool answer.
func (p *pollTool) finish(t testing.TB) {
	t.Helper()
	close(p.steps)
	if err := recvT(t, p.ctxErr, "the tool to answer"); err != nil {
		t.Errorf("the handler's context ended (%v): disconnection is not cancellation", err)
	}
}

// expectProgress reads the next message, a progress notification with
// the given value and event sequence number.
func expectProgress(t testing.TB, s *sseStream, stream string, value float64, seq uint64) string {
	t.Helper()
	f, m := s.message()
	if _, p := progressOf(t, m); p != value {
		t.Errorf("progress %v, want %v", p, value)
	}
	if st, n := splitEventID(t, f.id); st != stream || n != seq {
		t.Errorf("event id %q, want %s_%d", f.id, stream, seq)
	}
	return f.id
}

// expectResult reads the next message, the poll tool's response.
func expectResult(t testing.TB, s *sseStream, stream string, id int64, seq uint64) string {
	t.Helper()
	f, m := s.message()
	if text, _ := toolText(t, m); text != "polled" {
		t.Errorf("poll answered %q", text)
	}
	if string(m.ID) != strconv.FormatInt(id, 10) {
		t.Errorf("response id %s, want %d", m.ID, id)
	}
	if st, n := splitEventID(t, f.id); st != stream || n != seq {
		t.Errorf("event id %q, want %s_%d", f.id, stream, seq)
	}
	return f.id
}

func (e *httpEnv) resume(sid, lastEventID string) *http.Response {
	return e.do(http.MethodGet, sid, "", withHeader("Last-Event-ID", lastEventID))
}

func TestHTTPCloseStreamAndResume(t *testing.T) {
	s := echoServer()
	tool := addPollTool(s)
	e := newHTTPEnv(t, s, &Options{RetryInterval: 250 * time.Millisecond})
	sid := e.initialize("{}")

	id := e.id()
	pending := e.postHeaders(sid, toolCall(id, "poll", "", "tok"))
	tool.do(t, "progress")
	post := e.openSSE(e.headers(pending))
	stream := post.prime(0)
	first := expectProgress(t, post, stream, 1, 1)
	tool.do(t, "close")
	// The POST's response ends, with a retry: line last.
	if !post.end() {
		t.Error("the closed stream did not end with a retry: line")
	}
	// Messages sent while the client is away wait for it.
	tool.do(t, "progress")
	tool.do(t, "log")

	// Resuming after the last event seen delivers what was missed, then
	// the rest live.
	get := e.openSSE(e.resume(sid, first))
	expectProgress(t, get, stream, 2, 2)
	if f, m := get.message(); m.Method != mcp.NotificationMessage || f.id != stream+"_3" {
		t.Errorf("want the log message as event %s_3, got %v %s", stream, f, m.raw)
	}
	tool.do(t, "progress")
	expectProgress(t, get, stream, 3, 4)
	tool.finish(t)
	last := expectResult(t, get, stream, id, 5)
	if get.end() {
		t.Error("the resumed stream ended with retry: after its response")
	}

	// The stream is over: a replay from its start comes from the store,
	// every event in order, and ends.
	replay := e.openSSE(e.resume(sid, stream+"_0"))
	replay.plain = true
	for seq := uint64(1); seq <= 5; seq++ {
		f, _ := replay.message()
		if f.id != fmt.Sprintf("%s_%d", stream, seq) {
			t.Errorf("replayed event %q, want %s_%d", f.id, stream, seq)
		}
	}
	replay.end()
	// A replay after the last event is empty, and ends.
	empty := e.openSSE(e.resume(sid, last))
	empty.end()
}

// CloseStream before the tool has sent anything: the answer must become
// an event stream (priming event with an id) so that the client can
// resume it, then end with retry:.
func TestHTTPCloseStreamFirst(t *testing.T) {
	s := echoServer()
	tool := addPollTool(s)
	e := newHTTPEnv(t, s, nil)
	sid := e.initialize("{}")
	id := e.id()
	answer := e.postAsync(sid, toolCall(id, "poll", "", ""))
	tool.do(t, "close")
	var a asyncAnswer
	select {
	case a = <-answer:
	case <-time.After(5 * time.Second): // hang guard: the bug keeps the POST open until the tool answers
		t.Error("CloseStream did not end the POST's connection")
		tool.finish(t)
		a = recvT(t, answer, "the POST answer")
		t.Fatalf("the POST was answered only when the tool finished: %s %q", a.resp.Header.Get("Content-Type"), a.body)
	}
	post := e.sseOf(a)
	stream := post.prime(0)
	if !post.end() {
		t.Error("no retry: before the end of the closed stream")
	}
	tool.finish(t)
	get := e.openSSE(e.resume(sid, stream+"_0"))
	expectResult(t, get, stream, id, 1)
	get.end()
}

// Cutting the POST's connection is not cancellation: the handler runs
// on, and GET with Last-Event-ID collects the rest. Resuming from an
// earlier event than the last one delivered replays from the store.
func TestHTTPDisconnectThenResume(t *testing.T) {
	s := echoServer()
	tool := addPollTool(s)
	e := newHTTPEnv(t, s, nil)
	sid := e.initialize("{}")

	id := e.id()
	ctx, cut := context.WithCancel(e.ctx)
	var addr string
	pending := e.postHeaders(sid, toolCall(id, "poll", "", "tok"), withCtx(ctx), withConnAddr(&addr))
	tool.do(t, "progress")
	post := e.openSSE(e.headers(pending))
	stream := post.prime(0)
	expectProgress(t, post, stream, 1, 1)
	tool.do(t, "progress")
	expectProgress(t, post, stream, 2, 2)
	cut() // the client's TCP connection goes away
	post.close()
	recvT(t, e.serverClosed(addr), "the server to see the cut connection")
	tool.do(t, "progress") // while nobody listens

	// Resume from the priming event: 1 and 2 come from the store, 3 was
	// waiting, the rest is live.
	get := e.openSSE(e.resume(sid, stream+"_0"))
	get.plain = true
	for seq := uint64(1); seq <= 3; seq++ {
		expectProgress(t, get, stream, float64(seq), seq)
	}
	tool.finish(t)
	expectResult(t, get, stream, id, 4)
	get.end()
}

func TestHTTPResumeErrors(t *testing.T) {
	s := echoServer()
	tool := addPollTool(s)
	es := store.NewMemoryEventStore(&store.MemoryEventStoreOptions{MaxEventsPerStream: 2})
	e := newHTTPEnv(t, s, &Options{EventStore: es})
	sid := e.initialize("{}")

	for _, bad := range []string{"garbage", "_5", "abc_", "abc_x", "abc_-1", "abc_1.5"} {
		e.expectStatus(e.resume(sid, bad), http.StatusBadRequest)
	}
	// Resumption needs the session like any other request.
	e.expectStatus(e.do(http.MethodGet, "", "", withHeader("Last-Event-ID", "abc_1")), http.StatusBadRequest)

	id := e.id()
	pending := e.postHeaders(sid, toolCall(id, "poll", "", "tok"))
	tool.do(t, "progress")
	tool.do(t, "progress")
	post := e.openSSE(e.headers(pending))
	stream := post.prime(0)
	expectProgress(t, post, stream, 1, 1)
	second := expectProgress(t, post, stream, 2, 2)
	tool.do(t, "close")
	post.end()
	// Two more while the client is away: the store, which keeps two
	// events per stream, drops 1 and 2.
	tool.do(t, "progress")
	tool.do(t, "progress")
	// Appends run after the push, outside the stream's lock: wait until
	// the store has taken them.
	waitFor(t, "the store to drop events 1 and 2", func() bool {
		err := es.Replay(context.Background(), sid, stream, 0, func(uint64, []byte) error { return nil })
		return errors.Is(err, store.ErrEventsPurged)
	})

	// Events 1 and 2 are gone: resuming from the priming event cannot be
	// served in full, and a partial replay would lose messages silently.
	e.expectStatus(e.resume(sid, stream+"_0"), http.StatusConflict)
	e.expectStatus(e.resume(sid, stream+"_1"), http.StatusConflict)
	// From the last event seen, nothing is missing.
	get := e.openSSE(e.resume(sid, second))
	expectProgress(t, get, stream, 3, 3)
	expectProgress(t, get, stream, 4, 4)
	tool.finish(t)
	expectResult(t, get, stream, id, 5)
	get.end()
	// After the stream finished, the store has events 4 and 5 only.
	e.expectStatus(e.resume(sid, stream+"_2"), http.StatusConflict)
	replay := e.openSSE(e.resume(sid, stream+"_3"))
	replay.plain = true
	replay.messageFrame(t, mcp.NotificationProgress)
	f, _ := replay.message()
	if f.id != stream+"_5" {
		t.Errorf("replayed %q, want %s_5", f.id, stream)
	}
	replay.end()
}

// Another session's event ids give nothing away.
func TestHTTPResumeOtherSession(t *testing.T) {
	s := echoServer()
	addProgressTool(s, nil)
	e := newHTTPEnv(t, s, nil)
	a, b := e.initialize("{}"), e.initialize("{}")
	id := e.id()
	stream, _ := readToolStream(e, e.openSSE(e.post(a, toolCall(id, "progress", `{"steps":2,"tag":"secret"}`, "tok"))), id)
	resp := e.resume(b, stream+"_0")
	if resp.StatusCode == http.StatusOK {
		st := e.openSSE(resp)
		if f, err := st.frame(); err == nil && f.hasData && f.data != "" {
			t.Errorf("session b replayed session a's event %v", f)
		}
		st.close()
	} else {
		resp.Body.Close()
	}
	// And a's own replay works (retried while the POST's reader may still
	// be finishing: 409).
	replay := e.openSSE(resume(e, a, stream+"_0"))
	replay.plain = true
	replay.messageFrame(t, mcp.NotificationProgress)
	replay.close()
}

// A POST answered with JSON whose client went away before the answer
// can never be resumed (the client has no event id): the handler runs on
// (disconnection is not cancellation), but the stream must not stay in
// the session, holding the late answer, until the session ends.
func TestHTTPAbandonedJSONRequestFreed(t *testing.T) {
	s := echoServer()
	tool := addPollTool(s)
	e := newHTTPEnv(t, s, nil)
	sid := e.initialize("{}")
	hs := e.session(sid)

	ctx, cut := context.WithCancel(e.ctx)
	var addr string
	answer := e.postAsync(sid, toolCall(e.id(), "poll", "", ""), withCtx(ctx), withConnAddr(&addr))
	tool.do(t, "noop") // the handler is running, and has sent nothing
	cut()
	if a := recvT(t, answer, "the cut POST"); a.err == nil {
		t.Fatalf("the POST was answered: %q", a.body)
	}
	recvT(t, e.serverClosed(addr), "the server to see the cut connection")
	if byReq, byID := hs.streams(); byReq != 0 || byID != 0 {
		t.Errorf("after the client left a JSON request: %d streams by request, %d by id; want none", byReq, byID)
	}
	tool.finish(t)
	// The session is fine.
	e.rpc(sid, toolCall(e.id(), "echo", "", ""))
	if byReq, byID := hs.streams(); byReq != 0 || byID != 0 {
		t.Errorf("after the late answer: %d streams by request, %d by id; want none", byReq, byID)
	}
}

// failWriter is a ResponseWriter whose connection breaks when the
// response to the tool call is written.
type failWriter struct {
	h      http.Header
	failOn string
	mu     sync.Mutex
	wrote  strings.Builder
}

func (w *failWriter) Header() http.Header { return w.h }
func (w *failWriter) WriteHeader(int)     {}
func (w *failWriter) Flush()              {}
func (w *failWriter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.failOn) {
		return 0, errors.New("write: broken pipe")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.wrote.Write(p)
}

// When the write of the final response fails (the connection broke), the
// response is in the store: a resumption must deliver it and end, as
// the stream is over.
func TestHTTPResumeAfterFailedFinalWrite(t *testing.T) {
	s := echoServer()
	tool := addPollTool(s)
	e := newHTTPEnv(t, s, nil)
	sid := e.initialize("{}")
	hs := e.session(sid)

	id := e.id()
	msg, derr := jsonrpc.Decode([]byte(toolCall(id, "poll", "", "tok")), jsonrpc.Limits{})
	if derr != nil {
		t.Fatal(derr)
	}
	st, ok := hs.openStream(msg.ID)
	if !ok {
		t.Fatal("openStream failed")
	}
	hs.ss.Process(nil, msg)
	w := &failWriter{h: http.Header{}, failOn: `"result"`}
	served := make(chan struct{})
	go func() {
		defer close(served)
		st.serve(w, httptest.NewRequest(http.MethodPost, "/", nil), -1)
	}()
	tool.do(t, "progress")
	tool.finish(t)
	recvT(t, served, "serve to return after the failed write")
	w.mu.Lock()
	wrote := w.wrote.String()
	w.mu.Unlock()
	if !strings.Contains(wrote, st.id+"_1") {
		t.Fatalf("the progress event was not written: %q", wrote)
	}

	answer := e.doAsync(http.MethodGet, sid, "", withHeader("Last-Event-ID", st.id+"_1"))
	select {
	case a := <-answer:
		get := e.sseOf(a)
		get.plain = true
		expectResult(t, get, st.id, id, 2)
		get.end()
	case <-time.After(5 * time.Second): // hang guard; the cleanup's Close ends the GET
		t.Error("the resumed stream delivered its response but did not end")
	}
}

// A request id may not be reused while its request is in flight; once
// answered, it may.
func TestHTTPDuplicateRequestID(t *testing.T) {
	s := echoServer()
	tool := addPollTool(s)
	e := newHTTPEnv(t, s, nil)
	sid := e.initialize("{}")
	body := toolCall(999, "poll", "", "")
	pending := e.postHeaders(sid, body)
	tool.do(t, "noop") // in flight
	m := e.expectStatus(e.do(http.MethodPost, sid, toolCall(999, "echo", "", "")), http.StatusBadRequest)
	if m == nil || string(m.ID) != "999" || m.Error.Code != mcp.CodeInvalidRequest {
		t.Errorf("duplicate id answered %+v", m)
	}
	tool.finish(t)
	answer := e.readJSON(e.headers(pending))
	e.obs(wirecheck.ServerToClient, []byte(answer.raw))
	if text, _ := toolText(t, answer); text != "polled" {
		t.Errorf("poll answered %q", text)
	}
	if text, _ := toolText(t, e.rpc(sid, toolCall(999, "echo", `{"text":"again"}`, ""))); text != `{"text":"again"}` {
		t.Errorf("echo answered %q", text)
	}
}
