package client_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Tasks (long-running tool calls) against scripted servers of both
// revisions.

const tasksExt = "io.modelcontextprotocol/tasks"

// modernTask is a 2026 task in the wire's spelling, with extra members.
func modernTask(id, status string, pollMs int, extra string) jsontext.Value {
	s := fmt.Sprintf(`{"resultType":"complete","taskId":%q,"status":%q,"createdAt":"2026-11-30T08:00:00Z","lastUpdatedAt":"2026-11-30T08:00:01Z","ttlMs":60000,"pollIntervalMs":%d`, id, status, pollMs)
	if extra != "" {
		s += "," + extra
	}
	return jsontext.Value(s + "}")
}

// created is the 2026 answer to a tools/call run as a task.
func created(id string, pollMs int) jsontext.Value {
	return jsontext.Value(strings.Replace(string(modernTask(id, "working", pollMs, "")), `"resultType":"complete"`, `"resultType":"task"`, 1))
}

// taskServer is a scripted 2026 server whose tools/call creates task
// "t1" and whose tasks/get answers the n-th poll with gets[n] (the last
// again past the end). update, when set, answers tasks/update and may
// change what later polls answer.
type taskServer struct {
	mu      sync.Mutex
	gets    []jsontext.Value
	n       int
	getTime []time.Time
	update  func(p map[string]jsontext.Value) []jsontext.Value
}

func (s *taskServer) handle(ctx context.Context, msg *jsonrpc.Message) (any, error) {
	switch msg.Method {
	case mcp.MethodToolsCall:
		return created("t1", 20), nil
	case mcp.MethodTasksGet:
		s.mu.Lock()
		defer s.mu.Unlock()
		s.getTime = append(s.getTime, time.Now())
		r := s.gets[min(s.n, len(s.gets)-1)]
		s.n++
		return r, nil
	case mcp.MethodTasksUpdate:
		var p map[string]jsontext.Value
		if err := json.Unmarshal(msg.Params, &p); err != nil {
			return nil, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.update != nil {
			if next := s.update(p); next != nil {
				s.gets, s.n = next, 0
			}
		}
		return jsontext.Value(`{"resultType":"complete"}`), nil
	case mcp.MethodTasksCancel:
		s.mu.Lock()
		defer s.mu.Unlock()
		s.gets, s.n = []jsontext.Value{modernTask("t1", "cancelled", 20, "")}, 0
		return jsontext.Value(`{"resultType":"complete"}`), nil
	}
	return modernServer(ctx, msg)
}

func (s *taskServer) pollTimes() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.getTime)
}

// declaresTasks reports whether a modern request's client capabilities
// declare the tasks extension.
func declaresTasks(t *testing.T, m *jsonrpc.Message) bool {
	t.Helper()
	caps, err := envelopeOf(t, m).ClientCapabilities()
	if err != nil || caps == nil {
		t.Fatalf("%s clientCapabilities: %v", m.Method, err)
	}
	_, ok := caps.Extensions[tasksExt]
	return ok
}

// TestTaskModernCompletion: StartToolTask declares the extension and
// returns the flattened task; TaskResult polls tasks/get no faster than
// the server's pollIntervalMs until the task completes, and returns the
// inlined result.
func TestTaskModernCompletion(t *testing.T) {
	s := &taskServer{gets: []jsontext.Value{
		modernTask("t1", "working", 20, ""),
		modernTask("t1", "working", 20, ""),
		modernTask("t1", "completed", 20, `"result":{"content":[{"type":"text","text":"42"}]}`),
	}}
	tr, f := startFake(t, s.handle)
	c := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20260728})
	ctx := testCtx(t)
	task, err := c.StartToolTask(ctx, &mcp.CallToolParams{Name: "slow", Task: &mcp.TaskMetadata{}})
	if err != nil {
		t.Fatal(err)
	}
	if task.ID != "t1" || task.Status != mcp.TaskWorking || task.TTL == nil || *task.TTL != 60000 || task.PollInterval == nil || *task.PollInterval != 20 {
		t.Fatalf("task = %+v", task)
	}
	call := callsOf(f, mcp.MethodToolsCall)[0]
	if !declaresTasks(t, call) {
		t.Error("tools/call of StartToolTask does not declare the tasks extension")
	}
	if p, members := paramsOf(t, call); p.Name != "slow" || members["task"] != nil {
		t.Errorf("tools/call params %s: want no 2025 task member", call.Params)
	}
	res, err := c.TaskResult(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "42" || res.IsError {
		t.Fatalf("result = %+v", res)
	}
	gets := callsOf(f, mcp.MethodTasksGet)
	if len(gets) != 3 {
		t.Fatalf("%d tasks/get, want 3", len(gets))
	}
	for _, g := range gets {
		if p, _ := paramsOf(t, g); !declaresTasks(t, g) || !strings.Contains(string(g.Params), `"taskId":"t1"`) || p.Name != "" {
			t.Errorf("tasks/get params %s", g.Params)
		}
	}
	times := s.pollTimes()
	for i := 1; i < len(times); i++ {
		if d := times[i].Sub(times[i-1]); d < 20*time.Millisecond {
			t.Errorf("poll %d came %v after the previous one; the server asked for 20ms", i, d)
		}
	}
}

// TestTaskModernOutcomes: a tool error is a completed task whose result
// has isError; a JSON-RPC error is a failed task, returned as that error;
// a cancelled task is ErrTaskCanceled.
func TestTaskModernOutcomes(t *testing.T) {
	for name, tc := range map[string]struct {
		get   jsontext.Value
		check func(t *testing.T, res *mcp.CallToolResult, err error)
	}{
		"tool error": {modernTask("t1", "completed", 5, `"result":{"content":[{"type":"text","text":"nope"}],"isError":true}`),
			func(t *testing.T, res *mcp.CallToolResult, err error) {
				if err != nil || !res.IsError {
					t.Fatalf("res %+v, err %v; want a result with IsError", res, err)
				}
			}},
		"protocol error": {modernTask("t1", "failed", 5, `"statusMessage":"crashed","error":{"code":-32603,"message":"boom"}`),
			func(t *testing.T, res *mcp.CallToolResult, err error) {
				if e, ok := jsonrpc.AsError(err); !ok || e.Code != -32603 || e.Message != "boom" {
					t.Fatalf("err = %v, want the task's JSON-RPC error", err)
				}
			}},
		"failed without error": {modernTask("t1", "failed", 5, `"statusMessage":"crashed"`),
			func(t *testing.T, res *mcp.CallToolResult, err error) {
				if !errors.Is(err, client.ErrTaskFailed) || !strings.Contains(err.Error(), "crashed") {
					t.Fatalf("err = %v, want ErrTaskFailed", err)
				}
			}},
		"cancelled": {modernTask("t1", "cancelled", 5, ""),
			func(t *testing.T, res *mcp.CallToolResult, err error) {
				if !errors.Is(err, client.ErrTaskCanceled) {
					t.Fatalf("err = %v, want ErrTaskCanceled", err)
				}
			}},
	} {
		t.Run(name, func(t *testing.T) {
			s := &taskServer{gets: []jsontext.Value{modernTask("t1", "working", 5, ""), tc.get}}
			tr, _ := startFake(t, s.handle)
			c := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20260728})
			res, err := c.RunToolTask(testCtx(t), &mcp.CallToolParams{Name: "job"})
			tc.check(t, res, err)
		})
	}
}

// TestTaskModernCancel: CancelTask sends tasks/cancel for the task, and
// the next poll sees it cancelled. A RunToolTask whose context ends
// cancels its task.
func TestTaskModernCancel(t *testing.T) {
	s := &taskServer{gets: []jsontext.Value{modernTask("t1", "working", 5, "")}}
	tr, f := startFake(t, s.handle)
	c := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20260728})
	ctx := testCtx(t)
	task, err := c.StartToolTask(ctx, &mcp.CallToolParams{Name: "slow"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CancelTask(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	cancels := callsOf(f, mcp.MethodTasksCancel)
	if len(cancels) != 1 || !strings.Contains(string(cancels[0].Params), `"taskId":"t1"`) || !declaresTasks(t, cancels[0]) {
		t.Fatalf("tasks/cancel requests: %v", cancels)
	}
	if _, err := c.TaskResult(ctx, task.ID); !errors.Is(err, client.ErrTaskCanceled) {
		t.Fatalf("TaskResult after cancel: %v", err)
	}

	s2 := &taskServer{gets: []jsontext.Value{modernTask("t1", "working", 5, "")}}
	tr2, f2 := startFake(t, s2.handle)
	c2 := connect(t, tr2, &client.Options{ProtocolVersion: mcp.Version20260728})
	wctx, cancel := context.WithTimeout(testCtx(t), 60*time.Millisecond)
	defer cancel()
	if _, err := c2.RunToolTask(wctx, &mcp.CallToolParams{Name: "slow"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("RunToolTask past its deadline: %v", err)
	}
	if n := len(callsOf(f2, mcp.MethodTasksCancel)); n != 1 {
		t.Fatalf("%d tasks/cancel after the waiter gave up, want 1", n)
	}
}

// TestTaskModernInputRequired: an input_required task's input requests
// are answered by the same handlers as the MRTR driver's, once each, and
// sent with tasks/update; partial answers are not repeated; the task then
// completes.
func TestTaskModernInputRequired(t *testing.T) {
	var a answers
	s := &taskServer{gets: []jsontext.Value{
		modernTask("t1", "input_required", 5, `"inputRequests":{"k1":`+elicitName+`,"k2":`+sampleSum+`}`),
	}}
	var updates []map[string]jsontext.Value
	s.update = func(p map[string]jsontext.Value) []jsontext.Value {
		var r map[string]jsontext.Value
		_ = json.Unmarshal(p["inputResponses"], &r)
		updates = append(updates, r)
		if len(updates) == 1 {
			// The server still shows the answered keys once (it has not
			// processed the update yet), then asks one more question.
			return []jsontext.Value{
				modernTask("t1", "input_required", 5, `"inputRequests":{"k1":`+elicitName+`,"k2":`+sampleSum+`}`),
				modernTask("t1", "input_required", 5, `"inputRequests":{"k3":`+listRoots+`}`),
			}
		}
		return []jsontext.Value{modernTask("t1", "completed", 5, `"result":{"content":[{"type":"text","text":"done"}]}`)}
	}
	tr, f := startFake(t, s.handle)
	opts := a.options()
	opts.ProtocolVersion = mcp.Version20260728
	opts.Tasks = true
	c := connect(t, tr, &opts)
	res, err := c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "confirm_delete"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content[0].(*mcp.TextContent).Text != "done" {
		t.Fatalf("result = %+v", res)
	}
	if got, want := a.got(), []string{"elicit:Name?", "sample", "roots"}; !slices.Equal(got, want) {
		t.Errorf("handlers ran %v, want %v", got, want)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(updates) != 2 {
		t.Fatalf("%d tasks/update, want 2", len(updates))
	}
	if len(updates[0]) != 2 || !strings.Contains(string(updates[0]["k1"]), `"action":"accept"`) || !strings.Contains(string(updates[0]["k2"]), `"model":"m"`) {
		t.Errorf("first tasks/update answers %v", updates[0])
	}
	if len(updates[1]) != 1 || !strings.Contains(string(updates[1]["k3"]), `file:///w`) {
		t.Errorf("second tasks/update answers %v", updates[1])
	}
	for _, u := range callsOf(f, mcp.MethodTasksUpdate) {
		if !strings.Contains(string(u.Params), `"taskId":"t1"`) || !declaresTasks(t, u) {
			t.Errorf("tasks/update params %s", u.Params)
		}
	}
}

// TestTaskModernManualInput: without the driver, TaskResult returns an
// *InputRequiredError naming the task; UpdateTask answers it.
func TestTaskModernManualInput(t *testing.T) {
	s := &taskServer{gets: []jsontext.Value{
		modernTask("t1", "input_required", 5, `"inputRequests":{"k1":`+elicitName+`}`),
	}}
	s.update = func(map[string]jsontext.Value) []jsontext.Value {
		return []jsontext.Value{modernTask("t1", "completed", 5, `"result":{"content":[]}`)}
	}
	tr, _ := startFake(t, s.handle)
	c := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20260728})
	ctx := testCtx(t)
	_, err := c.TaskResult(ctx, "t1")
	var ir *client.InputRequiredError
	if !errors.As(err, &ir) || ir.TaskID != "t1" || ir.Method != mcp.MethodTasksGet || ir.Result.InputRequests["k1"].Method != mcp.MethodElicitationCreate {
		t.Fatalf("TaskResult: %v", err)
	}
	var rs mcp.InputResponses
	if err := rs.Set("k1", &mcp.ElicitResult{Action: mcp.ElicitActionDecline}); err != nil {
		t.Fatal(err)
	}
	if err := c.UpdateTask(ctx, ir.TaskID, rs); err != nil {
		t.Fatal(err)
	}
	if res, err := c.TaskResult(ctx, "t1"); err != nil || res.IsError {
		t.Fatalf("TaskResult after UpdateTask: %v, %v", res, err)
	}
}

// TestTaskModernOptIn: with Options.Tasks every request declares the
// extension and a plain CallTool answered with a task waits for it;
// without it CallTool declares nothing and a task answer is an unknown
// result type. A server answering StartToolTask at once gives a
// completed Task without an id, and RunToolTask its result.
func TestTaskModernOptIn(t *testing.T) {
	s := &taskServer{gets: []jsontext.Value{modernTask("t1", "completed", 5, `"result":{"content":[{"type":"text","text":"42"}]}`)}}
	tr, f := startFake(t, s.handle)
	c := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20260728, Tasks: true})
	ctx := testCtx(t)
	if _, err := c.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "42" {
		t.Fatalf("CallTool: %v, %v", res, err)
	}
	for _, m := range f.requests() {
		if !declaresTasks(t, m) {
			t.Errorf("%s does not declare the tasks extension", m.Method)
		}
	}

	tr2, f2 := startFake(t, s.handle)
	c2 := connect(t, tr2, &client.Options{ProtocolVersion: mcp.Version20260728})
	if _, err := c2.CallTool(ctx, &mcp.CallToolParams{Name: "slow"}); !errors.Is(err, client.ErrResultType) {
		t.Fatalf("CallTool without Options.Tasks answered with a task: %v", err)
	}
	if declaresTasks(t, callsOf(f2, mcp.MethodToolsCall)[0]) {
		t.Error("tools/call declares the tasks extension without Options.Tasks")
	}
	if _, err := c2.ListTasks(ctx, nil); !errors.Is(err, client.ErrModern) {
		t.Errorf("ListTasks on a modern connection: %v", err)
	}

	tr3, _ := startFake(t, modernServer)
	c3 := connect(t, tr3, &client.Options{ProtocolVersion: mcp.Version20260728})
	task, err := c3.StartToolTask(ctx, &mcp.CallToolParams{Name: "t"})
	if err != nil || task.ID != "" || task.Status != mcp.TaskCompleted || len(task.Result) == 0 {
		t.Fatalf("StartToolTask answered at once: %+v, %v", task, err)
	}
	if res, err := c3.RunToolTask(ctx, &mcp.CallToolParams{Name: "t"}); err != nil || res.Content[0].(*mcp.TextContent).Text != "ok" {
		t.Fatalf("RunToolTask answered at once: %v, %v", res, err)
	}
}

// legacyTasks is a scripted 2025-11-25 server that runs tools/call as
// tasks; result answers tasks/result.
func legacyTasks(t *testing.T, tasks bool, result func(ctx context.Context, f *fakeServer) (any, error)) (*client.Client, *fakeServer) {
	var f *fakeServer
	var mu sync.Mutex
	task := `{"taskId":"L1","status":"working","createdAt":"2025-11-30T08:00:00Z","lastUpdatedAt":"2025-11-30T08:00:00Z","ttl":30000,"pollInterval":500}`
	tr, fs := startFake(t, func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
		switch msg.Method {
		case mcp.MethodInitialize:
			res := initializeResult()
			if tasks {
				res.Capabilities.Tasks = &mcp.TasksCapability{List: &struct{}{}, Cancel: &struct{}{}, Requests: map[string]map[string]struct{}{"tools": {"call": {}}}}
			}
			return res, nil
		case mcp.MethodToolsCall:
			if strings.Contains(string(msg.Params), `"task":`) {
				return jsontext.Value(`{"task":` + task + `,"_meta":{"io.modelcontextprotocol/model-immediate-response":"working on it"}}`), nil
			}
			return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "plain"}}}, nil
		case mcp.MethodTasksGet, mcp.MethodTasksCancel:
			return jsontext.Value(task), nil
		case mcp.MethodTasksList:
			return jsontext.Value(`{"tasks":[` + task + `]}`), nil
		case mcp.MethodTasksResult:
			mu.Lock()
			ff := f
			mu.Unlock()
			return result(ctx, ff)
		}
		return nil, jsonrpc.ErrMethodNotFound
	})
	mu.Lock()
	f = fs
	mu.Unlock()
	var a answers
	opts := a.options()
	opts.ProtocolVersion = mcp.LatestLegacy
	opts.CallTimeout = 30 * time.Millisecond // not for tasks/result
	return connect(t, tr, &opts), fs
}

// TestTaskLegacy: a 2025 task: params.task on tools/call, the
// CreateTaskResult, tasks/get, tasks/list, tasks/cancel, and tasks/result
// (not bounded by CallTimeout) with the server's input request answered
// by the handlers meanwhile.
func TestTaskLegacy(t *testing.T) {
	c, f := legacyTasks(t, true, func(ctx context.Context, f *fakeServer) (any, error) {
		time.Sleep(60 * time.Millisecond) // longer than CallTimeout
		var er mcp.ElicitResult
		p := &mcp.ElicitParams{Mode: "form", Message: "Sure?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{}}`),
			Meta: mcp.Meta{mcp.MetaKeyRelatedTask: mcp.RelatedTaskMetadata{TaskID: "L1"}}}
		if err := f.conn.Call(ctx, mcp.MethodElicitationCreate, p, &er); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "answer " + string(er.Action)}},
			Meta: mcp.Meta{mcp.MetaKeyRelatedTask: mcp.RelatedTaskMetadata{TaskID: "L1"}}}, nil
	})
	ctx := testCtx(t)
	ttlMs := int64(30000)
	task, err := c.StartToolTask(ctx, &mcp.CallToolParams{Name: "slow", Task: &mcp.TaskMetadata{TTL: &ttlMs}})
	if err != nil {
		t.Fatal(err)
	}
	if task.ID != "L1" || task.Status != mcp.TaskWorking || *task.TTL != 30000 || *task.PollInterval != 500 || task.Meta[mcp.MetaKeyModelImmediateResponse] == nil {
		t.Fatalf("task = %+v", task)
	}
	if p := callsOf(f, mcp.MethodToolsCall)[0].Params; !strings.Contains(string(p), `"task":{"ttl":30000}`) {
		t.Errorf("tools/call params %s", p)
	}
	if g, err := c.GetTask(ctx, "L1"); err != nil || g.ID != "L1" {
		t.Fatalf("GetTask: %+v, %v", g, err)
	}
	if l, err := c.ListTasks(ctx, nil); err != nil || len(l.Tasks) != 1 || l.Tasks[0].ID != "L1" || l.NextCursor != nil {
		t.Fatalf("ListTasks: %+v, %v", l, err)
	}
	res, err := c.TaskResult(ctx, "L1")
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "answer accept" {
		t.Fatalf("TaskResult: %+v, %v", res, err)
	}
	if err := c.CancelTask(ctx, "L1"); err != nil {
		t.Fatal(err)
	}
	if err := c.UpdateTask(ctx, "L1", nil); !errors.Is(err, client.ErrLegacy) {
		t.Errorf("UpdateTask on a legacy connection: %v", err)
	}
	// CallTool with p.Task set waits for the task.
	if res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Task: &mcp.TaskMetadata{}}); err != nil || res.Content[0].(*mcp.TextContent).Text != "answer accept" {
		t.Fatalf("CallTool with Task: %+v, %v", res, err)
	}
}

// TestTaskLegacyFailure: tasks/result's JSON-RPC error is RunToolTask's.
func TestTaskLegacyFailure(t *testing.T) {
	c, _ := legacyTasks(t, true, func(context.Context, *fakeServer) (any, error) {
		return nil, jsonrpc.NewError(-32603, "boom")
	})
	_, err := c.RunToolTask(testCtx(t), &mcp.CallToolParams{Name: "job"})
	if e, ok := jsonrpc.AsError(err); !ok || e.Code != -32603 {
		t.Fatalf("err = %v", err)
	}
}

// TestTaskLegacyUnsupported: a server without tasks.requests.tools.call
// is not asked for a task; RunToolTask makes a plain call.
func TestTaskLegacyUnsupported(t *testing.T) {
	c, f := legacyTasks(t, false, nil)
	ctx := testCtx(t)
	if _, err := c.StartToolTask(ctx, &mcp.CallToolParams{Name: "x"}); !errors.Is(err, client.ErrTasksUnsupported) {
		t.Fatalf("StartToolTask: %v", err)
	}
	res, err := c.RunToolTask(ctx, &mcp.CallToolParams{Name: "x", Task: &mcp.TaskMetadata{}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "plain" {
		t.Fatalf("RunToolTask: %+v, %v", res, err)
	}
	for _, m := range callsOf(f, mcp.MethodToolsCall) {
		if strings.Contains(string(m.Params), `"task"`) {
			t.Errorf("tools/call params %s ask for a task", m.Params)
		}
	}
}

// TestTaskModernDefaultInterval: without a suggested interval, TaskResult
// polls every Options.TaskPollInterval.
func TestTaskModernDefaultInterval(t *testing.T) {
	s := &taskServer{gets: []jsontext.Value{
		modernTask("t1", "working", 0, ""),
		modernTask("t1", "working", 0, ""),
		modernTask("t1", "completed", 0, `"result":{"content":[]}`),
	}}
	tr, _ := startFake(t, s.handle)
	c := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20260728, TaskPollInterval: 30 * time.Millisecond})
	if _, err := c.TaskResult(testCtx(t), "t1"); err != nil {
		t.Fatal(err)
	}
	times := s.pollTimes()
	if len(times) != 3 {
		t.Fatalf("%d polls, want 3", len(times))
	}
	for i := 1; i < len(times); i++ {
		if d := times[i].Sub(times[i-1]); d < 30*time.Millisecond {
			t.Errorf("poll %d came %v after the previous one, want ≥ 30ms", i, d)
		}
	}
}

// TestTaskListenDeclares: a Listen filter with taskIds declares the tasks
// extension (the server sends task status only to such requests); one
// without does not (unless Options.Tasks).
func TestTaskListenDeclares(t *testing.T) {
	var f *fakeServer
	opened := make(chan *openListen, 2)
	tr, fs := startFake(t, listenServer(&f, opened))
	f = fs
	c := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20260728})
	ctx := testCtx(t)
	for _, filter := range []mcp.SubscriptionFilter{{TaskIDs: []string{"t1"}}, {ToolsListChanged: true}} {
		sub, err := c.Listen(ctx, filter)
		if err != nil {
			t.Fatal(err)
		}
		l := recv(t, opened, "listen")
		close(l.end)
		<-sub.Done()
	}
	ls := callsOf(f, mcp.MethodSubscriptionsListen)
	if len(ls) != 2 {
		t.Fatalf("%d listen requests, want 2", len(ls))
	}
	if a, b := declaresTasks(t, ls[0]), declaresTasks(t, ls[1]); !a || b {
		t.Fatalf("listen requests declare the tasks extension: %v, %v; want true, false", a, b)
	}
}
