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

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/store"

	"github.com/mcpkit/mcpkit/internal/wire"
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
	case <-time.After(httpenv.HangGuard):
		t.Fatalf("the tool did not take step %s", step)
	}
	httpenv.RecvT(t, p.done, "step "+step)
}

// finish lets the tool answer.
func (p *pollTool) finish(t testing.TB) {
	t.Helper()
	close(p.steps)
	if err := httpenv.RecvT(t, p.ctxErr, "the tool to answer"); err != nil {
		t.Errorf("the handler's context ended (%v): disconnection is not cancellation", err)
	}
}

// expectProgress reads the next message, a progress notification with
// the given value and event sequence number.
func expectProgress(t testing.TB, s *httpenv.SSEStream, stream string, value float64, seq uint64) string {
	t.Helper()
	f, m := s.Message()
	if _, p := httpenv.ProgressOf(t, m); p != value {
		t.Errorf("progress %v, want %v", p, value)
	}
	if st, n := httpenv.SplitEventID(t, f.ID); st != stream || n != seq {
		t.Errorf("event id %q, want %s_%d", f.ID, stream, seq)
	}
	return f.ID
}

// expectResult reads the next message, the poll tool's response.
func expectResult(t testing.TB, s *httpenv.SSEStream, stream string, id int64, seq uint64) string {
	t.Helper()
	f, m := s.Message()
	if text, _ := httpenv.ToolText(t, m); text != "polled" {
		t.Errorf("poll answered %q", text)
	}
	if string(m.ID) != strconv.FormatInt(id, 10) {
		t.Errorf("response id %s, want %d", m.ID, id)
	}
	if st, n := httpenv.SplitEventID(t, f.ID); st != stream || n != seq {
		t.Errorf("event id %q, want %s_%d", f.ID, stream, seq)
	}
	return f.ID
}

func (e *httpEnv) resume(sid, lastEventID string) *http.Response {
	return e.Do(http.MethodGet, sid, "", httpenv.WithHeader("Last-Event-ID", lastEventID))
}

func TestHTTPCloseStreamAndResume(t *testing.T) {
	s := echoServer()
	tool := addPollTool(s)
	e := newHTTPEnv(t, s, &Options{RetryInterval: 250 * time.Millisecond})
	sid := e.Initialize("{}")

	id := e.ID()
	pending := e.PostHeaders(sid, httpenv.ToolCall(id, "poll", "", "tok"))
	tool.do(t, "progress")
	post := e.OpenSSE(e.Headers(pending))
	stream := post.Prime(0)
	first := expectProgress(t, post, stream, 1, 1)
	tool.do(t, "close")
	// The POST's response ends, with a retry: line last.
	if !post.End() {
		t.Error("the closed stream did not end with a retry: line")
	}
	// Messages sent while the client is away wait for it.
	tool.do(t, "progress")
	tool.do(t, "log")

	// Resuming after the last event seen delivers what was missed, then
	// the rest live.
	get := e.OpenSSE(e.resume(sid, first))
	expectProgress(t, get, stream, 2, 2)
	if f, m := get.Message(); m.Method != mcp.NotificationMessage || f.ID != stream+"_3" {
		t.Errorf("want the log message as event %s_3, got %v %s", stream, f, m.Raw)
	}
	tool.do(t, "progress")
	expectProgress(t, get, stream, 3, 4)
	tool.finish(t)
	last := expectResult(t, get, stream, id, 5)
	if get.End() {
		t.Error("the resumed stream ended with retry: after its response")
	}

	// The stream is over: a replay from its start comes from the store,
	// every event in order, and ends.
	replay := e.OpenSSE(e.resume(sid, stream+"_0"))
	replay.Plain = true
	for seq := uint64(1); seq <= 5; seq++ {
		f, _ := replay.Message()
		if f.ID != fmt.Sprintf("%s_%d", stream, seq) {
			t.Errorf("replayed event %q, want %s_%d", f.ID, stream, seq)
		}
	}
	replay.End()
	// A replay after the last event is empty, and ends.
	empty := e.OpenSSE(e.resume(sid, last))
	empty.End()
}

// CloseStream before the tool has sent anything: the answer must become
// an event stream (priming event with an id) so that the client can
// resume it, then end with retry:.
func TestHTTPCloseStreamFirst(t *testing.T) {
	s := echoServer()
	tool := addPollTool(s)
	e := newHTTPEnv(t, s, nil)
	sid := e.Initialize("{}")
	id := e.ID()
	answer := e.PostAsync(sid, httpenv.ToolCall(id, "poll", "", ""))
	tool.do(t, "close")
	var a httpenv.AsyncAnswer
	select {
	case a = <-answer:
	case <-time.After(5 * time.Second): // hang guard: the bug keeps the POST open until the tool answers
		t.Error("CloseStream did not end the POST's connection")
		tool.finish(t)
		a = httpenv.RecvT(t, answer, "the POST answer")
		t.Fatalf("the POST was answered only when the tool finished: %s %q", a.Resp.Header.Get("Content-Type"), a.Body)
	}
	post := e.SSEOf(a)
	stream := post.Prime(0)
	if !post.End() {
		t.Error("no retry: before the end of the closed stream")
	}
	tool.finish(t)
	get := e.OpenSSE(e.resume(sid, stream+"_0"))
	expectResult(t, get, stream, id, 1)
	get.End()
}

// Cutting the POST's connection is not cancellation: the handler runs
// on, and GET with Last-Event-ID collects the rest. Resuming from an
// earlier event than the last one delivered replays from the store.
func TestHTTPDisconnectThenResume(t *testing.T) {
	s := echoServer()
	tool := addPollTool(s)
	e := newHTTPEnv(t, s, nil)
	sid := e.Initialize("{}")

	id := e.ID()
	ctx, cut := context.WithCancel(e.Ctx)
	var addr string
	pending := e.PostHeaders(sid, httpenv.ToolCall(id, "poll", "", "tok"), httpenv.WithCtx(ctx), httpenv.WithConnAddr(&addr))
	tool.do(t, "progress")
	post := e.OpenSSE(e.Headers(pending))
	stream := post.Prime(0)
	expectProgress(t, post, stream, 1, 1)
	tool.do(t, "progress")
	expectProgress(t, post, stream, 2, 2)
	cut() // the client's TCP connection goes away
	post.Close()
	httpenv.RecvT(t, e.ServerClosed(addr), "the server to see the cut connection")
	tool.do(t, "progress") // while nobody listens

	// Resume from the priming event: 1 and 2 come from the store, 3 was
	// waiting, the rest is live.
	get := e.OpenSSE(e.resume(sid, stream+"_0"))
	get.Plain = true
	for seq := uint64(1); seq <= 3; seq++ {
		expectProgress(t, get, stream, float64(seq), seq)
	}
	tool.finish(t)
	expectResult(t, get, stream, id, 4)
	get.End()
}

func TestHTTPResumeErrors(t *testing.T) {
	s := echoServer()
	tool := addPollTool(s)
	es := store.NewMemoryEventStore(&store.MemoryEventStoreOptions{MaxEventsPerStream: 2})
	e := newHTTPEnv(t, s, &Options{EventStore: es})
	sid := e.Initialize("{}")

	for _, bad := range []string{"garbage", "_5", "abc_", "abc_x", "abc_-1", "abc_1.5"} {
		e.ExpectStatus(e.resume(sid, bad), http.StatusBadRequest)
	}
	// Resumption needs the session like any other request.
	e.ExpectStatus(e.Do(http.MethodGet, "", "", httpenv.WithHeader("Last-Event-ID", "abc_1")), http.StatusBadRequest)

	id := e.ID()
	pending := e.PostHeaders(sid, httpenv.ToolCall(id, "poll", "", "tok"))
	tool.do(t, "progress")
	tool.do(t, "progress")
	post := e.OpenSSE(e.Headers(pending))
	stream := post.Prime(0)
	expectProgress(t, post, stream, 1, 1)
	second := expectProgress(t, post, stream, 2, 2)
	tool.do(t, "close")
	post.End()
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
	e.ExpectStatus(e.resume(sid, stream+"_0"), http.StatusConflict)
	e.ExpectStatus(e.resume(sid, stream+"_1"), http.StatusConflict)
	// From the last event seen, nothing is missing.
	get := e.OpenSSE(e.resume(sid, second))
	expectProgress(t, get, stream, 3, 3)
	expectProgress(t, get, stream, 4, 4)
	tool.finish(t)
	expectResult(t, get, stream, id, 5)
	get.End()
	// After the stream finished, the store has events 4 and 5 only.
	e.ExpectStatus(e.resume(sid, stream+"_2"), http.StatusConflict)
	replay := e.OpenSSE(e.resume(sid, stream+"_3"))
	replay.Plain = true
	replay.MessageFrame(t, mcp.NotificationProgress)
	f, _ := replay.Message()
	if f.ID != stream+"_5" {
		t.Errorf("replayed %q, want %s_5", f.ID, stream)
	}
	replay.End()
}

// Another session's event ids give nothing away.
func TestHTTPResumeOtherSession(t *testing.T) {
	s := echoServer()
	addProgressTool(s, nil)
	e := newHTTPEnv(t, s, nil)
	a, b := e.Initialize("{}"), e.Initialize("{}")
	id := e.ID()
	stream, _ := readToolStream(e, e.OpenSSE(e.Post(a, httpenv.ToolCall(id, "progress", `{"steps":2,"tag":"secret"}`, "tok"))), id)
	resp := e.resume(b, stream+"_0")
	if resp.StatusCode == http.StatusOK {
		st := e.OpenSSE(resp)
		if f, err := st.Frame(); err == nil && f.HasData && f.Data != "" {
			t.Errorf("session b replayed session a's event %v", f)
		}
		st.Close()
	} else {
		resp.Body.Close()
	}
	// And a's own replay works (retried while the POST's reader may still
	// be finishing: 409).
	replay := e.OpenSSE(resume(e, a, stream+"_0"))
	replay.Plain = true
	replay.MessageFrame(t, mcp.NotificationProgress)
	replay.Close()
}

// A POST answered with JSON whose client went away before the answer
// can never be resumed (the client has no event id): the handler runs on
// (disconnection is not cancellation), but the stream must not stay in
// the session, holding the late answer, until the session ends.
func TestHTTPAbandonedJSONRequestFreed(t *testing.T) {
	s := echoServer()
	tool := addPollTool(s)
	e := newHTTPEnv(t, s, nil)
	sid := e.Initialize("{}")
	hs := e.session(sid)

	ctx, cut := context.WithCancel(e.Ctx)
	var addr string
	answer := e.PostAsync(sid, httpenv.ToolCall(e.ID(), "poll", "", ""), httpenv.WithCtx(ctx), httpenv.WithConnAddr(&addr))
	tool.do(t, "noop") // the handler is running, and has sent nothing
	cut()
	if a := httpenv.RecvT(t, answer, "the cut POST"); a.Err == nil {
		t.Fatalf("the POST was answered: %q", a.Body)
	}
	httpenv.RecvT(t, e.ServerClosed(addr), "the server to see the cut connection")
	if byReq, byID := hs.streams(); byReq != 0 || byID != 0 {
		t.Errorf("after the client left a JSON request: %d streams by request, %d by id; want none", byReq, byID)
	}
	tool.finish(t)
	// The session is fine.
	e.RPC(sid, httpenv.ToolCall(e.ID(), "echo", "", ""))
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
	sid := e.Initialize("{}")
	hs := e.session(sid)

	id := e.ID()
	msg, derr := wire.Decode([]byte(httpenv.ToolCall(id, "poll", "", "tok")), jsonrpc.Limits{})
	if derr != nil {
		t.Fatal(derr)
	}
	st, ok := hs.openStream(msg.ID)
	if !ok {
		t.Fatal("openStream failed")
	}
	hs.ss.Process(msg)
	w := &failWriter{h: http.Header{}, failOn: `"result"`}
	served := make(chan struct{})
	go func() {
		defer close(served)
		st.serve(w, httptest.NewRequest(http.MethodPost, "/", nil), -1)
	}()
	tool.do(t, "progress")
	tool.finish(t)
	httpenv.RecvT(t, served, "serve to return after the failed write")
	w.mu.Lock()
	wrote := w.wrote.String()
	w.mu.Unlock()
	if !strings.Contains(wrote, st.id+"_1") {
		t.Fatalf("the progress event was not written: %q", wrote)
	}

	answer := e.DoAsync(http.MethodGet, sid, "", httpenv.WithHeader("Last-Event-ID", st.id+"_1"))
	select {
	case a := <-answer:
		get := e.SSEOf(a)
		get.Plain = true
		expectResult(t, get, st.id, id, 2)
		get.End()
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
	sid := e.Initialize("{}")
	body := httpenv.ToolCall(999, "poll", "", "")
	pending := e.PostHeaders(sid, body)
	tool.do(t, "noop") // in flight
	m := e.ExpectStatus(e.Do(http.MethodPost, sid, httpenv.ToolCall(999, "echo", "", "")), http.StatusBadRequest)
	if m == nil || string(m.ID) != "999" || m.Error.Code != mcp.CodeInvalidRequest {
		t.Errorf("duplicate id answered %+v", m)
	}
	tool.finish(t)
	answer := e.ReadJSON(e.Headers(pending))
	e.Obs(wirecheck.ServerToClient, []byte(answer.Raw))
	if text, _ := httpenv.ToolText(t, answer); text != "polled" {
		t.Errorf("poll answered %q", text)
	}
	if text, _ := httpenv.ToolText(t, e.RPC(sid, httpenv.ToolCall(999, "echo", `{"text":"again"}`, ""))); text != `{"text":"again"}` {
		t.Errorf("echo answered %q", text)
	}
}
