package streamhttp

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/corsorigin"
	"github.com/mcpkit/mcpkit/internal/httpbody"
	"github.com/mcpkit/mcpkit/internal/workers"
	"github.com/mcpkit/mcpkit/server/internal/seam"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/store"

	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Defaults of Options.
const (
	// DefaultMaxBodyBytes caps a POST body: 4 MiB.
	DefaultMaxBodyBytes = httpbody.DefaultMaxBytes
	// DefaultBodyReadTimeout bounds the reading of a POST body: 30 s,
	// enough for a full 4 MiB body at about 140 KB/s, and short enough
	// that a client trickling bodies cannot hold connections and
	// handler goroutines for long (see docs/design/hardening.md).
	DefaultBodyReadTimeout = httpbody.DefaultReadTimeout
	// DefaultSessionTTL is how long a session may stay idle.
	DefaultSessionTTL = 30 * time.Minute
	// DefaultKeepAlive is the interval of SSE keep-alive comments.
	DefaultKeepAlive = 15 * time.Second
	// DefaultSSEAfter is how long a POST may stay silent before its
	// answer becomes an event stream (so that keep-alives can flow).
	DefaultSSEAfter = 10 * time.Second
	// DefaultRetryInterval is the reconnection delay sent on SSE streams.
	DefaultRetryInterval = time.Second
	// DefaultMaxSessions caps the sessions of a handler: 20,000 idle
	// sessions take about 74 MB (3.7 KB of RSS each, bench/README.md W9).
	DefaultMaxSessions = 20000
	// DefaultMaxSessionsPerPrincipal caps the sessions of one
	// authenticated principal: a client needs a few, not hundreds.
	DefaultMaxSessionsPerPrincipal = 100
	// DefaultEarlyMessages bounds the messages held for a session before
	// its first standalone GET stream (Options.EarlyMessages).
	DefaultEarlyMessages = 32
)

// Header names of the Streamable HTTP transport.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerLastEventID     = "Last-Event-Id"
)

// Options configures a Handler. The zero value is the secure
// default: sessions, resumable streams kept in memory, DNS-rebinding
// protection, and the limits below.
type Options struct {
	// Stateless serves the legacy wire without sessions: no
	// Mcp-Session-Id is issued, each request stands alone, and
	// server→client requests are refused.
	Stateless bool
	// AlwaysSSE answers every request with an event stream; by default a
	// request whose response is its only message gets a JSON body.
	AlwaysSSE bool
	// SSEAfter: a request silent this long turns into an event stream.
	// Default DefaultSSEAfter; negative never. One watcher per handler
	// notices, waking every SSEAfter/4 while requests are in flight, so
	// the switch comes between SSEAfter and 1.25 × SSEAfter (under 4 ms,
	// SSEAfter plus a millisecond).
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
	EventStore store.EventStore
	// SessionStore, when set, keeps each session's negotiated state
	// outside the process, so that other instances sharing it can serve
	// the session. Local idle sweeps and Close then drop only this
	// instance's copy; DELETE deletes the session everywhere. The store
	// is expected to expire abandoned sessions itself.
	SessionStore store.SessionStore
	// Broker connects this handler to the other instances of a
	// deployment that share its SessionStore and EventStore, so that a
	// session's requests, answers and resumptions can land on any of
	// them (see Broker and docs/design/multi-instance.md). It is meant
	// with a shared SessionStore and EventStore: without them a session
	// is still known only where it began. Give each handler its own
	// Broker; Close does not close it.
	Broker store.Broker
	// StoreTimeout bounds each SessionStore, EventStore and Broker call
	// made while serving a request; past it the request fails with 503.
	// It also bounds each EventStore append (see docs/design/hardening.md
	// for what a failed append means). Default DefaultStoreTimeout.
	StoreTimeout time.Duration
	// SessionCheckInterval is how long an instance serves a session from
	// its own copy before it reads the session from the SessionStore
	// again (which also restarts the store's TTL). Within it, DELETE and
	// state changes made on other instances reach the copy through the
	// Broker; the reading catches what the Broker lost, and a Broker that
	// reports a loss (store.GapNotifier: a reconnection, an overflow of
	// its queue) makes every copy read the store again at its next
	// request. Keep it well below the
	// store's TTL. Default DefaultSessionCheckInterval; negative: every
	// request of a session reads the store. Only used with a
	// SessionStore and a Broker: without a Broker nothing would bring a
	// copy the changes made elsewhere, so every request reads the store
	// (docs/design/multi-instance.md).
	SessionCheckInterval time.Duration
	// Now is the handler's clock, for idle times and
	// SessionCheckInterval (tests). Nil: time.Now.
	Now func() time.Time
	// SessionTTL closes sessions idle this long and frees all they
	// hold. Default DefaultSessionTTL; negative never.
	SessionTTL time.Duration
	// MaxBodyBytes caps a POST body (413 beyond). Default
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// BodyReadTimeout bounds the reading of one POST body: a client
	// that has not sent all of it by then gets 408 and its connection is
	// closed. The bound ends with the body, so answers (SSE streams
	// included) may last as long as they need. Default
	// DefaultBodyReadTimeout; negative: no bound.
	//
	// When mounting the handler on your own http.Server, also set
	// ReadHeaderTimeout (slow headers never reach the handler) and
	// IdleTimeout (idle keep-alive connections), and leave ReadTimeout
	// and WriteTimeout at zero: they would cut long SSE answers. The
	// bound needs a ResponseWriter that supports read deadlines
	// (http.ResponseController; middleware that wraps the writer should
	// implement Unwrap); otherwise the handler closes the request body
	// when the time is up, which unblocks HTTP/2 bodies and bodies of
	// your own but not an HTTP/1 body waiting on its connection.
	BodyReadTimeout time.Duration
	// AllowedHosts lists the Host header values accepted, as host or
	// host:port. Empty: on a loopback listener only loopback names
	// (localhost, 127.0.0.1, [::1]) are accepted; on any other listener
	// every Host is, and then a Host proves nothing (DNS rebinding), so
	// browser requests need AllowedOrigins. Set it when the server is
	// reachable beyond the loopback interface.
	AllowedHosts []string
	// AllowedOrigins lists the Origin header values accepted (such as
	// "https://app.example.com", compared as CORSOptions.AllowedOrigins
	// are: without regard to case, a trailing slash ignored; "null" and
	// "*" name no one here, a list that is not empty admits only the
	// origins it names and CORS's). An
	// Origin present is always checked (2025-11-25 and 2026-07-28
	// transports: servers MUST validate it; 403 when invalid). Empty:
	// an Origin is accepted when it names the request's own Host and
	// that Host was checked (against AllowedHosts, or as a loopback name
	// on a loopback listener), or, on a loopback listener, when it is a
	// loopback origin. A request without Origin (not from a browser) is
	// accepted unless its Sec-Fetch-Site marks it cross-site.
	AllowedOrigins []string
	// CORS, when set, answers the preflights of browsers for the origins
	// it allows and lets their pages read the answers (cors.go,
	// docs/design/cors.md). Off by default: a page of another origin
	// cannot call the endpoint from a browser.
	CORS *CORSOptions
	// DisableHostCheck turns off the Host and Origin checks.
	DisableHostCheck bool
	// MaxSessions caps the legacy sessions the handler holds at once:
	// past it, initialize is answered 503 with Retry-After and creates
	// no session. Default DefaultMaxSessions; negative: no cap.
	MaxSessions int
	// LegacySSE also serves the deprecated HTTP+SSE transport of
	// 2024-11-05 at the same endpoint, for clients that predate
	// Streamable HTTP: a GET without Mcp-Session-Id opens a session
	// whose first event ("endpoint") names where to POST its messages
	// (this endpoint's path with ?sessionId=), and whose answers all
	// come on that stream. Host and Origin checks, body limits, the
	// session caps and Shutdown apply to these sessions too; they live
	// as long as their stream and are not shared with other instances
	// (docs/design/legacy-sse.md). A Stateless handler has no sessions
	// and ignores it.
	LegacySSE bool
	// LegacySSEQueue bounds the messages waiting for a 2024-11-05
	// session's stream, counting a place for the answer of every request
	// being handled. Nothing waits for the client to read: past the
	// bound, a POSTed request (a ping too) is refused with 429,
	// Retry-After and a rate-limit error (mcp.CodeRateLimited), and a
	// notification or server request for the session is dropped
	// (docs/design/legacy-sse.md). Default DefaultLegacySSEQueue.
	LegacySSEQueue int
	// LegacySSEQueueBytes bounds the bytes of the messages waiting for a
	// 2024-11-05 session's stream. Once the queue holds that much, POSTed
	// requests are refused as past LegacySSEQueue; an answer that would
	// take the queue past it while other messages wait ends the session
	// (its client is that far behind); an answer alone in the queue is
	// queued whatever its size. Default DefaultLegacySSEQueueBytes (4 MiB).
	LegacySSEQueueBytes int
	// MaxLegacySSESessions caps the 2024-11-05 sessions the handler holds
	// at once, within MaxSessions (which counts them too): each holds an
	// open connection, its goroutine and buffers, about 28 KB of RSS
	// against about 4 KB for an idle Streamable HTTP session, so the
	// default keeps them to the memory MaxSessions budgets for the
	// others. Past it, the GET that would open one is answered 503 with
	// Retry-After. Default DefaultMaxLegacySSESessions; negative: no cap
	// but MaxSessions.
	MaxLegacySSESessions int
	// MaxSessionsPerPrincipal caps the sessions one authenticated
	// principal (WithPrincipal, as set by auth middleware) holds at
	// once, with the same answer. Requests without a principal are
	// bounded by MaxSessions only: they cannot be told apart. Default
	// DefaultMaxSessionsPerPrincipal; negative: no cap.
	MaxSessionsPerPrincipal int
	// EarlyMessages bounds the messages of a session that belong to no
	// request (notifications such as resources/updated, and server
	// requests) held while the session has not opened its first
	// standalone GET stream: a client opens that stream after
	// initialize, so a message sent in between would otherwise be lost.
	// They are written on that stream when it opens; past the bound the
	// newest are dropped. Once a GET stream has been opened, or with
	// NoStandaloneStream, nothing is held. Default DefaultEarlyMessages;
	// negative: none held (docs/design/streamable-http.md).
	EarlyMessages int
}

// Handler serves an MCP server over Streamable HTTP at one endpoint.
type Handler struct {
	p       seam.Protocol
	opts    Options
	store   store.EventStore
	log     *slog.Logger
	cluster *cluster           // nil without a Broker
	cors    *corsorigin.Policy // nil without Options.CORS
	origins corsorigin.List    // Options.AllowedOrigins

	mu       sync.Mutex
	sessions map[string]*httpSession
	caps     sessionCaps
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
	// sse holds the sessions of the 2024-11-05 transport (LegacySSE),
	// sseEnding those being closed, each with a channel closed once its
	// handlers have returned (Shutdown waits for them).
	sse       map[string]*sseSession
	sseEnding map[*sseSession]chan struct{}
	// now is the clock of idle times and the sweep (tests replace it).
	now func() time.Time
	// gaps counts the times the Broker reported it may have lost
	// messages: a session copy checked before the latest is stale.
	gaps atomic.Uint64
	// closeAfter, when positive, replaces DefaultCloseTimeout (tests).
	closeAfter time.Duration
	// workers run the legacy sessions' handlers on warm goroutines
	// (internal/workers); Shutdown ends the idle ones.
	workers *workers.Pool
	// inflight holds the session-less requests running on their POST's
	// goroutine (inflight.go); Shutdown cancels them.
	inflight inflight
	// streamPrefix, streamSeq and streamPerm name the streams
	// (streamSuffix).
	streamPrefix string
	streamSeq    atomic.Uint64
	streamPerm   permutation
}

// NewHandler returns a handler serving s; opts may be nil. Shut it
// down (Shutdown or Close) to end its sessions.
func NewHandler(s *server.Server, opts *Options) *Handler {
	p := seam.Of(s)
	h := &Handler{p: p, log: p.Logger(), sessions: make(map[string]*httpSession), done: make(chan struct{}),
		ending: make(map[*httpSession]chan struct{}), now: time.Now, workers: workers.New(0)}
	h.closing, h.stopAll = context.WithCancelCause(context.Background())
	if opts != nil {
		h.opts = *opts
	}
	o := &h.opts
	if o.SSEAfter == 0 {
		o.SSEAfter = DefaultSSEAfter
	}
	h.inflight.init(o.SSEAfter)
	h.streamPrefix, h.streamPerm = rand.Text()[:8]+".", newPermutation()
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
	if o.BodyReadTimeout == 0 {
		o.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxSessionsPerPrincipal == 0 {
		o.MaxSessionsPerPrincipal = DefaultMaxSessionsPerPrincipal
	}
	if o.EarlyMessages == 0 {
		o.EarlyMessages = DefaultEarlyMessages
	}
	if o.StoreTimeout <= 0 {
		o.StoreTimeout = DefaultStoreTimeout
	}
	if o.SessionCheckInterval == 0 {
		o.SessionCheckInterval = DefaultSessionCheckInterval
	}
	if o.Now != nil {
		h.now = o.Now
	}
	if o.LegacySSEQueue <= 0 {
		o.LegacySSEQueue = DefaultLegacySSEQueue
	}
	if o.LegacySSEQueueBytes <= 0 {
		o.LegacySSEQueueBytes = DefaultLegacySSEQueueBytes
	}
	if o.MaxLegacySSESessions == 0 {
		o.MaxLegacySSESessions = DefaultMaxLegacySSESessions
	}
	h.store = o.EventStore
	if h.store == nil && !o.Stateless {
		h.store = store.NewMemoryEventStore(nil)
	}
	if o.Broker != nil && !o.Stateless {
		h.cluster = newCluster(h, o.Broker)
	}
	if o.CORS != nil {
		h.cors = newCORSPolicy(o.CORS, o.Stateless)
	}
	h.origins = corsorigin.ParseNames(o.AllowedOrigins)
	return h
}

// SessionCount reports how many sessions are open (those of the
// 2024-11-05 transport included).
func (h *Handler) SessionCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions) + len(h.sse)
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.cors != nil {
		corsorigin.AddVary(w.Header(), "Origin") // refusals too depend on Origin
	}
	if !h.opts.DisableHostCheck {
		if status, msg := h.checkHostOrigin(r); status != 0 {
			writeError(w, status, mcp.ID{}, mcp.CodeInvalidRequest, msg)
			return
		}
	}
	if h.cors != nil && h.serveCORS(w, r) {
		return
	}
	if r.Method != http.MethodPost {
		if name := repeatedMCPHeader(r.Header); name != "" {
			writeError(w, http.StatusBadRequest, mcp.ID{}, mcp.CodeInvalidRequest, "Bad Request: the "+name+" header is sent more than once")
			return
		}
	}
	switch {
	case h.legacySSEGet(r):
		h.serveLegacySSE(w, r)
		return
	case h.legacySSEPost(r):
		h.postLegacySSE(w, r)
		return
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
	for _, v := range r.Header["Accept"] {
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

func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	if mediaType(headerValue(r.Header, "Content-Type")) != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, mcp.ID{}, mcp.CodeInvalidRequest, "Unsupported Media Type: Content-Type must be application/json")
		return
	}
	if !acceptsBoth(r) {
		writeError(w, http.StatusNotAcceptable, mcp.ID{}, mcp.CodeInvalidRequest, "Not Acceptable: Accept must list application/json and text/event-stream")
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
	if name := repeatedMCPHeader(r.Header); name != "" {
		h.refuseRepeated(w, r, msg, name)
		return
	}
	// Which era? A session id means a legacy session (session-less servers
	// ignore it). Otherwise a modern claim in the body (SEP-2575), or a
	// 2026 MCP-Protocol-Version header, selects the modern era (2026-07-28
	// transports, protocol version header); everything else is legacy
	// traffic.
	if h.opts.Stateless || headerValue(r.Header, headerSessionID) == "" {
		call := seam.Call{Msg: msg}
		if msg.IsRequest() {
			var e *jsonrpc.Error
			if call, e = h.p.Classify(msg); e != nil { // the one decode of params
				writeRPCError(w, http.StatusBadRequest, msg.ID, e)
				return
			}
		} else if msg.IsNotification() {
			// A modern notification (an extension's) is classified the
			// same way; one whose params do not decode stays legacy
			// traffic, which needs a session.
			if c, e := h.p.Classify(msg); e == nil {
				call = c
			}
		}
		if call.Claimed || mcp.IsModern(headerValue(r.Header, headerProtocolVersion)) {
			h.postModern(w, r, &call)
			return
		}
		if h.opts.Stateless {
			h.postStateless(w, r, &call)
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
	defer hs.busy.release()
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
				c.broadcast(r.Context(), &clusterMsg{Kind: kindCancel, Session: hs.ss.ID(), Msg: body})
			}
		}
		if err := hs.process(r.Context(), msg); err != nil {
			writeRPCError(w, statusOf(err, http.StatusServiceUnavailable), mcp.ID{}, seam.ToRPCError(err))
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	st, ok := hs.openStream(msg.ID)
	if !ok {
		if hs.ended() { // DELETE, the sweep or Shutdown ended it meanwhile
			writeError(w, http.StatusNotFound, msg.ID, mcp.CodeInvalidRequest, "Not Found: unknown or ended session")
			return
		}
		writeError(w, http.StatusBadRequest, msg.ID, mcp.CodeInvalidRequest, "Invalid Request: a request with this id is already in flight")
		return
	}
	hs.ss.ProcessContext(r.Context(), msg)
	st.serve(w, r, -1)
}

// session finds the session a request names, answering 400 (no id), 404
// (unknown or ended) or 400 (bad protocol version header) itself. On
// success the session is held busy; the caller releases it.
func (h *Handler) session(w http.ResponseWriter, r *http.Request) (hs *httpSession, ok bool) {
	id := headerValue(r.Header, headerSessionID)
	if id == "" {
		writeError(w, http.StatusBadRequest, mcp.ID{}, mcp.CodeInvalidRequest, "Bad Request: the Mcp-Session-Id header is required")
		return nil, false
	}
	h.mu.Lock()
	hs = h.sessions[id]
	if hs != nil {
		hs.busy.hold()
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
	held := hs // the returns below that refuse it set hs to nil
	defer func() {
		if !ok {
			held.busy.release()
		}
	}()
	if hs.ss.Principal() != h.p.PrincipalFrom(r.Context()) {
		// A session belongs to the principal that opened it: presented
		// with another's credentials, its id names no session (MCP
		// security best practices: session ids are not authentication).
		writeError(w, http.StatusNotFound, mcp.ID{}, mcp.CodeInvalidRequest, "Not Found: unknown or ended session")
		return nil, false
	}
	hs.touch()
	if v := headerValue(r.Header, headerProtocolVersion); v != "" && !h.p.ServesLegacy(v) {
		writeError(w, http.StatusBadRequest, mcp.ID{}, mcp.CodeInvalidRequest, "Bad Request: unsupported MCP-Protocol-Version "+v)
		return nil, false
	}
	return hs, true
}

func (h *Handler) initialize(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, msg.ID, mcp.CodeInternalError, "the server is shutting down")
		return
	}
	principal := h.p.PrincipalFrom(r.Context())
	if why := h.overCap(principal); why != "" {
		h.mu.Unlock()
		refuseOverCap(w, msg, why)
		return
	}
	hs := h.newSession("", principal)
	hs.touch()
	h.sessions[hs.ss.ID()] = hs
	h.admitted(hs.ss.ID(), principal)
	hs.busy.hold()
	h.startSweeper()
	h.mu.Unlock()
	defer hs.busy.release()
	st, ok := hs.openStream(msg.ID)
	if !ok { // Shutdown ended the session before its first request ran
		writeError(w, http.StatusServiceUnavailable, msg.ID, mcp.CodeInternalError, "the server is shutting down")
		return
	}
	hs.ss.ProcessContext(r.Context(), msg)
	h.answerInitialize(w, r, hs, st)
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
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
	hs.busy.release()
	h.endSession(hs)
	if h.opts.SessionStore != nil {
		ctx, cancel := context.WithTimeout(r.Context(), h.opts.StoreTimeout)
		defer cancel()
		if err := h.opts.SessionStore.Delete(ctx, hs.ss.ID()); err != nil {
			h.log.Warn("streamhttp: session store delete failed", "err", err)
			writeError(w, http.StatusServiceUnavailable, mcp.ID{}, mcp.CodeInternalError, "Service Unavailable: the session store is unreachable")
			return
		}
		if h.store != nil {
			_ = h.store.Purge(ctx, hs.ss.ID())
		}
		if h.cluster != nil {
			h.cluster.broadcast(ctx, &clusterMsg{Kind: kindEnded, Session: hs.ss.ID()})
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// modernWithoutSession answers 405 to a GET or DELETE without a session
// whose MCP-Protocol-Version is a 2026 revision: that era has no
// sessions, so only POST serves it (streamable-http 2026-07-28). A legacy
// client without a session id still gets 400.
func modernWithoutSession(w http.ResponseWriter, r *http.Request) bool {
	if headerValue(r.Header, headerSessionID) != "" || !mcp.IsModern(headerValue(r.Header, headerProtocolVersion)) {
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
	body := wire.EncodeError(id, e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// decode reads one JSON-RPC message of a POST body within the limits, or
// answers 400 with the decoder's error (and the id, when it could be
// read) and reports false. body is the request's own, read for it and
// never changed: the message points into it rather than into a copy.
func (h *Handler) decode(w http.ResponseWriter, body []byte) (*jsonrpc.Message, bool) {
	msg, err := wire.DecodeOwned(body, jsonrpc.Limits{MaxBytes: int(h.opts.MaxBodyBytes), MaxDepth: h.p.Limits().MaxDepth})
	if err == nil {
		return msg, true
	}
	derr := jsonrpc.NewError(mcp.CodeParseError, err.Error()) // Decode's errors are all *jsonrpc.Error
	errors.As(err, &derr)
	id := mcp.ID{}
	if msg != nil {
		id = msg.ID
	}
	writeError(w, http.StatusBadRequest, id, derr.Code, derr.Message)
	return nil, false
}
