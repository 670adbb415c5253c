package store

import (
	"bytes"
	"slices"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonwalk"
	"github.com/mcpkit/mcpkit/mcp"
)

// parseTaskRecord reads a record in exactly the form appendTaskRecord
// writes (its members in its order, no whitespace, times as it formats
// them), without reflection: every instance reads the records of the
// tasks it answers and of every task's end broadcast. ok is false for
// anything else, which UnmarshalTaskRecord reads with json.Unmarshal; for
// what it accepts, it answers what json.Unmarshal would.
func parseTaskRecord(b []byte) (_ *TaskRecord, ok bool) {
	p := recordParser{b: b}
	r := &TaskRecord{}
	if !p.lit(`{"id":`) || !p.str(&r.ID) {
		return nil, false
	}
	if p.lit(`,"principal":`) && !p.str(&r.Principal) {
		return nil, false
	}
	if p.lit(`,"session":`) && !p.str(&r.SessionID) {
		return nil, false
	}
	r.Modern = p.lit(`,"modern":true`)
	var status string
	if !p.lit(`,"status":`) || !p.str(&status) {
		return nil, false
	}
	r.Status = mcp.TaskStatus(status)
	if p.lit(`,"statusMessage":`) && !p.str(&r.StatusMessage) {
		return nil, false
	}
	if !p.lit(`,"createdAt":`) || !p.time(&r.CreatedAt) || !p.lit(`,"lastUpdatedAt":`) || !p.time(&r.LastUpdatedAt) {
		return nil, false
	}
	var ms int64
	if p.lit(`,"ttlMs":`) {
		if !p.int(&ms) {
			return nil, false
		}
		r.TTL = time.Duration(ms) * time.Millisecond
	}
	if p.lit(`,"pollMs":`) {
		if !p.int(&ms) {
			return nil, false
		}
		r.PollInterval = time.Duration(ms) * time.Millisecond
	}
	if p.lit(`,"result":`) && !p.value(&r.Result) {
		return nil, false
	}
	if p.lit(`,"owner":`) && !p.str(&r.Owner) {
		return nil, false
	}
	if p.lit(`,"leaseUntil":`) && !p.time(&r.LeaseUntil) {
		return nil, false
	}
	if !p.lit(`}`) || len(p.b) != 0 {
		return nil, false
	}
	return r, true
}

// recordParser consumes b from its start.
type recordParser struct{ b []byte }

// lit consumes s if it comes next and reports whether it did.
func (p *recordParser) lit(s string) bool {
	rest, ok := bytes.CutPrefix(p.b, []byte(s))
	p.b = rest
	return ok
}

// str consumes a string into s: false when it is not a valid one.
func (p *recordParser) str(s *string) bool {
	w := jsonwalk.Walker{B: p.b}
	v, ok := w.Text()
	if !ok {
		return false
	}
	*s, p.b = string(v), p.b[w.I:]
	return true
}

// time consumes a time in UTC as appendTime writes it: false for any
// other form (json.Unmarshal reads those).
func (p *recordParser) time(t *time.Time) bool {
	w := jsonwalk.Walker{B: p.b}
	body, ok := w.Plain()
	if !ok {
		return false
	}
	v, ok := parseTimeZ(body)
	if !ok {
		return false
	}
	// Only the form appendTime writes: that rules out what time.Date
	// would normalize (a 30th of February, a 25th hour) and fractions
	// with trailing zeros.
	var buf [len("2006-01-02T15:04:05.999999999Z")]byte
	if string(v.AppendFormat(buf[:0], time.RFC3339Nano)) != string(body) {
		return false
	}
	*t, p.b = v, p.b[w.I:]
	return true
}

// parseTimeZ reads "2006-01-02T15:04:05Z", with up to nine digits of a
// fraction before the Z, as a time in UTC.
func parseTimeZ(b []byte) (time.Time, bool) {
	const head = len("2006-01-02T15:04:05")
	if len(b) < head+1 || b[len(b)-1] != 'Z' || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	num := func(from, to int) (int, bool) {
		n := 0
		for _, c := range b[from:to] {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	var f [6]int
	for k, r := range [6][2]int{{0, 4}, {5, 7}, {8, 10}, {11, 13}, {14, 16}, {17, 19}} {
		v, ok := num(r[0], r[1])
		if !ok {
			return time.Time{}, false
		}
		f[k] = v
	}
	ns := 0
	if frac := b[head : len(b)-1]; len(frac) > 0 {
		if len(frac) < 2 || len(frac) > 10 || frac[0] != '.' {
			return time.Time{}, false
		}
		v, ok := num(head+1, len(b)-1)
		if !ok {
			return time.Time{}, false
		}
		for range 10 - len(frac) {
			v *= 10
		}
		ns = v
	}
	return time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], ns, time.UTC), true
}

// int consumes an integer without sign or leading zeros but '-' and
// "0" (JSON's form) that fits an int64.
func (p *recordParser) int(n *int64) bool {
	i := 0
	if i < len(p.b) && p.b[i] == '-' {
		i++
	}
	start := i
	for i < len(p.b) && p.b[i] >= '0' && p.b[i] <= '9' {
		i++
	}
	if i == start || (p.b[start] == '0' && i-start > 1) {
		return false
	}
	v, err := strconv.ParseInt(string(p.b[:i]), 10, 64)
	if err != nil {
		return false
	}
	*n, p.b = v, p.b[i:]
	return true
}

// value consumes a JSON value into a copy: one in the minimal form
// (jsonwalk's Minimal), which json.Unmarshal reads unchanged at any place
// in a record; false for any other, left to json.Unmarshal. Minimal's
// depth limit keeps the value well within the decoder's, counted from
// the record's top.
func (p *recordParser) value(v *jsontext.Value) bool {
	w := jsonwalk.Walker{B: p.b}
	if !w.Minimal() {
		return false
	}
	*v, p.b = slices.Clone(jsontext.Value(p.b[:w.I])), p.b[w.I:]
	return true
}
