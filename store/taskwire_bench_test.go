package store

import (
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// benchRecord is a settled record as the server writes it: times from
// time.Now, a tool's result.
func benchRecord() *TaskRecord {
	now := time.Date(2026, 12, 6, 17, 53, 56, 131263566, time.UTC)
	return &TaskRecord{ID: "task-6NVUEQW4YG-Y4KCZ7T3RYAH4VISDVEKO7A3JR", SessionID: "CSXRFSSEOCP2HTYPMOOE4Z4RLW",
		Status: mcp.TaskCompleted, CreatedAt: now, LastUpdatedAt: now, TTL: time.Minute, PollInterval: 500 * time.Millisecond,
		Result: jsontext.Value(`{"content":[{"type":"text","text":"{\"text\":\"hello-bench-7f3a\"}"}],"structuredContent":{"text":"hello-bench-7f3a"}}`),
		Owner:  "6NVUEQW4YG", LeaseUntil: now.Add(15 * time.Second)}
}

// BenchmarkMarshalTaskRecord: the fast encoder against json.Marshal of
// the same record's taskWire (the general path).
func BenchmarkMarshalTaskRecord(b *testing.B) {
	r := benchRecord()
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := MarshalTaskRecord(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(wireOf(r)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkUnmarshalTaskRecord: the fast reader against json.Unmarshal
// of the same bytes into a taskWire (the general path).
func BenchmarkUnmarshalTaskRecord(b *testing.B) {
	raw, err := MarshalTaskRecord(benchRecord())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := UnmarshalTaskRecord(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var w taskWire
			if err := json.Unmarshal(raw, &w); err != nil {
				b.Fatal(err)
			}
		}
	})
}
