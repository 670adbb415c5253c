package server

// Tests of tasks (task.go, taskstore.go) in both eras — the 2025-11-25
// core tasks and the 2026 io.modelcontextprotocol/tasks extension — over
// stdio (an in-memory pair) and Streamable HTTP: completion, failure,
// cancellation mid-run, input required then answered, TTL expiry, and a
// task of another principal refused.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/store"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// taskPeer is a client of one server, in one era, on one transport.
type taskPeer interface {
	call(t *testing.T, method string, params map[string]any) (json.RawMessage, *jsonrpc.Error)
	modern() bool
}

// taskFixture registers the task tools of these tests.
type taskFixture struct {
	srv     *Server
	release chan struct{} // closes to let "block" finish
	sawDone chan struct{} // closes when "block" first sees its context end
	once    sync.Once
}

// waitDone waits until "block" has seen its context end. The bound is a
// failure report for a hang, not a margin anything races against.
func (f *taskFixture) waitDone(t *testing.T, why string) {
	t.Helper()
	select {
	case <-f.sawDone:
	case <-time.After(10 * time.Second):
		t.Errorf("%s: the handler's context did not end", why)
	}
}

func newTaskFixture(opts *Options) *taskFixture {
	f := &taskFixture{srv: New(opts), release: make(chan struct{}), sawDone: make(chan struct{})}
	opt := &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
	AddTool(f.srv, &mcp.Tool{Name: "quick", Execution: opt}, func(context.Context, *CallToolRequest, struct{}) (string, error) {
		return "done", nil
	})
	AddTool(f.srv, &mcp.Tool{Name: "sync"}, func(context.Context, *CallToolRequest, struct{}) (string, error) {
		return "sync", nil
	})
	AddTool(f.srv, &mcp.Tool{Name: "block", Execution: opt}, func(ctx context.Context, _ *CallToolRequest, _ struct{}) (string, error) {
		select {
		case <-f.release:
			return "released", nil
		case <-ctx.Done():
			f.once.Do(func() { close(f.sawDone) })
			return "", ctx.Err()
		}
	})
	AddTool(f.srv, &mcp.Tool{Name: "crash", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}}, func(context.Context, *CallToolRequest, struct{}) (string, error) {
		return "", jsonrpc.NewError(-32603, "Internal error: crashed")
	})
	AddTool(f.srv, &mcp.Tool{Name: "ask", Execution: opt}, func(_ context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		ans, ok, err := req.ElicitResult("who")
		if err != nil {
			return "", err
		}
		if !ok {
			return "", NeedInput().Elicit("who", &mcp.ElicitParams{Message: "Who?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		}
		return fmt.Sprintf("hello %v", ans.Content["name"]), nil
	})
	// ask2 asks two questions, one round each (Ask twice): the second
	// round must keep the first answer.
	AddTool(f.srv, &mcp.Tool{Name: "ask2", Execution: opt}, func(_ context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		first, err := Ask[taskName](req.Request, "who", "Who?")
		if err != nil {
			return "", err
		}
		second, err := Ask[taskName](req.Request, "who2", "And who else?")
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("hello %s and %s", first.Name, second.Name), nil
	})
	return f
}

type taskName struct {
	Name string `json:"name"`
}

// stdio

type stdioTaskPeer struct {
	conn    *jsonrpc.Conn
	isNew   bool
	related atomic.Value // the related-task _meta of the last elicitation
}

func (p *stdioTaskPeer) modern() bool { return p.isNew }

type elicitAnswerer struct{ p *stdioTaskPeer }

func (h elicitAnswerer) HandleRequest(_ context.Context, m *jsonrpc.Message) (any, error) {
	var params struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &params)
	h.p.related.Store(string(params.Meta[mcp.MetaKeyRelatedTask]))
	return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, nil
}
func (elicitAnswerer) HandleNotification(context.Context, *jsonrpc.Message) {}

func newStdioTaskPeer(t *testing.T, s *Server, modern bool) *stdioTaskPeer {
	return newStdioTaskPeerFor(t, s, modern, "")
}

// newStdioTaskPeerFor is newStdioTaskPeer on a connection whose requests
// act for principal ("": none).
func newStdioTaskPeerFor(t *testing.T, s *Server, modern bool, principal string) *stdioTaskPeer {
	a, b := memory.NewPair()
	ss := s.connect(a, principal)
	p := &stdioTaskPeer{isNew: modern}
	p.conn = jsonrpc.NewConn(b, &jsonrpc.ConnOptions{Handler: elicitAnswerer{p}})
	p.conn.Start()
	t.Cleanup(func() { p.conn.Close(); ss.Close() })
	if !modern {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var res json.RawMessage
		if err := p.conn.Call(ctx, mcp.MethodInitialize, legacyInit(), &res); err != nil {
			t.Fatalf("initialize: %v", err)
		}
		if err := p.conn.Notify(ctx, mcp.NotificationInitialized, nil); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func legacyInit() map[string]any {
	return map[string]any{"protocolVersion": mcp.Version20251125, "clientInfo": map[string]any{"name": "t", "version": "1"},
		"capabilities": map[string]any{"elicitation": map[string]any{}}}
}

func taskModernMeta(params map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range params {
		out[k] = v
	}
	out["_meta"] = map[string]any{
		mcp.MetaKeyProtocolVersion:    mcp.Version20260728,
		mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{mcp.ExtensionTasks: map[string]any{}}},
	}
	return out
}

func (p *stdioTaskPeer) call(t *testing.T, method string, params map[string]any) (json.RawMessage, *jsonrpc.Error) {
	t.Helper()
	if p.isNew {
		params = taskModernMeta(params)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var res json.RawMessage
	err := p.conn.Call(ctx, method, params, &res)
	if err != nil {
		if e, ok := jsonrpc.AsError(err); ok {
			return nil, e
		}
		t.Fatalf("%s: %v", method, err)
	}
	return res, nil
}

// HTTP

type httpTaskPeer struct {
	url       string
	client    *http.Client
	isNew     bool
	principal string
	sid       string
	id        atomic.Int64
	related   atomic.Value // the related-task _meta of the last elicitation
}

func (p *httpTaskPeer) modern() bool { return p.isNew }

// principalMiddleware names the principal from a test header, as
// authentication middleware would from a token.
func principalMiddleware(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if pr := r.Header.Get("X-Test-Principal"); pr != "" {
			r = r.WithContext(WithPrincipal(r.Context(), pr))
		}
		h.ServeHTTP(w, r)
	})
}

func newTaskHTTP(t *testing.T, s *Server) string {
	h := NewHTTPHandler(s, nil)
	ts := httptest.NewServer(principalMiddleware(h))
	t.Cleanup(func() { _ = h.Close(); ts.Close() })
	return ts.URL
}

func newHTTPTaskPeer(t *testing.T, url string, modern bool, principal string) *httpTaskPeer {
	p := &httpTaskPeer{url: url, client: &http.Client{Timeout: 10 * time.Second}, isNew: modern, principal: principal}
	if !modern {
		if _, err := p.post(t, mcp.MethodInitialize, legacyInit(), true); err != nil {
			t.Fatalf("initialize: %v", err)
		}
		p.notify(t, mcp.NotificationInitialized)
	}
	return p
}

func (p *httpTaskPeer) notify(t *testing.T, method string) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	req, _ := http.NewRequest("POST", p.url, bytes.NewReader(body))
	p.headers(req, method, nil)
	resp, err := p.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func (p *httpTaskPeer) headers(req *http.Request, method string, params map[string]any) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if p.principal != "" {
		req.Header.Set("X-Test-Principal", p.principal)
	}
	if p.isNew {
		req.Header.Set("MCP-Protocol-Version", mcp.Version20260728)
		req.Header.Set("Mcp-Method", method)
		if n, ok := params["name"].(string); ok {
			req.Header.Set("Mcp-Name", n)
		}
		if n, ok := params["taskId"].(string); ok {
			req.Header.Set("Mcp-Name", n)
		}
		return
	}
	if p.sid != "" {
		req.Header.Set("Mcp-Session-Id", p.sid)
		req.Header.Set("MCP-Protocol-Version", mcp.Version20251125)
	}
}

type wireAnswer struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
}

// answerElicitation answers a server→client elicitation/create that
// arrived on a response stream, recording its related-task _meta.
func (p *httpTaskPeer) answerElicitation(t *testing.T, a *wireAnswer) {
	var params struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(a.Params, &params)
	p.related.Store(string(params.Meta[mcp.MetaKeyRelatedTask]))
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": a.ID,
		"result": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}})
	req, _ := http.NewRequest("POST", p.url, bytes.NewReader(body))
	p.headers(req, "", nil)
	resp, err := p.client.Do(req)
	if err != nil {
		t.Errorf("answering %s: %v", a.Method, err)
		return
	}
	resp.Body.Close()
}

func (p *httpTaskPeer) post(t *testing.T, method string, params map[string]any, init bool) (json.RawMessage, *jsonrpc.Error) {
	t.Helper()
	if p.isNew {
		params = taskModernMeta(params)
	}
	id := p.id.Add(1)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	req, _ := http.NewRequest("POST", p.url, bytes.NewReader(body))
	p.headers(req, method, params)
	resp, err := p.client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	if init {
		p.sid = resp.Header.Get("Mcp-Session-Id")
	}
	var msgs [][]byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			d, ok := strings.CutPrefix(sc.Text(), "data:")
			if !ok {
				continue
			}
			var a wireAnswer
			if json.Unmarshal([]byte(strings.TrimSpace(d)), &a) != nil {
				continue
			}
			if a.Method == mcp.MethodElicitationCreate && a.ID != nil {
				p.answerElicitation(t, &a)
				continue
			}
			if string(a.ID) == fmt.Sprint(id) && a.Method == "" {
				if a.Error != nil {
					return nil, a.Error
				}
				return a.Result, nil
			}
			msgs = append(msgs, []byte(d))
		}
	} else {
		b, _ := io.ReadAll(resp.Body)
		msgs = append(msgs, b)
	}
	for _, m := range msgs {
		var a wireAnswer
		if json.Unmarshal(m, &a) == nil && string(a.ID) == fmt.Sprint(id) {
			if a.Error != nil {
				return nil, a.Error
			}
			return a.Result, nil
		}
	}
	t.Fatalf("%s: no answer in %q (status %d)", method, msgs, resp.StatusCode)
	return nil, nil
}

func (p *httpTaskPeer) call(t *testing.T, method string, params map[string]any) (json.RawMessage, *jsonrpc.Error) {
	t.Helper()
	return p.post(t, method, params, false)
}

// helpers over either peer

type wireTask struct {
	ResultType    string                     `json:"resultType"`
	TaskID        string                     `json:"taskId"`
	Status        string                     `json:"status"`
	TTL           *int64                     `json:"ttl"`
	TTLMs         *int64                     `json:"ttlMs"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	Result        *struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Error *jsonrpc.Error `json:"error"`
}

// startTask calls a tool that must answer with a task.
func startTask(t *testing.T, p taskPeer, tool string, task map[string]any) string {
	t.Helper()
	params := map[string]any{"name": tool, "arguments": map[string]any{}}
	if !p.modern() {
		if task == nil {
			task = map[string]any{}
		}
		params["task"] = task
	}
	raw, e := p.call(t, mcp.MethodToolsCall, params)
	if e != nil {
		t.Fatalf("tools/call %s: %v", tool, e)
	}
	if p.modern() {
		var w wireTask
		taskJSON(t, raw, &w)
		if w.ResultType != "task" || w.TaskID == "" || w.Status != "working" || w.TTLMs == nil {
			t.Fatalf("tools/call %s = %s, want a flat task", tool, raw)
		}
		return w.TaskID
	}
	var w struct {
		Task wireTask `json:"task"`
	}
	taskJSON(t, raw, &w)
	if w.Task.TaskID == "" || w.Task.Status != "working" || w.Task.TTL == nil {
		t.Fatalf("tools/call %s = %s, want CreateTaskResult", tool, raw)
	}
	return w.Task.TaskID
}

func taskJSON(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
}

func getTask(t *testing.T, p taskPeer, id string) (*wireTask, *jsonrpc.Error) {
	t.Helper()
	raw, e := p.call(t, mcp.MethodTasksGet, map[string]any{"taskId": id})
	if e != nil {
		return nil, e
	}
	var w wireTask
	taskJSON(t, raw, &w)
	return &w, nil
}

// waitStatus polls tasks/get until the task has status want.
func waitStatus(t *testing.T, p taskPeer, id, want string) *wireTask {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		w, e := getTask(t, p, id)
		if e != nil {
			t.Fatalf("tasks/get: %v", e)
		}
		if w.Status == want {
			return w
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %s, want %s", id, w.Status, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// eachPeer runs f for both eras on both transports.
func eachPeer(t *testing.T, opts *Options, f func(t *testing.T, fx *taskFixture, p taskPeer)) {
	eachPeerSetup(t, opts, nil, f)
}

// eachPeerSetup is eachPeer with a setup that may change each run's
// Options before the server is made, and returns what to change on the
// server before it serves.
func eachPeerSetup(t *testing.T, opts *Options, setup func(*Options) func(*Server), f func(t *testing.T, fx *taskFixture, p taskPeer)) {
	for _, transport := range []string{"stdio", "http"} {
		for _, modern := range []bool{false, true} {
			name := transport + "/2025-11-25"
			if modern {
				name = transport + "/2026-07-28"
			}
			t.Run(name, func(t *testing.T) {
				var o Options
				if opts != nil {
					o = *opts
				}
				var before func(*Server)
				if setup != nil {
					before = setup(&o)
				}
				fx := newTaskFixture(&o)
				if before != nil {
					before(fx.srv)
				}
				var p taskPeer
				if transport == "stdio" {
					p = newStdioTaskPeer(t, fx.srv, modern)
				} else {
					p = newHTTPTaskPeer(t, newTaskHTTP(t, fx.srv), modern, "")
				}
				f(t, fx, p)
			})
		}
	}
}

func TestTaskCompletion(t *testing.T) {
	eachPeer(t, nil, func(t *testing.T, fx *taskFixture, p taskPeer) {
		id := startTask(t, p, "quick", nil)
		w := waitStatus(t, p, id, "completed")
		if p.modern() {
			if w.Result == nil || len(w.Result.Content) != 1 || w.Result.Content[0].Text != "done" {
				t.Fatalf("completed task = %+v, want the result inlined", w)
			}
			if _, e := p.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id}); e == nil || e.Code != mcp.CodeMethodNotFound {
				t.Errorf("tasks/result on 2026 = %v, want -32601", e)
			}
			if _, e := p.call(t, mcp.MethodTasksList, map[string]any{}); e == nil || e.Code != mcp.CodeMethodNotFound {
				t.Errorf("tasks/list on 2026 = %v, want -32601", e)
			}
			return
		}
		raw, e := p.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id})
		if e != nil {
			t.Fatalf("tasks/result: %v", e)
		}
		var res struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Meta map[string]struct {
				TaskID string `json:"taskId"`
			} `json:"_meta"`
		}
		taskJSON(t, raw, &res)
		if len(res.Content) != 1 || res.Content[0].Text != "done" || res.Meta[mcp.MetaKeyRelatedTask].TaskID != id {
			t.Fatalf("tasks/result = %s", raw)
		}
		raw, e = p.call(t, mcp.MethodTasksList, map[string]any{})
		if e != nil || !strings.Contains(string(raw), id) {
			t.Fatalf("tasks/list = %s, %v; want the task", raw, e)
		}
		// A sync call of the same tool (no params.task) is no task.
		raw, e = p.call(t, mcp.MethodToolsCall, map[string]any{"name": "quick", "arguments": map[string]any{}})
		if e != nil || strings.Contains(string(raw), "taskId") {
			t.Fatalf("tools/call without task = %s, %v", raw, e)
		}
	})
}

func TestTaskFailure(t *testing.T) {
	eachPeer(t, nil, func(t *testing.T, fx *taskFixture, p taskPeer) {
		id := startTask(t, p, "crash", nil)
		w := waitStatus(t, p, id, "failed")
		if p.modern() {
			if w.Error == nil || w.Error.Code != -32603 || w.Result != nil {
				t.Fatalf("failed task = %+v, want the error inlined", w)
			}
		} else if _, e := p.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id}); e == nil || e.Code != -32603 {
			t.Fatalf("tasks/result = %v, want the tool's -32603", e)
		}
		if p.modern() {
			return // without the extension: TestTaskModernGates
		}
		// crash requires a task: without params.task it is refused.
		if _, e := p.call(t, mcp.MethodToolsCall, map[string]any{"name": "crash", "arguments": map[string]any{}}); e == nil || e.Code != mcp.CodeMethodNotFound {
			t.Fatalf("tools/call crash without a task = %v, want -32601", e)
		}
	})
}

func TestTaskCancel(t *testing.T) {
	eachPeer(t, nil, func(t *testing.T, fx *taskFixture, p taskPeer) {
		id := startTask(t, p, "block", nil)
		waitStatus(t, p, id, "working")
		raw, e := p.call(t, mcp.MethodTasksCancel, map[string]any{"taskId": id})
		if e != nil {
			t.Fatalf("tasks/cancel: %v", e)
		}
		if p.modern() {
			if strings.Contains(string(raw), "taskId") {
				t.Errorf("2026 cancel ack = %s, want empty", raw)
			}
		} else if !strings.Contains(string(raw), `"cancelled"`) {
			t.Errorf("2025 tasks/cancel = %s, want the cancelled task", raw)
		}
		waitStatus(t, p, id, "cancelled")
		fx.waitDone(t, "cancel")
		// Cancelling again: 2026 acks (idempotent), 2025 refuses a terminal task.
		_, e = p.call(t, mcp.MethodTasksCancel, map[string]any{"taskId": id})
		if p.modern() != (e == nil) {
			t.Errorf("second tasks/cancel = %v", e)
		}
	})
}

func TestTaskInputRequired(t *testing.T) {
	eachPeer(t, nil, func(t *testing.T, fx *taskFixture, p taskPeer) {
		id := startTask(t, p, "ask", nil)
		if p.modern() {
			w := waitStatus(t, p, id, "input_required")
			if _, ok := w.InputRequests["who"]; !ok {
				t.Fatalf("input_required task = %+v, want inputRequests.who", w)
			}
			raw, e := p.call(t, mcp.MethodTasksUpdate, map[string]any{"taskId": id, "inputResponses": map[string]any{
				"who":   map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}},
				"other": map[string]any{"ignored": true},
			}})
			if e != nil || strings.Contains(string(raw), "taskId") {
				t.Fatalf("tasks/update = %s, %v", raw, e)
			}
			w = waitStatus(t, p, id, "completed")
			if w.Result == nil || w.Result.Content[0].Text != "hello Ada" {
				t.Fatalf("completed = %+v", w)
			}
			return
		}
		// 2025: the task waits in input_required for a tasks/result to
		// carry its request (SEP-2260), tagged with the task.
		waitStatus(t, p, id, "input_required")
		raw, e := p.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id})
		if e != nil || !strings.Contains(string(raw), "hello Ada") {
			t.Fatalf("tasks/result = %s, %v", raw, e)
		}
		var rel string
		switch p := p.(type) {
		case *stdioTaskPeer:
			rel, _ = p.related.Load().(string)
		case *httpTaskPeer:
			rel, _ = p.related.Load().(string)
		}
		if !strings.Contains(rel, id) {
			t.Errorf("elicitation related-task _meta = %q, want %s", rel, id)
		}
	})
}

// TestTaskTTLExpiry runs on a manual clock: the TTL elapses when the test
// advances it, so a slow machine can neither expire a task early nor keep
// it alive late.
func TestTaskTTLExpiry(t *testing.T) {
	const serverTTL = 150 * time.Millisecond
	var clock *manualClock
	setup := func(o *Options) func(*Server) {
		clock = newManualClock()
		fst := store.NewMemoryTaskStore(&store.MemoryTaskStoreOptions{Now: clock.Now})
		o.TaskTTL, o.TaskStore = serverTTL, fst
		return func(s *Server) { s.tasks.SetClock(tasks.Clock{NowFunc: clock.Now, AfterFuncFunc: clock.AfterFunc}) }
	}
	eachPeerSetup(t, nil, setup, func(t *testing.T, fx *taskFixture, p taskPeer) {
		ttl := serverTTL
		var task map[string]any
		if !p.modern() {
			task = map[string]any{"ttl": 100} // shorter than the server's
			ttl = 100 * time.Millisecond
		}
		id := startTask(t, p, "quick", task)
		waitStatus(t, p, id, "completed")
		clock.Advance(ttl - time.Millisecond)
		if w, e := getTask(t, p, id); e != nil || w.Status != "completed" {
			t.Fatalf("tasks/get just before the TTL = %+v, %v; want the completed task", w, e)
		}
		clock.Advance(2 * time.Millisecond)
		if _, e := getTask(t, p, id); e == nil || e.Code != mcp.CodeInvalidParams {
			t.Fatalf("tasks/get after the TTL = %v, want -32602", e)
		}
		// A running task past its TTL is stopped and forgotten.
		id = startTask(t, p, "block", task)
		waitStatus(t, p, id, "working")
		clock.Advance(ttl + time.Millisecond)
		fx.waitDone(t, "TTL")
		if _, e := getTask(t, p, id); e == nil || e.Code != mcp.CodeInvalidParams {
			t.Fatalf("tasks/get of a running task after the TTL = %v, want -32602", e)
		}
	})
}

func TestTaskOtherPrincipalRefused(t *testing.T) {
	for _, modern := range []bool{false, true} {
		t.Run(fmt.Sprint("modern=", modern), func(t *testing.T) {
			fx := newTaskFixture(nil)
			url := newTaskHTTP(t, fx.srv)
			alice := newHTTPTaskPeer(t, url, modern, "alice")
			mallory := newHTTPTaskPeer(t, url, modern, "mallory")
			id := startTask(t, alice, "block", nil)
			for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksCancel} {
				if _, e := mallory.call(t, m, map[string]any{"taskId": id}); e == nil || e.Code != mcp.CodeInvalidParams {
					t.Errorf("%s by another principal = %v, want -32602", m, e)
				}
			}
			if !modern {
				raw, e := mallory.call(t, mcp.MethodTasksList, map[string]any{})
				if e != nil || strings.Contains(string(raw), id) {
					t.Errorf("tasks/list by another principal = %s, %v", raw, e)
				}
			}
			waitStatus(t, alice, id, "working")
			close(fx.release)
			waitStatus(t, alice, id, "completed")
		})
	}
}

func TestTaskModernGates(t *testing.T) {
	fx := newTaskFixture(nil)
	p := newStdioTaskPeer(t, fx.srv, false)
	noExt := func(method string, params map[string]any) *jsonrpc.Error {
		params["_meta"] = map[string]any{mcp.MetaKeyProtocolVersion: mcp.Version20260728, mcp.MetaKeyClientCapabilities: map[string]any{}}
		var res json.RawMessage
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := p.conn.Call(ctx, method, params, &res)
		e, _ := jsonrpc.AsError(err)
		return e
	}
	if e := noExt(mcp.MethodToolsCall, map[string]any{"name": "crash", "arguments": map[string]any{}}); e == nil || e.Code != mcp.CodeMissingRequiredClientCapability ||
		!strings.Contains(string(e.Data), mcp.ExtensionTasks) {
		t.Errorf("required-task tool without the extension = %v, want -32021 naming it", e)
	}
	for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel} {
		if e := noExt(m, map[string]any{"taskId": "x"}); e == nil || e.Code != mcp.CodeMissingRequiredClientCapability {
			t.Errorf("%s without the extension = %v, want -32021", m, e)
		}
	}
	// Capabilities: 2025 tasks on initialize, the extension on discover.
	if c := fx.srv.Capabilities(); c.Tasks == nil || !c.Tasks.SupportsRequest(mcp.MethodToolsCall) {
		t.Errorf("legacy capabilities = %+v", c)
	}
	if c := fx.srv.discover().Capabilities; c.Tasks != nil || c.Extensions[mcp.ExtensionTasks] == nil {
		t.Errorf("discover capabilities = %+v", c)
	}
}

func TestTaskOnDemand(t *testing.T) {
	eachPeer(t, nil, func(t *testing.T, fx *taskFixture, p taskPeer) {
		AddTool(fx.srv, &mcp.Tool{Name: "later", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
			func(context.Context, *CallToolRequest, struct{}) (string, error) {
				return "", ContinueAsTask(func(context.Context, *CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "later"}}}, nil
				})
			}, TaskOnDemand())
		// Where the call may be a task, the continuation is one.
		id := startTask(t, p, "later", nil)
		waitStatus(t, p, id, "completed")
		if p.modern() {
			return
		}
		// Where it may not (2025 without params.task), it runs in the request.
		raw, e := p.call(t, mcp.MethodToolsCall, map[string]any{"name": "later", "arguments": map[string]any{}})
		if e != nil || !strings.Contains(string(raw), `"later"`) || strings.Contains(string(raw), "taskId") {
			t.Fatalf("tools/call later without a task = %s, %v", raw, e)
		}
	})
}

func TestTaskOtherPrincipalRefusedStdio(t *testing.T) {
	for _, modern := range []bool{false, true} {
		t.Run(fmt.Sprint("modern=", modern), func(t *testing.T) {
			fx := newTaskFixture(nil)
			serve := func(principal string) *stdioTaskPeer {
				a, b := memory.NewPair()
				ctx, cancel := context.WithCancel(WithPrincipal(context.Background(), principal))
				done := make(chan struct{})
				go func() { defer close(done); _ = fx.srv.Serve(ctx, a) }()
				p := &stdioTaskPeer{isNew: modern}
				p.conn = jsonrpc.NewConn(b, &jsonrpc.ConnOptions{Handler: elicitAnswerer{p}})
				p.conn.Start()
				t.Cleanup(func() { p.conn.Close(); cancel(); <-done })
				if !modern {
					var res json.RawMessage
					if err := p.conn.Call(ctx, mcp.MethodInitialize, legacyInit(), &res); err != nil {
						t.Fatal(err)
					}
					_ = p.conn.Notify(ctx, mcp.NotificationInitialized, nil)
				}
				return p
			}
			alice, alice2, mallory := serve("alice"), serve("alice"), serve("mallory")
			id := startTask(t, alice, "quick", nil)
			waitStatus(t, alice, id, "completed")
			waitStatus(t, alice2, id, "completed") // same principal, another connection
			if _, e := getTask(t, mallory, id); e == nil || e.Code != mcp.CodeInvalidParams {
				t.Errorf("tasks/get by another principal = %v, want -32602", e)
			}
		})
	}
}

// TestTaskOnDemandOutputChecked: the continuation of a typed tool that
// becomes a task (ContinueAsTask) has its result checked against the
// tool's output schema like a result in the request: one that does not
// conform fails the task.
func TestTaskOnDemandOutputChecked(t *testing.T) {
	type sum struct {
		Sum int `json:"sum"`
	}
	eachPeer(t, nil, func(t *testing.T, fx *taskFixture, p taskPeer) {
		if err := AddTool(fx.srv, &mcp.Tool{Name: "badlater", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
			func(context.Context, *CallToolRequest, struct{}) (sum, error) {
				return sum{}, ContinueAsTask(func(context.Context, *CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{StructuredContent: jsontext.Value(`{"sum":"three"}`)}, nil
				})
			}, TaskOnDemand()); err != nil {
			t.Fatal(err)
		}
		id := startTask(t, p, "badlater", nil)
		waitStatus(t, p, id, "failed")
	})
}

// TestTaskOnDemandWrapped: a handler that wraps ContinueAsTask's error
// (fmt.Errorf with %w) still continues as a task, as errors.As finds it;
// both the raw and the typed tool paths look for it that way.
func TestTaskOnDemandWrapped(t *testing.T) {
	type sum struct {
		Sum int `json:"sum"`
	}
	eachPeer(t, nil, func(t *testing.T, fx *taskFixture, p taskPeer) {
		later := func(context.Context, *CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: jsontext.Value(`{"sum":3}`)}, nil
		}
		AddTool(fx.srv, &mcp.Tool{Name: "wrapped", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
			func(context.Context, *CallToolRequest, struct{}) (string, error) {
				return "", fmt.Errorf("gathered: %w", ContinueAsTask(later))
			}, TaskOnDemand())
		if err := AddTool(fx.srv, &mcp.Tool{Name: "wrappedtyped", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
			func(context.Context, *CallToolRequest, struct{}) (sum, error) {
				return sum{}, fmt.Errorf("gathered: %w", ContinueAsTask(later))
			}, TaskOnDemand()); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"wrapped", "wrappedtyped"} {
			id := startTask(t, p, name, nil)
			waitStatus(t, p, id, "completed")
		}
	})
}
