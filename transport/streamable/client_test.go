package streamable

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// The server→client requests both stream tests send, and what the
// client's answer must be.
var serverRequests = []struct {
	id   mcp.ID
	body string
	// want: a result containing wantResult, or an error with wantCode
	wantResult string
	wantCode   int64
	wantMsg    string
}{
	{id: mcp.StringID("s-ok"), body: sampling("s-ok", "ok"), wantResult: `"model":"test-model"`},
	{id: mcp.IntID(0), body: sampling("0", "fail"), wantCode: mcp.CodeInternalError, wantMsg: "boom"},
	{id: mcp.StringID("s-reject"), body: sampling("s-reject", "reject"), wantCode: -1, wantMsg: "User rejected sampling"},
	{id: mcp.IntID(7), body: `{"jsonrpc":"2.0","id":7,"method":"roots/list"}`, wantCode: mcp.CodeMethodNotFound, wantMsg: "roots/list"},
	{id: mcp.StringID("p"), body: `{"jsonrpc":"2.0","id":"p","method":"ping"}`, wantResult: `{}`},
}

// sampling is a sampling/createMessage request with id (JSON text) whose
// system prompt tells the test handler what to do.
func sampling(id, prompt string) string {
	if id != "0" && id != "7" {
		id = `"` + id + `"`
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"systemPrompt":"` + prompt + `","maxTokens":10}}`
}

// samplingHandler answers by system prompt: "ok" succeeds, "fail" fails,
// "reject" refuses with the custom code -1.
func samplingHandler(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	switch p.SystemPrompt {
	case "fail":
		return nil, errors.New("boom")
	case "reject":
		return nil, jsonrpc.NewError(-1, "User rejected sampling")
	}
	return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "hello"}), Model: "test-model"}, nil
}

// answers collects the client's answers (POSTed responses) by id.
type answers struct {
	mu   sync.Mutex
	got  map[mcp.ID]rec
	done chan struct{}
	n    int
}

func newAnswers(n int) *answers {
	return &answers{got: map[mcp.ID]rec{}, done: make(chan struct{}), n: n}
}

func (a *answers) add(in rec) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got[in.Msg.ID] = in
	if len(a.got) == a.n {
		close(a.done)
	}
}

func (a *answers) check(t *testing.T) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, sr := range serverRequests {
		in, ok := a.got[sr.id]
		if !ok {
			t.Errorf("no answer for %s", sr.id)
			continue
		}
		m := in.Msg
		if h := in.Header; h.Get("Mcp-Session-Id") != "sess" || h.Get("Mcp-Protocol-Version") != "2025-11-25" || h.Get("Content-Type") != "application/json" {
			t.Errorf("answer %s headers %v", sr.id, h)
		}
		if m.ID != sr.id || m.ID.IsString() != sr.id.IsString() {
			t.Errorf("answer id %s, want %s with its JSON type", m.ID, sr.id)
		}
		switch {
		case sr.wantResult != "":
			if m.Error != nil || !contains(string(m.Result), sr.wantResult) {
				t.Errorf("answer %s = %s %v, want a result with %s", sr.id, m.Result, m.Error, sr.wantResult)
			}
		default:
			if m.Error == nil || m.Error.Code != sr.wantCode || !contains(m.Error.Message, sr.wantMsg) {
				t.Errorf("answer %s = %s %v, want error %d with %q", sr.id, m.Result, m.Error, sr.wantCode, sr.wantMsg)
			}
		}
	}
}

// fakeMCP answers initialize, accepts notifications, and hands responses
// (the client's answers) to ans; other requests go to onRequest.
func fakeMCP(ans *answers, onRequest handlerFunc, onGet handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, in rec) {
		switch {
		case r.Method == http.MethodGet:
			if onGet == nil {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			onGet(w, r, in)
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		case in.Msg.Method == "initialize":
			answerInit(w, in, "sess")
		case in.Msg.IsResponse():
			ans.add(in)
			w.WriteHeader(http.StatusAccepted)
		case in.Msg.IsNotification():
			w.WriteHeader(http.StatusAccepted)
		case onRequest == nil:
			writeJSON(w, http.StatusOK, result(in.Msg.ID, `{}`))
		default:
			onRequest(w, r, in)
		}
	}
}

type notes struct {
	logs   chan *mcp.LoggingMessageParams
	other  chan string
	listCh chan struct{}
}

func clientOptions(n *notes) *client.Options {
	return &client.Options{
		CreateMessageHandler: samplingHandler,
		OnLog:                func(ctx context.Context, p *mcp.LoggingMessageParams) { n.logs <- p },
		OnToolsListChanged:   func(ctx context.Context) { n.listCh <- struct{}{} },
		OnNotification:       func(ctx context.Context, method string, params jsontext.Value) { n.other <- method },
	}
}

func newNotes() *notes {
	return &notes{logs: make(chan *mcp.LoggingMessageParams, 8), other: make(chan string, 8), listCh: make(chan struct{}, 8)}
}

// TestServerRequestsOnPOSTStream: the server sends requests and
// notifications on the stream of a tools/call; the client's jsonrpc layer
// answers each request with a POST (handler result, -32603 for a failing
// handler, the handler's own code, -32601 for no handler) before the
// server sends the final response; notifications reach the handlers.
func TestServerRequestsOnPOSTStream(t *testing.T) {
	ans := newAnswers(len(serverRequests))
	f := newFake(t, fakeMCP(ans, func(w http.ResponseWriter, r *http.Request, in rec) {
		if in.Msg.Method != "tools/call" {
			writeJSON(w, http.StatusOK, result(in.Msg.ID, `{}`))
			return
		}
		sseStart(w)
		sseEvent(w, "t_0", 0, "")
		sseEvent(w, "t_1", 0, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"fake","data":"careful"}}`)
		sseEvent(w, "t_2", 0, `{"jsonrpc":"2.0","method":"notifications/custom","params":{}}`)
		for i, sr := range serverRequests {
			sseEvent(w, "t_r"+itoa(i), 0, sr.body)
		}
		select {
		case <-ans.done:
		case <-r.Context().Done():
			return
		}
		sseEvent(w, "t_end", 0, result(in.Msg.ID, `{"content":[{"type":"text","text":"done"}]}`))
	}, nil))
	n := newNotes()
	ctx := testCtx(t)
	conn := newConn(t, f, nil)
	cl, err := client.Connect(ctx, conn, legacy(clientOptions(n)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	res, err := cl.CallTool(ctx, &mcp.CallToolParams{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 {
		t.Errorf("tool result %+v", res)
	}
	ans.check(t)
	if p := recv(t, n.logs, "the log notification"); p.Level != mcp.LevelWarning || p.Logger != "fake" {
		t.Errorf("OnLog got %+v", p)
	}
	if m := recv(t, n.other, "the custom notification"); m != "notifications/custom" {
		t.Errorf("OnNotification got %q", m)
	}
}

// TestServerRequestsOnGETStream: the same on the listener's GET stream,
// which Connect starts because the client has a handler. The
// sampling requests arrive while a tools/call is in flight (the client
// accepts them only then, SEP-2260); ping and unknown methods need no
// such call.
func TestServerRequestsOnGETStream(t *testing.T) {
	ans := newAnswers(len(serverRequests))
	callOpen := make(chan struct{})
	f := newFake(t, fakeMCP(ans, func(w http.ResponseWriter, r *http.Request, in rec) {
		sseStart(w)
		sseEvent(w, "c_0", 0, "")
		close(callOpen)
		select {
		case <-ans.done:
		case <-r.Context().Done():
			return
		}
		sseEvent(w, "c_1", 0, result(in.Msg.ID, `{"content":[]}`))
	}, func(w http.ResponseWriter, r *http.Request, in rec) {
		sseStart(w)
		sseEvent(w, "g_0", 0, "")
		sseEvent(w, "g_1", 0, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
		select {
		case <-callOpen:
		case <-r.Context().Done():
			return
		}
		for i, sr := range serverRequests {
			sseEvent(w, "g_r"+itoa(i), 0, sr.body)
		}
		hold(r)
	}))
	n := newNotes()
	ctx := testCtx(t)
	conn := newConn(t, f, nil)
	cl, err := client.Connect(ctx, conn, legacy(clientOptions(n)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recv(t, n.listCh, "tools/list_changed from the GET stream")
	if _, err := cl.CallTool(ctx, &mcp.CallToolParams{Name: "x"}); err != nil {
		t.Fatal(err)
	}
	ans.check(t)
	if running, stopped := conn.ListenerStatus(); !running || stopped != nil {
		t.Errorf("ListenerStatus = %v %v", running, stopped)
	}
	if n := f.count(http.MethodGet); n != 1 {
		t.Errorf("%d GETs, want 1", n)
	}
}

// TestListenerStartsAfterConnect: Connect starts the listener when the
// client has a server-request handler or asks for it (Options.Listen),
// without waiting for the GET to be answered; otherwise it starts none.
func TestListenerStartsAfterConnect(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   client.Options
		listen bool
	}{
		{"elicitation", client.Options{ElicitHandler: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) { return nil, nil }}, true},
		{"sampling", client.Options{CreateMessageHandler: samplingHandler}, true},
		{"roots", client.Options{ListRootsHandler: func(context.Context) (*mcp.ListRootsResult, error) { return nil, nil }}, true},
		{"no handler", client.Options{OnToolsListChanged: func(context.Context) {}}, false},
		{"asked", client.Options{OnToolsListChanged: func(context.Context) {}, Listen: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, fakeMCP(nil, nil, func(w http.ResponseWriter, r *http.Request, in rec) {
				hold(r) // never answers: Connect must not wait for it
			}))
			conn := newConn(t, f, nil)
			cl, err := client.Connect(testCtx(t), conn, legacy(&tc.opts))
			if err != nil {
				t.Fatal(err)
			}
			running, stopped := conn.ListenerStatus()
			if running != tc.listen || stopped != nil {
				t.Fatalf("ListenerStatus after Connect = %v %v, want running %v", running, stopped, tc.listen)
			}
			if tc.listen {
				g := f.next(t, http.MethodGet)
				h := g.Header
				if h.Get("Accept") != "text/event-stream" || h.Get("Mcp-Session-Id") != "sess" || h.Get("Mcp-Protocol-Version") != "2025-11-25" || h.Get("Last-Event-ID") != "" {
					t.Errorf("GET headers %v", h)
				}
				// The GET came after notifications/initialized.
				posts := f.of(http.MethodPost)
				if len(posts) != 2 || posts[1].Msg.Method != "notifications/initialized" || !posts[1].At.Before(g.At) && !posts[1].At.Equal(g.At) {
					t.Errorf("POSTs before the GET: %v", posts)
				}
			}
			if err := cl.Ping(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			_ = cl.Close()
			want := 0
			if tc.listen {
				want = 1
			}
			if n := f.count(http.MethodGet); n != want {
				t.Errorf("%d GETs, want %d", n, want)
			}
			if running, stopped := conn.ListenerStatus(); running || (tc.listen && !isClosed(stopped)) {
				t.Errorf("ListenerStatus after Close = %v %v", running, stopped)
			}
		})
	}
}

// TestListenIdempotent: Listen after connect (and many times at once)
// starts exactly one listener.
func TestListenIdempotent(t *testing.T) {
	f := newFake(t, fakeMCP(nil, func(w http.ResponseWriter, r *http.Request, in rec) {
		writeJSON(w, http.StatusOK, result(in.Msg.ID, `{}`))
	}, func(w http.ResponseWriter, r *http.Request, in rec) {
		sseStart(w)
		hold(r)
	}))
	conn := newConn(t, f, nil)
	cl, err := client.Connect(testCtx(t), conn, legacy(nil))
	if err != nil {
		t.Fatal(err)
	}
	if running, _ := conn.ListenerStatus(); running {
		t.Fatal("a listener without Listen")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(conn.Listen)
	}
	wg.Wait()
	if running, _ := conn.ListenerStatus(); !running {
		t.Fatal("Listen did not start the listener")
	}
	f.next(t, http.MethodGet)
	conn.Listen()
	if err := cl.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	_ = cl.Close()
	if n := f.count(http.MethodGet); n != 1 {
		t.Errorf("%d GETs, want exactly 1", n)
	}
	if methods := postMethods(f); !slices.Equal(methods, []string{"initialize", "notifications/initialized", "ping"}) {
		t.Errorf("POSTs %v", methods)
	}
}

func postMethods(f *fake) []string {
	var out []string
	for _, p := range f.of(http.MethodPost) {
		out = append(out, p.Msg.Method)
	}
	return out
}

// legacy pins a client to the legacy era (initialize, newest legacy
// revision): these tests exercise the 2025-11-25 transport, while the
// client's default is automatic era selection.
func legacy(o *client.Options) *client.Options {
	var out client.Options
	if o != nil {
		out = *o
	}
	out.ProtocolVersion = mcp.LatestLegacy
	return &out
}
