package store

import (
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// appendTaskRecord appends r's JSON form, byte for byte what json.Marshal
// writes for its taskWire, without reflection: a record is encoded at
// every write of a task and for every status broadcast, on the hot path
// of every task on a shared store. ok is false, leaving the caller to
// marshal r the general way, for what this path does not write the same:
// input requests, an error, an empty non-nil result, a time not at
// offset zero or outside the years 0-9999, a string that is not valid
// UTF-8, and a result that is not valid JSON already in its minimal form
// (which Marshal would rewrite).
func appendTaskRecord(b []byte, r *TaskRecord) (_ []byte, ok bool) {
	if r.InputRequests != nil || r.Error != nil || (r.Result != nil && len(r.Result) == 0) || !minimalJSON(r.Result) {
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
	b = append(b, `,"createdAt":`...)
	if b, ok = appendTime(b, r.CreatedAt); !ok {
		return b, false
	}
	b = append(b, `,"lastUpdatedAt":`...)
	if b, ok = appendTime(b, r.LastUpdatedAt); !ok {
		return b, false
	}
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
		b = append(b, `,"leaseUntil":`...)
		if b, ok = appendTime(b, r.LeaseUntil); !ok {
			return b, false
		}
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

// appendTime appends t as Marshal writes a time.Time (RFC 3339 with
// nanoseconds), for a time at offset zero (in UTC, or a location such as
// Local at that offset: "Z") within the years 0-9999, the ones Marshal
// writes with no check that could fail.
func appendTime(b []byte, t time.Time) ([]byte, bool) {
	n0 := len(b) + 1
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	if f := b[n0:]; len(f) < len("2006-01-02T15:04:05Z") || f[len("9999")] != '-' || f[len(f)-1] != 'Z' {
		return b, false
	}
	return append(b, '"'), true
}

// minimalJSON reports whether v is empty, or valid JSON that Marshal
// copies as it is (minimalValid). When it is not sure, it answers false
// and the record is marshalled the general way.
func minimalJSON(v jsontext.Value) bool {
	return len(v) == 0 || minimalValid(v)
}
