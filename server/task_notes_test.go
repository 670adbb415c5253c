package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// TestTaskNotificationQueueBound: a 2025-11-25 task's notifications wait
// for a tasks/result request, at most Options.TaskNotificationQueue of
// them: the oldest go first, and the tasks/result that comes after the
// task ended still carries the newest, before the outcome.
func TestTaskNotificationQueueBound(t *testing.T) {
	for _, tc := range []struct {
		queue int
		want  string
	}{{2, "[4 5]"}, {0, "[1 2 3 4 5]"}} { // 0: DefaultTaskNotificationQueue
		t.Run(fmt.Sprint(tc.queue), func(t *testing.T) { queueBound(t, tc.queue, tc.want) })
	}
}

func queueBound(t *testing.T, queue int, want string) {
	reported := make(chan struct{})
	s := New(&Options{TaskNotificationQueue: queue})
	AddTool(s, &mcp.Tool{Name: "five", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
		func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
			for i := 1; i <= 5; i++ {
				if err := req.Progress(ctx, float64(i), 5, ""); err != nil {
					return "", err
				}
			}
			close(reported)
			return "five", nil
		})
	p, notes := newLegacyProgressPeer(t, s)
	raw, e := p.call(t, mcp.MethodToolsCall, map[string]any{"name": "five", "arguments": map[string]any{},
		"task": map[string]any{}, "_meta": map[string]any{"progressToken": "tok"}})
	if e != nil {
		t.Fatal(e)
	}
	var created struct {
		Task wireTask `json:"task"`
	}
	taskJSON(t, raw, &created)
	<-reported // every step reported while no tasks/result was in flight
	raw, e = p.call(t, mcp.MethodTasksResult, map[string]any{"taskId": created.Task.TaskID})
	if e != nil || !strings.Contains(string(raw), `"five"`) {
		t.Fatalf("tasks/result = %s, %v", raw, e)
	}
	if got := fmt.Sprint(progressOf(t, notes)); got != want {
		t.Errorf("progress seen = %s, want %s", got, want)
	}
}

// TestTaskProgressAcrossInstances: a 2025-11-25 task runs on instance A
// and the client waits for it with tasks/result on instance B. The
// task's progress — a step reported before B's request came, and steps
// after — reaches the client on B's request (A sends them to B, which
// lent it), each once, in order, before the result.
func TestTaskProgressAcrossInstances(t *testing.T) {
	p := newTaskPair(t, false, time.Minute)
	for _, f := range []*taskFixture{p.fa, p.fb} {
		AddTool(f.srv, &mcp.Tool{Name: "steps", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
			func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
				if err := req.Progress(ctx, 1, 3, ""); err != nil {
					return "", err
				}
				select {
				case <-f.release:
				case <-ctx.Done():
					return "", ctx.Err()
				}
				for i := 2; i <= 3; i++ {
					if err := req.Progress(ctx, float64(i), 3, ""); err != nil {
						return "", err
					}
				}
				return "stepped", nil
			})
	}
	// B's client keeps the notifications it gets.
	a, b := memory.NewPair()
	ss := p.fb.srv.connect(a, "client")
	notes := make(chan *jsonrpc.Message, 64)
	conn := jsonrpc.NewConn(b, &jsonrpc.ConnOptions{Handler: progressPeer{notes}})
	conn.Start()
	t.Cleanup(func() { conn.Close(); ss.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a hang guard
	defer cancel()
	if err := conn.Call(ctx, mcp.MethodInitialize, legacyInit(), nil); err != nil {
		t.Fatal(err)
	}
	if err := conn.Notify(ctx, mcp.NotificationInitialized, nil); err != nil {
		t.Fatal(err)
	}

	raw, e := p.a.call(t, mcp.MethodToolsCall, map[string]any{"name": "steps", "arguments": map[string]any{},
		"task": map[string]any{}, "_meta": map[string]any{"progressToken": "tok"}})
	if e != nil {
		t.Fatal(e)
	}
	var created struct {
		Task wireTask `json:"task"`
	}
	taskJSON(t, raw, &created)
	id := created.Task.TaskID
	got := make(chan string, 1)
	go func() {
		var res json.RawMessage
		err := conn.Call(ctx, mcp.MethodTasksResult, map[string]any{"taskId": id}, &res)
		got <- fmt.Sprint(string(res), err)
	}()
	waitFor(t, "B to lend its tasks/result to A", func() bool {
		return p.fa.srv.tasks.Lookup(id).Carrying()
	})
	p.fa.release <- struct{}{}
	if r := <-got; !strings.Contains(r, "stepped") {
		t.Fatalf("tasks/result on B = %s", r)
	}
	if got := fmt.Sprint(progressOf(t, notes)); got != "[1 2 3]" {
		t.Errorf("progress seen on B = %s, want [1 2 3]", got)
	}
}
