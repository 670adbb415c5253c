package store

import (
	"bytes"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

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
	if p.opt(`,"principal":`) && !p.str(&r.Principal) {
		return nil, false
	}
	if p.opt(`,"session":`) && !p.str(&r.SessionID) {
		return nil, false
	}
	r.Modern = p.opt(`,"modern":true`)
	var status string
	if !p.lit(`,"status":`) || !p.str(&status) {
		return nil, false
	}
	r.Status = mcp.TaskStatus(status)
	if p.opt(`,"statusMessage":`) && !p.str(&r.StatusMessage) {
		return nil, false
	}
	if !p.lit(`,"createdAt":`) || !p.time(&r.CreatedAt) || !p.lit(`,"lastUpdatedAt":`) || !p.time(&r.LastUpdatedAt) {
		return nil, false
	}
	var ms int64
	if p.opt(`,"ttlMs":`) {
		if !p.int(&ms) {
			return nil, false
		}
		r.TTL = time.Duration(ms) * time.Millisecond
	}
	if p.opt(`,"pollMs":`) {
		if !p.int(&ms) {
			return nil, false
		}
		r.PollInterval = time.Duration(ms) * time.Millisecond
	}
	if p.opt(`,"result":`) && !p.value(&r.Result) {
		return nil, false
	}
	if p.opt(`,"owner":`) && !p.str(&r.Owner) {
		return nil, false
	}
	if p.opt(`,"leaseUntil":`) && !p.time(&r.LeaseUntil) {
		return nil, false
	}
	if !p.lit(`}`) || len(p.b) != 0 {
		return nil, false
	}
	return r, true
}

// recordParser consumes b from its start.
type recordParser struct{ b []byte }

// lit consumes s, which must come next.
func (p *recordParser) lit(s string) bool {
	rest, ok := bytes.CutPrefix(p.b, []byte(s))
	p.b = rest
	return ok
}

// opt consumes s if it comes next.
func (p *recordParser) opt(s string) bool { return p.lit(s) }

// literal consumes a JSON string literal and returns it, quotes
// included; nil when none comes next (or it does not end).
func (p *recordParser) literal() []byte {
	if len(p.b) == 0 || p.b[0] != '"' {
		return nil
	}
	for i := 1; i < len(p.b); i++ {
		switch p.b[i] {
		case '\\':
			i++
		case '"':
			lit := p.b[:i+1]
			p.b = p.b[i+1:]
			return lit
		}
	}
	return nil
}

// str consumes a string into s: false when it is not a valid one.
func (p *recordParser) str(s *string) bool {
	lit := p.literal()
	if lit == nil {
		return false
	}
	body := lit[1 : len(lit)-1]
	if plainString(body) {
		*s = string(body)
		return true
	}
	v, err := jsontext.AppendUnquote(nil, lit)
	if err != nil {
		return false
	}
	*s = string(v)
	return true
}

// plainString reports whether body, between a string's quotes, needs no
// decoding: valid UTF-8, no escape, no control character.
func plainString(body []byte) bool {
	ascii := true
	for _, c := range body {
		if c < 0x20 || c == '\\' {
			return false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	return ascii || utf8.Valid(body)
}

// time consumes a time in UTC as appendTime writes it: false for any
// other form (json.Unmarshal reads those).
func (p *recordParser) time(t *time.Time) bool {
	lit := p.literal()
	if len(lit) < 2 {
		return false
	}
	body := lit[1 : len(lit)-1]
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
	*t = v
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
// (minimalValid), which json.Unmarshal reads unchanged at any place in a
// record; false for any other, left to json.Unmarshal.
func (p *recordParser) value(v *jsontext.Value) bool {
	depth, i := 0, 0
	for ; i < len(p.b); i++ {
		switch c := p.b[i]; c {
		case '"':
			rest := recordParser{p.b[i:]}
			lit := rest.literal()
			if lit == nil {
				return false
			}
			i += len(lit) - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
		if depth < 0 {
			break
		}
		if depth == 0 && (i+1 == len(p.b) || p.b[i+1] == ',' || p.b[i+1] == '}' || p.b[i+1] == ']') {
			i++
			break
		}
	}
	if depth != 0 || i == 0 {
		return false
	}
	val := jsontext.Value(p.b[:i])
	// Only what minimalValid accepts: jsontext's own check of val alone
	// (IsValid) counts its depth limit from val's top, not the document's,
	// and would accept a result nested deeper than json.Unmarshal does.
	if isSpace(val[0]) || isSpace(val[len(val)-1]) || !minimalValid(val) {
		return false
	}
	*v, p.b = slices.Clone(val), p.b[i:]
	return true
}

// isSpace reports whether c is JSON whitespace (which json.Unmarshal
// leaves out of a jsontext.Value).
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
