package store

import (
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonwalk"
)

// appendTaskRecord appends r's JSON form, byte for byte what json.Marshal
// writes for its taskWire, without reflection: a record is encoded at
// every write of a task and for every status broadcast, on the hot path
// of every task on a shared store. ok is false, leaving the caller to
// marshal r the general way, for what this path does not write the same:
// input requests, an error, an empty non-nil result, a time outside the
// years 0-9999 in UTC, a string that is not valid UTF-8, and a result
// that is not valid JSON already in its minimal form (which Marshal would
// rewrite). Times are written in UTC, as wireOf gives them to Marshal,
// and checked before anything is written.
func appendTaskRecord(b []byte, r *TaskRecord) (_ []byte, ok bool) {
	if r.InputRequests != nil || r.Error != nil || (r.Result != nil && len(r.Result) == 0) ||
		!fastTime(r.CreatedAt) || !fastTime(r.LastUpdatedAt) || !fastTime(r.LeaseUntil) || !minimalJSON(r.Result) {
		return b, false
	}
	b = append(b, `{"id":`...)
	if b, ok = appendString(b, r.ID); !ok {
		return b, false
	}
	if b, ok = appendMember(b, `,"principal":`, r.Principal); !ok {
		return b, false
	}
	if b, ok = appendMember(b, `,"session":`, r.SessionID); !ok {
		return b, false
	}
	if r.Modern {
		b = append(b, `,"modern":true`...)
	}
	b = append(b, `,"status":`...)
	if b, ok = appendString(b, string(r.Status)); !ok {
		return b, false
	}
	if b, ok = appendMember(b, `,"statusMessage":`, r.StatusMessage); !ok {
		return b, false
	}
	b = appendTime(append(b, `,"createdAt":`...), r.CreatedAt)
	b = appendTime(append(b, `,"lastUpdatedAt":`...), r.LastUpdatedAt)
	if ms := r.TTL.Milliseconds(); ms != 0 {
		b = strconv.AppendInt(append(b, `,"ttlMs":`...), ms, 10)
	}
	if ms := r.PollInterval.Milliseconds(); ms != 0 {
		b = strconv.AppendInt(append(b, `,"pollMs":`...), ms, 10)
	}
	if r.Result != nil {
		b = append(append(b, `,"result":`...), r.Result...)
	}
	if b, ok = appendMember(b, `,"owner":`, r.Owner); !ok {
		return b, false
	}
	if !r.LeaseUntil.IsZero() {
		b = appendTime(append(b, `,"leaseUntil":`...), r.LeaseUntil)
	}
	return append(b, '}'), true
}

// appendMember appends name and s, or nothing for an empty s (omitzero).
func appendMember(b []byte, name, s string) ([]byte, bool) {
	if s == "" {
		return b, true
	}
	return appendString(append(b, name...), s)
}

// appendString appends s quoted as Marshal does; false for invalid UTF-8
// (which Marshal reports as an error).
func appendString(b []byte, s string) ([]byte, bool) {
	b, err := jsontext.AppendQuote(b, s)
	return b, err == nil
}

// fastTime reports whether appendTime writes t as Marshal writes it in
// UTC: a year from 0 to 9999 in UTC (Marshal fails for the others).
func fastTime(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 0 && y <= 9999
}

// appendTime appends t in UTC as Marshal writes a time.Time (RFC 3339
// with nanoseconds, "Z"), for a time fastTime accepts.
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// minimalJSON reports whether v is empty, or valid JSON that Marshal
// copies as it is (jsonwalk.Minimal). When it is not sure, it answers
// false and the record is marshalled the general way.
func minimalJSON(v jsontext.Value) bool {
	return len(v) == 0 || jsonwalk.Minimal(v)
}
