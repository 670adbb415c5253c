// Package storetest is test support: the contract every store.TaskStore
// keeps, run against the in-memory store (package store) and the Redis
// one (store/redis) alike. It imports testing and must not be imported
// by non-test code.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store"
)

// TaskStore checks the contract of a TaskStore that newStore makes
// empty: copies in and out, principal and session filters of List,
// and Update as a compare-and-set (no lost update, one terminal state).
func TaskStore(t *testing.T, newStore func(t *testing.T) store.TaskStore) {
	t.Run("PutGetDelete", func(t *testing.T) { putGetDelete(t, newStore(t)) })
	t.Run("List", func(t *testing.T) { list(t, newStore(t)) })
	t.Run("UpdateNoLostUpdates", func(t *testing.T) { noLostUpdates(t, newStore(t)) })
	t.Run("UpdateSettlesOnce", func(t *testing.T) { settlesOnce(t, newStore(t)) })
	t.Run("UpdateUnknown", func(t *testing.T) { updateUnknown(t, newStore(t)) })
}

func rec(id, principal, session string, created time.Time) *store.TaskRecord {
	return &store.TaskRecord{
		ID: id, Principal: principal, SessionID: session, Status: mcp.TaskWorking,
		CreatedAt: created, LastUpdatedAt: created, TTL: time.Hour, PollInterval: 500 * time.Millisecond,
		Owner: "inst1", LeaseUntil: created.Add(15 * time.Second),
	}
}

func putGetDelete(t *testing.T, st store.TaskStore) {
	ctx := context.Background()
	now := time.Now().Truncate(time.Millisecond)
	r := rec("t1", "alice", "", now)
	r.InputRequests = mcp.InputRequests{"k": {Method: mcp.MethodElicitationCreate, Params: []byte(`{"message":"m"}`)}}
	if err := st.Put(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Principal != "alice" || got.Status != mcp.TaskWorking || !got.CreatedAt.Equal(now) || got.TTL != time.Hour ||
		got.PollInterval != 500*time.Millisecond || got.Owner != "inst1" || !got.LeaseUntil.Equal(r.LeaseUntil) ||
		string(got.InputRequests["k"].Params) != `{"message":"m"}` {
		t.Fatalf("Get = %+v, want %+v", got, r)
	}
	got.Principal = "mallory" // the caller's copy
	if again, _ := st.Get(ctx, "t1"); again.Principal != "alice" {
		t.Fatal("a record handed out shares memory with the stored one")
	}
	if err := st.Delete(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, "t1"); !errors.Is(err, store.ErrTaskNotFound) {
		t.Fatalf("Get after Delete: %v, want ErrTaskNotFound", err)
	}
	if err := st.Delete(ctx, "t1"); err != nil {
		t.Fatalf("Delete of an unknown id: %v", err)
	}
}

func list(t *testing.T, st store.TaskStore) {
	ctx := context.Background()
	base := time.Now().Truncate(time.Millisecond)
	for i, r := range []*store.TaskRecord{
		rec("b", "alice", "s1", base.Add(2*time.Millisecond)),
		rec("a", "alice", "s2", base.Add(1*time.Millisecond)),
		rec("c", "bob", "", base),
		rec("d", "", "s1", base),
		rec("e", "", "s2", base),
	} {
		if err := st.Put(ctx, r); err != nil {
			t.Fatalf("Put %d: %v", i, err)
		}
	}
	ids := func(principal, session string) string {
		recs, err := st.List(ctx, principal, session)
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		for _, r := range recs {
			s += r.ID
		}
		return s
	}
	if got := ids("alice", ""); got != "ab" {
		t.Errorf("List(alice) = %q, want ab (oldest first, any session)", got)
	}
	if got := ids("", "s1"); got != "d" {
		t.Errorf("List(no principal, s1) = %q, want d (another principal's tasks of the session are not listed)", got)
	}
	if got := ids("carol", ""); got != "" {
		t.Errorf("List(carol) = %q, want none", got)
	}
	_ = st.Delete(ctx, "a")
	if got := ids("alice", ""); got != "b" {
		t.Errorf("List(alice) after Delete = %q, want b", got)
	}
}

// noLostUpdates: concurrent read-modify-writes through Update all land.
func noLostUpdates(t *testing.T, st store.TaskStore) {
	ctx := context.Background()
	if err := st.Put(ctx, rec("n", "p", "", time.Now())); err != nil {
		t.Fatal(err)
	}
	const writers = 20
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			_, changed, err := st.Update(ctx, "n", func(r *store.TaskRecord) bool {
				n, _ := strconv.Atoi(r.StatusMessage)
				r.StatusMessage = strconv.Itoa(n + 1)
				return true
			})
			if err != nil || !changed {
				t.Errorf("Update: %v, changed %v", err, changed)
			}
		})
	}
	wg.Wait()
	got, err := st.Get(ctx, "n")
	if err != nil {
		t.Fatal(err)
	}
	if got.StatusMessage != strconv.Itoa(writers) {
		t.Fatalf("after %d concurrent increments: %s (updates were lost)", writers, got.StatusMessage)
	}
}

// settlesOnce: a cancel and a completion racing, each only from a
// non-terminal state, settle the task exactly once.
func settlesOnce(t *testing.T, st store.TaskStore) {
	ctx := context.Background()
	for i := range 20 {
		id := fmt.Sprint("race", i)
		if err := st.Put(ctx, rec(id, "p", "", time.Now())); err != nil {
			t.Fatal(err)
		}
		var wins sync.Map
		var wg sync.WaitGroup
		for _, status := range []mcp.TaskStatus{mcp.TaskCompleted, mcp.TaskCancelled, mcp.TaskFailed} {
			wg.Go(func() {
				_, changed, err := st.Update(ctx, id, func(r *store.TaskRecord) bool {
					if r.Status.Terminal() {
						return false
					}
					r.Status = status
					if status == mcp.TaskCompleted {
						r.Result = []byte(`{"content":[]}`)
					}
					return true
				})
				if err != nil {
					t.Error(err)
				}
				if changed {
					wins.Store(status, true)
				}
			})
		}
		wg.Wait()
		n := 0
		wins.Range(func(any, any) bool { n++; return true })
		got, _ := st.Get(ctx, id)
		if _, won := wins.Load(got.Status); n != 1 || !won {
			t.Fatalf("%s: %d transitions won, final %s", id, n, got.Status)
		}
		if (got.Status == mcp.TaskCompleted) != (got.Result != nil) {
			t.Fatalf("%s: %s with result %s", id, got.Status, got.Result)
		}
	}
}

func updateUnknown(t *testing.T, st store.TaskStore) {
	_, _, err := st.Update(context.Background(), "nope", func(*store.TaskRecord) bool { return true })
	if !errors.Is(err, store.ErrTaskNotFound) {
		t.Fatalf("Update of an unknown id: %v, want ErrTaskNotFound", err)
	}
}
