package server

import (
	"context"
	"log/slog"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/seam"
	"github.com/mcpkit/mcpkit/store"
)

// The protocol server as its carriers see it (server/internal/seam): a
// carrier (server/streamhttp) serves requests through these methods and
// never reaches dispatch, the registries or the era rules. carrierServer
// and carrierSession are the Server and the Session under another method
// set; converting to them costs nothing.

func init() {
	seam.Install(func(s *Server) seam.Protocol {
		s.startServing() // a carrier is built on it: see Server.Err
		return (*carrierServer)(s)
	})
}

type carrierServer Server

var _ seam.Protocol = (*carrierServer)(nil)

func (c *carrierServer) srv() *Server { return (*Server)(c) }

func (c *carrierServer) Logger() *slog.Logger { return c.log }

func (c *carrierServer) Limits() jsonrpc.Limits { return c.opts.Limits }

func (c *carrierServer) PrincipalFrom(ctx context.Context) string { return principalFrom(ctx) }

// Classify implements seam.Protocol: decodeWire once, then the era claim.
func (c *carrierServer) Classify(msg *jsonrpc.Message) (seam.Call, *jsonrpc.Error) {
	call := seam.Call{Msg: msg}
	wp, err := decodeWireOf(msg)
	if err != nil {
		e, _ := jsonrpc.AsError(err)
		return call, e
	}
	call.Params, call.Name, call.URI, call.TaskID = wp, wp.Name, wp.URI, wp.TaskID
	env, claimed, eerr := liftEnvelope(c.srv(), wp)
	call.Claimed, call.Err = claimed, eerr
	if env != nil {
		call.Version, call.Envelope = env.version, env
	}
	return call, nil
}

// params returns the decoded params of a call (the empty object for a
// call that has none: a notification).
func params(c seam.Call) *wireParams {
	if wp, ok := c.Params.(*wireParams); ok {
		return wp
	}
	return &wireParams{}
}

// ServeNotification implements seam.Protocol.
// A modern notification goes through intercept.Recover and the
// interceptors like every inbound message (a panicking handler is logged,
// never the HTTP handler's crash).
func (c *carrierServer) ServeNotification(ctx context.Context, call seam.Call) {
	if !call.Claimed || call.Err != nil {
		return
	}
	s := c.srv()
	ic := &intercept.Call{Side: intercept.Server, Inbound: true, Notification: true, Method: call.Msg.Method,
		Era: intercept.EraModern, Principal: principalFrom(ctx), Raw: call.Msg.Params}
	if env, ok := call.Envelope.(*envelope); ok && env != nil {
		ic.Version = env.version
	}
	if wp, err := decodeWire(call.Msg.Params); err == nil {
		ic.Meta, ic.Name = wp.Meta, wp.name()
	}
	h := intercept.Chain(intercept.Recover(s.log), s.userChain)(func(ctx context.Context, ic *intercept.Call) (any, error) {
		s.handleExtNotification(ctx, nil, ic.Method, ic.Raw)
		return nil, nil
	})
	if _, err := h(ctx, ic); err != nil {
		s.log.Debug("server: notification dropped", "method", ic.Method, "err", err)
	}
}

// ServeModern implements seam.Protocol.
func (c *carrierServer) ServeModern(ctx context.Context, call seam.Call, out seam.Outbound, header map[string][]string) (any, error) {
	env, _ := call.Envelope.(*envelope)
	return c.srv().serveModern(ctx, env, call.Msg, params(call), out, header)
}

// ServeStateless implements seam.Protocol: one session-less legacy
// request, with a handler panic recovered.
func (c *carrierServer) ServeStateless(ctx context.Context, version string, call seam.Call, out seam.Outbound) (result any, err error) {
	s, msg := c.srv(), call.Msg
	if err := paramsObject(msg.Params); err != nil {
		return nil, err
	}
	in := s.newInbound(params(call), msg.Params, serveStatelessCall)
	in.Request = Request{srv: s, id: msg.ID, version: version, out: out, eraID: idLegacy} // caps nil: none declared (clientCaps)
	defer in.Request.end()
	return s.handle(ctx, in, msg.Method)
}

// serveStatelessCall serves a session-less legacy request at the end of
// the interceptors (intercept.Recover outermost turns a handler panic
// into -32603).
func serveStatelessCall(ctx context.Context, s *Server, in *inbound, method string) (any, error) {
	switch method {
	case mcp.MethodInitialize:
		var p mcp.InitializeParams
		if err := decodeParams(in.raw, &p); err != nil {
			return nil, err
		}
		return s.initializeResult(p.ProtocolVersion)
	case mcp.MethodPing:
		return struct{}{}, nil
	case mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe, mcp.MethodLoggingSetLevel:
		// These keep per-client state, which a session-less server has
		// nowhere to keep.
		return nil, jsonrpc.Errorf(mcp.CodeMethodNotFound, "Method not found: %s (this server has no sessions)", method)
	}
	return s.dispatch(ctx, &in.Request, method, in.wp)
}

// ServesLegacy implements seam.Protocol.
func (c *carrierServer) ServesLegacy(v string) bool { return c.srv().servesLegacy(v) }

// ModernStatus implements seam.Protocol.
func (c *carrierServer) ModernStatus(e *jsonrpc.Error) int { return eraModern.httpStatus(e) }

// NewSession implements seam.Protocol: a session whose connection writes
// to the carrier and is fed by it instead of a read loop.
func (c *carrierServer) NewSession(cfg seam.SessionConfig) seam.Session {
	s := c.srv()
	ss := newSession(s)
	ss.conn = jsonrpc.NewConn(cfg.Conn, &jsonrpc.ConnOptions{
		Handler:     cfg.Handler,
		Limits:      s.opts.Limits,
		MaxInFlight: s.opts.MaxInFlight,
		MaxQueued:   s.opts.MaxQueued,
		CallTimeout: s.opts.CallTimeout,
		Logger:      s.log,
		Observe:     s.opts.Observe,
		IDPrefix:    cfg.IDPrefix,
		Go:          cfg.Go,
	})
	ss.closeStream = cfg.CloseStream
	// Everything another goroutine may read is set before the session is
	// registered (Server.Sessions).
	if cfg.ID != "" {
		ss.id = cfg.ID
	}
	ss.principal, ss.onChange = cfg.Principal, cfg.OnChange
	ss.inlineChanges = cfg.WriteNeverWaits
	s.addSession(ss)
	return (*carrierSession)(ss)
}

func (c *carrierServer) AddRelay(fn func(method, uri string)) (remove func()) {
	return c.srv().addRelay(fn)
}

func (c *carrierServer) DeliverChange(method, uri string) { c.srv().deliverChange(method, uri) }

// AttachPeers implements seam.Protocol.
func (c *carrierServer) AttachPeers(p seam.Peers) (seam.PeerHandler, func()) {
	return c.srv().attachPeers(p)
}

type carrierSession Session

var _ seam.Session = (*carrierSession)(nil)

func (cs *carrierSession) ss() *Session { return (*Session)(cs) }

func (cs *carrierSession) ID() string { return cs.id }

func (cs *carrierSession) Principal() string { return cs.ss().principalOf() }

func (cs *carrierSession) HandleRequest(ctx context.Context, msg *jsonrpc.Message) (any, error) {
	return cs.ss().handleRequest(ctx, msg)
}

func (cs *carrierSession) HandleNotification(ctx context.Context, msg *jsonrpc.Message) {
	cs.ss().handleNotification(ctx, msg)
}

func (cs *carrierSession) Process(msg *jsonrpc.Message) { cs.conn.Process(msg) }

func (cs *carrierSession) ProcessContext(vals context.Context, msg *jsonrpc.Message) {
	cs.conn.ProcessContext(vals, msg)
}

// Initialized records notifications/initialized, through the
// interceptors: the error is the session store's (an interceptor that
// drops the notification leaves the session initializing).
func (cs *carrierSession) Initialized() error {
	var err error
	cs.ss().interceptNotification(context.Background(), &mcpNotification{method: mcp.NotificationInitialized}, func(context.Context, string, jsontext.Value) {
		err = cs.ss().initialized()
	})
	return err
}

func (cs *carrierSession) Initializing() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.state == stateNew
}

func (cs *carrierSession) Snapshot() *store.SessionState { return cs.ss().snapshot() }

func (cs *carrierSession) State() *store.SessionState {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.ss().stateLocked()
}

func (cs *carrierSession) Restore(st *store.SessionState) { cs.ss().restore(st) }

func (cs *carrierSession) Unrecord(rev uint64) {
	cs.mu.Lock()
	if cs.rev == rev {
		cs.rev--
	}
	cs.mu.Unlock()
}

func (cs *carrierSession) Close() error { return cs.ss().Close() }

func (cs *carrierSession) Remove() { cs.srv.removeSession(cs.ss()) }
