package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

func TestMemoryEventStoreUnknownStream(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryEventStore(nil)
	if err := st.Append(ctx, "s1", "a", 1, []byte("x")); err != nil {
		t.Fatal(err)
	}
	nothing := func(uint64, []byte) error { return nil }
	for _, tc := range []struct{ session, stream string }{{"s1", "b"}, {"s2", "a"}, {"s2", "b"}} {
		if err := st.Replay(ctx, tc.session, tc.stream, 0, nothing); !errors.Is(err, ErrUnknownStream) {
			t.Errorf("Replay(%s, %s): %v, want ErrUnknownStream", tc.session, tc.stream, err)
		}
	}
	if err := st.Replay(ctx, "s1", "a", 1, nothing); err != nil {
		t.Errorf("Replay of a known stream after its last event: %v", err)
	}
	_ = st.Purge(ctx, "s1")
	if err := st.Replay(ctx, "s1", "a", 0, nothing); !errors.Is(err, ErrUnknownStream) {
		t.Errorf("Replay after Purge: %v, want ErrUnknownStream", err)
	}
}

func TestMemoryTaskStoreConcurrent(t *testing.T) {
	st := NewMemoryTaskStore(nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			rec := &TaskRecord{ID: fmt.Sprint(i), Principal: "p", CreatedAt: time.Now(), TTL: time.Minute}
			_ = st.Put(context.Background(), rec)
			_, _ = st.Get(context.Background(), rec.ID)
		})
	}
	wg.Wait()
	recs, _ := st.List(context.Background(), "p", "")
	if len(recs) != 8 {
		t.Fatalf("List = %d records, want 8", len(recs))
	}
}

func TestMemoryTaskStoreTTL(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	st := NewMemoryTaskStore(&MemoryTaskStoreOptions{Now: func() time.Time { return now }})
	if err := st.Put(ctx, &TaskRecord{ID: "t", Principal: "p", CreatedAt: now, TTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second) // at the TTL: still there
	if _, err := st.Get(ctx, "t"); err != nil {
		t.Fatalf("Get at the TTL: %v", err)
	}
	now = now.Add(time.Nanosecond)
	if _, err := st.Get(ctx, "t"); !errors.Is(err, ErrTaskNotFound) {
		t.Fatalf("Get past the TTL: %v, want ErrTaskNotFound", err)
	}
	if recs, _ := st.List(ctx, "p", ""); len(recs) != 0 {
		t.Fatalf("List past the TTL = %d records", len(recs))
	}
}

func TestMemoryTaskStoreCopies(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryTaskStore(nil)
	rec := &TaskRecord{ID: "t", Result: []byte(`{"a":1}`), Error: &mcp.TaskError{Code: 1}}
	_ = st.Put(ctx, rec)
	rec.Result[2], rec.Error.Code = 'b', 2
	got, err := st.Get(ctx, "t")
	if err != nil || string(got.Result) != `{"a":1}` || got.Error.Code != 1 {
		t.Fatalf("Get = %+v, %v: the store kept the caller's record, not a copy", got, err)
	}
}

func TestMemorySessionStore(t *testing.T) {
	ctx := context.Background()
	st := NewMemorySessionStore()
	if _, err := st.Get(ctx, "s"); !errors.Is(err, ErrUnknownSession) {
		t.Fatalf("Get of an unknown session: %v", err)
	}
	if err := st.Put(ctx, "s", &SessionState{Revision: 2}); !errors.Is(err, ErrUnknownSession) {
		t.Fatalf("Put of a later revision of an unknown session: %v, want ErrUnknownSession", err)
	}
	if err := st.Put(ctx, "s", &SessionState{Revision: 1}); err != nil {
		t.Fatal(err)
	}
	in := &SessionState{ProtocolVersion: "2025-11-25", Subscriptions: []string{"a"}, Revision: 3}
	if err := st.Put(ctx, "s", in); err != nil {
		t.Fatal(err)
	}
	in.Subscriptions[0] = "changed"
	got, err := st.Get(ctx, "s")
	if err != nil || got.Revision != 3 || got.Subscriptions[0] != "a" {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	_ = st.Delete(ctx, "s")
	if _, err := st.Get(ctx, "s"); !errors.Is(err, ErrUnknownSession) {
		t.Fatalf("Get after Delete: %v", err)
	}
	// A change saved by a copy that missed the DELETE does not bring
	// the session back.
	if err := st.Put(ctx, "s", &SessionState{Revision: 4}); !errors.Is(err, ErrUnknownSession) {
		t.Fatalf("Put after Delete: %v, want ErrUnknownSession", err)
	}
	if _, err := st.Get(ctx, "s"); !errors.Is(err, ErrUnknownSession) {
		t.Fatalf("Get after a Put that followed Delete: %v", err)
	}
}

// TestMemoryZeroValues: the zero MemoryEventStore and MemoryBus work as
// the ones their constructors return.
func TestMemoryZeroValues(t *testing.T) {
	ctx := context.Background()
	var st MemoryEventStore
	if err := st.Append(ctx, "s1", "a", 1, []byte("x")); err != nil {
		t.Fatal(err)
	}
	var got []uint64
	if err := st.Replay(ctx, "s1", "a", 0, func(seq uint64, _ []byte) error { got = append(got, seq); return nil }); err != nil || len(got) != 1 {
		t.Fatalf("replay of the zero store: %v %v", got, err)
	}
	var bus MemoryBus
	b := bus.Broker()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestMemoryTaskStoreSweepCost: a Put among many live records looks at
// none of them (a full scan on every Put was most of a task's CPU in
// memory), while records still expire in order, a record replaced with
// a later expiry is kept, and a deleted one leaves nothing behind.
func TestMemoryTaskStoreSweepCost(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	st := NewMemoryTaskStore(&MemoryTaskStoreOptions{Now: func() time.Time { return now }})
	const n = 1000
	for i := range n {
		// Created one millisecond apart, each kept for a minute.
		rec := &TaskRecord{ID: fmt.Sprintf("t%04d", i), Principal: "p", CreatedAt: now.Add(time.Duration(i) * time.Millisecond), TTL: time.Minute}
		if err := st.Put(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	if st.examined != 0 {
		t.Fatalf("%d Puts of live records examined %d records, want 0", n, st.examined)
	}
	// t0000 replaced: it now lives a minute from t0999's creation.
	if err := st.Put(ctx, &TaskRecord{ID: "t0000", Principal: "p", CreatedAt: now.Add(n * time.Millisecond), TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	_ = st.Delete(ctx, "t0001")
	// Past the expiry of the first 10 records (t0000's first life among them).
	now = now.Add(time.Minute + 9*time.Millisecond + time.Nanosecond)
	if err := st.Put(ctx, &TaskRecord{ID: "new", Principal: "p", CreatedAt: now, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if st.examined != 10 {
		t.Fatalf("a Put past 10 expiries examined %d records, want 10", st.examined)
	}
	if _, err := st.Get(ctx, "t0000"); err != nil {
		t.Fatalf("the replaced record: %v, want it kept", err)
	}
	for _, id := range []string{"t0002", "t0009"} {
		if _, ok := st.recs[id]; ok {
			t.Fatalf("%s past its TTL still held", id)
		}
	}
	if _, ok := st.recs["t0010"]; !ok {
		t.Fatal("t0010 dropped before its TTL")
	}
	recs, _ := st.List(ctx, "p", "")
	if want := n - 10 + 1 + 1; len(recs) != want { // t0010…t0999, t0000 again, new
		t.Fatalf("List = %d records, want %d", len(recs), want)
	}
	if st.due.Len() != len(st.recs) { // one entry per live record: the stale ones came due and went
		t.Fatalf("expiry heap %d entries for %d records", st.due.Len(), len(st.recs))
	}
}
