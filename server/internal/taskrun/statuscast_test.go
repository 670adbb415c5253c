package taskrun

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
	"github.com/mcpkit/mcpkit/store"
)

// generalStatusCast is what deliverPeer reads from raw the general way:
// ok false when it ignores the message.
func generalStatusCast(raw []byte) (msg tasks.PeerMsg, rec *store.TaskRecord, ok bool) {
	if json.Unmarshal(raw, &msg) != nil || msg.Op != tasks.OpStatus || msg.Task == "" {
		return msg, nil, false
	}
	rec = decodePeerRecord(msg.Record)
	msg.Record = nil
	return msg, rec, true
}

// statusCasts are status broadcasts as statusMsg writes them.
func statusCasts(t testing.TB) [][]byte {
	now := time.Unix(1_700_000_000, 123).UTC()
	var out [][]byte
	for _, rec := range []*store.TaskRecord{
		{ID: "task-a-\"q\"", SessionID: "s1", Status: mcp.TaskCompleted, CreatedAt: now, LastUpdatedAt: now,
			TTL: time.Hour, Result: jsontext.Value(`{"content":[{"type":"text","text":"done <&> \"}\""}]}`), Owner: "i1"},
		{ID: "t2", Status: mcp.TaskFailed, CreatedAt: now, LastUpdatedAt: now, Error: &mcp.TaskError{Code: -1, Message: "x"}},
		{ID: "t3", Status: mcp.TaskWorking, CreatedAt: now, LastUpdatedAt: now},
	} {
		for _, note := range []bool{false, true} {
			for _, from := range []string{"", "inst\u00e9"} {
				msg := tasks.PeerMsg{Op: tasks.OpStatus, Task: rec.ID, From: from, Record: encodePeerRecord(rec), Note: note}
				b, err := appendStatusMsg(nil, &msg)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, b)
			}
		}
	}
	return out
}

// TestParseStatusCast: a status broadcast as statusMsg writes it is read
// in one pass to what json.Unmarshal and decodePeerRecord read; other
// messages are left to them.
func TestParseStatusCast(t *testing.T) {
	for _, raw := range statusCasts(t) {
		msg, rec, ok := parseStatusCast(raw)
		wmsg, wrec, wok := generalStatusCast(raw)
		if !ok || !wok || !reflect.DeepEqual(msg, wmsg) || !reflect.DeepEqual(rec, wrec) {
			t.Fatalf("parseStatusCast(%s) = %+v, %+v, %v; want %+v, %+v", raw, msg, rec, ok, wmsg, wrec)
		}
	}
	// Other messages: fast says whether parseStatusCast reads one itself
	// (then as the general path does) or leaves it to the general path.
	for _, c := range []struct {
		raw  string
		fast bool
	}{
		{`{"op":"status","task":"t","record":{"id":5}}`, false},                     // not a record: decodePeerRecord's nil
		{`{"op":"status","task":"t","record":{"id":"t"} }`, true},                   // space after the record, which the record's reader skips
		{`{"op":"status","task":"t","record":{"id":"t"},"note":true,"x":1}`, false}, // another member
		{`{"op":"status","task":"t","from":"a","from":"b","record":null}`, false},   // a duplicate
		{`{"op":"status","task":"","record":null}`, false},                          // no task
		{`{"op":"cancel","task":"t","record":null}`, false},                         // another op
		{"{\"op\":\"status\",\"task\":\"t\xff\",\"record\":null}", false},           // invalid UTF-8
		{`{"op":"status","task":"t\u0041","record":{"id":"t"}}`, true},              // an escape in the task's id
	} {
		msg, rec, ok := parseStatusCast([]byte(c.raw))
		if ok != c.fast {
			t.Errorf("parseStatusCast(%s) ok %v, want %v", c.raw, ok, c.fast)
			continue
		}
		if !ok {
			continue
		}
		wmsg, wrec, wok := generalStatusCast([]byte(c.raw))
		if !wok || !reflect.DeepEqual(msg, wmsg) || !reflect.DeepEqual(rec, wrec) {
			t.Errorf("parseStatusCast(%s) = %+v, %+v; json.Unmarshal reads %+v, %+v, %v", c.raw, msg, rec, wmsg, wrec, wok)
		}
	}
}

// TestParseStatusCastDeepResult: a record whose result is nested one
// level less than the decoder's limit for a value alone is one level too
// deep within a broadcast: parseStatusCast leaves it to json.Unmarshal,
// which refuses the message. A result merely wide (many brackets, little
// nesting) is still read the fast way.
func TestParseStatusCastDeepResult(t *testing.T) {
	const n = 9999
	raw := []byte(`{"op":"status","task":"t","record":{"id":"t","status":"completed","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","result":` +
		strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`)
	_, _, ok := parseStatusCast(raw)
	_, _, wok := generalStatusCast(raw)
	if ok || wok {
		t.Fatalf("depth %d: parseStatusCast ok %v, the general path's %v; want both false", n, ok, wok)
	}
	wide := []byte(`{"op":"status","task":"t","record":{"id":"t","status":"completed","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","result":[` +
		strings.TrimSuffix(strings.Repeat(`{"a":[1]},`, 2000), ",") + `]}}`)
	msg, rec, ok := parseStatusCast(wide)
	wmsg, wrec, wok := generalStatusCast(wide)
	if !ok || !wok || !reflect.DeepEqual(msg, wmsg) || !reflect.DeepEqual(rec, wrec) {
		t.Fatalf("a wide result: parseStatusCast ok %v, the general path's %v, or they differ", ok, wok)
	}
}

// FuzzParseStatusCast: whatever parseStatusCast accepts, deliverPeer's
// general path reads the same.
func FuzzParseStatusCast(f *testing.F) {
	for _, raw := range statusCasts(f) {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		msg, rec, ok := parseStatusCast(raw)
		if !ok {
			return
		}
		wmsg, wrec, wok := generalStatusCast(raw)
		if !wok || !reflect.DeepEqual(msg, wmsg) || !reflect.DeepEqual(rec, wrec) {
			t.Fatalf("parseStatusCast(%q) = %+v, %+v; json.Unmarshal reads %+v, %+v, %v", raw, msg, rec, wmsg, wrec, wok)
		}
	})
}
