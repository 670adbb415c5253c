package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
)

// refusedAsUnknown checks that e is the error of a tasks/* request naming
// an unknown task: -32602 with the same message as for an id that never
// existed, so that the answer does not reveal that id exists.
func refusedAsUnknown(t *testing.T, what, id string, e *jsonrpc.Error) {
	t.Helper()
	if e == nil || e.Code != mcp.CodeInvalidParams || e.Message != fmt.Sprintf("Invalid params: unknown task %q", id) || e.Data != nil {
		t.Errorf("%s = %v, want the -32602 of an unknown task", what, e)
	}
}

// TestTaskBoundToSession: without a principal, a 2025-11-25 task answers
// only to the session that created it: another session's tasks/get,
// tasks/result and tasks/cancel get what an unknown id gets, and the task
// runs on and completes for its creator.
func TestTaskBoundToSession(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			fx := newTaskFixture(nil)
			var a, b taskPeer
			if transport == "stdio" {
				a, b = newStdioTaskPeer(t, fx.srv, false), newStdioTaskPeer(t, fx.srv, false)
			} else {
				url := newTaskHTTP(t, fx.srv)
				a, b = newHTTPTaskPeer(t, url, false, ""), newHTTPTaskPeer(t, url, false, "")
			}
			never := "task-nowhere-AAAAAAAAAAAAAAAAAAAAAAAAAA"
			_, e := b.call(t, mcp.MethodTasksGet, map[string]any{"taskId": never})
			refusedAsUnknown(t, "tasks/get of an id that never existed", never, e)

			// A finished task's result.
			done := startTask(t, a, "quick", nil)
			raw, e := a.call(t, mcp.MethodTasksResult, map[string]any{"taskId": done})
			if e != nil || !strings.Contains(string(raw), `"done"`) {
				t.Fatalf("tasks/result by its creator = %s, %v", raw, e)
			}
			raw, e = b.call(t, mcp.MethodTasksResult, map[string]any{"taskId": done})
			if e == nil {
				t.Errorf("tasks/result by another session = %s", raw)
			}
			refusedAsUnknown(t, "tasks/result by another session", done, e)

			// A running task.
			id := startTask(t, a, "block", nil)
			for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksCancel} {
				_, e := b.call(t, m, map[string]any{"taskId": id})
				refusedAsUnknown(t, m+" by another session", id, e)
			}
			if raw, e := b.call(t, mcp.MethodTasksList, map[string]any{}); e != nil || strings.Contains(string(raw), id) {
				t.Errorf("tasks/list by another session = %s, %v", raw, e)
			}
			// The refused cancel did not touch it.
			if w, e := getTask(t, a, id); e != nil || w.Status != "working" {
				t.Fatalf("tasks/get by its creator = %+v, %v", w, e)
			}
			close(fx.release)
			raw, e = a.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id})
			if e != nil || !strings.Contains(string(raw), "released") {
				t.Fatalf("tasks/result by its creator = %s, %v", raw, e)
			}
		})
	}
}

// TestTaskBoundToPrincipal: a task created for a principal answers to
// every session of that principal (the tasks/list rule) and to no other
// principal, on every by-id method of its era.
func TestTaskBoundToPrincipal(t *testing.T) {
	for _, modern := range []bool{false, true} {
		t.Run(fmt.Sprint("modern=", modern), func(t *testing.T) {
			fx := newTaskFixture(nil)
			url := newTaskHTTP(t, fx.srv)
			alice, alice2 := newHTTPTaskPeer(t, url, modern, "alice"), newHTTPTaskPeer(t, url, modern, "alice")
			mallory := newHTTPTaskPeer(t, url, modern, "mallory")
			anon := newHTTPTaskPeer(t, url, modern, "")
			id := startTask(t, alice, "block", nil)
			methods := []string{mcp.MethodTasksGet, mcp.MethodTasksCancel}
			if modern {
				methods = append(methods, mcp.MethodTasksUpdate)
			}
			for _, p := range []*httpTaskPeer{mallory, anon} {
				for _, m := range methods {
					_, e := p.call(t, m, map[string]any{"taskId": id, "inputResponses": map[string]any{}})
					refusedAsUnknown(t, fmt.Sprintf("%s by %q", m, p.principal), id, e)
				}
			}
			if w, e := getTask(t, alice2, id); e != nil || w.Status != "working" {
				t.Fatalf("tasks/get by another session of the principal = %+v, %v", w, e)
			}
			close(fx.release)
			if modern {
				return
			}
			raw, e := alice2.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id})
			if e != nil || !strings.Contains(string(raw), "released") {
				t.Fatalf("tasks/result by another session of the principal = %s, %v", raw, e)
			}
			_, e = mallory.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id})
			refusedAsUnknown(t, "tasks/result by another principal", id, e)
		})
	}
}

// TestTaskStatelessIDIsTheCapability: a 2026 task created without a
// principal has no session to be bound to: it answers to any caller that
// names it, and its id carries at least 128 random bits.
func TestTaskStatelessIDIsTheCapability(t *testing.T) {
	fx := newTaskFixture(nil)
	url := newTaskHTTP(t, fx.srv)
	a, b := newHTTPTaskPeer(t, url, true, ""), newHTTPTaskPeer(t, url, true, "")
	id := startTask(t, a, "quick", nil)
	if _, e := getTask(t, b, id); e != nil {
		t.Fatalf("tasks/get of a stateless task by another caller: %v", e)
	}
	seen := map[string]bool{}
	for range 64 {
		id := tasks.NewID("i")
		random, ok := strings.CutPrefix(id, "task-i-")
		// base32: 5 bits a character.
		if !ok || len(random)*5 < 128 || seen[random] {
			t.Fatalf("task id %q: want task-i- and at least 128 random bits, never repeated", id)
		}
		seen[random] = true
	}
}

// TestTaskBoundAcrossInstances: the binding is read from the shared
// TaskStore, so it holds on an instance other than the task's owner: a
// session of instance B (no principal) cannot get, cancel or wait for a
// task another session started on instance A, while a client of the
// task's principal on B can.
func TestTaskBoundAcrossInstances(t *testing.T) {
	p := newTaskPair(t, false, time.Minute)
	x := newStdioTaskPeer(t, p.fa.srv, false) // on A, no principal
	y := newStdioTaskPeer(t, p.fb.srv, false) // on B, no principal
	id := startTask(t, x, "block", nil)
	for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksCancel, mcp.MethodTasksResult} {
		_, e := y.call(t, m, map[string]any{"taskId": id})
		refusedAsUnknown(t, m+" by a session of another instance", id, e)
	}
	if w, e := getTask(t, x, id); e != nil || w.Status != "working" {
		t.Fatalf("tasks/get by its creator = %+v, %v", w, e)
	}
	// A task of a principal is that principal's on every instance.
	mine := startTask(t, p.a, "quick", nil)
	if raw, e := p.b.call(t, mcp.MethodTasksResult, map[string]any{"taskId": mine}); e != nil || !strings.Contains(string(raw), `"done"`) {
		t.Fatalf("tasks/result on B by the principal = %s, %v", raw, e)
	}
}
