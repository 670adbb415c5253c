package store

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// fastRecords are records for TestTaskRecordFastEncoding: fast says
// whether appendTaskRecord encodes the record itself (true) or leaves it
// to json.Marshal (false).
var fastRecords = []struct {
	name string
	r    TaskRecord
	fast bool
}{
	{"working", TaskRecord{ID: "task-A", SessionID: "S1", Status: mcp.TaskWorking,
		CreatedAt: time.Date(2026, 12, 6, 17, 53, 56, 131263566, time.UTC), LastUpdatedAt: time.Date(2026, 12, 6, 17, 53, 56, 131263566, time.UTC),
		TTL: time.Minute, PollInterval: 500 * time.Millisecond, Owner: "i1", LeaseUntil: time.Date(2026, 12, 6, 17, 54, 11, 0, time.UTC)}, true},
	{"completed", TaskRecord{ID: "task-B", Principal: "alice", SessionID: "S2", Modern: true, Status: mcp.TaskCompleted, StatusMessage: "done \"quoted\" \\ é \u2028 \x7f",
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC), LastUpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		TTL: -time.Second, PollInterval: time.Microsecond,
		Result: jsontext.Value(`{"content":[{"type":"text","text":"{\"text\":\"hi\\n\\t\"}"}],"structuredContent":{"n":1.50,"e":1E2,"z":-0,"u":"é"}}`)}, true},
	{"zero", TaskRecord{}, true},
	{"control in a string", TaskRecord{ID: "t\x01\n", Status: "odd\x1f"}, true},
	{"result null", TaskRecord{ID: "t", Result: jsontext.Value(`null`)}, true},
	{"result with spaces", TaskRecord{ID: "t", Result: jsontext.Value(`{"a": 1}`)}, false},
	{"result with \\u", TaskRecord{ID: "t", Result: jsontext.Value(`{"a":"\u0041\u0001"}`)}, false},
	{"result with \\/", TaskRecord{ID: "t", Result: jsontext.Value(`{"a":"\/"}`)}, false},
	{"result empty", TaskRecord{ID: "t", Result: jsontext.Value{}}, false},
	{"result invalid", TaskRecord{ID: "t", Result: jsontext.Value(`{"a":}`)}, false},
	{"result duplicate", TaskRecord{ID: "t", Result: jsontext.Value(`{"a":1,"a":2}`)}, false},
	{"input requests", TaskRecord{ID: "t", Status: mcp.TaskInputRequired, InputRequests: mcp.InputRequests{"k": {Method: "elicitation/create"}}}, false},
	{"input requests empty", TaskRecord{ID: "t", InputRequests: mcp.InputRequests{}}, false},
	{"error", TaskRecord{ID: "t", Status: mcp.TaskFailed, Error: &mcp.TaskError{Code: -32603, Message: "boom"}}, false},
	{"offset zero, not UTC", TaskRecord{ID: "t", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("z", 0)),
		LastUpdatedAt: time.Now().In(time.FixedZone("", 0)), LeaseUntil: time.Now().UTC()}, true},
	{"offset not zero", TaskRecord{ID: "t", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))}, true},
	{"offset with seconds", TaskRecord{ID: "t", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", -30))}, true},
	{"year 10000 in UTC only", TaskRecord{ID: "t", CreatedAt: time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("x", -3600))}, false},
	{"year -1 in UTC only", TaskRecord{ID: "t", CreatedAt: time.Date(0, 1, 1, 0, 30, 0, 0, time.FixedZone("x", 3600))}, false},
	{"year -1", TaskRecord{ID: "t", CreatedAt: time.Date(-1, 1, 2, 3, 4, 5, 0, time.UTC)}, false},
	{"year 10000", TaskRecord{ID: "t", LeaseUntil: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, false},
	{"invalid UTF-8", TaskRecord{ID: "t\xff"}, false},
}

// TestTaskRecordFastEncoding: MarshalTaskRecord writes byte for byte what
// json.Marshal writes for the record's taskWire, and fails where it fails;
// the reflection-free path is taken for the records the server writes.
func TestTaskRecordFastEncoding(t *testing.T) {
	for _, c := range fastRecords {
		t.Run(c.name, func(t *testing.T) {
			want, wantErr := json.Marshal(wireOf(&c.r))
			got, err := MarshalTaskRecord(&c.r)
			if !bytes.Equal(got, want) || (err == nil) != (wantErr == nil) {
				t.Fatalf("MarshalTaskRecord =\n%s, %v\njson.Marshal =\n%s, %v", got, err, want, wantErr)
			}
			if _, fast := appendTaskRecord(nil, &c.r); fast != c.fast {
				t.Fatalf("fast path taken: %v, want %v", fast, c.fast)
			}
		})
	}
}

// TestTaskRecordAnyOffset: a record stamped in a zone away from offset
// zero (as time.Now is on most hosts) takes the fast path in one
// allocation, and its bytes read back, the fast way too, as the same
// instants in UTC.
func TestTaskRecordAnyOffset(t *testing.T) {
	zone := time.FixedZone("", -(9*3600 + 30*60))
	at := time.Date(2026, 12, 6, 17, 53, 56, 131263566, zone)
	rec := &TaskRecord{ID: "task-A", SessionID: "S1", Status: mcp.TaskCompleted, CreatedAt: at, LastUpdatedAt: at.Add(time.Second),
		Result: jsontext.Value(`{"content":[]}`), Owner: "i1", LeaseUntil: at.Add(15 * time.Second)}
	if _, fast := appendTaskRecord(nil, rec); !fast {
		t.Fatal("fast path not taken for a record at offset -09:30")
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = MarshalTaskRecord(rec) }); n > 1 {
		t.Errorf("MarshalTaskRecord: %v allocations, want at most 1", n)
	}
	b, err := MarshalTaskRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(wireOf(rec))
	if err != nil || !bytes.Equal(b, want) {
		t.Fatalf("MarshalTaskRecord =\n%s\njson.Marshal =\n%s, %v", b, want, err)
	}
	got, fast := parseTaskRecord(b)
	if !fast {
		t.Fatalf("parseTaskRecord declined %s", b)
	}
	for _, p := range [][2]time.Time{{got.CreatedAt, rec.CreatedAt}, {got.LastUpdatedAt, rec.LastUpdatedAt}, {got.LeaseUntil, rec.LeaseUntil}} {
		if !p[0].Equal(p[1]) || p[0].Location() != time.UTC {
			t.Errorf("read %v, wrote %v: want the same instant in UTC", p[0], p[1])
		}
	}
}

// FuzzTaskRecordFastEncoding: for any strings, result, times and zone
// offset, MarshalTaskRecord agrees with json.Marshal of the taskWire, and
// what it writes reads back as the same instants.
func FuzzTaskRecordFastEncoding(f *testing.F) {
	for _, c := range fastRecords {
		_, off := c.r.CreatedAt.Zone()
		f.Add(c.r.ID, c.r.Principal, c.r.SessionID, c.r.StatusMessage, []byte(c.r.Result), c.r.CreatedAt.UnixNano(), c.r.LeaseUntil.UnixNano(), c.r.TTL.Nanoseconds(), int32(off), c.r.Modern)
	}
	f.Fuzz(func(t *testing.T, id, principal, session, msg string, result []byte, at, lease, ttl int64, off int32, modern bool) {
		zone := time.FixedZone("", int(off%(26*3600)))
		r := &TaskRecord{ID: id, Principal: principal, SessionID: session, StatusMessage: msg, Status: mcp.TaskStatus(msg), Owner: id, Modern: modern,
			CreatedAt: time.Unix(0, at).In(zone), LastUpdatedAt: time.Unix(0, at+1).In(zone), TTL: time.Duration(ttl), PollInterval: time.Duration(-ttl)}
		if lease != 0 {
			r.LeaseUntil = time.Unix(lease, lease%1e9).In(zone)
		}
		if result != nil {
			r.Result = jsontext.Value(result)
		}
		want, wantErr := json.Marshal(wireOf(r))
		got, err := MarshalTaskRecord(r)
		if !bytes.Equal(got, want) || (err == nil) != (wantErr == nil) {
			t.Fatalf("MarshalTaskRecord =\n%s, %v\njson.Marshal =\n%s, %v", got, err, want, wantErr)
		}
		if err != nil {
			return
		}
		back, err := UnmarshalTaskRecord(got)
		if err != nil {
			t.Fatalf("UnmarshalTaskRecord(%s): %v", got, err)
		}
		if !back.CreatedAt.Equal(r.CreatedAt) || !back.LastUpdatedAt.Equal(r.LastUpdatedAt) || !back.LeaseUntil.Equal(r.LeaseUntil) {
			t.Fatalf("times read back %v %v %v, written %v %v %v", back.CreatedAt, back.LastUpdatedAt, back.LeaseUntil, r.CreatedAt, r.LastUpdatedAt, r.LeaseUntil)
		}
	})
}

// TestTaskRecordParse: UnmarshalTaskRecord reads what MarshalTaskRecord
// writes as json.Unmarshal does, without it for the records the server
// writes.
func TestTaskRecordParse(t *testing.T) {
	for _, c := range fastRecords {
		t.Run(c.name, func(t *testing.T) {
			b, err := MarshalTaskRecord(&c.r)
			if err != nil {
				return
			}
			checkParse(t, b)
			if _, fast := parseTaskRecord(b); c.fast && !fast {
				t.Fatalf("fast path not taken for %s", b)
			}
		})
	}
	for _, b := range []string{
		`{"id":"t","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","owner":"i","id":"u"}`,
		`{"id":"t","status":"working","createdAt":"2026-01-01T00:00:00.10Z","lastUpdatedAt":"2026-01-01T00:00:00Z"}`,
		`{"id":"t","status":"working","createdAt":"2026-01-01T00:00:00+01:00","lastUpdatedAt":"2026-01-01T00:00:00Z"}`,
		`{"id":"t","status":"working","createdAt":"2026-02-30T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z"}`,
		`{"id":"t","status":"working","createdAt":"2026-01-01T25:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z"}`,
		`{"id":"t","status":"working","createdAt":"2026-01-01T00:00:00.Z","lastUpdatedAt":"2026-01-01T00:00:00Z"}`,
		`{"id":"t","status":"working","createdAt":"2026-01-01T00:00:00.1234567891Z","lastUpdatedAt":"2026-01-01T00:00:00Z"}`,
		`{"id":"t","status":"working","createdAt":"2026-01-01t00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z"}`,
		`{"id":"t","status":"working","createdAt":"+026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z"}`,
		`{"id":"t","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":01}`,
		`{"id":"t","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":1e3}`,
		`{"id":"t","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","result":{"a":1,"a":2}}`,
		`{"id":"t","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z"} `,
		`{"status":"working","id":"t","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z"}`,
		"{\"id\":\"t\xff\",\"status\":\"working\",\"createdAt\":\"2026-01-01T00:00:00Z\",\"lastUpdatedAt\":\"2026-01-01T00:00:00Z\"}",
	} {
		if _, fast := parseTaskRecord([]byte(b)); fast {
			t.Errorf("parseTaskRecord(%s) took the fast path", b)
		}
		checkParse(t, []byte(b))
	}
}

// TestTaskRecordParseDeepResult: a result nested as deep as the
// decoder's limit allows for a value alone but one level too deep within
// a record is left to json.Unmarshal, which refuses it.
func TestTaskRecordParseDeepResult(t *testing.T) {
	for _, n := range []int{20, 9998, 9999, 10000} {
		b := []byte(`{"id":"t","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","result":` +
			strings.Repeat("[", n) + strings.Repeat("]", n) + `}`)
		if _, fast := parseTaskRecord(b); fast {
			t.Errorf("depth %d: parseTaskRecord took the fast path", n)
		}
		checkParse(t, b)
	}
}

// checkParse fails t unless UnmarshalTaskRecord and json.Unmarshal read
// b the same.
func checkParse(t *testing.T, b []byte) {
	t.Helper()
	var w taskWire
	wantErr := json.Unmarshal(b, &w)
	got, err := UnmarshalTaskRecord(b)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("UnmarshalTaskRecord(%s) error %v; json.Unmarshal's %v", b, err, wantErr)
	}
	if err != nil {
		return
	}
	want := &TaskRecord{
		ID: w.ID, Principal: w.Principal, SessionID: w.SessionID, Modern: w.Modern,
		Status: w.Status, StatusMessage: w.StatusMessage, CreatedAt: w.CreatedAt, LastUpdatedAt: w.LastUpdatedAt,
		TTL: time.Duration(w.TTLMs) * time.Millisecond, PollInterval: time.Duration(w.PollMs) * time.Millisecond,
		InputRequests: w.InputRequests, Result: w.Result, Error: w.Error, Owner: w.Owner, LeaseUntil: w.LeaseUntil,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("UnmarshalTaskRecord(%s) =\n%+v\njson.Unmarshal reads\n%+v", b, got, want)
	}
}

// FuzzTaskRecordParse: whatever the bytes, UnmarshalTaskRecord reads
// them as json.Unmarshal does.
func FuzzTaskRecordParse(f *testing.F) {
	for _, c := range fastRecords {
		if b, err := MarshalTaskRecord(&c.r); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkParse(t, b) })
}
