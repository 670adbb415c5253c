package taskrun

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
	"github.com/mcpkit/mcpkit/store"
)

// TestSettledBounds: the settled records are bounded by count and by
// bytes, the oldest dropped first; a record larger than the byte bound
// is not kept; only terminal records are kept; Read falls through to the
// store for whatever is not held and keeps the terminal records it reads.
func TestSettledBounds(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(t, Config{SettledRecords: 2, SettledBytes: 2000})
	now := time.Now()
	put := func(id string, status mcp.TaskStatus, result string) *store.TaskRecord {
		rec := &store.TaskRecord{ID: id, Status: status, CreatedAt: now, TTL: time.Hour, Result: jsontext.Value(result)}
		if err := m.Store().Put(ctx, rec); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	held := func(id string) bool { _, ok := m.settledRecord(id); return ok }

	m.keepSettled(put("a", mcp.TaskCompleted, `"a"`))
	m.keepSettled(put("b", mcp.TaskFailed, `"b"`))
	m.keepSettled(put("w", mcp.TaskWorking, `"w"`)) // not terminal: not kept
	if !held("a") || !held("b") || held("w") {
		t.Fatalf("held a, b, w = %v, %v, %v; want true, true, false", held("a"), held("b"), held("w"))
	}
	m.keepSettled(put("c", mcp.TaskCompleted, `"c"`)) // count bound: a goes
	if held("a") || !held("b") || !held("c") {
		t.Fatalf("after c: held a, b, c = %v, %v, %v; want false, true, true", held("a"), held("b"), held("c"))
	}
	big := `"` + strings.Repeat("x", 1500) + `"`
	m.keepSettled(put("d", mcp.TaskCompleted, big)) // byte bound: b and c go
	if held("b") || held("c") || !held("d") {
		t.Fatalf("after d: held b, c, d = %v, %v, %v; want false, false, true", held("b"), held("c"), held("d"))
	}
	huge := `"` + strings.Repeat("x", 3000) + `"`
	m.keepSettled(put("e", mcp.TaskCompleted, huge)) // larger than the bound: not kept
	if held("e") || !held("d") {
		t.Fatalf("after e: held d, e = %v, %v; want true, false", held("d"), held("e"))
	}

	// Read: "c" is in the store only; reading it keeps it.
	if err := m.Store().Delete(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	put("c", mcp.TaskCompleted, `"c"`)
	rec, err := m.Read(ctx, "c")
	if err != nil || rec.Status != mcp.TaskCompleted || !held("c") {
		t.Fatalf("Read(c) = %+v, %v; held %v", rec, err, held("c"))
	}
	// A held record answers even once the store lost it; a record it
	// never held is the store's answer.
	if err := m.Store().Delete(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if rec, err := m.Read(ctx, "c"); err != nil || string(rec.Result) != `"c"` {
		t.Fatalf("Read(c) from the copy = %+v, %v", rec, err)
	}
	if _, err := m.Read(ctx, "nowhere"); !errors.Is(err, store.ErrTaskNotFound) {
		t.Fatalf("Read(nowhere) = %v, want ErrTaskNotFound", err)
	}
	// A copy is the caller's: changing it changes nothing held.
	rec, _ = m.Read(ctx, "d")
	rec.Status, rec.Result = mcp.TaskWorking, nil
	if again, _ := m.Read(ctx, "d"); again.Status != mcp.TaskCompleted || string(again.Result) != big {
		t.Fatalf("a caller's change reached the held record: %+v", again)
	}
}

// TestSettledNone: SettledRecords <= 0 keeps nothing.
func TestSettledNone(t *testing.T) {
	m, _ := newManager(t, Config{SettledRecords: -1, SettledBytes: 1 << 20})
	m.keepSettled(&store.TaskRecord{ID: "a", Status: mcp.TaskCompleted, CreatedAt: time.Now()})
	if _, ok := m.settledRecord("a"); ok {
		t.Fatal("a record was kept with SettledRecords < 0")
	}
}

// TestSettleKeepsRecord: the record a Settle stores is held, and expires
// with the task's TTL on the Manager's clock.
func TestSettleKeepsRecord(t *testing.T) {
	m, _ := newManager(t, Config{SettledRecords: 8, SettledBytes: 1 << 20})
	start := time.Now()
	var elapsed atomic.Int64
	m.SetClock(tasks.Clock{NowFunc: func() time.Time { return start.Add(time.Duration(elapsed.Load())) }})
	rec := &store.TaskRecord{ID: "t", Status: mcp.TaskWorking, CreatedAt: start, TTL: time.Minute}
	if err := m.Store().Put(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	m.Settle(nil, rec, mcp.TaskCompleted, "", jsontext.Value(`{}`), nil)
	if got, ok := m.settledRecord("t"); !ok || got.Status != mcp.TaskCompleted {
		t.Fatalf("settled record = %+v, %v; want the completed one", got, ok)
	}
	elapsed.Store(int64(time.Minute + time.Millisecond))
	if _, ok := m.settledRecord("t"); ok {
		t.Fatal("the settled record was served past its TTL")
	}
}

// TestStatusMsgSplice: a status broadcast that carries a settled record
// (spliced, not marshalled again) reads back as the PeerMsg json.Marshal
// would have written, byte for byte.
func TestStatusMsgSplice(t *testing.T) {
	now := time.Unix(1_700_000_000, 0).UTC()
	rec := &store.TaskRecord{ID: "task-a-\"q\"", SessionID: "s1", Status: mcp.TaskCompleted, CreatedAt: now, LastUpdatedAt: now,
		TTL: time.Hour, Result: jsontext.Value(`{"content":[{"type":"text","text":"done <&>"}]}`)}
	for _, note := range []bool{false, true} {
		msg := tasks.PeerMsg{Op: tasks.OpStatus, Task: rec.ID, From: "inst\u00e9", Record: encodePeerRecord(rec), Note: note}
		want, err := json.Marshal(&msg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendStatusMsg(nil, &msg)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("note %v:\n got %s\nwant %s", note, got, want)
		}
		var back tasks.PeerMsg
		if err := json.Unmarshal(got, &back); err != nil || back.Note != note || decodePeerRecord(back.Record) == nil {
			t.Fatalf("note %v: read back %+v, %v", note, back, err)
		}
		// Into a buffer of the size statusMsg makes: no allocation.
		buf := make([]byte, 0, len(msg.Record)+len(msg.Task)+len(msg.From)+64)
		if n := testing.AllocsPerRun(50, func() { _, _ = appendStatusMsg(buf[:0], &msg) }); n != 0 {
			t.Fatalf("appendStatusMsg: %v allocations, want 0", n)
		}
	}
}
