package streamhttp

import (
	"context"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/mcp"
)

// maxPendingEvents bounds the messages a stream holds for a client that
// is not connected; past it the oldest non-final message is dropped.
const maxPendingEvents = 1024

// maxUnstoredEvents bounds the events of a resumable stream that are
// numbered but not through the EventStore yet (queued, or being
// appended). Past it the oldest are given up: not stored, recorded lost
// (a resumption that needs them gets 409) and released to the reader,
// which delivers them live. With a hung store (each append waiting
// StoreTimeout) a chatty stream thus holds a bounded queue. It is half
// of maxPendingEvents so that, for a reader that keeps up, events held
// back for the store never fill the pending list (which would drop them
// for the live client as well).
const maxUnstoredEvents = maxPendingEvents / 2

// stream is one response stream of a legacy HTTP session: a POST's
// answer or the standalone GET stream. Producers push messages; one
// reader at a time (the HTTP request that carries the stream) writes
// them out, as one JSON body or as SSE events.
type stream struct {
	h       *Handler
	hs      *httpSession // nil for session-less requests
	id      string       // "" when the stream cannot be resumed
	reqID   mcp.ID       // the POST's request; zero for the GET stream
	resumes bool         // events go to the event store
	born    int64        // unix nanoseconds of creation (standalone streams)

	mu        sync.Mutex
	sse       bool
	pending   []event // pushed, not yet written
	seq       uint64  // last sequence number assigned
	delivered uint64  // last sequence number written to a connection
	done      bool    // final message delivered, or the stream abandoned
	attached  bool
	closeConn bool // the handler asked to end the current connection
	status    int  // HTTP status of a JSON answer; 0 means 200
	wake      chan struct{}

	// q holds the events of a resumable stream on their way to the
	// EventStore; nil until the first is numbered.
	q *appendQueue

	// onActivity, when set (before any push), is called after a
	// non-final push and a close request: a handler running on the
	// POST's own goroutine starts the reader then (see serveRequest).
	onActivity func()
}

// appendQueue: events go to the EventStore outside the stream's mu, in
// order, by one goroutine at a time; a reader writes an event only once
// it is through (appended, failed or given up), so that what a client
// may have seen is what a resumption can replay, or is known lost. The
// appender is the producer that found the store idle, for the events up
// to its own, or the stream's appender goroutine, for those queued
// behind them and for those of an upgrade (see appendThrough). Guarded
// by the stream's mu.
type appendQueue struct {
	events    []event // numbered, not yet handed to the store; consecutive seqs
	storing   bool    // a goroutine is appending
	stored    uint64  // every event up to this seq is through
	lostFirst uint64  // first and last event the store may not hold (0: none)
	lostLast  uint64
}

type event struct {
	seq   uint64
	data  []byte
	final bool
}

func newStream(h *Handler, hs *httpSession, reqID mcp.ID) *stream {
	st := new(stream)
	initStream(st, h, hs, reqID)
	return st
}

// initStream sets up a zero stream (newStream, or one inside another
// allocation).
func initStream(st *stream, h *Handler, hs *httpSession, reqID mcp.ID) {
	st.h, st.hs, st.reqID = h, hs, reqID
	if !reqID.IsValid() {
		st.born = time.Now().UnixNano() // a standalone stream: which is newest counts
	}
	if hs != nil && h.store != nil {
		st.id = h.newStreamID(reqID.IsValid())
		st.resumes = true
	}
}

// signal wakes the stream's reader, if one waits. wake is made (under
// mu) by a reader before it decides to wait: a stream whose answer is
// there when it is served (a JSON response) never has one.
func (st *stream) signal() {
	st.mu.Lock()
	wake := st.wake
	st.mu.Unlock()
	if wake == nil {
		return
	}
	select {
	case wake <- struct{}{}:
	default:
	}
}

// wakeLocked returns the reader's wake channel, making it first. Called
// with mu held, before the state that decides to wait is let go.
func (st *stream) wakeLocked() chan struct{} {
	if st.wake == nil {
		st.wake = make(chan struct{}, 1)
	}
	return st.wake
}

// push queues one message; final marks the response that ends a POST
// stream. Messages pushed after the stream is done are dropped.
func (st *stream) push(msg []byte, final bool) {
	st.mu.Lock()
	if st.done {
		st.mu.Unlock()
		return
	}
	ev := event{data: msg, final: final}
	if st.sse {
		st.assign(&ev)
	}
	if len(st.pending) >= maxPendingEvents {
		for i, old := range st.pending {
			if !old.final {
				st.pending = append(st.pending[:i], st.pending[i+1:]...)
				st.h.log.Warn("streamhttp: dropped a message for a disconnected client", "stream", st.id)
				break
			}
		}
	}
	st.pending = append(st.pending, ev)
	// The producer that finds the store idle appends its event (and any
	// queued before it) itself; claimed here, under the same lock as the
	// numbering, so that nobody else takes the queue in between.
	appends := ev.seq != 0 && st.resumes && !st.q.storing
	if appends {
		st.q.storing = true
	}
	st.mu.Unlock()
	st.signal()
	if !final && st.onActivity != nil {
		st.onActivity()
	}
	if appends && st.appendThrough(ev.seq) {
		st.startAppender()
	}
}

// pushFinal queues the final message with the HTTP status it needs when
// it is answered as JSON (an SSE stream has already sent 200).
func (st *stream) pushFinal(msg []byte, status int) {
	st.mu.Lock()
	st.status = status
	st.mu.Unlock()
	st.push(msg, true)
}

// assign numbers an event and queues it for the store. Called with mu
// held, so that numbering and storing follow push order; the append
// itself happens in appendThrough, without mu. Past maxUnstoredEvents
// the oldest events are given up.
func (st *stream) assign(ev *event) {
	st.seq++
	ev.seq = st.seq
	if !st.resumes {
		return
	}
	if st.q == nil {
		st.q = &appendQueue{}
	}
	q := st.q
	q.events = append(q.events, *ev)
	if st.seq-q.stored > maxUnstoredEvents {
		first, last := q.stored+1, st.seq-maxUnstoredEvents
		if q.lostLast == 0 || q.lostLast+1 < first { // once per run of losses
			st.h.log.Warn("streamhttp: the event store falls behind; events are delivered live but cannot be replayed", "session", st.hs.ss.ID(), "stream", st.id, "seq", first)
		}
		q.giveUp(last)
	}
}

// giveUp makes every event up to seq last through without waiting for
// the store: the queued ones are not appended, the one being appended
// (if any) may or may not be kept. They are all recorded lost, and a
// reader may write them. Called with the stream's mu held.
func (q *appendQueue) giveUp(last uint64) {
	if last <= q.stored {
		return
	}
	q.lose(q.stored+1, last)
	q.stored = last
	n := 0
	for n < len(q.events) && q.events[n].seq <= last {
		q.events[n] = event{}
		n++
	}
	q.events = q.events[n:]
	if len(q.events) == 0 {
		q.events = nil
	}
}

// lose records that events first..last may be missing from the store.
// One range covers every loss: a resumption that might need any of them
// is refused. Called with the stream's mu held.
func (q *appendQueue) lose(first, last uint64) {
	if q.lostFirst == 0 || first < q.lostFirst {
		q.lostFirst = first
	}
	q.lostLast = max(q.lostLast, last)
}

// kick hands events that wait for an append nobody is making (those of
// an upgrade) to an appender goroutine. The reader does not append them
// itself: it must stay free to deliver what a slow store gives up.
func (st *stream) kick() {
	st.mu.Lock()
	start := st.unstored()
	if start {
		st.q.storing = true
	}
	st.mu.Unlock()
	if start {
		st.startAppender()
	}
}

// startAppender starts the goroutine that appends the events queued
// behind the previous appender's; q.storing is already set for it. It is
// owned by the stream and counted with the session's running handlers
// (hs.running), so that closing the session waits for it, as for a
// handler, before the store's Purge. Called without mu (hs.mu comes
// first in the lock order). It ends when the queue is empty, or when
// the stream is done (what is left is given up): once producers stop,
// within maxUnstoredEvents appends, each bounded by StoreTimeout.
func (st *stream) startAppender() {
	hs := st.hs
	hs.mu.Lock()
	hs.running++
	hs.mu.Unlock()
	go func() { // owned by the stream: ends with its queue (see above)
		defer hs.leave()
		st.appendThrough(math.MaxUint64) // never hands over
	}()
}

// appendThrough appends queued events to the EventStore, oldest first,
// each bounded by StoreTimeout, up to seq through; the caller holds the
// queue (q.storing). It lets go of the queue when it is empty, or when
// the stream is done (giving up what is left), and returns false; it
// returns true, still holding the queue, when events after through
// remain: the caller hands them to an appender goroutine. A producer is
// thus held for its own event and those before it, however busy the
// stream.
//
// An event the store failed to keep is still delivered live (the client
// is most likely connected: losing the message would be worse than
// losing its replay); a later resumption that would need it is refused
// with 409, as for events purged from the store (see serve).
func (st *stream) appendThrough(through uint64) (handOver bool) {
	q := st.q
	for {
		st.mu.Lock()
		if st.done && len(q.events) > 0 {
			// Nobody here will deliver them; stop spending store calls.
			q.giveUp(q.events[len(q.events)-1].seq)
		}
		if len(q.events) == 0 {
			q.storing = false
			st.mu.Unlock()
			return false
		}
		ev := q.events[0]
		if ev.seq > through {
			st.mu.Unlock()
			return true
		}
		q.events[0] = event{}
		q.events = q.events[1:]
		st.mu.Unlock()

		ctx, cancel := context.WithTimeout(context.Background(), st.h.opts.StoreTimeout)
		err := st.h.store.Append(ctx, st.hs.ss.ID(), st.id, ev.seq, ev.data)
		cancel()
		if err != nil {
			st.h.log.Warn("streamhttp: event store append failed; the event is delivered live but cannot be replayed", "session", st.hs.ss.ID(), "stream", st.id, "seq", ev.seq, "err", err)
		}
		st.mu.Lock()
		if err != nil {
			q.lose(ev.seq, ev.seq)
		}
		// Given up meanwhile (assign), the event may already be through.
		q.stored = max(q.stored, ev.seq)
		st.mu.Unlock()
		st.signal()
	}
}

// unstored reports whether events wait for an append nobody is making.
// Called with mu held.
func (st *stream) unstored() bool {
	return st.q != nil && len(st.q.events) > 0 && !st.q.storing
}

// deliverable returns how many pending events a reader may write now:
// on SSE, those whose append is over. Called with mu held.
func (st *stream) deliverable() int {
	if !st.sse || st.q == nil {
		return len(st.pending)
	}
	n := 0
	for n < len(st.pending) && st.pending[n].seq <= st.q.stored {
		n++
	}
	return n
}

// lostBetween reports whether an event after seq after and up to
// through may be missing from the store. Called with mu held.
func (st *stream) lostBetween(after, through uint64) bool {
	return st.q != nil && st.q.lostFirst != 0 && st.q.lostFirst <= through && after < st.q.lostLast
}

// awaitFinal waits until the final message is pushed, the stream is done
// or stop is closed.
func (st *stream) awaitFinal(stop <-chan struct{}) {
	for {
		st.mu.Lock()
		over := st.done || slices.ContainsFunc(st.pending, func(ev event) bool { return ev.final })
		wake := st.wakeLocked()
		st.mu.Unlock()
		if over {
			return
		}
		select {
		case <-wake:
		case <-stop:
			return
		}
	}
}

// takeFinal ends the stream and returns its final message, if it was
// pushed, with the status of a JSON answer.
func (st *stream) takeFinal() ([]byte, int, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.done = true
	for _, ev := range st.pending {
		if ev.final {
			return ev.data, st.status, true
		}
	}
	return nil, 0, false
}

// upgrade switches the stream to SSE. Called with mu held.
func (st *stream) upgrade() {
	if st.sse {
		return
	}
	st.sse = true
	for i := range st.pending {
		st.assign(&st.pending[i])
	}
}

// requestClose asks the reader to end its connection (SEP-1699 polling).
func (st *stream) requestClose() {
	st.mu.Lock()
	st.closeConn = true
	st.mu.Unlock()
	st.signal()
	if st.onActivity != nil {
		st.onActivity()
	}
}

// abandon ends the stream without its final message (session closed).
func (st *stream) abandon() {
	st.mu.Lock()
	st.done = true
	st.mu.Unlock()
	st.signal()
}

// eventID names event seq of this stream: "<stream>_<seq>".
func (st *stream) eventID(seq uint64) string {
	if st.id == "" {
		return ""
	}
	return st.id + "_" + strconv.FormatUint(seq, 10)
}

// parseEventID splits an event id into stream id and sequence number.
func parseEventID(id string) (string, uint64, bool) {
	i := strings.LastIndexByte(id, '_')
	if i <= 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseUint(id[i+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return id[:i], seq, true
}

// end marks the stream done once its final message was written (or
// stored) and forgets it.
func (st *stream) end() {
	st.mu.Lock()
	st.done = true
	st.mu.Unlock()
	st.finish()
}

// finish forgets a POST stream whose final message went out.
func (st *stream) finish() {
	if st.hs != nil {
		st.hs.removeStream(st)
	}
}

// sseWriter writes one HTTP response: either a JSON body or an event
// stream.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
	buf     []byte
}

func (o *sseWriter) json(msg []byte, status int) {
	if status == 0 {
		status = http.StatusOK
	}
	h := o.w.Header()
	if len(msg) <= unchunkedMax {
		// net/http holds an answer this short until the handler returns
		// and then writes its length itself, without a header map entry.
		h["Content-Type"] = jsonContentType
	} else {
		// A longer one would go out chunked: say its length. Both values
		// in one allocation, under their canonical keys.
		vals := [...]string{"application/json", strconv.Itoa(len(msg))}
		h["Content-Type"], h["Content-Length"] = vals[0:1:1], vals[1:2:2]
	}
	if s, ok := retryAfter(msg); ok {
		h.Set("Retry-After", s)
	}
	o.w.WriteHeader(status)
	_, _ = o.w.Write(msg)
}

// unchunkedMax is the longest answer net/http's HTTP/1 server buffers
// before it sends the headers (its bufferBeforeChunkingSize): one that
// is written whole and then ended gets its Content-Length from net/http.
// HTTP/2 buffers at least as much.
const unchunkedMax = 2048

// jsonContentType is the Content-Type value of JSON answers, shared: its
// capacity of one makes an Add append to a copy.
var jsonContentType = []string{"application/json"}

// start writes the headers of an event stream and, for a resumable
// stream, a priming event (an id and empty data) with the retry delay.
func (o *sseWriter) start(st *stream, prime bool, primeSeq uint64) {
	o.started = true
	h := o.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	o.w.WriteHeader(http.StatusOK)
	if prime && st.id != "" {
		o.buf = sse.AppendEvent(o.buf[:0], st.eventID(primeSeq), st.h.opts.RetryInterval, nil)
		_, _ = o.w.Write(o.buf)
	}
	o.flush()
}

func (o *sseWriter) event(id string, data []byte) error {
	o.buf = sse.AppendEvent(o.buf[:0], id, 0, data)
	_, err := o.w.Write(o.buf)
	return err
}

func (o *sseWriter) comment() error {
	o.buf = sse.AppendComment(o.buf[:0], "keep-alive")
	if _, err := o.w.Write(o.buf); err != nil {
		return err
	}
	return o.flusher().Flush()
}

// retry tells the client how long to wait before resuming, then the
// caller ends the response.
func (o *sseWriter) retry(d time.Duration) {
	o.buf = append(o.buf[:0], "retry: "...)
	o.buf = strconv.AppendInt(o.buf, d.Milliseconds(), 10)
	o.buf = append(o.buf, "\n\n"...)
	_, _ = o.w.Write(o.buf)
	o.flush()
}

func (o *sseWriter) flush() {
	if o.started {
		_ = o.flusher().Flush()
	}
}

// flusher is made at the first flush: a JSON answer needs none.
func (o *sseWriter) flusher() *http.ResponseController {
	if o.rc == nil {
		o.rc = http.NewResponseController(o.w)
	}
	return o.rc
}

// streamWait is a reader's wait on a stream, as a flight of h.inflight:
// once silent for SSEAfter, the reader turns the stream into an event
// stream.
type streamWait struct {
	st     *stream
	fired  atomic.Bool
	flight flight
	left   bool // left inflight (the reader's own)
}

func (w *streamWait) silent() {
	w.fired.Store(true)
	w.st.signal()
}

// cancelClosing: a stream's reader ends with its session or its handler.
func (w *streamWait) cancelClosing() {}
