package streamhttp

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store"
)

// serve writes the stream to one HTTP response until the final message
// is written, the client goes away, the handler asks for the connection
// to end, or the server shuts down. replayAfter >= 0 resumes after that
// sequence number (GET with Last-Event-ID): stored events the previous
// connection may have lost are replayed first.
func (st *stream) serve(w http.ResponseWriter, r *http.Request, replayAfter int64) {
	delivered, lost, ok := st.attach(w, replayAfter)
	if !ok {
		return
	}
	defer st.detach()
	l := streamLoop{st: st, out: sseWriter{w: w}, r: r, forceSSE: st.h.opts.AlwaysSSE}
	if replayAfter >= 0 && !st.replay(r, &l.out, uint64(replayAfter), delivered, lost) {
		return
	}
	defer l.stop()
	for l.step() {
	}
}

// attach makes w the stream's one reader (409 when another connection
// reads it) and reports the last sequence number delivered, and whether
// events after replayAfter are lost (only for replayAfter >= 0).
func (st *stream) attach(w http.ResponseWriter, replayAfter int64) (delivered uint64, lost, ok bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.attached {
		writeError(w, http.StatusConflict, mcp.ID{}, mcp.CodeInvalidRequest, "Conflict: the stream is already being read by another connection")
		return 0, false, false
	}
	st.attached = true
	delivered = st.delivered
	lost = replayAfter >= 0 && st.lostBetween(uint64(replayAfter), delivered)
	return delivered, lost, true
}

// detach ends attach.
func (st *stream) detach() {
	st.mu.Lock()
	st.attached = false
	st.mu.Unlock()
}

// replay starts the event stream of a resumption with the stored events
// after after (up to delivered) that the previous connection may have
// lost. The events are collected before answering, so that a replay the
// store can no longer serve in full is refused (409) instead of answered
// 200 and cut short. It reports whether the stream goes on.
func (st *stream) replay(r *http.Request, out *sseWriter, after, delivered uint64, lost bool) bool {
	if lost {
		writeError(out.w, http.StatusConflict, mcp.ID{}, mcp.CodeInvalidRequest, "Conflict: the events after Last-Event-ID are no longer stored")
		return false
	}
	var missed []event
	if after < delivered {
		var ok bool
		if missed, ok = st.stored(r.Context(), out.w, after, delivered); !ok {
			return false
		}
	}
	st.mu.Lock()
	st.upgrade()
	st.mu.Unlock()
	st.kick()
	out.start(st, false, 0)
	for _, ev := range missed {
		if out.event(st.eventID(ev.seq), ev.data) != nil {
			return false
		}
	}
	return true
}

// stored reads the events after after, up to delivered, from the event
// store; on failure it answers w (409 when they are gone, 503 when the
// store failed) and ok is false.
func (st *stream) stored(ctx context.Context, w http.ResponseWriter, after, delivered uint64) (missed []event, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, st.h.opts.StoreTimeout)
	err := st.h.store.Replay(ctx, st.hs.ss.ID(), st.id, after, func(seq uint64, data []byte) error {
		if seq <= delivered {
			missed = append(missed, event{seq: seq, data: data})
		}
		return nil
	})
	cancel()
	// A live stream the store has forgotten (ErrUnknownStream: its
	// session's events expired) has lost its events as surely as a purged
	// one.
	if errors.Is(err, store.ErrEventsPurged) || errors.Is(err, store.ErrUnknownStream) {
		writeError(w, http.StatusConflict, mcp.ID{}, mcp.CodeInvalidRequest, "Conflict: the events after Last-Event-ID are no longer stored")
		return nil, false
	}
	if err != nil {
		st.h.log.Warn("streamhttp: event store replay failed", "session", st.hs.ss.ID(), "err", err)
		writeError(w, http.StatusServiceUnavailable, mcp.ID{}, mcp.CodeInternalError, "Service Unavailable: replay failed")
		return nil, false
	}
	return missed, true
}

// streamLoop is serve's delivery loop over one response.
//
// Nothing is set up for an answer that is already there (a JSON response
// served after its handler returned). At the first wait the stream joins
// h.inflight, whose watcher marks it silent after SSEAfter (then it turns
// into an event stream); the keep-alive ticker starts once the event
// stream has begun (before, a comment could not be sent).
//
// A session's streams end with the session: a request in flight gets its
// error answer, other streams are abandoned (httpSession.Close). A
// session-less stream ends with its final message: at shutdown its
// handler is cancelled and answers (subscriptions/listen with its
// result).
type streamLoop struct {
	st        *stream
	out       sseWriter
	r         *http.Request
	forceSSE  bool
	wait      *streamWait
	ticker    *time.Ticker
	keepAlive <-chan time.Time
}

// turn is what one step of the loop takes from the stream under its lock.
type turn struct {
	batch     []event
	wake      chan struct{} // closed by what is pushed after the take
	prev      uint64        // the sequence number delivered before batch
	unstored  bool          // events of the upgrade wait for the store
	closeConn bool          // the handler asked for the connection to end
	done      bool          // the stream ends after batch
	isSSE     bool
	// isJSON: the answer goes out as one JSON response, the final
	// message json alone, with its status.
	isJSON bool
	json   []byte
	status int
}

// stop releases what the loop set up.
func (l *streamLoop) stop() {
	if l.ticker != nil {
		l.ticker.Stop()
	}
	if l.wait != nil && !l.wait.left {
		l.st.h.inflight.leave(&l.wait.flight)
	}
}

// step takes, writes and waits once; it reports whether the loop goes on.
func (l *streamLoop) step() bool {
	st, out := l.st, &l.out
	t := st.take(l.forceSSE)
	if t.isJSON {
		st.finish()
		out.json(t.json, t.status)
		return false
	}
	if t.isSSE && !out.started {
		out.start(st, true, t.prev)
	}
	if !l.deliver(&t) {
		return false
	}
	out.flush()
	if t.unstored {
		// Events of the upgrade wait for the store: have them appended,
		// then deliver them.
		st.kick()
		return true
	}
	l.arm()
	return l.await(t.wake)
}

// take moves the deliverable events out of the stream, upgrading it to
// an event stream when the answer cannot be one JSON response.
func (st *stream) take(forceSSE bool) turn {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.sse && len(st.pending) > 0 && st.pending[0].final && !forceSSE {
		// JSON: the response is the first and only message.
		t := turn{isJSON: true, json: st.pending[0].data, status: st.status}
		st.pending, st.done = nil, true
		return t
	}
	t := turn{wake: st.wakeLocked()} // what is pushed from now on wakes the loop's wait
	if !st.sse && (len(st.pending) > 0 || forceSSE || st.closeConn) {
		st.upgrade()
	}
	n := st.deliverable()
	t.batch = st.pending[:n:n]
	st.pending = st.pending[n:]
	if len(st.pending) == 0 {
		st.pending = nil
	}
	t.unstored = st.unstored()
	t.prev = st.delivered
	t.closeConn, t.done, t.isSSE = st.closeConn, st.done, st.sse
	st.closeConn = false
	if n > 0 {
		st.delivered = t.batch[n-1].seq
	}
	return t
}

// deliver writes t's events; it reports whether the loop goes on.
func (l *streamLoop) deliver(t *turn) bool {
	st, out := l.st, &l.out
	finished := false
	for _, ev := range t.batch {
		finished = finished || ev.final
	}
	for _, ev := range t.batch {
		if out.event(st.eventID(ev.seq), ev.data) != nil {
			// The client went away; the store keeps the events. When the
			// batch held the response the stream is over all the same: a
			// resumption replays it from the store and ends.
			if finished {
				st.end()
			}
			return false
		}
	}
	switch {
	case finished:
		st.end()
		return false
	case t.done:
		return false
	case t.closeConn && out.started:
		out.retry(st.h.opts.RetryInterval)
		return false
	}
	return true
}

// arm sets up the waits of an unfinished stream: the watch for a silent
// answer before the event stream starts, the keep-alive once it has.
func (l *streamLoop) arm() {
	st, out := l.st, &l.out
	if l.wait == nil && !l.forceSSE && !out.started && st.h.opts.SSEAfter > 0 {
		l.wait = &streamWait{st: st}
		l.wait.flight.owner = l.wait
		st.h.inflight.join(&l.wait.flight)
	} else if l.wait != nil && !l.wait.left && out.started {
		st.h.inflight.leave(&l.wait.flight) // an event stream now: nothing to watch
		l.wait.left = true
	}
	if l.ticker == nil && out.started && st.h.opts.KeepAlive > 0 {
		l.ticker = time.NewTicker(st.h.opts.KeepAlive)
		l.keepAlive = l.ticker.C
	}
}

// await waits for news on the stream, a keep-alive tick or the client's
// leaving; it reports whether the loop goes on.
func (l *streamLoop) await(wake chan struct{}) bool {
	select {
	case <-wake:
		if l.wait != nil && l.wait.fired.Load() {
			l.forceSSE = true
		}
		return true
	case <-l.keepAlive:
		return !l.out.started || l.out.comment() == nil
	case <-l.r.Context().Done():
		if !l.out.started {
			// The client left before the answer began: it has no event id
			// to resume with, so nobody can collect what the handler
			// (which runs on) sends from now on.
			l.st.abandon()
			l.st.finish()
		}
		return false
	}
}
