package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// DefaultMaxEventBytes caps one event (all its lines together) when a
// Reader is given no cap: 4 MiB, the same as one JSON-RPC message.
const DefaultMaxEventBytes = 4 << 20

// ErrEventTooLarge is returned by Reader.Next when an event exceeds the
// cap. The Reader has read the rest of the event and dropped it, keeping
// both ends of its data in the Event returned with the error (Data, its
// first EdgeBytes at most; Tail, its last): reading may go on with the
// next event.
var ErrEventTooLarge = errors.New("sse: event too large")

// EdgeBytes is the most of each end of an oversized event's data that
// Next returns with ErrEventTooLarge: enough to tell whose message it
// was, at either end. It equals transport.TooLargeEdge, which this
// package may not import (a test of transport/streamable holds them
// equal).
const EdgeBytes = 512

// Event is one dispatched event.
type Event struct {
	// Type is the event field ("" means the default type, "message").
	Type string
	// Data is the event's data, lines joined by "\n". With
	// ErrEventTooLarge, its first EdgeBytes at most.
	Data []byte
	// Tail is set with ErrEventTooLarge only: the last EdgeBytes at most
	// of the event's data (all of it when it is shorter).
	Tail []byte
	// ID is the last event id in force when the event was dispatched.
	ID string
}

// Reader parses an event stream. It is not safe for concurrent use.
type Reader struct {
	r       *bufio.Reader
	max     int
	lastID  string
	retry   time.Duration
	hasRtry bool

	data  []byte
	typ   string
	inEvt int  // bytes taken by the event being read
	over  bool // the event being read is over the cap: dropped

	// Of an event over the cap: whether data has a line yet (the next
	// one is joined with "\n"), whether data, its head, still grows, and
	// tail, the last bytes of its data (the last EdgeBytes count).
	sawData  bool
	headOpen bool
	tail     []byte
	// Of the line being read past the cap: its last bytes (the last
	// EdgeBytes count) and how many of its bytes were dropped.
	lineTail []byte
	lineDrop int
}

// lineStart is how much of a line past the cap is kept at its start:
// enough to tell a data line ("data:" and its optional space).
const lineStart = len("data: ")

// NewReader returns a Reader of r that refuses events over maxEventBytes
// (0: DefaultMaxEventBytes).
func NewReader(r io.Reader, maxEventBytes int) *Reader {
	if maxEventBytes <= 0 {
		maxEventBytes = DefaultMaxEventBytes
	}
	return &Reader{r: bufio.NewReaderSize(r, 32<<10), max: maxEventBytes}
}

// LastEventID returns the stream's last event id: the value of the most
// recent id field, whether or not its event carried data.
func (r *Reader) LastEventID() string { return r.lastID }

// Retry returns the reconnection delay the server asked for, if any.
func (r *Reader) Retry() (time.Duration, bool) { return r.retry, r.hasRtry }

// Next returns the next event. Comments and blank events (no data field
// at all) are consumed silently, though their id and retry fields take
// effect. An event with an empty data field is returned, with empty Data
// (servers use one to prime a stream with an id). At the end of the
// stream Next returns io.EOF; an unfinished last event is discarded, as
// the standard says.
func (r *Reader) Next() (Event, error) {
	for {
		line, cut, err := r.readLine()
		if err != nil {
			return Event{}, err
		}
		if cut {
			r.cutLine(line)
			continue
		}
		if len(line) == 0 && r.over {
			ev := Event{Type: r.typ, Data: r.data, Tail: r.tail, ID: r.lastID}
			if len(ev.Tail) > EdgeBytes {
				ev.Tail = ev.Tail[len(ev.Tail)-EdgeBytes:]
			}
			r.data, r.tail, r.typ, r.inEvt, r.over = nil, nil, "", 0, false
			return ev, fmt.Errorf("%w: over %d bytes", ErrEventTooLarge, r.max)
		}
		if len(line) == 0 { // dispatch
			if r.data == nil {
				r.typ, r.inEvt = "", 0
				continue
			}
			data := r.data
			if n := len(data); n > 0 && data[n-1] == '\n' {
				data = data[:n-1]
			}
			ev := Event{Type: r.typ, Data: data, ID: r.lastID}
			r.data, r.typ, r.inEvt = nil, "", 0
			return ev, nil
		}
		r.field(line)
	}
}

// cutLine takes a line the cap cut short (line holds its start, r.lineTail
// its end): the event is dropped, and only the ends of its data are kept.
// Only a data line counts: another field cut short (an id, an event
// type) would take a value that is not the server's.
func (r *Reader) cutLine(line []byte) {
	if !r.over {
		// The lines before this one were whole: data holds them, each
		// followed by "\n".
		r.over = true
		d := r.data
		r.sawData = d != nil
		if n := len(d); n > 0 && d[n-1] == '\n' {
			d = d[:n-1]
		}
		r.tail = append(r.tail[:0], d[max(0, len(d)-EdgeBytes):]...)
		// A copy: the head outlives the event, whose data may be large.
		r.data = append(make([]byte, 0, EdgeBytes), d[:min(len(d), EdgeBytes)]...)
		r.headOpen = len(r.data) < EdgeBytes
	}
	value, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return
	}
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	if r.sawData {
		r.keep([]byte{'\n'})
	}
	r.sawData = true
	r.keep(value)
	if r.lineDrop == len(r.lineTail) { // nothing of the line was lost between its ends
		r.keep(r.lineTail)
		return
	}
	// The middle of the line is lost: the head is full (readLine kept
	// enough of the line's start); the tail is the line's end, which
	// holds EdgeBytes at least.
	r.headOpen = false
	r.tail = append(r.tail[:0], r.lineTail...)
}

// keep adds b to the data of an event over the cap: to its head while
// the head is short of EdgeBytes, and to its tail.
func (r *Reader) keep(b []byte) {
	if r.headOpen {
		r.data = append(r.data, b[:min(len(b), EdgeBytes-len(r.data))]...)
		r.headOpen = len(r.data) < EdgeBytes
	}
	if len(b) >= EdgeBytes {
		r.tail = append(r.tail[:0], b[len(b)-EdgeBytes:]...)
		return
	}
	r.tail = keepLast(append(r.tail, b...))
}

// keepLast trims b to its last EdgeBytes once it holds twice that, so
// that a window of the last bytes grows by appends without copying on
// each.
func keepLast(b []byte) []byte {
	if len(b) < 2*EdgeBytes {
		return b
	}
	return append(b[:0], b[len(b)-EdgeBytes:]...)
}

// readLine returns one line without its terminator (CRLF, LF or CR),
// enforcing the event cap across the lines of an event: the bytes past
// the cap are read and dropped, and cut reports that some were. Of a line
// cut short, line holds its first bytes (lineStart at least, to tell its
// field; EdgeBytes more while the event's head is short of them) and
// r.lineTail its last dropped ones.
func (r *Reader) readLine() (line []byte, cut bool, err error) {
	r.lineTail, r.lineDrop = r.lineTail[:0], 0
	for {
		b, err := r.r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, false, io.EOF // an unterminated line is discarded
			}
			return nil, false, err
		}
		switch b {
		case '\n':
			return line, cut, nil
		case '\r':
			if next, err := r.r.Peek(1); err == nil && next[0] == '\n' {
				_, _ = r.r.ReadByte()
			}
			return line, cut, nil
		}
		if r.inEvt >= r.max {
			cut = true
			if len(line) < lineStart || (len(line) < lineStart+EdgeBytes && (!r.over || r.headOpen)) {
				line = append(line, b)
				continue
			}
			r.lineDrop++
			r.lineTail = keepLast(append(r.lineTail, b))
			continue
		}
		r.inEvt++
		line = append(line, b)
	}
}

func (r *Reader) field(line []byte) {
	if line[0] == ':' {
		return // comment
	}
	name, value, found := bytes.Cut(line, []byte{':'})
	if found && len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	switch string(name) {
	case "data":
		r.data = append(r.data, value...)
		r.data = append(r.data, '\n')
	case "event":
		r.typ = string(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.lastID = string(value)
		}
	case "retry":
		if ms, err := strconv.ParseUint(string(value), 10, 32); err == nil && isDigits(value) {
			r.retry, r.hasRtry = time.Duration(ms)*time.Millisecond, true
		}
	}
}

func isDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// AppendEvent appends one event in wire form to dst: an optional id, an
// optional retry (when retry > 0), the data split into data lines at
// each line break, and the blank line that dispatches it. An empty data
// still writes one empty data field, so the event is dispatched.
func AppendEvent(dst []byte, id string, retry time.Duration, data []byte) []byte {
	if id != "" {
		dst = append(dst, "id: "...)
		dst = append(dst, id...)
		dst = append(dst, '\n')
	}
	if retry > 0 {
		dst = append(dst, "retry: "...)
		dst = strconv.AppendInt(dst, retry.Milliseconds(), 10)
		dst = append(dst, '\n')
	}
	for {
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			break
		}
		dst = append(dst, "data: "...)
		dst = append(dst, data[:i]...)
		dst = append(dst, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, '\n', '\n')
}

// AppendComment appends a comment line (a keep-alive) to dst.
func AppendComment(dst []byte, text string) []byte {
	dst = append(dst, ':')
	if text != "" {
		dst = append(dst, ' ')
		dst = append(dst, text...)
	}
	return append(dst, '\n', '\n')
}

// AppendTypedEvent appends one event with an event type (the event:
// field, such as the "endpoint" and "message" events of the 2024-11-05
// HTTP+SSE transport) and data, split into data lines as AppendEvent
// does. A line break in typ is dropped: it would end the field.
func AppendTypedEvent(dst []byte, typ string, data []byte) []byte {
	dst = append(dst, "event: "...)
	for i := 0; i < len(typ); i++ {
		if c := typ[i]; c != '\r' && c != '\n' {
			dst = append(dst, c)
		}
	}
	dst = append(dst, '\n')
	return AppendEvent(dst, "", 0, data)
}
