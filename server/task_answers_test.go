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
