package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Defaults of HTTPOptions.
const (
	// DefaultMaxBodyBytes caps a POST body: 4 MiB.
	DefaultMaxBodyBytes = 4 << 20
	// DefaultSessionTTL is how long a session may stay idle.
	DefaultSessionTTL = 30 * time.Minute
	// DefaultKeepAlive is the interval of SSE keep-alive comments.
	DefaultKeepAlive = 15 * time.Second
	// DefaultSSEAfter is how long a POST may stay silent before its
	// answer becomes an event stream (so that keep-alives can flow).
	DefaultSSEAfter = 10 * time.Second
	// DefaultRetryInterval is the reconnection delay sent on SSE streams.
	DefaultRetryInterval = time.Second
)

// Header names of the Streamable HTTP transport.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerLastEventID     = "Last-Event-Id"
)

// HTTPOptions configures an HTTPHandler. The zero value is the secure
// default: sessions, resumable streams kept in memory, DNS-rebinding
// protection, and the limits below.
type HTTPOptions struct {
	// Stateless serves the legacy wire without sessions: no
	// Mcp-Session-Id is issued, each request stands alone, and
	// server→client requests are refused.
	Stateless bool
	// AlwaysSSE answers every request with an event stream; by default a
	// request whose response is its only message gets a JSON body.
	AlwaysSSE bool
	// SSEAfter: a request silent this long turns into an event stream.
	// Default DefaultSSEAfter; negative never.
	SSEAfter time.Duration
	// KeepAlive is the interval of SSE comments on idle streams.
	// Default DefaultKeepAlive; negative disables them.
	KeepAlive time.Duration
	// RetryInterval is sent as retry: on SSE streams. Default
	// DefaultRetryInterval.
	RetryInterval time.Duration
	// NoStandaloneStream answers GET without Last-Event-ID with 405.
	NoStandaloneStream bool
	// EventStore keeps SSE events for resumption. Default: a
	// MemoryEventStore with its default bounds.
	EventStore EventStore
	// SessionStore, when set, keeps each session's negotiated state
	// outside the process, so that other instances sharing it can serve
	// the session. Local idle sweeps and Close then drop only this
	// instance's copy; DELETE deletes the session everywhere. The store
	// is expected to expire abandoned sessions itself.
	SessionStore SessionStore
	// Broker connects this handler to the other instances of a
	// deployment that share its SessionStore and EventStore, so that a
	// session's requests, answers and resumptions can land on any of
	// them (see Broker and docs/design/multi-instance.md). It is meant
	// with a shared SessionStore and EventStore: without them a session
	// is still known only where it began. Give each handler its own
	// Broker; Close does not close it.
	Broker Broker
	// StoreTimeout bounds each SessionStore, EventStore and Broker call
	// made while serving a request; past it the request fails with 503.
	// It also bounds each EventStore append (see docs/design/hardening.md
	// for what a failed append means). Default DefaultStoreTimeout.
	StoreTimeout time.Duration
	// SessionTTL closes sessions idle this long and frees all they
	// hold. Default DefaultSessionTTL; negative never.
	SessionTTL time.Duration
	// MaxBodyBytes caps a POST body (413 beyond). Default
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// AllowedHosts lists the Host header values accepted, as host or
	// host:port. Empty: when the server listens on a loopback address
	// only loopback names (localhost, 127.0.0.1, [::1]) are accepted;
	// otherwise any host. This is the DNS-rebinding protection.
	AllowedHosts []string
	// AllowedOrigins lists the Origin header values accepted (such as
	// "https://app.example.com"). Empty: an Origin must be loopback on a
	// loopback server, or match the request's Host. Requests without
	// Origin (non-browser clients) are always accepted.
	AllowedOrigins []string
	// DisableHostCheck turns off the Host and Origin checks.
	DisableHostCheck bool
}

// HTTPHandler serves an MCP server over Streamable HTTP at one endpoint.
type HTTPHandler struct {
	srv     *Server
	opts    HTTPOptions
	store   EventStore
	log     *slog.Logger
	cluster *cluster // nil without a Broker

	mu       sync.Mutex
	sessions map[string]*httpSession
	closed   bool
	done     chan struct{}
	// closing is cancelled (cause ErrServerClosing) by Close: session-less
	// requests end with it, and subscriptions/listen ends gracefully.
	closing   context.Context
	stopAll   context.CancelCauseFunc
	sweeping  bool
	sweepDone chan struct{}
	// ending holds the sessions being closed (see endSession), each with
	// a channel closed when its closing is over; Shutdown waits for them.
	ending map[*httpSession]chan struct{}
	// clusterDone is closed once the cluster side has stopped (Shutdown).
	clusterDone chan struct{}
	// now is the clock of idle times and the sweep (tests replace it).
	now func() time.Time
	// closeAfter, when positive, replaces DefaultCloseTimeout (tests).
	closeAfter time.Duration
}

// NewHTTPHandler returns a handler serving s; opts may be nil. Shut it
// down (Shutdown or Close) to end its sessions.
func NewHTTPHandler(s *Server, opts *HTTPOptions) *HTTPHandler {
	h := &HTTPHandler{srv: s, log: s.log, sessions: make(map[string]*httpSession), done: make(chan struct{}),
		ending: make(map[*httpSession]chan struct{}), now: time.Now}
	h.closing, h.stopAll = context.WithCancelCause(context.Background())
	if opts != nil {
		h.opts = *opts
	}
	o := &h.opts
	if o.SSEAfter == 0 {
		o.SSEAfter = DefaultSSEAfter
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = DefaultKeepAlive
	}
	if o.RetryInterval <= 0 {
		o.RetryInterval = DefaultRetryInterval
	}
	if o.SessionTTL == 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.StoreTimeout <= 0 {
		o.StoreTimeout = DefaultStoreTimeout
	}
	h.store = o.EventStore
	if h.store == nil && !o.Stateless {
		h.store = NewMemoryEventStore(nil)
	}
	if o.Broker != nil && !o.Stateless {
		h.cluster = newCluster(h, o.Broker)
	}
	return h
}

// SessionCount reports how many sessions are open.
func (h *HTTPHandler) SessionCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// ServeHTTP implements http.Handler.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.opts.DisableHostCheck {
		if status, msg := h.checkHostOrigin(r); status != 0 {
			writeError(w, status, mcp.ID{}, mcp.CodeInvalidRequest, msg)
			return
		}
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeError(w, http.StatusMethodNotAllowed, mcp.ID{}, mcp.CodeInvalidRequest, "Method Not Allowed")
	}
}

// checkHostOrigin is the DNS-rebinding protection: it returns 403 and a
// reason for a Host or Origin that is not allowed.
func (h *HTTPHandler) checkHostOrigin(r *http.Request) (int, string) {
	loopback := isLoopbackListener(r)
	if len(h.opts.AllowedHosts) > 0 {
		hostname := hostOnly(r.Host)
		if !slices.ContainsFunc(h.opts.AllowedHosts, func(a string) bool {
			return strings.EqualFold(a, r.Host) || strings.EqualFold(a, hostname)
		}) {
			return http.StatusForbidden, "Forbidden: Host not allowed"
		}
	} else if loopback && !isLoopbackName(hostOnly(r.Host)) {
		return http.StatusForbidden, "Forbidden: Host not allowed"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return 0, ""
	}
	if len(h.opts.AllowedOrigins) > 0 {
		if slices.Contains(h.opts.AllowedOrigins, origin) {
			return 0, ""
		}
		return http.StatusForbidden, "Forbidden: Origin not allowed"
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return http.StatusForbidden, "Forbidden: invalid Origin"
	}
	if (loopback && isLoopbackName(u.Hostname())) || strings.EqualFold(u.Host, r.Host) {
		return 0, ""
	}
	return http.StatusForbidden, "Forbidden: Origin not allowed"
}

func isLoopbackListener(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return true // unknown (e.g. httptest.NewRecorder): be strict
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return true
	}
	ip := net.ParseIP(host)
	return ip == nil || ip.IsLoopback()
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func isLoopbackName(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// mediaType returns the lower-case media type of a Content-Type value or
// an Accept element, "" when malformed. The plain forms clients send
// ("application/json", "text/event-stream") are returned as they are,
// without a parse.
func mediaType(s string) string {
	plain, slashes := true, 0
	for i := 0; i < len(s) && plain; i++ {
		switch c := s[i]; {
		case c == '/':
			slashes++
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '.', c == '+', c == '*', c == '_':
		default:
			plain = false
		}
	}
	if plain && slashes == 1 && s[0] != '/' && s[len(s)-1] != '/' {
		return s
	}
	mt, _, err := mime.ParseMediaType(s)
	if err != nil {
		return ""
	}
	return mt
}

// acceptsBoth reports whether the Accept header lists both JSON and SSE
// (wildcards count).
func acceptsBoth(r *http.Request) bool {
	var json, events bool
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			switch mediaType(strings.TrimSpace(part)) {
			case "*/*":
				json, events = true, true
			case "application/json", "application/*":
				json = true
			case "text/event-stream", "text/*":
				events = true
			}
		}
	}
	return json && events
}

func (h *HTTPHandler) post(w http.ResponseWriter, r *http.Request) {
	if mediaType(r.Header.Get("Content-Type")) != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, mcp.ID{}, mcp.CodeInvalidRequest, "Unsupported Media Type: Content-Type must be application/json")
		return
	}
	if !acceptsBoth(r) {
		writeError(w, http.StatusNotAcceptable, mcp.ID{}, mcp.CodeInvalidRequest, "Not Acceptable: Accept must list application/json and text/event-stream")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, mcp.ID{}, mcp.CodeInvalidRequest, "Request Entity Too Large")
			return
		}
		writeError(w, http.StatusBadRequest, mcp.ID{}, mcp.CodeParseError, "Parse error: reading the body failed")
		return
	}
	msg, derr := jsonrpc.Decode(body, jsonrpc.Limits{MaxBytes: int(h.opts.MaxBodyBytes), MaxDepth: h.srv.opts.Limits.MaxDepth})
	if derr != nil {
		id := mcp.ID{}
		if msg != nil {
			id = msg.ID
		}
		writeError(w, http.StatusBadRequest, id, derr.Code, derr.Message)
		return
	}
	// Which era? A session id means a legacy session (session-less servers
	// ignore it). Otherwise a modern
	// claim in the body, or a 2026 MCP-Protocol-Version header, selects
	// the modern era (spec.md §3.3); everything else is legacy traffic.
	if h.opts.Stateless || r.Header.Get(headerSessionID) == "" {
		wp := &wireParams{}
		if msg.IsRequest() {
			var err error
			if wp, err = decodeWire(msg.Params); err != nil { // the one decode of params
				e, _ := jsonrpc.AsError(err)
				writeRPCError(w, http.StatusBadRequest, msg.ID, e)
				return
			}
		}
		if env, claimed, eerr := liftEnvelope(wp); claimed || mcp.IsModern(r.Header.Get(headerProtocolVersion)) {
			h.postModern(w, r, msg, wp, env, claimed, eerr)
			return
		}
		if h.opts.Stateless {
			h.postStateless(w, r, msg, wp)
			return
		}
		if msg.IsRequest() && msg.Method == mcp.MethodInitialize {
			h.initialize(w, r, msg)
			return
		}
	}
	hs, ok := h.session(w, r)
	if !ok {
		return
	}
	defer hs.busy.Add(-1)
	if !msg.IsRequest() {
		if c := h.cluster; c != nil {
			if msg.IsResponse() {
				if handled, ok := c.forwardResponse(r.Context(), hs, msg, body); handled {
					if !ok {
						writeError(w, http.StatusServiceUnavailable, mcp.ID{}, mcp.CodeInternalError, "Service Unavailable: the server instance that sent this request cannot be reached")
						return
					}
					w.WriteHeader(http.StatusAccepted)
					return
				}
			}
			if msg.Method == jsonrpc.MethodCancelled {
				// The request may run on another instance.
				c.broadcast(r.Context(), &clusterMsg{Kind: kindCancel, Session: hs.ss.id, Msg: body})
			}
		}
		if err := hs.process(r.Context(), msg); err != nil {
			writeRPCError(w, http.StatusServiceUnavailable, mcp.ID{}, toRPCError(err))
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	st, ok := hs.openStream(msg.ID)
	if !ok {
		writeError(w, http.StatusBadRequest, msg.ID, mcp.CodeInvalidRequest, "Invalid Request: a request with this id is already in flight")
		return
	}
	hs.ss.conn.ProcessContext(r.Context(), msg)
	st.serve(w, r, -1)
}

// session finds the session a request names, answering 400 (no id), 404
// (unknown or ended) or 400 (bad protocol version header) itself. On
// success the session is marked busy; the caller decrements busy.
func (h *HTTPHandler) session(w http.ResponseWriter, r *http.Request) (*httpSession, bool) {
	id := r.Header.Get(headerSessionID)
	if id == "" {
		writeError(w, http.StatusBadRequest, mcp.ID{}, mcp.CodeInvalidRequest, "Bad Request: the Mcp-Session-Id header is required")
		return nil, false
	}
	h.mu.Lock()
	hs := h.sessions[id]
	if hs != nil {
		hs.busy.Add(1)
	}
	h.mu.Unlock()
	if h.opts.SessionStore != nil {
		var status int
		if hs, status = h.sharedSession(r.Context(), id, hs); status != 0 {
			writeError(w, status, mcp.ID{}, mcp.CodeInternalError, "Service Unavailable: the session store is unreachable")
			return nil, false
		}
	}
	if hs == nil {
		writeError(w, http.StatusNotFound, mcp.ID{}, mcp.CodeInvalidRequest, "Not Found: unknown or ended session")
		return nil, false
	}
	if hs.ss.principalOf() != principalFrom(r.Context()) {
		// A session belongs to the principal that opened it: presented
		// with another's credentials, its id names no session (MCP
		// security best practices: session ids are not authentication).
		hs.busy.Add(-1)
		writeError(w, http.StatusNotFound, mcp.ID{}, mcp.CodeInvalidRequest, "Not Found: unknown or ended session")
		return nil, false
	}
	hs.touch()
	if v := r.Header.Get(headerProtocolVersion); v != "" && !isLegacyVersion(v) {
		hs.busy.Add(-1)
		writeError(w, http.StatusBadRequest, mcp.ID{}, mcp.CodeInvalidRequest, "Bad Request: unsupported MCP-Protocol-Version "+v)
		return nil, false
	}
	return hs, true
}

func (h *HTTPHandler) initialize(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, msg.ID, mcp.CodeInternalError, "the server is shutting down")
		return
	}
	hs := &httpSession{h: h}
	hs.ss = h.srv.newHTTPSession(hs)
	hs.ss.principal = principalFrom(r.Context()) // before anyone else sees the session
	h.track(hs)
	hs.touch()
	h.sessions[hs.ss.id] = hs
	hs.busy.Add(1)
	h.startSweeper()
	h.mu.Unlock()
	defer hs.busy.Add(-1)
	st, _ := hs.openStream(msg.ID)
	hs.ss.conn.ProcessContext(r.Context(), msg)
	h.answerInitialize(w, r, hs, st)
}

func (h *HTTPHandler) get(w http.ResponseWriter, r *http.Request) {
	if h.opts.Stateless {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, mcp.ID{}, mcp.CodeInvalidRequest, "Method Not Allowed: this server has no sessions")
		return
	}
	if modernWithoutSession(w, r) {
		return
	}
	if !acceptsEvents(r) {
		writeError(w, http.StatusNotAcceptable, mcp.ID{}, mcp.CodeInvalidRequest, "Not Acceptable: Accept must list text/event-stream")
		return
	}
	hs, ok := h.session(w, r)
	if !ok {
		return
	}
	defer hs.busy.Add(-1)
	if last := r.Header.Get(headerLastEventID); last != "" {
		h.resume(w, r, hs, last)
		return
	}
	if h.opts.NoStandaloneStream {
		w.Header().Set("Allow", "POST, DELETE")
		writeError(w, http.StatusMethodNotAllowed, mcp.ID{}, mcp.CodeInvalidRequest, "Method Not Allowed: no standalone stream")
		return
	}
	h.serveStandalone(w, r, hs)
}

// serveStandalone serves the session's standalone GET stream.
func (h *HTTPHandler) serveStandalone(w http.ResponseWriter, r *http.Request, hs *httpSession) {
	st, created := hs.getStream()
	if created && st != nil && h.cluster != nil {
		// The server sends each message on one stream: the instances
		// that held this session's standalone stream drop theirs.
		h.cluster.broadcast(r.Context(), &clusterMsg{Kind: kindStandalone, Session: hs.ss.id, Seq: uint64(st.born)})
	}
	if st == nil {
		writeError(w, http.StatusNotFound, mcp.ID{}, mcp.CodeInvalidRequest, "Not Found: unknown or ended session")
		return
	}
	st.mu.Lock()
	st.upgrade()
	st.mu.Unlock()
	st.serve(w, r, -1)
}

// resume serves GET with Last-Event-ID: the events of that event's
// stream after it, then the stream live if it is still open.
func (h *HTTPHandler) resume(w http.ResponseWriter, r *http.Request, hs *httpSession, last string) {
	streamID, seq, ok := parseEventID(last)
	if !ok {
		writeError(w, http.StatusBadRequest, mcp.ID{}, mcp.CodeInvalidRequest, "Bad Request: malformed Last-Event-ID")
		return
	}
	if st := hs.streamByID(streamID); st != nil {
		st.serve(w, r, int64(seq))
		return
	}
	if c := h.cluster; c != nil {
		if owner, post := ownerOfStream(streamID); owner != "" && owner != c.id {
			c.resumeRemote(w, r, hs, streamID, seq, owner, post)
			return
		}
	}
	h.replayStored(w, r, hs, streamID, seq)
}

// replayStored answers a resumption of a stream that is not live: the
// events the store still has after seq, then the end of the response.
func (h *HTTPHandler) replayStored(w http.ResponseWriter, r *http.Request, hs *httpSession, streamID string, seq uint64) {
	if events, ok := h.storedEvents(w, r, hs, streamID, seq); ok {
		h.writeReplay(w, hs, streamID, events)
	}
}

// resumeOrphan answers a resumption of a stream whose instance is gone
// (docs/design/multi-instance.md): the events stored after seq if there
// are any — the client resumes again after them. With none left, the
// standalone stream continues here as this instance's own; a POST's
// stream fails for good with 410, so that the client's call ends with an
// error instead of resuming in vain: its outcome is unknown.
func (h *HTTPHandler) resumeOrphan(w http.ResponseWriter, r *http.Request, hs *httpSession, streamID string, seq uint64, post bool) {
	events, ok := h.storedEvents(w, r, hs, streamID, seq)
	switch {
	case !ok:
	case len(events) > 0:
		h.writeReplay(w, hs, streamID, events)
	case !post:
		h.serveStandalone(w, r, hs)
	default:
		writeError(w, http.StatusGone, mcp.ID{}, mcp.CodeInternalError, "Gone: the server instance answering this request stopped before it finished; its outcome is unknown")
	}
}

// storedEvents reads the events stored after seq, answering 409 or 503
// itself when it cannot.
func (h *HTTPHandler) storedEvents(w http.ResponseWriter, r *http.Request, hs *httpSession, streamID string, seq uint64) ([]event, bool) {
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.StoreTimeout)
	defer cancel()
	var events []event
	err := h.store.Replay(ctx, hs.ss.id, streamID, seq, func(s uint64, data []byte) error {
		events = append(events, event{seq: s, data: data})
		return nil
	})
	if errors.Is(err, ErrEventsPurged) {
		writeError(w, http.StatusConflict, mcp.ID{}, mcp.CodeInvalidRequest, "Conflict: the events after Last-Event-ID are no longer stored")
		return nil, false
	}
	if err != nil {
		h.log.Warn("mcp: event store replay failed", "session", hs.ss.id, "err", err)
		writeError(w, http.StatusServiceUnavailable, mcp.ID{}, mcp.CodeInternalError, "Service Unavailable: replay failed")
		return nil, false
	}
	return events, true
}

func (h *HTTPHandler) writeReplay(w http.ResponseWriter, hs *httpSession, streamID string, events []event) {
	out := &sseWriter{w: w, rc: http.NewResponseController(w)}
	st := &stream{h: h, hs: hs, id: streamID}
	out.start(st, false, 0)
	for _, ev := range events {
		if out.event(st.eventID(ev.seq), ev.data) != nil {
			return
		}
	}
	out.flush()
}

func acceptsEvents(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			if mt := mediaType(strings.TrimSpace(part)); mt == "text/event-stream" || mt == "text/*" || mt == "*/*" {
				return true
			}
		}
	}
	return false
}

func (h *HTTPHandler) delete(w http.ResponseWriter, r *http.Request) {
	if h.opts.Stateless {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, mcp.ID{}, mcp.CodeInvalidRequest, "Method Not Allowed: this server has no sessions")
		return
	}
	if modernWithoutSession(w, r) {
		return
	}
	hs, ok := h.session(w, r)
	if !ok {
		return
	}
	hs.busy.Add(-1)
	h.endSession(hs)
	if h.opts.SessionStore != nil {
		ctx, cancel := context.WithTimeout(r.Context(), h.opts.StoreTimeout)
		defer cancel()
		if err := h.opts.SessionStore.Delete(ctx, hs.ss.id); err != nil {
			h.log.Warn("mcp: session store delete failed", "err", err)
			writeError(w, http.StatusServiceUnavailable, mcp.ID{}, mcp.CodeInternalError, "Service Unavailable: the session store is unreachable")
			return
		}
		if h.store != nil {
			_ = h.store.Purge(ctx, hs.ss.id)
		}
		if h.cluster != nil {
			h.cluster.broadcast(ctx, &clusterMsg{Kind: kindEnded, Session: hs.ss.id})
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// modernWithoutSession answers 405 to a GET or DELETE without a session
// whose MCP-Protocol-Version is a 2026 revision: that era has no
// sessions, so only POST serves it (streamable-http 2026-07-28). A legacy
// client without a session id still gets 400.
func modernWithoutSession(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get(headerSessionID) != "" || !mcp.IsModern(r.Header.Get(headerProtocolVersion)) {
		return false
	}
	w.Header().Set("Allow", "POST")
	writeError(w, http.StatusMethodNotAllowed, mcp.ID{}, mcp.CodeInvalidRequest, "Method Not Allowed: 2026-07-28 requests are POSTs; GET and DELETE need a legacy session")
	return true
}

// writeError answers with an HTTP status and a JSON-RPC error body.
func writeError(w http.ResponseWriter, status int, id mcp.ID, code int64, message string) {
	writeRPCError(w, status, id, jsonrpc.NewError(code, message))
}

// writeRPCError answers with an HTTP status and e (data included).
func writeRPCError(w http.ResponseWriter, status int, id mcp.ID, e *jsonrpc.Error) {
	body := jsonrpc.EncodeError(id, e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
