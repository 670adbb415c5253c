package streamhttp

import (
	"context"
	"net/http"
	"net/url"
	"sync"
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
// (overCap counts these sessions too) and Shutdown.

// sseQuery is the query parameter naming the session in the endpoint
// the server announces.
const sseQuery = "sessionId"

// DefaultLegacySSEQueue is the default of Options.LegacySSEQueue.
const DefaultLegacySSEQueue = 256

// sseSession is one session of the 2024-11-05 transport. It is the
// transport its connection writes to (every message goes to the one
// stream) and the connection's handler.
type sseSession struct {
	h         *Handler
	ss        seam.Session
	out       chan []byte   // messages waiting for the stream
	done      chan struct{} // closed when the session ends
	closeOnce sync.Once

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

// Write implements transport.Conn by queueing the message for the stream;
// a full queue makes the writer wait (for the client to read, ctx or the
// end of the session). It keeps m.Data without a copy: its only writer is
// the session's jsonrpc.Conn, whose messages are freshly encoded.
func (s *sseSession) Write(ctx context.Context, m transport.Message) error {
	select {
	case <-s.done:
		return transport.ErrClosed
	default:
	}
	select {
	case s.out <- m.Data:
		return nil
	case <-s.done:
		return transport.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close implements transport.Conn: the stream ends.
func (s *sseSession) Close() error {
	s.closeOnce.Do(func() { close(s.done) })
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
	if r.Header.Get("Accept") != "" && !acceptsEvents(r) {
		writeError(w, http.StatusNotAcceptable, mcp.ID{}, mcp.CodeInvalidRequest, "Not Acceptable: Accept must list text/event-stream")
		return
	}
	principal := h.p.PrincipalFrom(r.Context())
	s := &sseSession{h: h, out: make(chan []byte, h.opts.LegacySSEQueue), done: make(chan struct{})}
	s.ss = h.p.NewSession(seam.SessionConfig{Conn: s, Handler: s, IDPrefix: h.idPrefix(), Principal: principal, Go: h.workers.Go})
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
	}
	if h.sse == nil {
		h.sse = make(map[string]*sseSession)
		h.sseEnding = make(map[*sseSession]chan struct{})
	}
	h.sse[id] = s
	h.admitted(id, principal)
	h.mu.Unlock()
	defer h.endLegacySSE(s)

	rc := http.NewResponseController(w)
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
	buf := make([]byte, 0, 1024)
	for {
		select {
		case msg := <-s.out:
			buf = sse.AppendTypedEvent(buf[:0], "message", msg)
			// Whatever else is queued goes in the same write.
			for more := true; more; {
				select {
				case msg := <-s.out:
					buf = sse.AppendTypedEvent(buf, "message", msg)
				default:
					more = false
				}
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
		if _, err := w.Write(buf); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}

// postLegacySSE hands one message to the 2024-11-05 session the query
// names: 202 once it is handed over, 404 for an unknown session (or one
// opened by another principal), and the handler's usual answers to a
// bad body.
func (h *Handler) postLegacySSE(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get(sseQuery)
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
