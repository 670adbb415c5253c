package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func readAll(t *testing.T, r *Reader) []Event {
	t.Helper()
	var out []Event
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
}

func TestReaderWHATWG(t *testing.T) {
	stream := ": comment\r\n" +
		"id: 1\r\ndata:\r\n\r\n" + // priming event: id, empty data
		"data: first\ndata:  two spaces\n\n" +
		"event: custom\rdata:x\r\r" + // bare CR line endings
		"id: 7\nretry: 1500\n\n" + // no data: not dispatched, but id and retry apply
		"data: after\n\n" +
		"id: bad\x00id\ndata: nul id ignored\n\n" +
		"retry: 12a\ndata: bad retry ignored\n\n" +
		"field-without-colon\ndata\n\n" +
		"data: unterminated" // discarded at EOF
	r := NewReader(strings.NewReader(stream), 0)
	got := readAll(t, r)
	want := []Event{
		{ID: "1", Data: []byte("")},
		{ID: "1", Data: []byte("first\n two spaces")},
		{ID: "1", Type: "custom", Data: []byte("x")},
		{ID: "7", Data: []byte("after")},
		{ID: "7", Data: []byte("nul id ignored")},
		{ID: "7", Data: []byte("bad retry ignored")},
		{ID: "7", Data: []byte("")},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d events %q, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Type != want[i].Type || string(got[i].Data) != string(want[i].Data) {
			t.Errorf("event %d = %+v (data %q), want %+v (data %q)", i, got[i], got[i].Data, want[i], want[i].Data)
		}
	}
	if d, ok := r.Retry(); !ok || d != 1500*time.Millisecond {
		t.Errorf("retry = %v %v, want 1.5s", d, ok)
	}
	if r.LastEventID() != "7" {
		t.Errorf("last id = %q", r.LastEventID())
	}
}

func TestReaderEventCap(t *testing.T) {
	r := NewReader(strings.NewReader("data: "+strings.Repeat("x", 100)+"\n\n"), 50)
	if _, err := r.Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("err = %v, want ErrEventTooLarge", err)
	}
	// The cap spans lines of one event but resets between events.
	ok := "data: " + strings.Repeat("y", 20) + "\n\n"
	r = NewReader(strings.NewReader(ok+ok+ok), 40)
	if n := len(readAll(t, r)); n != 3 {
		t.Fatalf("got %d events, want 3", n)
	}
}

// TestReaderSkipsOversizedEvent: an event over the cap (one long line,
// or many lines) is read to its end and dropped; Next returns
// ErrEventTooLarge with the head of its data (at most EdgeBytes) and
// then the events after it.
func TestReaderSkipsOversizedEvent(t *testing.T) {
	long := "event: big\ndata: {\"id\":1," + strings.Repeat("x", 3000) + "\n\n"
	many := "data: " + strings.Repeat("a", 900) + "\r\ndata: " + strings.Repeat("b", 900) + "\r\nid: 9\r\n\r\n"
	next := "id: 2\ndata: after\n\n"
	r := NewReader(strings.NewReader(long+next+many+next), 1000)
	ev, err := r.Next()
	if !errors.Is(err, ErrEventTooLarge) || ev.Type != "big" || !strings.HasPrefix(string(ev.Data), `{"id":1,xxx`) || len(ev.Data) > EdgeBytes {
		t.Fatalf("long line: %q (%d bytes) %v", ev.Type, len(ev.Data), err)
	}
	if ev, err := r.Next(); err != nil || string(ev.Data) != "after" || ev.ID != "2" {
		t.Fatalf("after the long line: %+v %v", ev, err)
	}
	ev, err = r.Next()
	if !errors.Is(err, ErrEventTooLarge) || !strings.HasPrefix(string(ev.Data), "aaa") || len(ev.Data) > EdgeBytes {
		t.Fatalf("many lines: %d bytes %v", len(ev.Data), err)
	}
	if ev, err := r.Next(); err != nil || string(ev.Data) != "after" || r.LastEventID() != "2" {
		t.Fatalf("after the many lines: %+v %v (last id %q: the oversized event's id is dropped)", ev, err, r.LastEventID())
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

func TestAppendEventRoundTrip(t *testing.T) {
	cases := []struct {
		id    string
		retry time.Duration
		data  string
	}{
		{"s1-1", 0, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"", 500 * time.Millisecond, ""},
		{"x", 0, "multi\nline\r\ndata\rhere"},
	}
	for _, c := range cases {
		wire := AppendEvent(nil, c.id, c.retry, []byte(c.data))
		wire = AppendComment(wire, "keep-alive")
		r := NewReader(strings.NewReader(string(wire)), 0)
		ev, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		want := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(c.data)
		if string(ev.Data) != want || ev.ID != c.id {
			t.Errorf("round trip of %q: got id %q data %q", c.data, ev.ID, ev.Data)
		}
		if d, ok := r.Retry(); c.retry > 0 && (!ok || d != c.retry) {
			t.Errorf("retry = %v, want %v", d, c.retry)
		}
		if _, err := r.Next(); !errors.Is(err, io.EOF) {
			t.Errorf("after the event: %v, want EOF (comments are silent)", err)
		}
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("id: 1\ndata: x\n\n"), 64)
	f.Add([]byte(": c\r\ndata:\r\n\r\nretry: 10\n"), 8)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max < 1 || max > 1<<16 {
			max = 1 << 10
		}
		r := NewReader(strings.NewReader(string(in)), max)
		for range len(in) + 1 {
			ev, err := r.Next()
			if err != nil {
				return
			}
			if len(ev.Data) > max {
				t.Fatalf("event of %d bytes over cap %d", len(ev.Data), max)
			}
		}
		t.Fatal("Next did not terminate")
	})
}

func TestAppendTypedEventRoundTrip(t *testing.T) {
	wire := AppendTypedEvent(nil, "endpoint", []byte("/mcp?sessionId=abc"))
	wire = AppendTypedEvent(wire, "mess\nage", []byte(`{"jsonrpc":"2.0","method":"x"}`))
	r := NewReader(strings.NewReader(string(wire)), 0)
	for _, want := range []Event{{Type: "endpoint", Data: []byte("/mcp?sessionId=abc")}, {Type: "message", Data: []byte(`{"jsonrpc":"2.0","method":"x"}`)}} {
		ev, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != want.Type || string(ev.Data) != string(want.Data) {
			t.Errorf("got %q %q, want %q %q", ev.Type, ev.Data, want.Type, want.Data)
		}
	}
}

// TestReaderCutIDLineIgnored: an id line cut by the cap does not become
// the stream's last event id (a resume would send a value the server
// never sent); the id before it stays.
func TestReaderCutIDLineIgnored(t *testing.T) {
	r := NewReader(strings.NewReader("id: 1\ndata: x\n\ndata: 0123456789\nid: abcdefghijkl\n\nid: 2\ndata: y\n\n"), 22)
	if ev, err := r.Next(); err != nil || ev.ID != "1" {
		t.Fatalf("first: %+v %v", ev, err)
	}
	ev, err := r.Next()
	if !errors.Is(err, ErrEventTooLarge) || ev.ID != "1" || r.LastEventID() != "1" {
		t.Fatalf("oversized event: id %q, last id %q, %v; want the id before it, 1", ev.ID, r.LastEventID(), err)
	}
	if ev, err := r.Next(); err != nil || ev.ID != "2" || string(ev.Data) != "y" {
		t.Fatalf("after: %+v %v", ev, err)
	}
}

// TestReaderOversizedEdges: an event over the cap comes with both ends of
// its data, EdgeBytes at most each, however its lines fall: one long
// line, many short ones, a long line in the middle (whose middle is
// lost), the cap reached on a line that is not data, CRLF endings.
func TestReaderOversizedEdges(t *testing.T) {
	long := func(c string, n int) string { return strings.Repeat(c, n) }
	for _, tc := range []struct {
		name  string
		lines []string // the event's lines, data lines as "data: ..."
		max   int
	}{
		{name: "one long line", lines: []string{`data: {"id":1,` + long("x", 3000) + `,"end":7}`}, max: 1000},
		{name: "many lines", lines: []string{"data: " + long("a", 900), "data: " + long("b", 900), "id: 9", "data: " + long("c", 300)}, max: 1000},
		{name: "short head, long middle", lines: []string{"data: ab", ": " + long("z", 600), "data: " + long("m", 5000) + "END", "data: zz"}, max: 700},
		{name: "cap in a comment", lines: []string{"data: " + long("h", 100), ": " + long("z", 2000), "data: " + long("t", 700)}, max: 300},
		{name: "small tail", lines: []string{"data: " + long("q", 2000), "data: 42}"}, max: 1000},
		{name: "data: with no space", lines: []string{"data:" + long("n", 2000)}, max: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var data []string
			for _, l := range tc.lines {
				if v, ok := strings.CutPrefix(l, "data: "); ok {
					data = append(data, v)
				} else if v, ok := strings.CutPrefix(l, "data:"); ok {
					data = append(data, v)
				}
			}
			full := strings.Join(data, "\n")
			for _, eol := range []string{"\n", "\r\n"} {
				in := strings.Join(tc.lines, eol) + eol + eol + "data: next" + eol + eol
				r := NewReader(strings.NewReader(in), tc.max)
				ev, err := r.Next()
				if !errors.Is(err, ErrEventTooLarge) {
					t.Fatalf("%q: err %v, want ErrEventTooLarge", eol, err)
				}
				wantHead := full[:min(len(full), EdgeBytes)]
				wantTail := full[max(0, len(full)-EdgeBytes):]
				if string(ev.Data) != wantHead {
					t.Errorf("%q: head %q, want %q", eol, ev.Data, wantHead)
				}
				if string(ev.Tail) != wantTail {
					t.Errorf("%q: tail %q, want %q", eol, ev.Tail, wantTail)
				}
				if ev, err := r.Next(); err != nil || string(ev.Data) != "next" || ev.Tail != nil {
					t.Errorf("%q: the event after: %q %q %v", eol, ev.Data, ev.Tail, err)
				}
			}
		})
	}
}

// FuzzReaderEdges: whatever the lines of an event and the cap, an event
// over it comes with the first and the last EdgeBytes of its data
// exactly; an event within it comes whole.
func FuzzReaderEdges(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), 10, false)
	f.Add([]byte("line one\nline two\n\nline four"), 12, true)
	f.Add([]byte(strings.Repeat("0123456789", 200)), 600, false)
	f.Fuzz(func(t *testing.T, payload []byte, limit int, comments bool) {
		if limit < 1 || limit > 1<<14 {
			limit = 64
		}
		lines := strings.Split(strings.ReplaceAll(string(payload), "\r", ""), "\n")
		var in strings.Builder
		for i, l := range lines {
			if comments && i%2 == 1 {
				in.WriteString(": " + l + "\n")
			}
			in.WriteString("data: " + l + "\n")
		}
		in.WriteString("\n")
		full := strings.Join(lines, "\n")
		ev, err := NewReader(strings.NewReader(in.String()), limit).Next()
		switch {
		case err == nil:
			if string(ev.Data) != full || ev.Tail != nil {
				t.Fatalf("event within the cap: %q (tail %q), want %q", ev.Data, ev.Tail, full)
			}
		case errors.Is(err, ErrEventTooLarge):
			if want := full[:min(len(full), EdgeBytes)]; string(ev.Data) != want {
				t.Fatalf("head %q, want %q", ev.Data, want)
			}
			if want := full[max(0, len(full)-EdgeBytes):]; string(ev.Tail) != want {
				t.Fatalf("tail %q, want %q", ev.Tail, want)
			}
		default:
			t.Fatalf("err %v", err)
		}
	})
}
