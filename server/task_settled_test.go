package server

import (
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store"
)

// TestSettledTaskServedWithoutStore: once a task this server runs has
// settled, tasks/get and tasks/result (and a tasks/cancel, refused or
// acknowledged as for any terminal task) are answered from the record the
// server stored, with no TaskStore read, even while the store is down; a
// task still working is read from the store. With SettledTasks < 0 every
// read goes to the store.
func TestSettledTaskServedWithoutStore(t *testing.T) {
	eachEra(t, func(t *testing.T, modern bool) {
		ts := &blinkingTaskStore{MemoryTaskStore: store.NewMemoryTaskStore(nil)}
		fx := newTaskFixture(&Options{TaskStore: ts})
		p := newStdioTaskPeer(t, fx.srv, modern)
		id := startTask(t, p, "block", nil)
		before := ts.gets.Load()
		if w, e := getTask(t, p, id); e != nil || w.Status != "working" {
			t.Fatalf("tasks/get of the running task = %+v, %v", w, e)
		}
		if ts.gets.Load() == before {
			t.Fatalf("tasks/get of a working task did not read the store")
		}
		close(fx.release)
		if !modern {
			// tasks/result waits for the task: it settles here.
			if raw, e := p.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id}); e != nil || !strings.Contains(string(raw), `"released"`) {
				t.Fatalf("tasks/result = %s, %v", raw, e)
			}
		} else {
			waitStatus(t, p, id, "completed")
		}
		ts.down.Store(true)
		before = ts.gets.Load()
		if w, e := getTask(t, p, id); e != nil || w.Status != "completed" {
			t.Fatalf("tasks/get of the settled task, store down = %+v, %v", w, e)
		}
		if !modern {
			if raw, e := p.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id}); e != nil || !strings.Contains(string(raw), `"released"`) || !strings.Contains(string(raw), id) {
				t.Fatalf("tasks/result of the settled task, store down = %s, %v", raw, e)
			}
		}
		if n := ts.gets.Load() - before; n != 0 {
			t.Errorf("the settled task's reads went to the store %d times, want 0", n)
		}
		// Another session (not its creator) still may not see it.
		q := newStdioTaskPeer(t, fx.srv, modern)
		if !modern {
			_, e := q.call(t, mcp.MethodTasksGet, map[string]any{"taskId": id})
			refusedAsUnknown(t, "tasks/get of another session's settled task", id, e)
		}
	})
}

// TestSettledTasksNone: SettledTasks < 0 keeps no copy: the settled
// task's tasks/get reads the store (and fails while it is down).
func TestSettledTasksNone(t *testing.T) {
	ts := &blinkingTaskStore{MemoryTaskStore: store.NewMemoryTaskStore(nil)}
	fx := newTaskFixture(&Options{TaskStore: ts, SettledTasks: -1})
	p := newStdioTaskPeer(t, fx.srv, false)
	id := startTask(t, p, "quick", nil)
	if raw, e := p.call(t, mcp.MethodTasksResult, map[string]any{"taskId": id}); e != nil || !strings.Contains(string(raw), `"done"`) {
		t.Fatalf("tasks/result = %s, %v", raw, e)
	}
	before := ts.gets.Load()
	if w, e := getTask(t, p, id); e != nil || w.Status != "completed" {
		t.Fatalf("tasks/get = %+v, %v", w, e)
	}
	if ts.gets.Load() == before {
		t.Fatalf("tasks/get with SettledTasks < 0 did not read the store")
	}
}
