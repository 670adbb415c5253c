package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store"
)

// TestSettledTaskBroadcastToPeers: the owner's broadcast of a task's
// end carries its terminal record when small, and the other instances
// keep it: B answers tasks/get and tasks/result of A's settled task with
// its store down. A record over SettledTaskBytes/128 is not carried: B
// reads the store for it (503 while the store is down).
func TestSettledTaskBroadcastToPeers(t *testing.T) {
	var bv *blinkingView
	p := newTaskPairB(t, false, time.Minute, func(s store.TaskStore) store.TaskStore {
		bv = &blinkingView{TaskStore: s}
		return bv
	})
	big := strings.Repeat("x", 70<<10) // over 8 MiB / 128
	opt := &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
	AddTool(p.fa.srv, &mcp.Tool{Name: "big", Execution: opt}, func(context.Context, *CallToolRequest, struct{}) (string, error) {
		return big, nil
	})
	small := startTask(t, p.a, "quick", nil)
	large := startTask(t, p.a, "big", nil)
	// tasks/result on A returns once the task's goroutine has ended:
	// after its settle and the broadcast that follows it.
	for _, id := range []string{small, large} {
		if raw, e := p.a.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id}); e != nil || !strings.Contains(string(raw), `"text"`) {
			t.Fatalf("tasks/result on A = %.200s, %v", raw, e)
		}
	}
	bv.down.Store(true)
	if w, e := getTask(t, p.b, small); e != nil || w.Status != "completed" {
		t.Fatalf("tasks/get on B, store down = %+v, %v; want the record A broadcast", w, e)
	}
	if raw, e := p.b.call(t, mcp.MethodTasksResult, map[string]any{"taskId": small}); e != nil || !strings.Contains(string(raw), `"done"`) || !strings.Contains(string(raw), small) {
		t.Fatalf("tasks/result on B, store down = %s, %v", raw, e)
	}
	_, e := p.b.call(t, mcp.MethodTasksGet, map[string]any{"taskId": large})
	if e == nil || e.Code != jsonrpc.ErrUnavailable.Code {
		t.Fatalf("tasks/get on B of a large record, store down = %v; want %v (not carried, read from the store)", e, jsonrpc.ErrUnavailable)
	}
	bv.down.Store(false)
	if w, e := getTask(t, p.b, large); e != nil || w.Status != "completed" {
		t.Fatalf("tasks/get on B of the large record = %+v, %v", w, e)
	}
}
