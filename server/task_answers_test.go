package server

import (
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestTaskUpdateChecksContent: tasks/update checks an accepted form's
// content against the requestedSchema the task asked with — a mismatch is
// -32602 naming the field and the task keeps waiting; a good answer then
// resumes it.
func TestTaskUpdateChecksContent(t *testing.T) {
	eachPeer(t, nil, func(t *testing.T, fx *taskFixture, p taskPeer) {
		if !p.modern() {
			t.Skip("2025-11-25 tasks ask through the legacy shim: TestShimElicitContent covers it")
		}
		id := startTask(t, p, "ask", nil)
		waitStatus(t, p, id, "input_required")
		_, e := p.call(t, mcp.MethodTasksUpdate, map[string]any{"taskId": id, "inputResponses": map[string]any{
			"who": map[string]any{"action": "accept", "content": map[string]any{"name": 42}},
		}})
		if e == nil || e.Code != mcp.CodeInvalidParams || !strings.Contains(e.Message, "name") {
			t.Fatalf("tasks/update with a number for a string field = %v, want -32602 naming content.name", e)
		}
		if _, e = p.call(t, mcp.MethodTasksUpdate, map[string]any{"taskId": id, "inputResponses": map[string]any{
			"who": map[string]any{"action": "yolo"},
		}}); e == nil || e.Code != mcp.CodeInvalidParams {
			t.Fatalf("tasks/update with action yolo = %v, want -32602", e)
		}
		waitStatus(t, p, id, "input_required")
		if _, e = p.call(t, mcp.MethodTasksUpdate, map[string]any{"taskId": id, "inputResponses": map[string]any{
			"who": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}},
		}}); e != nil {
			t.Fatalf("tasks/update: %v", e)
		}
		if w := waitStatus(t, p, id, "completed"); w.Result == nil || w.Result.Content[0].Text != "hello Ada" {
			t.Fatalf("completed = %+v", w)
		}
	})
}

// TestTaskAskTwice: a task whose handler asks twice (one question per
// round) keeps the first answer for the second run and completes, in
// both eras (before, each round saw only its own answer and the task
// asked the first question again, forever).
func TestTaskAskTwice(t *testing.T) {
	eachPeer(t, nil, func(t *testing.T, fx *taskFixture, p taskPeer) {
		id := startTask(t, p, "ask2", nil)
		if !p.modern() {
			// The stdio and HTTP peers answer every elicitation "Ada".
			waitStatus(t, p, id, "input_required")
			raw, e := p.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id})
			if e != nil || !strings.Contains(string(raw), "hello Ada and Ada") {
				t.Fatalf("tasks/result = %s, %v", raw, e)
			}
			return
		}
		for _, c := range []struct{ key, name string }{{"who", "Ada"}, {"who2", "Grace"}} {
			var w *wireTask
			waitFor(t, "the task to ask "+c.key, func() bool {
				w, _ = getTask(t, p, id)
				_, ok := w.InputRequests[c.key]
				return w.Status == "input_required" && ok
			})
			_, e := p.call(t, mcp.MethodTasksUpdate, map[string]any{"taskId": id, "inputResponses": map[string]any{
				c.key: map[string]any{"action": "accept", "content": map[string]any{"name": c.name}},
			}})
			if e != nil {
				t.Fatalf("tasks/update %s: %v", c.key, e)
			}
		}
		w := waitStatus(t, p, id, "completed")
		if w.Result == nil || w.Result.Content[0].Text != "hello Ada and Grace" {
			t.Fatalf("completed = %+v", w)
		}
	})
}
