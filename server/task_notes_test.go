package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
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
