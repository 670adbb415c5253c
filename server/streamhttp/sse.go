package streamhttp

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/seam"

	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// The deprecated HTTP+SSE transport of 2024-11-05, served beside
// Streamable HTTP at the same endpoint when Options.LegacySSE is set
// (docs/design/legacy-sse.md):
//
//   - GET without Mcp-Session-Id (and without Last-Event-ID) opens a
//     session whose messages all travel on that one event stream. Its
//     first event, "endpoint", names where the client POSTs: this
//     endpoint's path with ?sessionId=<id>. Every server message follows
//     as a "message" event.
//   - POST with ?sessionId and no Mcp-Session-Id hands one message to that
//     session and is answered 202 Accepted; the answer, if any, comes on
//     the stream.
//   - The session ends with its stream (the client went away, or the
//     handler shuts down).
//
// The checks are the handler's own: Host and Origin (ServeHTTP), the body
// cap and read time (readBody), the message limits, the session caps
// (overCap counts these sessions too) and Shutdown. Three are this
// transport's: the GET that opens a session meets the Origin rule of a
// POST (sessionGETAllowed), a POST naming sessionId more than once is a
// 400, and the messages waiting for the stream are bounded and never
// waited on (ssequeue.go).

// sseQuery is the query parameter naming the session in the endpoint
// the server announces.
const sseQuery = "sessionId"

// DefaultLegacySSEQueue is the default of Options.LegacySSEQueue.
const DefaultLegacySSEQueue = 256

// DefaultMaxLegacySSESessions is the default of
// Options.MaxLegacySSESessions: 2,500 open streams of about 28 KB each
// take about the 74 MB that DefaultMaxSessions idle Streamable HTTP
// sessions do (docs/design/hardening.md, "Old HTTP+SSE transport").
const DefaultMaxLegacySSESessions = 2500

// sseSession is one session of the 2024-11-05 transport. It is the
// transport its connection writes to (every message goes to the one
// stream, through the queue of ssequeue.go) and the connection's
// handler. An idle session holds no queue and no buffer: both are made
// when a message comes.
type sseSession struct {
	h         *Handler
	ss        seam.Session
	wake      chan struct{} // one signal: the queue has messages
	done      chan struct{} // closed when the session ends
	closeOnce sync.Once
	dropped   atomic.Int64 // messages dropped for a full queue
	// abort ends a write of the stream in progress (a write deadline in
	// the past): set before the session is published, called by Close,
	// cleared (under abortMu) before the stream's handler returns, after
	// which its ResponseController must not be used.
	abortMu sync.Mutex
	abort   func()

	qmu      sync.Mutex
	q        [][]byte            // messages waiting for the stream; nil while none
	qLen     int                 // messages queued or being written
	qBytes   int                 // their bytes
	reserved map[mcp.ID]struct{} // requests admitted whose answer is not queued yet

	mu      sync.Mutex
	running int           // handlers running now
	quietCh chan struct{} // closed when running falls to 0, once asked for
	refuse  bool          // ending: run no more handlers
}

var (
	_ transport.Conn  = (*sseSession)(nil)
	_ jsonrpc.Handler = (*sseSession)(nil)
)

// Read implements transport.Conn: the connection has no read loop.
func (s *sseSession) Read(context.Context) ([]byte, error) { return nil, transport.ErrClosed }

// Close implements transport.Conn: the stream ends, even one stuck in a
// write to a client that does not read (abort).
func (s *sseSession) Close() error {
	s.closeOnce.Do(func() {
		close(s.done)
		s.abortMu.Lock()
		if s.abort != nil {
			s.abort()
		}
		s.abortMu.Unlock()
	})
	return nil
}

// HandleRequest implements jsonrpc.Handler, counting the handlers that
// run so that ending the session can wait for them.
func (s *sseSession) HandleRequest(ctx context.Context, msg *jsonrpc.Message) (any, error) {
	s.mu.Lock()
	if s.refuse {
		s.mu.Unlock()
		return nil, jsonrpc.NewError(mcp.CodeInternalError, "Internal error: the session has ended")
	}
	s.running++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running--
		if s.running == 0 && s.quietCh != nil {
			close(s.quietCh)
			s.quietCh = nil
		}
		s.mu.Unlock()
	}()
	return s.ss.HandleRequest(ctx, msg)
}

// HandleNotification implements jsonrpc.Handler.
func (s *sseSession) HandleNotification(ctx context.Context, n *jsonrpc.Message) {
	s.ss.HandleNotification(ctx, n)
}

// quiet refuses further handlers and returns a channel closed once none
// runs.
func (s *sseSession) quiet() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = true
	if s.running == 0 {
		return closedChan
	}
	if s.quietCh == nil {
		s.quietCh = make(chan struct{})
	}
	return s.quietCh
}

// legacySSEGet reports whether r opens a 2024-11-05 stream.
func (h *Handler) legacySSEGet(r *http.Request) bool {
	return h.opts.LegacySSE && !h.opts.Stateless && r.Method == http.MethodGet &&
		r.Header.Get(headerSessionID) == "" && r.Header.Get(headerLastEventID) == ""
}

// legacySSEPost reports whether r is a message of a 2024-11-05 session.
func (h *Handler) legacySSEPost(r *http.Request) bool {
	return h.opts.LegacySSE && !h.opts.Stateless && r.Method == http.MethodPost &&
		r.Header.Get(headerSessionID) == "" && r.URL.Query().Has(sseQuery)
}

// serveLegacySSE opens a 2024-11-05 session and serves its stream until
// the client leaves, the session ends or the handler shuts down.
func (h *Handler) serveLegacySSE(w http.ResponseWriter, r *http.Request) {
	if !h.opts.DisableHostCheck && !sessionGETAllowed(h, r) {
		writeError(w, http.StatusForbidden, mcp.ID{}, mcp.CodeInvalidRequest,
			"Forbidden: opening a 2024-11-05 session on this listener needs a checked Host (AllowedHosts) or an Origin in AllowedOrigins")
		return
	}
	if r.Header.Get("Accept") != "" && !acceptsEvents(r) {
		writeError(w, http.StatusNotAcceptable, mcp.ID{}, mcp.CodeInvalidRequest, "Not Acceptable: Accept must list text/event-stream")
		return
	}
	principal := h.p.PrincipalFrom(r.Context())
	rc := http.NewResponseController(w)
	s := &sseSession{h: h, wake: make(chan struct{}, 1), done: make(chan struct{}),
		abort: func() { _ = rc.SetWriteDeadline(time.Now()) }}
	s.ss = h.p.NewSession(seam.SessionConfig{Conn: s, Handler: s, IDPrefix: h.idPrefix(), Principal: principal, Go: h.workers.Go,
		WriteNeverWaits: true}) // Write queues or drops (ssequeue.go)
	id := s.ss.ID()
	h.mu.Lock()
	switch {
	case h.closed:
		h.mu.Unlock()
		s.ss.Remove()
		writeError(w, http.StatusServiceUnavailable, mcp.ID{}, mcp.CodeInternalError, "Service Unavailable: the server is shutting down")
		return
	case h.overCap(principal) != "":
		why := h.overCap(principal)
		h.mu.Unlock()
		s.ss.Remove()
		refuseOverCap(w, &jsonrpc.Message{}, why)
		return
	case h.opts.MaxLegacySSESessions >= 0 && len(h.sse) >= h.opts.MaxLegacySSESessions:
		h.mu.Unlock()
		s.ss.Remove()
		refuseOverCap(w, &jsonrpc.Message{}, "Service Unavailable: the server holds as many 2024-11-05 (HTTP+SSE) sessions as it allows; try again later")
		return
	}
	if h.sse == nil {
		h.sse = make(map[string]*sseSession)
		h.sseEnding = make(map[*sseSession]chan struct{})
	}
	h.sse[id] = s
	h.admitted(id, principal)
	h.mu.Unlock()
	defer func() { // runs last: no abort once the handler has returned
		s.abortMu.Lock()
		s.abort = nil
		s.abortMu.Unlock()
	}()
	defer h.endLegacySSE(s)

	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	endpoint := (&url.URL{Path: r.URL.Path, RawQuery: url.Values{sseQuery: {id}}.Encode()}).String()
	if _, err := w.Write(sse.AppendTypedEvent(nil, "endpoint", []byte(endpoint))); err != nil {
		return
	}
	if rc.Flush() != nil {
		return
	}
	var tick <-chan time.Time
	if h.opts.KeepAlive > 0 {
		t := time.NewTicker(h.opts.KeepAlive)
		defer t.Stop()
		tick = t.C
	}
	var buf []byte // made for a write, kept while more is waiting
	for {
		n, b := 0, 0
		select {
		case <-s.wake:
			buf, n, b = s.take(buf[:0])
			if n == 0 {
				continue
			}
		case <-tick:
			buf = sse.AppendComment(buf[:0], "keep-alive")
		case <-s.done:
			return
		case <-h.done:
			return
		case <-r.Context().Done():
			return
		}
		_, err := w.Write(buf)
		if err == nil {
			err = rc.Flush()
		}
		s.sent(n, b)
		if err != nil {
			return
		}
		if len(s.wake) == 0 {
			buf = nil // nothing more to send: an idle stream holds no buffer
		}
	}
}

// postLegacySSE hands one message to the 2024-11-05 session the query
// names: 202 once it is handed over, 404 for an unknown session (or one
// opened by another principal), 400 for a sessionId given more than
// once, 429 for a request whose answer the session's queue has no place
// for (ssequeue.go), and the handler's usual answers to a bad body.
func (h *Handler) postLegacySSE(w http.ResponseWriter, r *http.Request) {
	ids := r.URL.Query()[sseQuery]
	if len(ids) != 1 {
		// Which session a proxy or a log reads would be anyone's guess.
		writeError(w, http.StatusBadRequest, mcp.ID{}, mcp.CodeInvalidRequest, "Bad Request: the sessionId query parameter is given more than once")
		return
	}
	id := ids[0]
	h.mu.Lock()
	s := h.sse[id]
	h.mu.Unlock()
	if s == nil || s.ss.Principal() != h.p.PrincipalFrom(r.Context()) {
		writeError(w, http.StatusNotFound, mcp.ID{}, mcp.CodeInvalidRequest, "Not Found: unknown or ended session")
		return
	}
	if mediaType(r.Header.Get("Content-Type")) != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, mcp.ID{}, mcp.CodeInvalidRequest, "Unsupported Media Type: Content-Type must be application/json")
		return
	}
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	msg, ok := h.decode(w, body)
	if !ok {
		return
	}
	if msg.IsNotification() && msg.Method == mcp.NotificationInitialized {
		if err := s.ss.Initialized(); err != nil {
			writeRPCError(w, http.StatusServiceUnavailable, mcp.ID{}, seam.ToRPCError(err))
			return
		}
	} else {
		select {
		case <-s.done:
			writeError(w, http.StatusNotFound, msg.ID, mcp.CodeInvalidRequest, "Not Found: unknown or ended session")
			return
		default:
		}
		switch {
		case msg.IsRequest():
			if !s.admit(msg.ID) {
				refuseFull(w, msg.ID)
				return
			}
		case msg.IsNotification() && msg.Method == jsonrpc.MethodCancelled:
			s.cancelled(msg.Params)
		}
		s.ss.ProcessContext(r.Context(), msg)
	}
	w.WriteHeader(http.StatusAccepted)
}

// endLegacySSE ends a 2024-11-05 session: it is forgotten at once, its
// connection closes (requests in flight are cancelled), and a goroutine
// owned by h waits for its handlers before freeing it; Shutdown waits for
// that goroutine. Ending a session twice is harmless.
func (h *Handler) endLegacySSE(s *sseSession) {
	id := s.ss.ID()
	h.mu.Lock()
	if h.sse[id] != s {
		h.mu.Unlock()
		return
	}
	delete(h.sse, id)
	h.released(id)
	done := make(chan struct{})
	h.sseEnding[s] = done
	h.mu.Unlock()
	s.Close()
	s.ss.Close()
	go func() { // owned by h (sseEnding): ends when the session's handlers have returned
		<-s.quiet()
		s.ss.Remove()
		h.mu.Lock()
		delete(h.sseEnding, s)
		h.mu.Unlock()
		close(done)
	}()
}

// shutdownLegacySSE ends every 2024-11-05 session and returns what to
// wait for. Called by Shutdown.
func (h *Handler) shutdownLegacySSE() []<-chan struct{} {
	h.mu.Lock()
	all := make([]*sseSession, 0, len(h.sse))
	for _, s := range h.sse {
		all = append(all, s)
	}
	h.mu.Unlock()
	for _, s := range all {
		h.endLegacySSE(s)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	waits := make([]<-chan struct{}, 0, len(h.sseEnding))
	for _, done := range h.sseEnding {
		waits = append(waits, done)
	}
	return waits
}
