package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store"
	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
)

// TestTaskUpdateKnownRecord: an Update of a record this store wrote
// last is one round trip (the compare-and-set on the bytes it wrote, no
// GET); one whose record another writer changed meanwhile is still
// right, in one more round trip (the script answers the record it
// found); a declined change on a remembered record is confirmed by a
// read; a terminal or deleted record is forgotten; KnownRecords bounds
// what is remembered, and a negative one remembers nothing.
func TestTaskUpdateKnownRecord(t *testing.T) {
	redistest.Need(t)
	ctx := context.Background()
	p := prefix(t)
	var c tripCounter
	cl := countingClient(t, &c)
	if err := casScript.Load(ctx, cl).Err(); err != nil {
		t.Fatal(err)
	}
	a := NewTaskStore(cl, &TaskStoreOptions{Prefix: p, KnownRecords: 2})
	b := NewTaskStore(cl, &TaskStoreOptions{Prefix: p}) // another instance
	now := time.Now()
	put := func(s *TaskStore, id string) {
		t.Helper()
		if err := s.Put(ctx, &store.TaskRecord{ID: id, SessionID: "s", Status: mcp.TaskWorking, CreatedAt: now, TTL: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	setMsg := func(s *TaskStore, id, msg string) (*store.TaskRecord, bool) {
		t.Helper()
		cur, changed, err := s.Update(ctx, id, func(r *store.TaskRecord) bool {
			if r.StatusMessage == msg {
				return false
			}
			r.StatusMessage = msg
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		return cur, changed
	}
	trips := func(want string) {
		t.Helper()
		_, cmds := c.take()
		if got := strings.Join(cmds, " "); got != want {
			t.Fatalf("commands %q, want %q", got, want)
		}
	}

	put(a, "t1")
	c.reset()
	if cur, changed := setMsg(a, "t1", "one"); !changed || cur.StatusMessage != "one" {
		t.Fatalf("Update = %+v, %v", cur, changed)
	}
	trips("EVALSHA(cas)")

	// Another instance writes: a's copy is stale; its Update is still
	// applied on the stored record, with no GET.
	setMsg(b, "t1", "two")
	c.reset()
	cur, changed := setMsg(a, "t1", "three")
	if !changed || cur.StatusMessage != "three" {
		t.Fatalf("Update over another's write = %+v, %v", cur, changed)
	}
	trips("EVALSHA(cas) EVALSHA(cas)")
	if got, _ := b.Get(ctx, "t1"); got.StatusMessage != "three" {
		t.Fatalf("stored %q", got.StatusMessage)
	}

	// b changes it to what a would write: a's remembered copy says
	// "change", the CAS finds b's record, fn declines on it.
	setMsg(b, "t1", "four")
	c.reset()
	if cur, changed := setMsg(a, "t1", "four"); changed || cur.StatusMessage != "four" {
		t.Fatalf("declined Update = %+v, %v", cur, changed)
	}
	trips("EVALSHA(cas)")
	// fn declines on a's remembered copy ("three", as a wrote it):
	// Update reads the record to confirm before it reports no change.
	setMsg(b, "t1", "three")
	c.reset()
	if cur, changed := setMsg(a, "t1", "three"); changed || cur.StatusMessage != "three" {
		t.Fatalf("Update declined on the stored record = %+v, %v", cur, changed)
	}
	trips("GET")

	// Terminal: forgotten (it never changes again).
	if _, _, err := a.Update(ctx, "t1", func(r *store.TaskRecord) bool { r.Status = mcp.TaskCompleted; return true }); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := a.recall("t1"); ok {
		t.Fatal("a terminal record is still remembered")
	}
	// Deleted: forgotten, and Update answers ErrTaskNotFound.
	put(a, "t2")
	if err := b.Delete(ctx, "t2"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Update(ctx, "t2", func(r *store.TaskRecord) bool { r.StatusMessage = "x"; return true }); !errors.Is(err, store.ErrTaskNotFound) {
		t.Fatalf("Update of a record deleted elsewhere = %v", err)
	}
	if _, _, ok := a.recall("t2"); ok {
		t.Fatal("a deleted record is still remembered")
	}
	// The bound: at most KnownRecords.
	for i := range 5 {
		put(a, fmt.Sprint("b", i))
	}
	if n := len(a.known); n != 2 {
		t.Fatalf("%d records remembered, KnownRecords 2", n)
	}
	// None remembered: every Update reads first.
	none := NewTaskStore(cl, &TaskStoreOptions{Prefix: p, KnownRecords: -1})
	put(none, "t3")
	c.reset()
	setMsg(none, "t3", "x")
	trips("GET EVALSHA(cas)")
}
