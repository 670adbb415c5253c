package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store"
	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
	"github.com/mcpkit/mcpkit/store/storetest"
)

// TestTaskStoreContract: the Redis TaskStore keeps the contract of every
// TaskStore, including the compare-and-set of Update under concurrent
// writers (a script comparing the record read).
func TestTaskStoreContract(t *testing.T) {
	redistest.Need(t)
	storetest.TaskStore(t, func(t *testing.T) store.TaskStore {
		return NewTaskStore(rdb, &TaskStoreOptions{Prefix: prefix(t)})
	})
}

// TestTaskStoreTTL: a record expires with its task (CreatedAt + TTL), in
// Redis itself (the key's expiry) and on the store's clock.
func TestTaskStoreTTL(t *testing.T) {
	redistest.Need(t)
	ctx := context.Background()
	p := prefix(t)
	now := time.Now()
	clock := func() time.Time { return now }
	st := NewTaskStore(rdb, &TaskStoreOptions{Prefix: p, Now: clock})
	rec := &store.TaskRecord{ID: "t", Principal: "alice", Status: mcp.TaskCompleted, CreatedAt: now, TTL: time.Hour, Result: []byte(`{"content":[]}`)}
	if err := st.Put(ctx, rec); err != nil {
		t.Fatal(err)
	}
	ttl, err := rdb.PTTL(ctx, p+"task:{t}").Result()
	if err != nil || ttl <= 59*time.Minute || ttl > time.Hour+time.Second { // rounded up to the ms
		t.Fatalf("key TTL = %v, %v; want about an hour", ttl, err)
	}
	if _, _, err := st.Update(ctx, "t", func(r *store.TaskRecord) bool { r.StatusMessage = "x"; return true }); err != nil {
		t.Fatal(err)
	}
	if ttl2, _ := rdb.PTTL(ctx, p+"task:{t}").Result(); ttl2 <= 0 || ttl2 > ttl {
		t.Fatalf("Update changed the key's TTL: %v then %v", ttl, ttl2)
	}
	now = now.Add(time.Hour + time.Millisecond) // past the TTL on the store's clock
	if _, err := st.Get(ctx, "t"); !errors.Is(err, store.ErrTaskNotFound) {
		t.Fatalf("Get past the TTL: %v", err)
	}
	if recs, _ := st.List(ctx, "alice", ""); len(recs) != 0 {
		t.Fatalf("List past the TTL: %d records", len(recs))
	}
	if _, _, err := st.Update(ctx, "t", func(*store.TaskRecord) bool { return true }); !errors.Is(err, store.ErrTaskNotFound) {
		t.Fatalf("Update past the TTL: %v", err)
	}
}

// TestTaskStoreOutlivesClient: a completed result written through one
// client is read whole through another (another process, as far as Redis
// is concerned), after the first is closed.
func TestTaskStoreOutlivesClient(t *testing.T) {
	redistest.Need(t)
	ctx := context.Background()
	p := prefix(t)
	other := redis.NewClient(&redis.Options{Network: "unix", Addr: rdb.Options().Addr})
	a := NewTaskStore(other, &TaskStoreOptions{Prefix: p})
	now := time.Now()
	if err := a.Put(ctx, &store.TaskRecord{ID: "t", Status: mcp.TaskWorking, CreatedAt: now, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if _, changed, err := a.Update(ctx, "t", func(r *store.TaskRecord) bool {
		r.Status, r.Result = mcp.TaskCompleted, []byte(`{"content":[{"type":"text","text":"42"}]}`)
		return true
	}); err != nil || !changed {
		t.Fatal(err)
	}
	_ = other.Close()
	got, err := NewTaskStore(rdb, &TaskStoreOptions{Prefix: p}).Get(ctx, "t")
	if err != nil || got.Status != mcp.TaskCompleted || string(got.Result) != `{"content":[{"type":"text","text":"42"}]}` {
		t.Fatalf("Get through another client = %+v, %v", got, err)
	}
}

// TestTaskStoreDown: with Redis unreachable every call fails with an
// error that names the package, and none hangs past its context.
func TestTaskStoreDown(t *testing.T) {
	dead := redis.NewClient(&redis.Options{Network: "unix", Addr: t.TempDir() + "/none.sock", MaxRetries: -1})
	defer dead.Close()
	st := NewTaskStore(dead, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := st.Get(ctx, "t"); err == nil || errors.Is(err, store.ErrTaskNotFound) {
		t.Fatalf("Get: %v", err)
	}
	if _, _, err := st.Update(ctx, "t", func(*store.TaskRecord) bool { return true }); err == nil || errors.Is(err, store.ErrTaskNotFound) {
		t.Fatalf("Update: %v", err)
	}
	if err := st.Put(ctx, &store.TaskRecord{ID: "t", CreatedAt: time.Now(), TTL: time.Hour}); err == nil {
		t.Fatal("Put succeeded")
	}
}

// TestTaskStoreUpdateCAS: a write that lands between Update's read and
// its compare-and-set (here, made by fn itself) makes Update run fn again
// on the newer record instead of overwriting it; a record deleted in
// between ends Update with ErrTaskNotFound and writes nothing.
func TestTaskStoreUpdateCAS(t *testing.T) {
	redistest.Need(t)
	ctx := context.Background()
	p := prefix(t)
	st := NewTaskStore(rdb, &TaskStoreOptions{Prefix: p})
	now := time.Now()
	rec := &store.TaskRecord{ID: "t", SessionID: "s", Status: mcp.TaskWorking, CreatedAt: now, TTL: time.Hour}
	if err := st.Put(ctx, rec); err != nil {
		t.Fatal(err)
	}
	var seen []string
	got, changed, err := st.Update(ctx, "t", func(r *store.TaskRecord) bool {
		seen = append(seen, r.StatusMessage)
		if len(seen) == 1 {
			// Another writer wins the race.
			other := rec.Clone()
			other.StatusMessage = "other"
			if err := st.Put(ctx, other); err != nil {
				t.Fatal(err)
			}
		}
		r.Status = mcp.TaskCompleted
		return true
	})
	if err != nil || !changed || got.Status != mcp.TaskCompleted || got.StatusMessage != "other" {
		t.Fatalf("Update = %+v, %v, %v; want completed over the other write", got, changed, err)
	}
	if len(seen) != 2 || seen[0] != "" || seen[1] != "other" {
		t.Fatalf("fn saw %q; want a second run on the newer record", seen)
	}
	if cur, err := st.Get(ctx, "t"); err != nil || cur.Status != mcp.TaskCompleted || cur.StatusMessage != "other" {
		t.Fatalf("stored %+v, %v", cur, err)
	}

	_, changed, err = st.Update(ctx, "t", func(r *store.TaskRecord) bool {
		if err := st.Delete(ctx, "t"); err != nil {
			t.Fatal(err)
		}
		r.StatusMessage = "late"
		return true
	})
	if !errors.Is(err, store.ErrTaskNotFound) || changed {
		t.Fatalf("Update of a record deleted meanwhile = %v, %v; want ErrTaskNotFound", changed, err)
	}
	if n := keyCount(t, p+"task:"); n != 0 {
		t.Fatalf("Update recreated the deleted record (%d keys)", n)
	}
}
