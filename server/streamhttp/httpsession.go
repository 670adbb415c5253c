package streamhttp

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/server/internal/seam"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// httpSession is a legacy Session served over HTTP. It is also the
// transport its jsonrpc.Conn writes to: each message goes to the stream
// of the request it belongs to (the Related id the connection puts in
// every transport.Message), everything else to the standalone GET
// stream. The connection is fed by the HTTP handler (Conn.Process), so an
// idle session owns no goroutine.
type httpSession struct {
	h        *Handler
	ss       seam.Session
	lastSeen atomic.Int64 // unix nanoseconds of the last HTTP activity
	busy     busyCount    // HTTP requests being served for the session
	// checkedUntil (unix nanoseconds; 0: never) is when this copy must
	// next be read from the SessionStore; checkedGap is the Handler's
	// gaps when it was read (sessionstore.go, fresh).
	checkedUntil atomic.Int64
	checkedGap   atomic.Uint64

	mu      sync.Mutex
	byReq   streamIndex[mcp.ID] // POST streams by request id, until the response is pushed
	byID    streamIndex[string] // resumable streams by stream id, until finished
	get     *stream             // the standalone stream, once opened
	early   [][]byte            // unrelated messages held until then (Options.EarlyMessages)
	running int                 // handlers of the session's requests running now
	quietCh chan struct{}       // closed when running falls to 0, once asked for
	// The flags side by side, in one word (an idle session's size: every
	// open session has one of these).
	opened bool // a standalone stream has been opened (here or elsewhere)
	origin bool // initialize made the session here (not a copy from the store)
	closed bool
	refuse bool // the session is closing: run no more handlers
	// ending is set (under h.mu, not mu) once endSession has begun closing it.
	ending bool
}

var (
	_ transport.Conn  = (*httpSession)(nil)
	_ jsonrpc.Handler = (*httpSession)(nil)
)

// closedChan is a closed channel.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// newStreamID names a new resumable stream (post: a POST's answer).
func (h *Handler) newStreamID(post bool) string {
	if h.cluster != nil {
		return h.cluster.newStreamID(post)
	}
	return h.streamSuffix()
}

// streamSuffix names a stream uniquely among every stream this handler
// makes (a counter, through a keyed permutation of 64-bit numbers, so
// that ids do not tell a client how many streams others opened) and
// those of any handler before or beside it (a random prefix drawn once):
// an event id then names one stream of its session even with a store
// that outlives the process. A stream id is no secret: resuming needs
// the session's id, and a store keys the events by session as well.
func (h *Handler) streamSuffix() string {
	var buf [32]byte
	b := append(buf[:0], h.streamPrefix...)
	return string(strconv.AppendUint(b, h.streamPerm.permute(h.streamSeq.Add(1)), 36))
}

// permutation is a keyed bijection of uint64: a four-round Feistel
// network over two 32-bit halves, each round the 64-bit finalizer of
// SplitMix64 over one half and its round's random key. Distinct inputs
// give distinct outputs, whatever the keys. It hides the counter's
// order, nothing more: stream ids are no secret (streamSuffix).
type permutation struct{ keys [4]uint64 }

// newPermutation draws the keys from crypto/rand.
func newPermutation() permutation {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	var p permutation
	for i := range p.keys {
		p.keys[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return p
}

func (p permutation) permute(x uint64) uint64 {
	l, r := uint32(x>>32), uint32(x)
	for _, k := range p.keys {
		z := uint64(r) ^ k
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		l, r = r, l^uint32(z^z>>31)
	}
	return uint64(l)<<32 | uint64(r)
}

func (hs *httpSession) touch() { hs.lastSeen.Store(hs.h.now().UnixNano()) }

// HandleRequest implements jsonrpc.Handler for the session's connection:
// the session answers, and the HTTP side counts the handlers running (so
// that a closing session knows when they are all done), gives a failed
// SessionStore write (or another unavailable store) its 503, and logs a result that comes too late for
// its session.
func (hs *httpSession) HandleRequest(ctx context.Context, msg *jsonrpc.Message) (any, error) {
	hs.mu.Lock()
	if hs.closed || hs.refuse {
		hs.mu.Unlock()
		return nil, jsonrpc.NewError(mcp.CodeInternalError, "Internal error: the session has ended")
	}
	hs.running++
	hs.mu.Unlock()
	defer hs.leave()
	res, err := hs.ss.HandleRequest(ctx, msg)
	if status := statusOf(err, 0); status != 0 {
		hs.setStatus(msg.ID, status)
	}
	hs.mu.Lock()
	late := hs.closed
	hs.mu.Unlock()
	if late {
		hs.h.log.Info("streamhttp: dropped the answer of a request whose session ended", "session", hs.ss.ID(), "method", msg.Method, "id", msg.ID.String())
	}
	return res, err
}

// HandleNotification implements jsonrpc.Handler.
func (hs *httpSession) HandleNotification(ctx context.Context, n *jsonrpc.Message) {
	hs.ss.HandleNotification(ctx, n)
}

// process hands a client's notification or response to the session. The
// one notification that changes the session's state, initialized, is
// recorded here, so that a SessionStore that refuses the change fails the
// POST that carried it (seam.ErrStoreUnavailable).
func (hs *httpSession) process(ctx context.Context, msg *jsonrpc.Message) error {
	if msg.IsNotification() && msg.Method == mcp.NotificationInitialized {
		return hs.ss.Initialized()
	}
	hs.ss.ProcessContext(ctx, msg)
	return nil
}

func (hs *httpSession) leave() {
	hs.mu.Lock()
	hs.running--
	if hs.running == 0 && hs.quietCh != nil {
		close(hs.quietCh)
		hs.quietCh = nil
	}
	hs.mu.Unlock()
}

// refuseIfIdle stops the session from running handlers if none runs
// now, and reports whether it did: closing it then waits for nobody.
func (hs *httpSession) refuseIfIdle() bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.running == 0 {
		hs.refuse = true
	}
	return hs.refuse
}

// quiet returns a channel closed once no handler of the session runs.
func (hs *httpSession) quiet() <-chan struct{} {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.running == 0 {
		return closedChan
	}
	if hs.quietCh == nil {
		hs.quietCh = make(chan struct{})
	}
	return hs.quietCh
}

// setStatus sets the HTTP status a request's answer gets when it is a
// JSON body.
func (hs *httpSession) setStatus(id mcp.ID, status int) {
	hs.mu.Lock()
	st := hs.byReq.get(id)
	hs.mu.Unlock()
	if st != nil {
		st.mu.Lock()
		st.status = status
		st.mu.Unlock()
	}
}

// Read implements transport.Conn. The connection of an HTTP session has
// no read loop: the handler feeds it with Conn.Process.
func (hs *httpSession) Read(ctx context.Context) ([]byte, error) {
	return nil, transport.ErrClosed
}

// Write implements transport.Conn by routing m.Data to the stream of
// the request m relates to. It keeps m.Data without a copy, unlike other
// carriers: its only writer is the session's jsonrpc.Conn, whose messages
// are freshly encoded and never reused.
func (hs *httpSession) Write(ctx context.Context, m transport.Message) error {
	msg := m.Data
	hs.mu.Lock()
	if hs.closed {
		hs.mu.Unlock()
		return transport.ErrClosed
	}
	var st *stream
	if m.Related.IsValid() {
		st = hs.byReq.get(m.Related)
		if m.Final {
			hs.byReq.del(m.Related)
		}
	} else {
		st = hs.get
		if st == nil && hs.holdEarly(m.Local) {
			hs.early = append(hs.early, msg)
			hs.mu.Unlock()
			return nil
		}
	}
	hs.mu.Unlock()
	if st == nil && !m.Related.IsValid() && hs.h.cluster != nil && !m.Local {
		// Another instance may hold the session's GET stream.
		hs.h.cluster.broadcast(ctx, &clusterMsg{Kind: kindNotify, Session: hs.ss.ID(), Msg: msg})
		return nil
	}
	if st == nil {
		// A message for a request that has ended, or an unrelated
		// notification while no standalone stream was ever opened: the
		// 2025-11-25 transport has no other place to put it.
		hs.h.log.Debug("streamhttp: no stream for message", "session", hs.ss.ID(), "related", m.Related.String())
		return nil
	}
	st.push(msg, m.Final)
	return nil
}

// Close implements transport.Conn; the session's own Close calls it.
func (hs *httpSession) Close() error {
	hs.mu.Lock()
	if hs.closed {
		hs.mu.Unlock()
		return nil
	}
	hs.closed = true
	// The requests still in flight get an error answer (an empty 200 would
	// leave the client guessing); the other streams just end.
	inFlight := hs.byReq.all()
	others := make([]*stream, 0, hs.byID.len()+1)
	for _, st := range hs.byID.all() {
		if !st.reqID.IsValid() || hs.byReq.get(st.reqID) != st {
			others = append(others, st)
		}
	}
	if hs.get != nil && hs.byID.get(hs.get.id) != hs.get {
		others = append(others, hs.get)
	}
	hs.byReq, hs.byID, hs.get, hs.early = streamIndex[mcp.ID]{}, streamIndex[string]{}, nil, nil
	hs.mu.Unlock()
	for _, st := range inFlight {
		st.push(hs.h.endedError(st.reqID), true)
	}
	for _, st := range others {
		st.abandon()
	}
	return nil
}

// ended reports whether the session has been closed.
func (hs *httpSession) ended() bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.closed
}

// openStream registers the stream of a POST request. It fails when a
// request with the same id is in flight, or the session has ended.
func (hs *httpSession) openStream(id mcp.ID) (*stream, bool) {
	st := newStream(hs.h, hs, id)
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.closed {
		return nil, false
	}
	if hs.byReq.get(id) != nil {
		return nil, false
	}
	hs.byReq.put(id, st)
	if st.id != "" {
		hs.byID.put(st.id, st)
	}
	return st, true
}

// getStream returns the standalone stream, creating it on first use
// (created reports that).
func (hs *httpSession) getStream() (st *stream, created bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.closed {
		return nil, false
	}
	if hs.get == nil {
		created = true
		st := newStream(hs.h, hs, mcp.ID{})
		// The messages held for the first stream go first. st is not
		// published yet, and not an event stream until upgraded, so this
		// numbers and stores nothing: no lock and no I/O needed.
		for _, msg := range hs.early {
			st.pending = append(st.pending, event{data: msg})
		}
		hs.early, hs.opened = nil, true
		hs.get = st
		if st.id != "" {
			hs.byID.put(st.id, st)
		}
	}
	return hs.get, created
}

// holdEarly reports whether an unrelated message, with no standalone
// stream to take it, is to be held for the session's first one
// (Options.EarlyMessages); local: the message is for this instance only.
// In a deployment, the instance that made the session holds every such
// message until a stream is opened, here or elsewhere (dropStandalone
// then forwards them); another instance's copy, which cannot know of a
// stream opened before it was made, sends them to whichever instance
// holds one. Called with mu held.
func (hs *httpSession) holdEarly(local bool) bool {
	o := &hs.h.opts
	if hs.opened || o.NoStandaloneStream || (hs.h.cluster != nil && !local && !hs.origin) {
		return false
	}
	if len(hs.early) >= o.EarlyMessages { // negative: never
		if o.EarlyMessages > 0 {
			hs.h.log.Warn("streamhttp: dropped a message held for a GET stream not yet opened", "session", hs.ss.ID())
		}
		return false
	}
	return true
}

// dropStandalone ends the standalone stream if it was made before born:
// another instance opened the session's standalone stream then, and a
// message goes on one stream only. (Announcements from two instances are
// not ordered; the creation times, from the instances' clocks, are.)
func (hs *httpSession) dropStandalone(born int64) {
	hs.mu.Lock()
	// The session has a standalone stream elsewhere: nothing is held here
	// for one any more, and what was held goes there, in order, off the
	// broker's delivery goroutine.
	early := hs.early
	hs.opened, hs.early = true, nil
	hs.mu.Unlock()
	if c := hs.h.cluster; len(early) > 0 && c != nil {
		id := hs.ss.ID()
		c.goTracked(func() {
			for _, msg := range early {
				c.broadcast(context.Background(), &clusterMsg{Kind: kindNotify, Session: id, Msg: msg})
			}
		})
	}
	hs.mu.Lock()
	st := hs.get
	if st == nil || st.born >= born {
		hs.mu.Unlock()
		return
	}
	hs.get = nil
	if st != nil && hs.byID.get(st.id) == st {
		hs.byID.del(st.id)
	}
	hs.mu.Unlock()
	if st != nil {
		st.abandon()
	}
}

// takeNotify takes another instance's message for the session's
// standalone stream: onto that stream if it is open here, else held as
// holdEarly holds one of the session's own (where the session was made).
func (hs *httpSession) takeNotify(msg []byte) {
	hs.mu.Lock()
	st := hs.get
	if st == nil && !hs.closed && hs.holdEarly(false) {
		hs.early = append(hs.early, msg)
	}
	hs.mu.Unlock()
	if st != nil {
		st.push(msg, false)
	}
}

// standalone returns the GET stream if one was opened here.
func (hs *httpSession) standalone() *stream {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.get
}

func (hs *httpSession) streamByID(id string) *stream {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.byID.get(id)
}

func (hs *httpSession) removeStream(st *stream) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.byID.get(st.id) == st {
		hs.byID.del(st.id)
	}
	if hs.byReq.get(st.reqID) == st {
		hs.byReq.del(st.reqID)
	}
}

// closeStream asks the reader of a request's stream to end its
// connection.
func (hs *httpSession) closeStream(id mcp.ID) {
	hs.mu.Lock()
	st := hs.byReq.get(id)
	hs.mu.Unlock()
	if st != nil {
		st.requestClose()
	}
}

// idle reports whether the session has had no HTTP activity since
// cutoff and serves no request now.
func (hs *httpSession) idle(cutoff int64) bool {
	return hs.busy.zero() && hs.lastSeen.Load() < cutoff
}

// busyCount counts the requests being served for a session (HTTP
// requests, and the other instances' requests relayed to it): the sweep
// ends only a session with none. hold and release are its only writers:
// whoever takes a hold gives it back once, with a deferred release where
// it can (Handler.session and loadSession return the session held, and
// their callers release it).
type busyCount struct{ n atomic.Int32 }

// hold counts one more request.
func (b *busyCount) hold() { b.n.Add(1) }

// release ends one hold.
func (b *busyCount) release() { b.n.Add(-1) }

// zero reports whether no request holds the session.
func (b *busyCount) zero() bool { return b.n.Load() == 0 }

// newSession returns a new HTTP session: a legacy session of the server
// whose connection writes into it.
func (h *Handler) newSession(id, principal string) *httpSession {
	hs := &httpSession{h: h, origin: id == ""}
	hs.ss = h.p.NewSession(seam.SessionConfig{Conn: hs, Handler: hs, IDPrefix: h.idPrefix(), CloseStream: hs.closeStream,
		ID: id, Principal: principal, OnChange: h.saver(hs), Go: h.workers.Go,
		WriteNeverWaits: true}) // Write pushes to a stream, which drops past maxPendingEvents
	return hs
}
