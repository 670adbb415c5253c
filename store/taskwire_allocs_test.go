package store

import (
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestTaskRecordCodecAllocs: a settled record as the server writes it
// (times from time.Now at offset zero, a tool's result) is encoded in one
// allocation, the buffer, and read back in no more than its strings, its
// result and the record take: the ceilings hold the reflection-free
// paths on the records of every task.
func TestTaskRecordCodecAllocs(t *testing.T) {
	now := time.Now().In(time.FixedZone("", 0))
	rec := &TaskRecord{ID: "task-6NVUEQW4YG-Y4KCZ7T3RYAH4VISDVEKO7A3JR", SessionID: "CSXRFSSEOCP2HTYPMOOE4Z4RLW",
		Status: mcp.TaskCompleted, CreatedAt: now, LastUpdatedAt: now, TTL: time.Minute, PollInterval: 500 * time.Millisecond,
		Result: jsontext.Value(`{"content":[{"type":"text","text":"{\"text\":\"hello-bench-7f3a\"}"}],"structuredContent":{"text":"hello-bench-7f3a"}}`),
		Owner:  "6NVUEQW4YG", LeaseUntil: now.Add(15 * time.Second)}
	b, err := MarshalTaskRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = MarshalTaskRecord(rec) }); n > 1 {
		t.Errorf("MarshalTaskRecord: %v allocations, want at most 1", n)
	}
	// The record, its four strings, its result.
	if n := testing.AllocsPerRun(100, func() { _, _ = UnmarshalTaskRecord(b) }); n > 6 {
		t.Errorf("UnmarshalTaskRecord: %v allocations, want at most 6", n)
	}
}
