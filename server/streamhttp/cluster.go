package streamhttp

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/store"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/seam"
)

// Timings of the cluster protocol (docs/design/multi-instance.md).
const (
	// DefaultStoreTimeout bounds each SessionStore, EventStore and Broker
	// call made while serving a request, so that an unreachable store
	// fails the request (503) instead of hanging it.
	DefaultStoreTimeout = 2 * time.Second
	// DefaultSessionCheckInterval is how long an instance serves a
	// session from its own copy before reading it from the SessionStore
	// again (Options.SessionCheckInterval).
	DefaultSessionCheckInterval = time.Second
	// relayAttachTimeout is how long a resumed stream waits for the
	// instance that owns it to start relaying.
	relayAttachTimeout = 5 * time.Second
	// relayProbeInterval is how often a relayed stream checks that its
	// owner is still there.
	relayProbeInterval = 2 * time.Second
	// relayQueue bounds the relayed chunks waiting for a slow client;
	// past it the relay ends and the client resumes from the event store.
	relayQueue = 256
)

// Kinds of cluster messages.
const (
	kindResponse   = "response"   // a client's answer to one of the receiver's requests
	kindCancel     = "cancel"     // a client's notifications/cancelled, for whoever runs the request
	kindNotify     = "notify"     // a message of no request, for the holder of the GET stream
	kindStandalone = "standalone" // the sender now holds the session's GET stream
	kindState      = "state"      // a session's new state
	kindEnded      = "ended"      // a session was deleted
	kindChange     = "change"     // a list change or resource update
	kindAttach     = "attach"     // resumer → owner: relay this stream to me
	kindDetach     = "detach"     // resumer → owner: stop relaying
	kindProbe      = "probe"      // resumer → owner: still there? (only delivery counts)
	kindChunk      = "chunk"      // owner → resumer: bytes of the stream
	kindEnd        = "end"        // owner → resumer: the relay is over
	kindGone       = "gone"       // owner → resumer: the stream is not live here
)

// clusterMsg is what instances send each other, as JSON.
type clusterMsg struct {
	Kind    string              `json:"k"`
	From    string              `json:"from"`
	Session string              `json:"sid,omitzero"`
	Msg     jsontext.Value      `json:"msg,omitzero"`
	State   *store.SessionState `json:"state,omitzero"`
	Method  string              `json:"method,omitzero"`
	URI     string              `json:"uri,omitzero"`
	// Relays.
	Tag         string `json:"tag,omitzero"`
	Stream      string `json:"stream,omitzero"`
	After       uint64 `json:"after,omitzero"`
	Seq         uint64 `json:"seq,omitzero"`
	Status      int    `json:"status,omitzero"`
	ContentType string `json:"ct,omitzero"`
	Data        string `json:"data,omitzero"`
}

// cluster is a Handler's side of a Broker.
type cluster struct {
	h  *Handler
	b  store.Broker
	id string

	mu      sync.Mutex
	relays  map[string]*relayIn           // resumer side, by tag
	serving map[string]context.CancelFunc // owner side, by tag
	closed  bool
	wg      sync.WaitGroup // goroutines started by received messages
	stopRel func()         // removes the server's change relay

	// Changes from other instances are delivered in their order by one
	// goroutine (run), which ends at close. A change the same as one still
	// waiting (method and URI) is not queued again: the one waiting,
	// delivered later, says it too. So the queue holds each distinct
	// change at most once, however fast the others announce them.
	changes []*clusterMsg
	pending map[changeKey]struct{}   // the changes waiting in changes
	deliver func(method, uri string) // the protocol server's DeliverChange; tests replace it
	wake    chan struct{}
	done    chan struct{}

	// The protocol server's messages (cluster_peers.go).
	peer     seam.PeerHandler
	peerCtx  context.Context // ends at close: the server's calls being served
	peerStop func()
	calls    map[string]chan []byte // peer calls waiting for their answer, by tag
}

// changeKey names a change (clusterMsg of kind change): delivering it
// once tells every session what delivering it twice would.
type changeKey struct{ method, uri string }

func newCluster(h *Handler, b store.Broker) *cluster {
	c := &cluster{h: h, b: b, id: b.ID(), relays: make(map[string]*relayIn), serving: make(map[string]context.CancelFunc),
		pending: make(map[changeKey]struct{}), deliver: h.p.DeliverChange,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	c.goTracked(c.run)
	c.attachPeers()
	b.Receive(c.receive)
	if g, ok := b.(store.GapNotifier); ok {
		g.NotifyGaps(c.gap)
	}
	c.stopRel = h.p.AddRelay(c.announce)
	return c
}

// gap is called when the broker may have lost messages (it reconnected,
// or its queue overflowed):
// a lost "ended" or "state" would leave a session copy wrong, so every
// copy reads the store again at its next request.
func (c *cluster) gap() {
	c.h.gaps.Add(1)
	c.h.log.Info("streamhttp: the cluster broker may have lost messages; session copies are checked against the store again")
}

// run delivers the changes other instances announce, in order.
func (c *cluster) run() {
	for {
		select {
		case <-c.done:
			return
		case <-c.wake:
		}
		for {
			c.mu.Lock()
			if len(c.changes) == 0 {
				c.mu.Unlock()
				break
			}
			m := c.changes[0]
			c.changes[0] = nil
			c.changes = c.changes[1:]
			// Taken: the same change announced from now on is queued
			// again, since this delivery may already be past its sessions.
			delete(c.pending, changeKey{m.Method, m.URI})
			deliver := c.deliver
			c.mu.Unlock()
			deliver(m.Method, m.URI)
		}
	}
}

// close stops receiving, ends the relays this instance serves and waits
// for the goroutines it started.
func (c *cluster) close() {
	c.b.Receive(nil)
	if g, ok := c.b.(store.GapNotifier); ok {
		g.NotifyGaps(nil)
	}
	c.stopRel()
	c.peerStop()
	c.mu.Lock()
	c.closed = true
	for _, cancel := range c.serving {
		cancel()
	}
	c.changes = nil
	clear(c.pending)
	c.mu.Unlock()
	close(c.done)
	c.wg.Wait()
}

// goTracked runs fn on a goroutine the cluster waits for at close; false
// when closed.
func (c *cluster) goTracked(fn func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() { // owned by c: close waits for it
		defer c.wg.Done()
		fn()
	}()
	return true
}

func (c *cluster) encode(m *clusterMsg) ([]byte, error) {
	m.From = c.id
	b, err := json.Marshal(m)
	if err != nil { // only text that is not UTF-8 can fail
		return nil, fmt.Errorf("streamhttp: encoding a %s cluster message: %w", m.Kind, err)
	}
	return b, nil
}

// send delivers m to instance to within the store timeout.
func (c *cluster) send(ctx context.Context, to string, m *clusterMsg) (bool, error) {
	b, err := c.encode(m)
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.h.opts.StoreTimeout)
	defer cancel()
	return c.b.Send(ctx, to, b)
}

// broadcast delivers m to every other instance, logging a failure.
func (c *cluster) broadcast(ctx context.Context, m *clusterMsg) {
	b, err := c.encode(m)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.h.opts.StoreTimeout)
		defer cancel()
		err = c.b.Broadcast(ctx, b)
	}
	if err != nil {
		c.h.log.Warn("streamhttp: cluster broadcast failed", "kind", m.Kind, "err", err)
	}
}

// announce is the server's change relay: a list change or resource
// update made here reaches the other instances, in the order made.
func (c *cluster) announce(method, uri string) {
	c.broadcast(context.Background(), &clusterMsg{Kind: kindChange, Method: method, URI: uri})
}

// receive handles one message from another instance. It runs on the
// broker's delivery goroutine: anything that may wait goes elsewhere.
func (c *cluster) receive(raw []byte) {
	if from, data, ok := parsePeerCast(raw); ok {
		if string(from) != c.id {
			c.deliverCast(data)
		}
		return
	}
	var m clusterMsg
	if err := json.Unmarshal(raw, &m); err != nil || m.From == c.id {
		return
	}
	if c.receivePeer(&m) {
		return
	}
	h := c.h
	switch m.Kind {
	case kindResponse, kindCancel:
		if hs := h.local(m.Session); hs != nil {
			msg, err := wire.Decode(m.Msg, jsonrpc.Limits{MaxBytes: int(h.opts.MaxBodyBytes), MaxDepth: h.p.Limits().MaxDepth})
			if err == nil {
				hs.ss.Process(msg)
			}
		}
	case kindNotify:
		if hs := h.local(m.Session); hs != nil {
			hs.takeNotify(m.Msg)
		}
	case kindStandalone:
		if hs := h.local(m.Session); hs != nil {
			hs.dropStandalone(int64(m.Seq))
		}
	case kindState:
		if hs := h.local(m.Session); hs != nil && m.State != nil {
			hs.ss.Restore(m.State)
		}
	case kindEnded:
		if hs := h.local(m.Session); hs != nil {
			// At once, before it ends: a request that comes meanwhile
			// asks the store, which no longer has it.
			hs.invalidate()
			c.goTracked(func() { h.endSession(hs) })
		}
	case kindChange:
		k := changeKey{m.Method, m.URI}
		c.mu.Lock()
		if _, waiting := c.pending[k]; !waiting && !c.closed {
			c.pending[k] = struct{}{}
			c.changes = append(c.changes, &m)
		}
		c.mu.Unlock()
		select {
		case c.wake <- struct{}{}:
		default:
		}
	case kindAttach:
		c.attach(&m)
	case kindDetach:
		c.mu.Lock()
		cancel := c.serving[m.Tag]
		c.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	case kindChunk, kindEnd, kindGone:
		c.mu.Lock()
		in := c.relays[m.Tag]
		c.mu.Unlock()
		if in != nil {
			in.deliver(&m)
		}
	}
}

// Ids: server→client requests of a session carry the instance that sent
// them ("<instance>-<n>"), and so do stream ids
// ("<instance>-p<random>" for a POST's stream, "<instance>-g<random>" for
// the standalone GET stream), so that an answer or a resumption that
// lands elsewhere finds its way back.

func (c *cluster) idPrefix() string { return c.id + "-" }

func (c *cluster) newStreamID(post bool) string {
	kind := "g"
	if post {
		kind = "p"
	}
	return c.id + "-" + kind + c.h.streamSuffix()
}

// ownerOfID returns the instance named by a request id, or "".
func ownerOfID(id mcp.ID) string {
	if !id.IsString() {
		return ""
	}
	owner, _, ok := strings.Cut(id.Str(), "-")
	if !ok {
		return ""
	}
	return owner
}

// ownerOfStream returns the instance that owns a stream and whether the
// stream answers a POST; owner is "" for a stream of no instance.
func ownerOfStream(streamID string) (owner string, post bool) {
	owner, rest, ok := strings.Cut(streamID, "-")
	if !ok || rest == "" {
		return "", false
	}
	return owner, rest[0] == 'p'
}

// forwardResponse sends a client's answer to the instance whose request
// it answers, when that is another one. handled is false when the answer
// is this instance's; ok is false when it could not be delivered (the
// instance is gone or the broker unreachable): the POST then fails with
// 503, so that the client knows, and may send it again.
func (c *cluster) forwardResponse(ctx context.Context, hs *httpSession, msg *jsonrpc.Message, raw []byte) (handled, ok bool) {
	owner := ownerOfID(msg.ID)
	if owner == "" || owner == c.id {
		return false, false
	}
	delivered, err := c.send(ctx, owner, &clusterMsg{Kind: kindResponse, Session: hs.ss.ID(), Msg: raw})
	if err != nil || !delivered {
		c.h.log.Warn("streamhttp: answer for another instance not delivered", "session", hs.ss.ID(), "instance", owner, "id", msg.ID.String(), "err", err)
		return true, false
	}
	return true, true
}

// relayIn is the resumer's end of a relayed stream.
type relayIn struct {
	ch     chan *clusterMsg
	broken chan struct{} // closed when a chunk could not be queued
	once   sync.Once
}

func (in *relayIn) deliver(m *clusterMsg) {
	select {
	case in.ch <- m:
	default:
		in.once.Do(func() { close(in.broken) })
	}
}

// resumeRemote serves a GET with Last-Event-ID for a stream another
// instance owns: the owner replays and relays it live through the broker.
func (c *cluster) resumeRemote(w http.ResponseWriter, r *http.Request, hs *httpSession, streamID string, seq uint64, owner string, post bool) {
	tag := rand.Text()[:16]
	in := &relayIn{ch: make(chan *clusterMsg, relayQueue), broken: make(chan struct{})}
	c.mu.Lock()
	c.relays[tag] = in
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.relays, tag)
		c.mu.Unlock()
	}()
	ok, err := c.send(r.Context(), owner, &clusterMsg{Kind: kindAttach, Session: hs.ss.ID(), Stream: streamID, After: seq, Tag: tag})
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, mcp.ID{}, mcp.CodeInternalError, "Service Unavailable: the cluster broker is unreachable")
		return
	}
	if !ok {
		c.h.resumeOrphan(w, r, hs, streamID, seq, post)
		return
	}
	detach := func() {
		_, _ = c.send(context.Background(), owner, &clusterMsg{Kind: kindDetach, Tag: tag})
	}
	attach := time.NewTimer(relayAttachTimeout)
	defer attach.Stop()
	probe := time.NewTicker(relayProbeInterval)
	defer probe.Stop()
	rc := http.NewResponseController(w)
	started := false
	var next uint64 = 1
	for {
		select {
		case m := <-in.ch:
			switch m.Kind {
			case kindGone:
				c.h.replayStored(w, r, hs, streamID, seq)
				return
			case kindEnd:
				if !started {
					writeError(w, http.StatusServiceUnavailable, mcp.ID{}, mcp.CodeInternalError, "Service Unavailable: the stream's instance ended the relay")
				}
				return
			case kindChunk:
				if m.Seq != next { // a chunk was lost: let the client resume
					detach()
					return
				}
				next++
				if !started {
					started = true
					attach.Stop()
					if m.ContentType != "" {
						w.Header().Set("Content-Type", m.ContentType)
					}
					w.Header().Set("Cache-Control", "no-cache")
					w.WriteHeader(max(m.Status, http.StatusOK))
				}
				if _, err := w.Write([]byte(m.Data)); err != nil {
					detach()
					return
				}
				_ = rc.Flush()
			}
		case <-in.broken:
			detach()
			return
		case <-attach.C:
			if !started {
				detach()
				writeError(w, http.StatusServiceUnavailable, mcp.ID{}, mcp.CodeInternalError, "Service Unavailable: the stream's instance did not answer")
				return
			}
		case <-probe.C:
			if ok, err := c.send(r.Context(), owner, &clusterMsg{Kind: kindProbe, Tag: tag}); err == nil && !ok {
				c.h.log.Info("streamhttp: the instance of a relayed stream is gone", "instance", owner, "stream", streamID)
				return // the client resumes, and finds the owner gone
			}
		case <-r.Context().Done():
			detach()
			return
		case <-c.h.done:
			detach()
			return
		}
	}
}

// attach starts relaying a local stream to the instance that asked.
func (c *cluster) attach(m *clusterMsg) {
	hs := c.h.local(m.Session)
	var st *stream
	if hs != nil {
		st = hs.streamByID(m.Stream)
	}
	if st == nil {
		c.goTracked(func() { _, _ = c.send(context.Background(), m.From, &clusterMsg{Kind: kindGone, Tag: m.Tag}) })
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cancel()
		return
	}
	c.serving[m.Tag] = cancel
	c.mu.Unlock()
	hs.busy.hold()
	c.goTracked(func() {
		defer func() {
			hs.busy.release()
			c.mu.Lock()
			delete(c.serving, m.Tag)
			c.mu.Unlock()
			cancel()
		}()
		rw := &relayWriter{c: c, to: m.From, tag: m.Tag, header: make(http.Header), ctx: ctx, cancel: cancel}
		req := (&http.Request{Method: http.MethodGet, Header: make(http.Header)}).WithContext(ctx)
		st.serve(rw, req, int64(m.After))
		rw.Flush()
		_, _ = c.send(context.Background(), m.From, &clusterMsg{Kind: kindEnd, Tag: m.Tag})
	})
}

// relayWriter is the owner's end of a relayed stream: an
// http.ResponseWriter whose flushed bytes go to the resumer as chunks.
type relayWriter struct {
	c      *cluster
	to     string
	tag    string
	header http.Header
	ctx    context.Context
	cancel context.CancelFunc
	status int
	buf    []byte
	seq    uint64
	failed bool
}

func (rw *relayWriter) Header() http.Header { return rw.header }

func (rw *relayWriter) WriteHeader(status int) {
	if rw.status == 0 {
		rw.status = status
	}
}

func (rw *relayWriter) Write(p []byte) (int, error) {
	if rw.failed {
		return 0, context.Canceled
	}
	if rw.status == 0 {
		rw.status = http.StatusOK
	}
	rw.buf = append(rw.buf, p...)
	return len(p), nil
}

// Flush sends what was written as one chunk. A resumer that is gone
// ends the relay.
func (rw *relayWriter) Flush() {
	if rw.failed || (len(rw.buf) == 0 && (rw.seq > 0 || rw.status == 0)) {
		return
	}
	rw.seq++
	m := &clusterMsg{Kind: kindChunk, Tag: rw.tag, Seq: rw.seq, Data: string(rw.buf)}
	if rw.seq == 1 {
		m.Status = rw.status
		m.ContentType = rw.header.Get("Content-Type")
	}
	rw.buf = rw.buf[:0]
	ok, err := rw.c.send(rw.ctx, rw.to, m)
	if err != nil || !ok {
		rw.failed = true
		rw.cancel()
	}
}

// local returns this instance's copy of a session, or nil.
func (h *Handler) local(id string) *httpSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id]
}

// localStandalone returns session id's standalone (GET) stream if this
// instance holds the session and the stream, else nil.
func (h *Handler) localStandalone(id string) *stream {
	if hs := h.local(id); hs != nil {
		return hs.standalone()
	}
	return nil
}
