package streamhttp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/mcp"
)

// progressArgs are the arguments of the "progress" test tool.
type progressArgs struct {
	Steps int    `json:"steps"`
	Tag   string `json:"tag"`
}

// addProgressTool registers "progress": it reports steps progress
// notifications and one log message tagged with tag, then answers
// "done <tag>". before, when set, runs first (a barrier).
func addProgressTool(s *server.Server, before func()) {
	server.AddTool(s, &mcp.Tool{Name: "progress"}, func(ctx context.Context, req *server.CallToolRequest, in progressArgs) (string, error) {
		if before != nil {
			before()
		}
		for i := 1; i <= in.Steps; i++ {
			if err := req.Progress(ctx, float64(i), float64(in.Steps), "step "+in.Tag); err != nil {
				return "", err
			}
			if i == 1 {
				if err := req.Log(ctx, mcp.LevelInfo, "progress", "log "+in.Tag); err != nil {
					return "", err
				}
			}
		}
		return "done " + in.Tag, nil
	})
}

func TestHTTPJSONAnswer(t *testing.T) {
	s := echoServer()
	addProgressTool(s, nil)
	e := newHTTPEnv(t, s, nil)
	sid := e.initialize("{}")
	m := e.rpc(sid, toolCall(e.id(), "echo", `{"text":"plain"}`, ""))
	if text, _ := toolText(t, m); text != `{"text":"plain"}` {
		t.Errorf("echo answered %q", text)
	}
	// A progress token alone does not make a stream: only messages do.
	m = e.rpc(sid, toolCall(e.id(), "echo", `{}`, "tok"))
	toolText(t, m)
	// Neither does a tool that sends nothing (steps 0, and the log is
	// sent only with the first step).
	m = e.rpc(sid, toolCall(e.id(), "progress", `{"steps":0,"tag":"z"}`, "tok"))
	if text, _ := toolText(t, m); text != "done z" {
		t.Errorf("progress answered %q", text)
	}
	if m := e.rpc(sid, `{"jsonrpc":"2.0","id":"list-1","method":"tools/list"}`); m.Error != nil {
		t.Errorf("tools/list: %s", m.raw)
	}
	// JSON-RPC errors are answered 200 with the error body.
	if m := e.rpc(sid, toolCall(e.id(), "nosuchtool", "", "")); m.Error == nil || m.Error.Code != mcp.CodeInvalidParams {
		t.Errorf("unknown tool answered %s", m.raw)
	}
}

// readToolStream reads a POST's event stream to its end: the priming
// event, the messages, the response last. It checks that the event ids
// are <stream>_<seq> with one stream id and sequence numbers 0, 1, 2...
func readToolStream(e *httpEnv, s *sseStream, reqID int64) (stream string, msgs []*rpcMsg) {
	e.t.Helper()
	stream = s.prime(0)
	for seq := uint64(1); ; seq++ {
		f, m := s.message()
		st, n := splitEventID(e.t, f.id)
		if st != stream || n != seq {
			e.t.Errorf("event id %q, want %s_%d", f.id, stream, seq)
		}
		msgs = append(msgs, m)
		if m.Method == "" {
			if string(m.ID) != strconv.FormatInt(reqID, 10) {
				e.t.Fatalf("response %s answers another request than %d", m.raw, reqID)
			}
			break
		}
	}
	if s.end() {
		e.t.Errorf("the stream ended with retry: after its response")
	}
	return stream, msgs
}

func TestHTTPSSEAnswer(t *testing.T) {
	s := echoServer()
	addProgressTool(s, nil)
	e := newHTTPEnv(t, s, nil)
	sid := e.initialize("{}")
	var streams []string
	for _, tag := range []string{"a", "b"} {
		id := e.id()
		stream, msgs := readToolStream(e, e.openSSE(e.post(sid, toolCall(id, "progress", `{"steps":3,"tag":"`+tag+`"}`, "tok-"+tag))), id)
		streams = append(streams, stream)
		var kinds []string
		for _, m := range msgs {
			switch m.Method {
			case mcp.NotificationProgress:
				tok, p := progressOf(t, m)
				kinds = append(kinds, fmt.Sprintf("progress %s %v", tok, p))
			case mcp.NotificationMessage:
				kinds = append(kinds, "log")
			case "":
				text, _ := toolText(t, m)
				kinds = append(kinds, "result "+text)
			default:
				kinds = append(kinds, m.Method)
			}
		}
		want := []string{"progress tok-" + tag + " 1", "log", "progress tok-" + tag + " 2", "progress tok-" + tag + " 3", "result done " + tag}
		if strings.Join(kinds, "|") != strings.Join(want, "|") {
			t.Errorf("stream carried %q, want %q", kinds, want)
		}
	}
	if streams[0] == streams[1] {
		t.Errorf("two POST streams share the stream id %q", streams[0])
	}
	// Without a progress token, the log alone turns the answer into a stream.
	id := e.id()
	_, msgs := readToolStream(e, e.openSSE(e.post(sid, toolCall(id, "progress", `{"steps":2,"tag":"c"}`, ""))), id)
	if len(msgs) != 2 || msgs[0].Method != mcp.NotificationMessage {
		t.Errorf("want a log message and the response, got %d messages", len(msgs))
	}
}

func TestHTTPAlwaysSSE(t *testing.T) {
	e := newHTTPEnv(t, echoServer(), &Options{AlwaysSSE: true})
	id := e.id()
	resp := e.post("", initBody(id, "{}"))
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no Mcp-Session-Id on an event-stream initialize answer")
	}
	_, msgs := readToolStream(e, e.openSSE(resp), id)
	if len(msgs) != 1 {
		t.Fatalf("initialize stream carried %d messages, want 1", len(msgs))
	}
	e.expect202(e.post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	id = e.id()
	_, msgs = readToolStream(e, e.openSSE(e.post(sid, toolCall(id, "echo", `{"text":"x"}`, ""))), id)
	if text, _ := toolText(t, msgs[len(msgs)-1]); text != `{"text":"x"}` {
		t.Errorf("echo answered %q", text)
	}
}

func TestHTTPSSEAfterKeepAlive(t *testing.T) {
	s := echoServer()
	release := make(chan struct{})
	s.AddRawTool(&mcp.Tool{Name: "slow"}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "slow done"}}}, nil
	})
	e := newHTTPEnv(t, s, &Options{SSEAfter: 100 * time.Millisecond, KeepAlive: 50 * time.Millisecond})
	sid := e.initialize("{}")
	// A quick answer is still JSON.
	e.rpc(sid, toolCall(e.id(), "echo", "", ""))

	id := e.id()
	st := e.openSSE(e.post(sid, toolCall(id, "slow", "", ""))) // headers arrive at SSEAfter
	stream := st.prime(0)
	keepAlives := 0
	for keepAlives < 2 {
		f := st.mustFrame()
		if f.hasData || f.hasID || f.hasRtry || len(f.comments) == 0 {
			t.Fatalf("while the tool is silent, got %v; want keep-alive comments", f)
		}
		keepAlives++
	}
	close(release)
	f, m := st.message()
	if text, _ := toolText(t, m); text != "slow done" {
		t.Errorf("slow answered %q", text)
	}
	if got, seq := splitEventID(t, f.id); got != stream || seq != 1 {
		t.Errorf("response event id %q, want %s_1", f.id, stream)
	}
	if string(m.ID) != strconv.FormatInt(id, 10) {
		t.Errorf("response id %s, want %d", m.ID, id)
	}
	st.end()
}

// elicitServer has "ask", which elicits a name, and a resource to
// subscribe to.
func elicitServer() *server.Server {
	s := echoServer()
	s.AddRawTool(&mcp.Tool{Name: "ask"}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Elicit(ctx, &mcp.ElicitParams{
			Message:         "Your name?",
			RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		})
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: fmt.Sprintf("%s %v", res.Action, res.Content["name"])}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "file:///marker", Name: "marker"}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	return s
}

const elicitCaps = `{"elicitation":{"form":{}}}`

// subscribe subscribes the session to uri.
func (e *httpEnv) subscribe(sid, uri string) {
	e.t.Helper()
	if m := e.rpc(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/subscribe","params":{"uri":%q}}`, e.id(), uri)); m.Error != nil {
		e.t.Fatalf("resources/subscribe: %s", m.raw)
	}
}

// expectNext reads the next message of a standalone stream and checks it
// is the notification method: a marker sent after the traffic under test
// proves that nothing else reached the stream before it.
func expectNext(t testing.TB, st *sseStream, method string) *rpcMsg {
	t.Helper()
	_, m := st.message()
	if m.Method != method || len(m.ID) != 0 {
		t.Fatalf("the GET stream carried %s; want %s next", m.raw, method)
	}
	return m
}

func TestHTTPElicitationOnPOSTStream(t *testing.T) {
	e := newHTTPEnv(t, elicitServer(), nil)
	sid := e.initialize(elicitCaps)
	e.subscribe(sid, "file:///marker")
	get := e.openSSE(e.do(http.MethodGet, sid, ""))
	defer get.close()
	get.prime(0)

	for _, tc := range []struct {
		name, answer, want string
		isError            bool
	}{
		{"accept", `"result":{"action":"accept","content":{"name":"Ada"}}`, "accept Ada", false},
		{"decline", `"result":{"action":"decline"}`, "decline <nil>", false},
		{"client error", `"error":{"code":-1,"message":"user closed the dialog"}`, "user closed the dialog", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := e.sub(t)
			id := e.id()
			post := e.openSSE(e.post(sid, toolCall(id, "ask", "", "")))
			stream := post.prime(0)
			f, req := post.message()
			if req.Method != mcp.MethodElicitationCreate || len(req.ID) == 0 {
				t.Fatalf("want an elicitation/create request on the POST stream, got %s", req.raw)
			}
			if got, seq := splitEventID(t, f.id); got != stream || seq != 1 {
				t.Errorf("elicitation event id %q, want %s_1", f.id, stream)
			}
			var p struct {
				Message string `json:"message"`
			}
			if err := json.Unmarshal(req.Params, &p); err != nil || p.Message != "Your name?" {
				t.Errorf("elicitation params %s", req.Params)
			}
			answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s}`, req.ID, tc.answer)
			e.expect202(e.post(sid, answer))
			_, res := post.message()
			text, isErr := toolText(t, res)
			if !strings.Contains(text, tc.want) || isErr != tc.isError {
				t.Errorf("ask answered %q (isError %v), want %q (isError %v)", text, isErr, tc.want, tc.isError)
			}
			if string(res.ID) != strconv.FormatInt(id, 10) {
				t.Errorf("response id %s, want %d", res.ID, id)
			}
			post.end()
		})
	}
	// SEP-2260: the GET stream saw none of it. The marker is the first
	// message there.
	e.srv.ResourceUpdated("file:///marker")
	expectNext(t, get, mcp.NotificationResourcesUpdated)
}

func TestHTTPConcurrentPOSTsNoCrossTalk(t *testing.T) {
	s := echoServer()
	var started sync.WaitGroup
	const calls = 4
	started.Add(calls)
	addProgressTool(s, func() { started.Done(); started.Wait() }) // every call in flight at once
	s.AddResource(&mcp.Resource{URI: "file:///marker", Name: "marker"}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	e := newHTTPEnv(t, s, nil)
	sid := e.initialize("{}")
	e.subscribe(sid, "file:///marker")
	get := e.openSSE(e.do(http.MethodGet, sid, ""))
	defer get.close()
	get.prime(0)

	answers := make([]<-chan asyncAnswer, calls)
	ids := make([]int64, calls)
	for i := range calls {
		tag := fmt.Sprintf("c%d", i)
		ids[i] = e.id()
		answers[i] = e.postAsync(sid, toolCall(ids[i], "progress", `{"steps":5,"tag":"`+tag+`"}`, "tok-"+tag))
	}
	n := 0
	for i := range calls {
		tag := fmt.Sprintf("c%d", i)
		_, msgs := readToolStream(e, e.sseOf(recvT(t, answers[i], "call "+tag)), ids[i])
		n++
		var progress []float64
		logs := 0
		for _, m := range msgs {
			switch m.Method {
			case mcp.NotificationProgress:
				tok, p := progressOf(t, m)
				if tok != "tok-"+tag {
					t.Errorf("stream of %s carried progress for %s", tag, tok)
				}
				progress = append(progress, p)
			case mcp.NotificationMessage:
				logs++
				if !strings.Contains(string(m.Params), "log "+tag) {
					t.Errorf("stream of %s carried log %s", tag, m.Params)
				}
			case "":
				if text, _ := toolText(t, m); text != "done "+tag {
					t.Errorf("stream of %s carried result %q", tag, text)
				}
			default:
				t.Errorf("stream of %s carried %s", tag, m.raw)
			}
		}
		if fmt.Sprint(progress) != "[1 2 3 4 5]" || logs != 1 {
			t.Errorf("stream of %s: progress %v, %d logs; want [1 2 3 4 5] and 1", tag, progress, logs)
		}
	}
	if n != calls {
		t.Fatalf("%d streams completed, want %d", n, calls)
	}
	e.srv.ResourceUpdated("file:///marker")
	expectNext(t, get, mcp.NotificationResourcesUpdated)
}

func TestHTTPUnrelatedNotificationsOnGET(t *testing.T) {
	s := echoServer()
	reached, release := make(chan struct{}), make(chan struct{})
	s.AddRawTool(&mcp.Tool{Name: "hold"}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := req.Progress(ctx, 1, 0, "holding"); err != nil {
			return nil, err
		}
		close(reached)
		<-release
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "held"}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "file:///r", Name: "r"}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	e := newHTTPEnv(t, s, nil)
	sid := e.initialize("{}")
	e.subscribe(sid, "file:///r")
	get := e.openSSE(e.do(http.MethodGet, sid, ""))
	defer get.close()
	getStream := get.prime(0)

	id := e.id()
	post := e.openSSE(e.post(sid, toolCall(id, "hold", "", "tok")))
	postStream := post.prime(0)
	if getStream == postStream {
		t.Errorf("the GET and POST streams share the id %q", getStream)
	}
	_, m := post.message()
	progressOf(t, m)
	recvT(t, reached, "the tool to report progress")

	// While the POST stream is open, unrelated notifications go to GET.
	s.AddRawTool(&mcp.Tool{Name: "added"}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	s.ResourceUpdated("file:///r")
	s.ResourceUpdated("file:///not-subscribed")
	f1 := get.messageFrame(t, mcp.NotificationToolsListChanged)
	f2 := get.messageFrame(t, mcp.NotificationResourcesUpdated)
	if st, seq := splitEventID(t, f1.id); st != getStream || seq != 1 {
		t.Errorf("GET event id %q, want %s_1", f1.id, getStream)
	}
	if st, seq := splitEventID(t, f2.id); st != getStream || seq != 2 {
		t.Errorf("GET event id %q, want %s_2", f2.id, getStream)
	}

	close(release)
	_, res := post.message()
	if text, _ := toolText(t, res); text != "held" {
		t.Errorf("hold answered %q", text)
	}
	post.end() // nothing else on the POST stream

	// A server ping goes to the GET stream too, and its answer is POSTed.
	ss := e.srv.Sessions()[0]
	pinged := make(chan error, 1)
	go func() { pinged <- ss.Ping(e.ctx) }()
	_, ping := get.message()
	if ping.Method != mcp.MethodPing || len(ping.ID) == 0 {
		t.Fatalf("want a ping request on the GET stream, got %s", ping.raw)
	}
	e.expect202(e.post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, ping.ID)))
	if err := recvT(t, pinged, "the ping answer"); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

// messageFrame reads the next message and checks its method.
func (s *sseStream) messageFrame(t testing.TB, method string) sseFrame {
	t.Helper()
	f, m := s.message()
	if m.Method != method {
		t.Fatalf("got %s, want %s", m.raw, method)
	}
	return f
}

func TestHTTPGETStream(t *testing.T) {
	t.Run("one at a time", func(t *testing.T) {
		e := newHTTPEnv(t, elicitServer(), &Options{KeepAlive: 50 * time.Millisecond})
		sid := e.initialize("{}")
		e.subscribe(sid, "file:///marker")
		var addr string
		get := e.openSSE(e.do(http.MethodGet, sid, "", withConnAddr(&addr)))
		stream := get.prime(0)
		// A second GET while the first is attached: 409.
		e.expectStatus(e.do(http.MethodGet, sid, ""), http.StatusConflict)
		// Keep-alives flow on an idle GET stream.
		if f := get.mustFrame(); len(f.comments) == 0 || f.hasData || f.hasID {
			t.Fatalf("want a keep-alive comment, got %v", f)
		}
		e.srv.ResourceUpdated("file:///marker")
		f := get.messageFrame(t, mcp.NotificationResourcesUpdated)
		if st, seq := splitEventID(t, f.id); st != stream || seq != 1 {
			t.Errorf("event id %q, want %s_1", f.id, stream)
		}
		// Once the client drops it (and the server has noticed), the
		// stream can be opened again; it continues the same numbering.
		get.close()
		recvT(t, e.serverClosed(addr), "the server to close the dropped GET connection")
		again := e.openSSE(e.do(http.MethodGet, sid, ""))
		defer again.close()
		if st := again.prime(1); st != stream {
			t.Errorf("reopened GET stream id %q, want %q", st, stream)
		}
		e.srv.ResourceUpdated("file:///marker")
		f = again.messageFrame(t, mcp.NotificationResourcesUpdated)
		if _, seq := splitEventID(t, f.id); seq != 2 {
			t.Errorf("event id %q, want sequence 2", f.id)
		}
	})
	t.Run("Accept", func(t *testing.T) {
		e := newHTTPEnv(t, elicitServer(), nil)
		sid := e.initialize("{}")
		e.expectStatus(e.do(http.MethodGet, sid, "", withHeader("Accept", "application/json")), http.StatusNotAcceptable)
		e.expectStatus(e.do(http.MethodGet, sid, "", withHeader("Accept", "")), http.StatusNotAcceptable)
		get := e.openSSE(e.do(http.MethodGet, sid, "", withHeader("Accept", "text/event-stream; q=1, application/json")))
		get.prime(0)
		get.close()
	})
	t.Run("NoStandaloneStream", func(t *testing.T) {
		e := newHTTPEnv(t, elicitServer(), &Options{NoStandaloneStream: true})
		sid := e.initialize("{}")
		resp := e.do(http.MethodGet, sid, "")
		allow := resp.Header.Get("Allow")
		e.expectStatus(resp, http.StatusMethodNotAllowed)
		if strings.Contains(allow, "GET") {
			t.Errorf("405 for GET with Allow %q", allow)
		}
		// Unrelated notifications then have nowhere to go, and the POST
		// answers are unaffected.
		e.subscribe(sid, "file:///marker")
		e.srv.ResourceUpdated("file:///marker")
		e.rpc(sid, toolCall(e.id(), "echo", "", ""))
	})
}
