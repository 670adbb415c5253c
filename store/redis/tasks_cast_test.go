package redisstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store"
	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
)

// TestTaskStoreUpdateCast: UpdateCast publishes the broadcast made for
// the record it wrote, in the write's script, and only when it wrote: a
// write lost to another runs fn and the broadcast again on the record
// that won, one broadcast goes out; a declined change publishes nothing.
func TestTaskStoreUpdateCast(t *testing.T) {
	redistest.Need(t)
	ctx := context.Background()
	p := prefix(t)
	b, err := NewBroker(ctx, rdb, &BrokerOptions{Prefix: p})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got := make(chan string, 16)
	b.Receive(func(msg []byte) { got <- string(msg) })
	// next is the following broadcast; a marker broadcast after each step
	// shows that the step published nothing else (Redis runs commands in
	// order: the script's PUBLISH comes before the marker's).
	next := func() string {
		t.Helper()
		select {
		case m := <-got:
			return m
		case <-time.After(10 * time.Second): // a bound on a hang, not a margin
			t.Fatal("no broadcast")
			return ""
		}
	}
	marker := func(step string) {
		t.Helper()
		if err := b.Broadcast(ctx, []byte("marker")); err != nil {
			t.Fatal(err)
		}
		if m := next(); m != "marker" {
			t.Fatalf("%s: broadcast %q before the marker", step, m)
		}
	}

	st := NewTaskStore(rdb, &TaskStoreOptions{Prefix: p})
	target := b.CastTarget()
	if !st.CanCast(target) {
		t.Fatal("CanCast of the broker on the same client = false")
	}
	rec := &store.TaskRecord{ID: "t", SessionID: "s", Status: mcp.TaskWorking, CreatedAt: time.Now(), TTL: time.Hour}
	if err := st.Put(ctx, rec); err != nil {
		t.Fatal(err)
	}
	cast := func(r *store.TaskRecord) ([]byte, error) {
		return []byte("cast:" + string(r.Status) + ":" + r.StatusMessage), nil
	}

	// A write lost to another: fn and the broadcast run again.
	runs := 0
	cur, changed, err := st.UpdateCast(ctx, "t", func(r *store.TaskRecord) bool {
		runs++
		if runs == 1 {
			other := rec.Clone()
			other.StatusMessage = "other"
			if err := st.Put(ctx, other); err != nil {
				t.Fatal(err)
			}
		}
		r.Status = mcp.TaskCompleted
		return true
	}, target, cast)
	if err != nil || !changed || cur.Status != mcp.TaskCompleted || runs != 2 {
		t.Fatalf("UpdateCast = %+v, %v, %v after %d runs; want completed on the second", cur, changed, err, runs)
	}
	if m := next(); m != "cast:completed:other" {
		t.Fatalf("broadcast %q; want the one of the record written", m)
	}
	marker("the settle")

	// Already terminal: nothing written, nothing published.
	_, changed, err = st.UpdateCast(ctx, "t", func(r *store.TaskRecord) bool { return !r.Status.Terminal() }, target, cast)
	if err != nil || changed {
		t.Fatalf("declined UpdateCast = %v, %v", changed, err)
	}
	marker("a declined change")

	// Gone: nothing published.
	if err := st.Delete(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.UpdateCast(ctx, "t", func(*store.TaskRecord) bool { return true }, target, cast); err == nil {
		t.Fatal("UpdateCast of a deleted task: no error")
	}
	marker("a deleted task")

	// The scripts flushed (as by a restart of Redis): loaded again.
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if _, changed, err := st.UpdateCast(ctx, "t", func(r *store.TaskRecord) bool { r.Status = mcp.TaskFailed; return true }, target, cast); err != nil || !changed {
		t.Fatalf("UpdateCast after SCRIPT FLUSH = %v, %v", changed, err)
	}
	if m := next(); m != "cast:failed:" {
		t.Fatalf("broadcast %q after SCRIPT FLUSH", m)
	}
}

// TestTaskStoreCanCast: UpdateCast refuses, writing nothing, a target
// that is not a Broker's on the store's own client.
func TestTaskStoreCanCast(t *testing.T) {
	redistest.Need(t)
	ctx := context.Background()
	p := prefix(t)
	other := redis.NewClient(rdb.Options())
	defer other.Close()
	b, err := NewBroker(ctx, other, &BrokerOptions{Prefix: p})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	st := NewTaskStore(rdb, &TaskStoreOptions{Prefix: p})
	rec := &store.TaskRecord{ID: "t", Status: mcp.TaskWorking, CreatedAt: time.Now(), TTL: time.Hour}
	if err := st.Put(ctx, rec); err != nil {
		t.Fatal(err)
	}
	cast := func(*store.TaskRecord) ([]byte, error) { return []byte("x"), nil }
	for _, target := range []any{nil, "x", (*castTarget)(nil), b.CastTarget()} {
		if st.CanCast(target) {
			t.Errorf("CanCast(%#v) = true", target)
		}
		_, _, err := st.UpdateCast(ctx, "t", func(r *store.TaskRecord) bool { r.Status = mcp.TaskCompleted; return true }, target, cast)
		if err == nil || !strings.Contains(err.Error(), "UpdateCast") {
			t.Errorf("UpdateCast(%#v): %v", target, err)
		}
	}
	if cur, err := st.Get(ctx, "t"); err != nil || cur.Status != mcp.TaskWorking {
		t.Fatalf("stored %+v, %v; want untouched", cur, err)
	}
}

// uncomparableClient is a client whose type == cannot compare.
type uncomparableClient struct {
	redis.UniversalClient
	_ []int
}

// TestTaskStoreCanCastUncomparable: a client of a type == cannot compare
// makes CanCast false, not a panic.
func TestTaskStoreCanCastUncomparable(t *testing.T) {
	c := uncomparableClient{UniversalClient: rdb}
	st := NewTaskStore(c, nil)
	if st.CanCast(&castTarget{rdb: c, channel: "x"}) {
		t.Fatal("CanCast over an uncomparable client = true")
	}
}
