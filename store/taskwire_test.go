package store

import (
	"reflect"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestTaskRecordWire: a record read back from its JSON form is the
// record written, durations at millisecond precision; the form's member
// names are the ones shared stores hold (a rename would strand them).
func TestTaskRecordWire(t *testing.T) {
	at := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	in := &TaskRecord{ID: "t1", Principal: "p", SessionID: "s", Modern: true, Status: mcp.TaskCompleted,
		StatusMessage: "done", CreatedAt: at, LastUpdatedAt: at.Add(time.Second), TTL: time.Minute,
		PollInterval: 250 * time.Millisecond, Result: jsontext.Value(`{"content":[]}`), Owner: "i1", LeaseUntil: at.Add(time.Hour)}
	b, err := MarshalTaskRecord(in)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"id":"t1","principal":"p","session":"s","modern":true,"status":"completed","statusMessage":"done","createdAt":"2026-12-06T14:00:00Z","lastUpdatedAt":"2026-12-06T14:00:01Z","ttlMs":60000,"pollMs":250,"result":{"content":[]},"owner":"i1","leaseUntil":"2026-12-06T15:00:00Z"}`
	if string(b) != want {
		t.Fatalf("MarshalTaskRecord =\n%s\nwant\n%s", b, want)
	}
	out, err := UnmarshalTaskRecord(b)
	if err != nil || !reflect.DeepEqual(out, in) {
		t.Fatalf("UnmarshalTaskRecord = %+v, %v; want %+v", out, err, in)
	}
}
