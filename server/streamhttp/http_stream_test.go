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

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

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
	sid := e.Initialize("{}")
	m := e.RPC(sid, httpenv.ToolCall(e.ID(), "echo", `{"text":"plain"}`, ""))
	if text, _ := httpenv.ToolText(t, m); text != `{"text":"plain"}` {
		t.Errorf("echo answered %q", text)
	}
	// A progress token alone does not make a stream: only messages do.
	m = e.RPC(sid, httpenv.ToolCall(e.ID(), "echo", `{}`, "tok"))
	httpenv.ToolText(t, m)
	// Neither does a tool that sends nothing (steps 0, and the log is
	// sent only with the first step).
	m = e.RPC(sid, httpenv.ToolCall(e.ID(), "progress", `{"steps":0,"tag":"z"}`, "tok"))
	if text, _ := httpenv.ToolText(t, m); text != "done z" {
		t.Errorf("progress answered %q", text)
	}
	if m := e.RPC(sid, `{"jsonrpc":"2.0","id":"list-1","method":"tools/list"}`); m.Error != nil {
		t.Errorf("tools/list: %s", m.Raw)
	}
	// JSON-RPC errors are answered 200 with the error body.
	if m := e.RPC(sid, httpenv.ToolCall(e.ID(), "nosuchtool", "", "")); m.Error == nil || m.Error.Code != mcp.CodeInvalidParams {
		t.Errorf("unknown tool answered %s", m.Raw)
	}
}

// readToolStream reads a POST's event stream to its end: the priming
// event, the messages, the response last. It checks that the event ids
// are <stream>_<seq> with one stream id and sequence numbers 0, 1, 2...
func readToolStream(e *httpEnv, s *httpenv.SSEStream, reqID int64) (stream string, msgs []*httpenv.RPCMsg) {
	e.T.Helper()
	stream = s.Prime(0)
	for seq := uint64(1); ; seq++ {
		f, m := s.Message()
		st, n := httpenv.SplitEventID(e.T, f.ID)
		if st != stream || n != seq {
			e.T.Errorf("event id %q, want %s_%d", f.ID, stream, seq)
		}
		msgs = append(msgs, m)
		if m.Method == "" {
			if string(m.ID) != strconv.FormatInt(reqID, 10) {
				e.T.Fatalf("response %s answers another request than %d", m.Raw, reqID)
			}
			break
		}
	}
	if s.End() {
		e.T.Errorf("the stream ended with retry: after its response")
	}
	return stream, msgs
}

func TestHTTPSSEAnswer(t *testing.T) {
	s := echoServer()
	addProgressTool(s, nil)
	e := newHTTPEnv(t, s, nil)
	sid := e.Initialize("{}")
	var streams []string
	for _, tag := range []string{"a", "b"} {
		id := e.ID()
		stream, msgs := readToolStream(e, e.OpenSSE(e.Post(sid, httpenv.ToolCall(id, "progress", `{"steps":3,"tag":"`+tag+`"}`, "tok-"+tag))), id)
		streams = append(streams, stream)
		var kinds []string
		for _, m := range msgs {
			switch m.Method {
			case mcp.NotificationProgress:
				tok, p := httpenv.ProgressOf(t, m)
				kinds = append(kinds, fmt.Sprintf("progress %s %v", tok, p))
			case mcp.NotificationMessage:
				kinds = append(kinds, "log")
			case "":
				text, _ := httpenv.ToolText(t, m)
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
	id := e.ID()
	_, msgs := readToolStream(e, e.OpenSSE(e.Post(sid, httpenv.ToolCall(id, "progress", `{"steps":2,"tag":"c"}`, ""))), id)
	if len(msgs) != 2 || msgs[0].Method != mcp.NotificationMessage {
		t.Errorf("want a log message and the response, got %d messages", len(msgs))
	}
}

func TestHTTPAlwaysSSE(t *testing.T) {
	e := newHTTPEnv(t, echoServer(), &Options{AlwaysSSE: true})
	id := e.ID()
	resp := e.Post("", httpenv.InitBody(id, "{}"))
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no Mcp-Session-Id on an event-stream initialize answer")
	}
	_, msgs := readToolStream(e, e.OpenSSE(resp), id)
	if len(msgs) != 1 {
		t.Fatalf("initialize stream carried %d messages, want 1", len(msgs))
	}
	e.Expect202(e.Post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	id = e.ID()
	_, msgs = readToolStream(e, e.OpenSSE(e.Post(sid, httpenv.ToolCall(id, "echo", `{"text":"x"}`, ""))), id)
	if text, _ := httpenv.ToolText(t, msgs[len(msgs)-1]); text != `{"text":"x"}` {
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
	sid := e.Initialize("{}")
	// A quick answer is still JSON.
	e.RPC(sid, httpenv.ToolCall(e.ID(), "echo", "", ""))

	id := e.ID()
	st := e.OpenSSE(e.Post(sid, httpenv.ToolCall(id, "slow", "", ""))) // headers arrive at SSEAfter
	stream := st.Prime(0)
	keepAlives := 0
	for keepAlives < 2 {
		f := st.MustFrame()
		if f.HasData || f.HasID || f.HasRetry || len(f.Comments) == 0 {
			t.Fatalf("while the tool is silent, got %v; want keep-alive comments", f)
		}
		keepAlives++
	}
	close(release)
	f, m := st.Message()
	if text, _ := httpenv.ToolText(t, m); text != "slow done" {
		t.Errorf("slow answered %q", text)
	}
	if got, seq := httpenv.SplitEventID(t, f.ID); got != stream || seq != 1 {
		t.Errorf("response event id %q, want %s_1", f.ID, stream)
	}
	if string(m.ID) != strconv.FormatInt(id, 10) {
		t.Errorf("response id %s, want %d", m.ID, id)
	}
	st.End()
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

func TestHTTPElicitationOnPOSTStream(t *testing.T) {
	e := newHTTPEnv(t, elicitServer(), nil)
	sid := e.Initialize(httpenv.ElicitCaps)
	e.Subscribe(sid, "file:///marker")
	get := e.OpenSSE(e.Do(http.MethodGet, sid, ""))
	defer get.Close()
	get.Prime(0)

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
			id := e.ID()
			post := e.OpenSSE(e.Post(sid, httpenv.ToolCall(id, "ask", "", "")))
			stream := post.Prime(0)
			f, req := post.Message()
			if req.Method != mcp.MethodElicitationCreate || len(req.ID) == 0 {
				t.Fatalf("want an elicitation/create request on the POST stream, got %s", req.Raw)
			}
			if got, seq := httpenv.SplitEventID(t, f.ID); got != stream || seq != 1 {
				t.Errorf("elicitation event id %q, want %s_1", f.ID, stream)
			}
			var p struct {
				Message string `json:"message"`
			}
			if err := json.Unmarshal(req.Params, &p); err != nil || p.Message != "Your name?" {
				t.Errorf("elicitation params %s", req.Params)
			}
			answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s}`, req.ID, tc.answer)
			e.Expect202(e.Post(sid, answer))
			_, res := post.Message()
			text, isErr := httpenv.ToolText(t, res)
			if !strings.Contains(text, tc.want) || isErr != tc.isError {
				t.Errorf("ask answered %q (isError %v), want %q (isError %v)", text, isErr, tc.want, tc.isError)
			}
			if string(res.ID) != strconv.FormatInt(id, 10) {
				t.Errorf("response id %s, want %d", res.ID, id)
			}
			post.End()
		})
	}
	// SEP-2260: the GET stream saw none of it. The marker is the first
	// message there.
	e.srv.ResourceUpdated("file:///marker")
	httpenv.ExpectNext(t, get, mcp.NotificationResourcesUpdated)
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
	sid := e.Initialize("{}")
	e.Subscribe(sid, "file:///marker")
	get := e.OpenSSE(e.Do(http.MethodGet, sid, ""))
	defer get.Close()
	get.Prime(0)

	answers := make([]<-chan httpenv.AsyncAnswer, calls)
	ids := make([]int64, calls)
	for i := range calls {
		tag := fmt.Sprintf("c%d", i)
		ids[i] = e.ID()
		answers[i] = e.PostAsync(sid, httpenv.ToolCall(ids[i], "progress", `{"steps":5,"tag":"`+tag+`"}`, "tok-"+tag))
	}
	n := 0
	for i := range calls {
		tag := fmt.Sprintf("c%d", i)
		_, msgs := readToolStream(e, e.SSEOf(httpenv.RecvT(t, answers[i], "call "+tag)), ids[i])
		n++
		var progress []float64
		logs := 0
		for _, m := range msgs {
			switch m.Method {
			case mcp.NotificationProgress:
				tok, p := httpenv.ProgressOf(t, m)
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
				if text, _ := httpenv.ToolText(t, m); text != "done "+tag {
					t.Errorf("stream of %s carried result %q", tag, text)
				}
			default:
				t.Errorf("stream of %s carried %s", tag, m.Raw)
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
	httpenv.ExpectNext(t, get, mcp.NotificationResourcesUpdated)
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
	sid := e.Initialize("{}")
	e.Subscribe(sid, "file:///r")
	get := e.OpenSSE(e.Do(http.MethodGet, sid, ""))
	defer get.Close()
	getStream := get.Prime(0)

	id := e.ID()
	post := e.OpenSSE(e.Post(sid, httpenv.ToolCall(id, "hold", "", "tok")))
	postStream := post.Prime(0)
	if getStream == postStream {
		t.Errorf("the GET and POST streams share the id %q", getStream)
	}
	_, m := post.Message()
	httpenv.ProgressOf(t, m)
	httpenv.RecvT(t, reached, "the tool to report progress")

	// While the POST stream is open, unrelated notifications go to GET.
	s.AddRawTool(&mcp.Tool{Name: "added"}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	s.ResourceUpdated("file:///r")
	s.ResourceUpdated("file:///not-subscribed")
	f1 := get.MessageFrame(t, mcp.NotificationToolsListChanged)
	f2 := get.MessageFrame(t, mcp.NotificationResourcesUpdated)
	if st, seq := httpenv.SplitEventID(t, f1.ID); st != getStream || seq != 1 {
		t.Errorf("GET event id %q, want %s_1", f1.ID, getStream)
	}
	if st, seq := httpenv.SplitEventID(t, f2.ID); st != getStream || seq != 2 {
		t.Errorf("GET event id %q, want %s_2", f2.ID, getStream)
	}

	close(release)
	_, res := post.Message()
	if text, _ := httpenv.ToolText(t, res); text != "held" {
		t.Errorf("hold answered %q", text)
	}
	post.End() // nothing else on the POST stream

	// A server ping goes to the GET stream too, and its answer is POSTed.
	ss := e.srv.Sessions()[0]
	pinged := make(chan error, 1)
	go func() { pinged <- ss.Ping(e.Ctx) }()
	_, ping := get.Message()
	if ping.Method != mcp.MethodPing || len(ping.ID) == 0 {
		t.Fatalf("want a ping request on the GET stream, got %s", ping.Raw)
	}
	e.Expect202(e.Post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, ping.ID)))
	if err := httpenv.RecvT(t, pinged, "the ping answer"); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

func TestHTTPGETStream(t *testing.T) {
	t.Run("one at a time", func(t *testing.T) {
		e := newHTTPEnv(t, elicitServer(), &Options{KeepAlive: 50 * time.Millisecond})
		sid := e.Initialize("{}")
		e.Subscribe(sid, "file:///marker")
		var addr string
		get := e.OpenSSE(e.Do(http.MethodGet, sid, "", httpenv.WithConnAddr(&addr)))
		stream := get.Prime(0)
		// A second GET while the first is attached: 409.
		e.ExpectStatus(e.Do(http.MethodGet, sid, ""), http.StatusConflict)
		// Keep-alives flow on an idle GET stream.
		if f := get.MustFrame(); len(f.Comments) == 0 || f.HasData || f.HasID {
			t.Fatalf("want a keep-alive comment, got %v", f)
		}
		e.srv.ResourceUpdated("file:///marker")
		f := get.MessageFrame(t, mcp.NotificationResourcesUpdated)
		if st, seq := httpenv.SplitEventID(t, f.ID); st != stream || seq != 1 {
			t.Errorf("event id %q, want %s_1", f.ID, stream)
		}
		// Once the client drops it (and the server has noticed), the
		// stream can be opened again; it continues the same numbering.
		get.Close()
		httpenv.RecvT(t, e.ServerClosed(addr), "the server to close the dropped GET connection")
		again := e.OpenSSE(e.Do(http.MethodGet, sid, ""))
		defer again.Close()
		if st := again.Prime(1); st != stream {
			t.Errorf("reopened GET stream id %q, want %q", st, stream)
		}
		e.srv.ResourceUpdated("file:///marker")
		f = again.MessageFrame(t, mcp.NotificationResourcesUpdated)
		if _, seq := httpenv.SplitEventID(t, f.ID); seq != 2 {
			t.Errorf("event id %q, want sequence 2", f.ID)
		}
	})
	t.Run("Accept", func(t *testing.T) {
		e := newHTTPEnv(t, elicitServer(), nil)
		sid := e.Initialize("{}")
		e.ExpectStatus(e.Do(http.MethodGet, sid, "", httpenv.WithHeader("Accept", "application/json")), http.StatusNotAcceptable)
		e.ExpectStatus(e.Do(http.MethodGet, sid, "", httpenv.WithHeader("Accept", "")), http.StatusNotAcceptable)
		get := e.OpenSSE(e.Do(http.MethodGet, sid, "", httpenv.WithHeader("Accept", "text/event-stream; q=1, application/json")))
		get.Prime(0)
		get.Close()
	})
	t.Run("NoStandaloneStream", func(t *testing.T) {
		e := newHTTPEnv(t, elicitServer(), &Options{NoStandaloneStream: true})
		sid := e.Initialize("{}")
		resp := e.Do(http.MethodGet, sid, "")
		allow := resp.Header.Get("Allow")
		e.ExpectStatus(resp, http.StatusMethodNotAllowed)
		if strings.Contains(allow, "GET") {
			t.Errorf("405 for GET with Allow %q", allow)
		}
		// Unrelated notifications then have nowhere to go, and the POST
		// answers are unaffected.
		e.Subscribe(sid, "file:///marker")
		e.srv.ResourceUpdated("file:///marker")
		e.RPC(sid, httpenv.ToolCall(e.ID(), "echo", "", ""))
	})
}
