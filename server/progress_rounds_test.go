package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// addProgressSteps registers "psteps" (task support optional): three
// progress steps, a question (Ask), a fourth step. Written once in the
// multi round-trip style, its run after the answer reports the first
// three steps again; errs records what Progress returned.
func addProgressSteps(s *Server, errs *progressErrs) {
	opt := &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
	AddTool(s, &mcp.Tool{Name: "psteps", Execution: opt}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		for i := 1; i <= 3; i++ {
			errs.add(req.Progress(ctx, float64(i), 4, ""))
		}
		v, err := Ask[askName](req.Request, "who", "Who?")
		if err != nil {
			return "", err
		}
		errs.add(req.Progress(ctx, 4, 4, ""))
		return "hello " + v.Name, nil
	})
}

type progressErrs struct {
	mu   sync.Mutex
	errs []error
}

func (p *progressErrs) add(err error) {
	if err != nil {
		p.mu.Lock()
		p.errs = append(p.errs, err)
		p.mu.Unlock()
	}
}

func (p *progressErrs) check(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.errs) > 0 {
		t.Errorf("Progress returned %v", p.errs)
	}
}

// progressOf returns the progress values of the notifications/progress
// already in notes, in order (the peer's reader put them there before it
// read the response that followed them).
func progressOf(t *testing.T, notes chan *jsonrpc.Message) []float64 {
	t.Helper()
	var got []float64
	for {
		select {
		case n := <-notes:
			if n.Method != mcp.NotificationProgress {
				continue
			}
			var p mcp.ProgressParams
			if err := json.Unmarshal(n.Params, &p); err != nil {
				t.Fatal(err)
			}
			got = append(got, p.Progress)
		default:
			return got
		}
	}
}

// TestProgressAcrossRetriesModern: a 2026-07-28 retry's run does not
// send the steps the first request sent, even when the retry lands on
// another instance (the highest step travels in the sealed state), and
// its later steps reach the client.
func TestProgressAcrossRetriesModern(t *testing.T) {
	var errs progressErrs
	opts := func() *Options { return &Options{RequestStateKeys: []RequestStateKey{stateKey}} }
	a, b := New(opts()), New(opts())
	addProgressSteps(a, &errs)
	addProgressSteps(b, &errs)
	pa, pb := newModernPeer(t, a, true), newModernPeer(t, b, true)
	meta := modernMeta(formCaps)
	meta[mcp.MetaKeyProgressToken] = "tok"
	params := map[string]any{"_meta": meta, "name": "psteps"}
	raw, err := modernCall(t, pa, mcp.MethodToolsCall, params)
	if err != nil {
		t.Fatal(err)
	}
	ir := inputRequired(t, raw)
	if got := fmt.Sprint(progressOf(t, pa.notes)); got != "[1 2 3]" {
		t.Errorf("first request's progress = %s, want [1 2 3]", got)
	}
	params["inputResponses"] = map[string]any{"who": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}
	params["requestState"] = ir.RequestState
	raw, err = modernCall(t, pb, mcp.MethodToolsCall, params)
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := toolResultText(t, raw); text != "hello Ada" || isErr {
		t.Errorf("retry = %q (isError %v)", text, isErr)
	}
	if got := fmt.Sprint(progressOf(t, pb.notes)); got != "[4]" {
		t.Errorf("retry's progress = %s, want [4] (steps 1-3 were sent already)", got)
	}
	errs.check(t)
}

// TestProgressInOneRunMustIncrease: within one run of a handler, a step
// that does not increase is still the handler's mistake.
func TestProgressInOneRunMustIncrease(t *testing.T) {
	s := New(nil)
	var errs progressErrs
	AddTool(s, &mcp.Tool{Name: "back"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		errs.add(req.Progress(ctx, 2, 0, ""))
		errs.add(req.Progress(ctx, 1, 0, ""))
		return "ok", nil
	})
	p := newModernPeer(t, s, true)
	meta := modernMeta(formCaps)
	meta[mcp.MetaKeyProgressToken] = "tok"
	if _, err := modernCall(t, p, mcp.MethodToolsCall, map[string]any{"_meta": meta, "name": "back"}); err != nil {
		t.Fatal(err)
	}
	if len(errs.errs) != 1 || !strings.Contains(errs.errs[0].Error(), "progress must increase (1 after 2)") {
		t.Errorf("Progress errors = %v, want one: progress must increase (1 after 2)", errs.errs)
	}
	if got := fmt.Sprint(progressOf(t, p.notes)); got != "[2]" {
		t.Errorf("progress sent = %s, want [2]", got)
	}
}

// progressPeer answers every elicitation "Ada" and keeps every
// notification.
type progressPeer struct{ notes chan *jsonrpc.Message }

func (p progressPeer) HandleRequest(context.Context, *jsonrpc.Message) (any, error) {
	return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, nil
}
func (p progressPeer) HandleNotification(_ context.Context, n *jsonrpc.Message) { p.notes <- n }

// TestProgressAcrossTaskRounds: a task's handler that reports progress,
// asks, and runs again reports no error, the task completes, and (on a
// 2025-11-25 session) the client sees each step once.
func TestProgressAcrossTaskRounds(t *testing.T) {
	t.Run("2025-11-25", func(t *testing.T) {
		var errs progressErrs
		s := New(nil)
		addProgressSteps(s, &errs)
		p, notes := newLegacyProgressPeer(t, s)
		raw := legacyTaskResult(t, p, "psteps")
		if !strings.Contains(string(raw), "hello Ada") {
			t.Fatalf("tasks/result = %s", raw)
		}
		if got := fmt.Sprint(progressOf(t, notes)); got != "[1 2 3 4]" {
			t.Errorf("progress seen = %s, want [1 2 3 4]", got)
		}
		errs.check(t)
	})
	t.Run("2026-07-28", func(t *testing.T) {
		var errs progressErrs
		s := New(nil)
		addProgressSteps(s, &errs)
		p := newStdioTaskPeer(t, s, true)
		meta := modernMeta(formCaps)
		meta[mcp.MetaKeyProgressToken] = "tok"
		meta[mcp.MetaKeyClientCapabilities] = map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{mcp.ExtensionTasks: map[string]any{}}}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var w wireTask
		if err := p.conn.Call(ctx, mcp.MethodToolsCall, map[string]any{"name": "psteps", "arguments": map[string]any{}, "_meta": meta}, &w); err != nil {
			t.Fatal(err)
		}
		if w.ResultType != "task" {
			t.Fatalf("tools/call = %+v, want a task", w)
		}
		waitStatus(t, p, w.TaskID, "input_required")
		if _, e := p.call(t, mcp.MethodTasksUpdate, map[string]any{"taskId": w.TaskID, "inputResponses": map[string]any{
			"who": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}},
		}}); e != nil {
			t.Fatal(e)
		}
		done := waitStatus(t, p, w.TaskID, "completed")
		if done.Result == nil || done.Result.Content[0].Text != "hello Ada" {
			t.Fatalf("completed = %+v", done)
		}
		errs.check(t)
	})
}

// newLegacyProgressPeer connects an initialized 2025-11-25 session whose
// client answers every elicitation "Ada" and keeps every notification.
func newLegacyProgressPeer(t *testing.T, s *Server) (*stdioTaskPeer, chan *jsonrpc.Message) {
	t.Helper()
	c, ss := memory.NewPair()
	sess := s.connect(c, "")
	notes := make(chan *jsonrpc.Message, 64)
	conn := jsonrpc.NewConn(ss, &jsonrpc.ConnOptions{Handler: progressPeer{notes}})
	conn.Start()
	t.Cleanup(func() { conn.Close(); sess.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := conn.Call(ctx, mcp.MethodInitialize, legacyInit(), nil); err != nil {
		t.Fatal(err)
	}
	if err := conn.Notify(ctx, mcp.NotificationInitialized, nil); err != nil {
		t.Fatal(err)
	}
	return &stdioTaskPeer{conn: conn}, notes
}

// legacyTaskResult calls tool as a task with a progress token and
// returns its tasks/result.
func legacyTaskResult(t *testing.T, p *stdioTaskPeer, tool string) []byte {
	t.Helper()
	raw, e := p.call(t, mcp.MethodToolsCall, map[string]any{"name": tool, "arguments": map[string]any{},
		"task": map[string]any{}, "_meta": map[string]any{"progressToken": "tok"}})
	if e != nil {
		t.Fatal(e)
	}
	var created struct {
		Task wireTask `json:"task"`
	}
	taskJSON(t, raw, &created)
	raw, e = p.call(t, mcp.MethodTasksResult, map[string]any{"taskId": created.Task.TaskID})
	if e != nil {
		t.Fatalf("tasks/result: %v", e)
	}
	return raw
}

// TestProgressIntoContinuedTask: a handler that reports progress and then
// continues as a task (ContinueAsTask) hands the task the steps already
// sent: the continuation's step at or below them is not sent again.
func TestProgressIntoContinuedTask(t *testing.T) {
	var errs progressErrs
	s := New(nil)
	AddTool(s, &mcp.Tool{Name: "later", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
		func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
			errs.add(req.Progress(ctx, 1, 3, ""))
			errs.add(req.Progress(ctx, 2, 3, ""))
			return "", ContinueAsTask(func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
				errs.add(req.Progress(ctx, 2, 3, "")) // where the request left off
				errs.add(req.Progress(ctx, 3, 3, ""))
				return textResult("later"), nil
			})
		}, TaskOnDemand())
	p, notes := newLegacyProgressPeer(t, s)
	if raw := legacyTaskResult(t, p, "later"); !strings.Contains(string(raw), `"later"`) {
		t.Fatalf("tasks/result = %s", raw)
	}
	if got := fmt.Sprint(progressOf(t, notes)); got != "[1 2 3]" {
		t.Errorf("progress seen = %s, want [1 2 3]", got)
	}
	errs.check(t)
}
