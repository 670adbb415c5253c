package server

import (
	"context"
	"crypto/rand"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/revisions"
	"github.com/mcpkit/mcpkit/server/internal/seam"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// sessionState is where a legacy session is in its lifecycle.
type sessionState uint8

const (
	stateNew         sessionState = iota // waiting for initialize
	stateInitialized                     // initialize answered
	stateReady                           // notifications/initialized received
)

// Session is one legacy-era connection with a client: the version and
// capabilities negotiated by initialize, the client's log level and its
// resource subscriptions. Safe for concurrent use.
type Session struct {
	srv *Server
	id  string
	// principal is the authenticated principal that opened the session
	// (HTTP: the initialize request's), which owns its tasks.
	principal string
	conn      *jsonrpc.Conn
	// closeStream ends the connection carrying a request's stream, on
	// transports that can resume it (Request.CloseStream).
	closeStream func(mcp.ID)
	// inlineChanges: the session's transport never waits for the client,
	// so change notifications are written by the caller (changes.go).
	inlineChanges bool
	// onChange, when set, is called after the session's state changes
	// (initialize, initialized, log level, subscriptions): the HTTP
	// handler saves it to its SessionStore. An error fails the request
	// that made the change.
	onChange func() error

	// Open subscriptions/listen requests, ended gracefully by Close.
	listenCtx   context.Context
	stopListens context.CancelCauseFunc
	closingNow  bool

	mu      sync.Mutex
	state   sessionState
	version string
	// caps and info are what initialize declared (nil before): replaced,
	// never changed in place, so a request shares them without a copy.
	caps       *mcp.ClientCapabilities
	info       *mcp.Implementation
	level      mcp.LoggingLevel
	subscribed map[string]struct{} // nil until the first resources/subscribe (addSubscription)
	rev        uint64              // the SessionState revision this copy holds
	changes    changeQueue         // change notifications not sent yet (changes.go)

	// view is the context of the session's latest request, kept for the
	// visibility filter of its change notifications (Options.Visibility).
	view atomic.Pointer[context.Context]
}

func newSession(s *Server) *Session {
	return &Session{srv: s, id: rand.Text()}
}

// addSubscription records a resources/subscribe of uri, making the set
// on the first one (an idle session holds no map), under the same lock
// as the other accesses to subscribed.
func (ss *Session) addSubscription(uri string) {
	if ss.subscribed == nil {
		ss.subscribed = make(map[string]struct{})
	}
	ss.subscribed[uri] = struct{}{}
}

// listenGrace bounds how long Close waits for open subscriptions/listen
// requests to answer with their result before the connection closes.
const listenGrace = time.Second

// principalOf returns the principal that opened the session.
func (ss *Session) principalOf() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.principal
}

// ID returns the session's identifier: random, unguessable.
func (ss *Session) ID() string { return ss.id }

// ProtocolVersion returns the negotiated revision ("" before initialize).
func (ss *Session) ProtocolVersion() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.version
}

// ClientInfo returns what the client said about itself in initialize.
func (ss *Session) ClientInfo() mcp.Implementation {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.info == nil {
		return mcp.Implementation{}
	}
	return ss.info.Clone()
}

// ClientCapabilities returns what the client declared in initialize, as
// a deep copy.
func (ss *Session) ClientCapabilities() mcp.ClientCapabilities {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.caps == nil {
		return mcp.ClientCapabilities{}
	}
	return ss.caps.Clone()
}

// Close ends the session and waits for its handlers to stop.
//
// Open subscriptions/listen requests on the session (2026-07-28 requests
// on a stdio process) are ended gracefully first: each answers with its
// listen result, within listenGrace.
func (ss *Session) Close() error {
	ss.mu.Lock()
	stop := ss.stopListens
	ss.closingNow = true
	ss.mu.Unlock()
	if stop != nil {
		// End the listens, then let their results (and any other answer
		// in flight) be written before the connection goes.
		stop(ErrServerClosing)
		ss.conn.Drain(listenGrace)
	}
	return ss.conn.Close()
}

// inputEnded is called when the client has ended its input (stdio: closed
// the server's standard input, its way to shut the server down). Open
// listens end now with their result, and so do those read before the end
// that start later, so that the drain does not wait for them.
func (ss *Session) inputEnded() {
	ss.mu.Lock()
	if ss.listenCtx == nil {
		ss.listenCtx, ss.stopListens = context.WithCancelCause(context.Background())
	}
	stop := ss.stopListens
	ss.mu.Unlock()
	stop(ErrServerClosing)
}

// Wait blocks until the session ends and returns why (io.EOF when the
// client closed the connection).
func (ss *Session) Wait() error { return ss.conn.Wait() }

// Ping checks that the client is responsive.
func (ss *Session) Ping(ctx context.Context) error {
	return ss.conn.Call(ctx, mcp.MethodPing, nil, nil)
}

func (ss *Session) ready() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.state == stateReady
}

// initializedOrReady reports whether initialize has been answered.
func (ss *Session) initializedOrReady() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.state != stateNew
}

// logLevel returns the minimum level the client asked for; before
// logging/setLevel the server sends info and above.
func (ss *Session) logLevel() mcp.LoggingLevel {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.level == "" {
		return mcp.LevelInfo
	}
	return ss.level
}

func (ss *Session) isSubscribed(uri string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	_, ok := ss.subscribed[uri]
	return ok
}

// notify sends a notification of the session itself (list changes, task
// statuses, elicitation completions): it relates to no request unless ctx
// is the context of one's handler.
func (ss *Session) notify(ctx context.Context, method string, params any) error {
	if !ss.srv.intercepts() {
		return ss.conn.Notify(ctx, method, params)
	}
	return ss.srv.notifyOut(ctx, ss.sessionNote(ctx, method, params), ss.conn.Notify)
}

// notifyLocal sends a change every instance of a deployment delivers to
// its own copy of the session: none forwards it (transport.Message.Local).
func (ss *Session) notifyLocal(ctx context.Context, method string, params any) error {
	send := func(ctx context.Context, method string, params any) error {
		return ss.conn.NotifyWith(ctx, method, params, jsonrpc.CallOptions{Local: true})
	}
	if !ss.srv.intercepts() {
		return send(ctx, method, params)
	}
	return ss.srv.notifyOut(ctx, ss.sessionNote(ctx, method, params), send)
}

// sessionOut is the outbound of a request on a session: the session's
// connection carries everything, each message related to the request
// explicitly (jsonrpc.CallOptions).
type sessionOut struct{ ss *Session }

func (o sessionOut) Call(ctx context.Context, related mcp.ID, method string, params, result any) error {
	return o.ss.conn.CallWith(ctx, method, params, result, jsonrpc.CallOptions{Related: related})
}

func (o sessionOut) Notify(ctx context.Context, related mcp.ID, method string, params any) error {
	return o.ss.conn.NotifyWith(ctx, method, params, jsonrpc.CallOptions{Related: related})
}

// handleNotification serves one notification of the session.
func (ss *Session) handleNotification(ctx context.Context, n *jsonrpc.Message) {
	ss.interceptNotification(ctx, &mcpNotification{n.Method, n.Params}, ss.serveNotification)
}

// serveNotification serves a notification the interceptors passed on.
func (ss *Session) serveNotification(ctx context.Context, method string, params jsontext.Value) {
	switch method {
	case mcp.NotificationInitialized:
		_ = ss.initialized()
	default:
		if _, ok := ss.srv.extNotifications.get(method); ok {
			ss.srv.handleExtNotification(ctx, ss.notificationSession(params), method, params)
		}
		// notifications/roots/list_changed, progress and unknown
		// notifications need no action from the server.
	}
}

// initialized records notifications/initialized. When the session's
// owner could not save the change it is undone and the error returned.
func (ss *Session) initialized() error {
	ss.mu.Lock()
	changed := ss.state == stateInitialized
	if changed {
		ss.state = stateReady
	}
	ss.mu.Unlock()
	if !changed {
		return nil
	}
	if err := ss.changed(); err != nil {
		ss.mu.Lock()
		if ss.state == stateReady {
			ss.state = stateInitialized
		}
		ss.mu.Unlock()
		return err
	}
	ss.releaseHeld()
	return nil
}

// handleRequest serves one request of the session: the legacy lifecycle
// first, then the method table.
func (ss *Session) handleRequest(ctx context.Context, msg *jsonrpc.Message) (any, error) {
	if p := ss.principalOf(); p != "" && principalFrom(ctx) == "" {
		ctx = WithPrincipal(ctx, p)
	}
	ss.noteView(ctx)
	wp, err := decodeWireOf(msg) // the one decode of params
	if err != nil {
		return nil, err
	}
	// A request with a modern envelope is served statelessly, whatever
	// the process has seen before (one stdio process serves both eras).
	env, claimed, eerr := liftEnvelope(ss.srv, wp)
	if eerr != nil {
		return nil, eerr
	}
	if claimed {
		if msg.Method == mcp.MethodSubscriptionsListen {
			lctx, done, ok := ss.listenContext(ctx)
			if !ok {
				return nil, jsonrpc.NewError(mcp.CodeInternalError, "Internal error: the session is closing")
			}
			defer done()
			ctx = lctx
		}
		return ss.srv.serveModern(ctx, env, msg, wp, sessionOut{ss}, nil)
	}
	ss.mu.Lock()
	state, version, caps, info := ss.state, ss.version, ss.caps, ss.info
	ss.mu.Unlock()
	in := ss.srv.newInbound(wp, msg.Params, serveSessionCall)
	in.state = state
	in.Request = Request{srv: ss.srv, session: ss, id: msg.ID, version: version, caps: caps, info: info, out: sessionOut{ss}, eraID: idLegacy}
	defer in.Request.end()
	return ss.srv.handle(ctx, in, msg.Method)
}

// serveSessionCall serves a legacy session's request at the end of the
// interceptors: the lifecycle, then the method table.
func serveSessionCall(ctx context.Context, s *Server, in *inbound, method string) (any, error) {
	ss := in.session
	switch method {
	case mcp.MethodInitialize:
		return ss.initialize(in.raw)
	case mcp.MethodPing:
		return struct{}{}, nil
	}
	if in.state == stateNew {
		return nil, jsonrpc.Errorf(mcp.CodeInvalidRequest, "Invalid Request: %s before initialize: the session must begin with initialize", method)
	}
	return s.dispatch(ctx, &in.Request, method, in.wp)
}

// initialize negotiates the revision (spec lifecycle: echo a supported
// requested version, otherwise offer our latest legacy one) and records
// the client's capabilities.
func (ss *Session) initialize(raw jsontext.Value) (any, error) {
	var p mcp.InitializeParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == "" {
		return nil, jsonrpc.NewError(mcp.CodeInvalidParams, `Invalid params: initialize needs "protocolVersion"`)
	}
	res, err := ss.srv.initializeResult(p.ProtocolVersion)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	if ss.state != stateNew {
		ss.mu.Unlock()
		return nil, jsonrpc.NewError(mcp.CodeInvalidRequest, "Invalid Request: the session is already initialized")
	}
	ss.state, ss.version, ss.caps, ss.info = stateInitialized, res.ProtocolVersion, &p.Capabilities, &p.ClientInfo
	ss.mu.Unlock()
	if err := ss.changed(); err != nil {
		// Not saved: the session does not exist (HTTP drops it).
		ss.mu.Lock()
		ss.state = stateNew
		ss.mu.Unlock()
		return nil, err
	}
	return res, nil
}

// initializeResult negotiates the revision (lifecycle: echo a supported
// requested version, otherwise offer our newest legacy one) and
// describes the server. A server that serves no legacy revision
// (Options.ProtocolVersions) has none to offer: it refuses
// (unsupportedInitialize).
func (s *Server) initializeResult(requested string) (*mcp.InitializeResult, error) {
	if len(s.served.legacy) == 0 {
		return nil, s.unsupportedInitialize(requested)
	}
	version := s.served.legacy[0]
	if s.servesLegacy(requested) {
		version = requested
	}
	caps := s.Capabilities()
	if !revisions.HasCoreTasks(version) {
		caps.Tasks = nil // tasks are core only in 2025-11-25
	}
	return &mcp.InitializeResult{
		ProtocolVersion: version,
		Capabilities:    caps,
		ServerInfo:      s.opts.Info,
		Instructions:    s.opts.Instructions,
	}, nil
}

// paramsObject rejects params that are present but not an object: MCP
// params are always objects.
func paramsObject(raw jsontext.Value) error {
	if raw != nil && raw.Kind() != '{' {
		return jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: params must be an object")
	}
	return nil
}

// decodeParams decodes a request's params once into its typed form. An
// absent params member decodes as the empty object.
func decodeParams(raw jsontext.Value, v any) error {
	if raw == nil {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: %s", seam.ShortErr(err))
	}
	return nil
}

// listenContext returns a context for a subscriptions/listen request that
// Close ends with ErrServerClosing (a graceful end: the listen answers
// with its result), and the function to call when the request is over.
// ok is false once the session is closing.
func (ss *Session) listenContext(ctx context.Context) (context.Context, func(), bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closingNow {
		return ctx, nil, false
	}
	if ss.listenCtx == nil {
		ss.listenCtx, ss.stopListens = context.WithCancelCause(context.Background())
	}
	lctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(ss.listenCtx, func() { cancel(context.Cause(ss.listenCtx)) })
	return lctx, func() {
		stop()
		cancel(nil)
	}, true
}

// sessionHandler is the jsonrpc.Handler of a session's own connection,
// so that Session itself exports no handler methods.
type sessionHandler Session

func (h *sessionHandler) HandleRequest(ctx context.Context, msg *jsonrpc.Message) (any, error) {
	return (*Session)(h).handleRequest(ctx, msg)
}

func (h *sessionHandler) HandleNotification(ctx context.Context, n *jsonrpc.Message) {
	(*Session)(h).handleNotification(ctx, n)
}
