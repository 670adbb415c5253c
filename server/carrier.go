package server

import (
	"context"
	"log/slog"
	"runtime/debug"

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
	seam.Install(func(v any) seam.Protocol { return (*carrierServer)(v.(*Server)) })
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
	wp, err := decodeWire(msg.Params)
	if err != nil {
		e, _ := jsonrpc.AsError(err)
		return call, e
	}
	call.Params, call.Name, call.URI, call.TaskID = wp, wp.Name, wp.URI, wp.TaskID
	env, claimed, eerr := liftEnvelope(wp)
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

// ServeModern implements seam.Protocol.
func (c *carrierServer) ServeModern(ctx context.Context, call seam.Call, out seam.Outbound, header map[string][]string) (any, error) {
	env, _ := call.Envelope.(*envelope)
	return c.srv().serveModern(ctx, env, call.Msg, params(call), out, header)
}

// ServeStateless implements seam.Protocol: one session-less legacy
// request, with a handler panic recovered.
func (c *carrierServer) ServeStateless(ctx context.Context, version string, call seam.Call, out seam.Outbound) (result any, err error) {
	s, msg := c.srv(), call.Msg
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("mcp: handler panic", "method", msg.Method, "panic", p, "stack", string(debug.Stack()))
			result, err = nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: handler for %s panicked", msg.Method)
		}
	}()
	if err := paramsObject(msg.Params); err != nil {
		return nil, err
	}
	switch msg.Method {
	case mcp.MethodInitialize:
		var p mcp.InitializeParams
		if err := decodeParams(msg.Params, &p); err != nil {
			return nil, err
		}
		return s.initializeResult(p.ProtocolVersion), nil
	case mcp.MethodPing:
		return struct{}{}, nil
	case mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe, mcp.MethodLoggingSetLevel:
		// These keep per-client state, which a session-less server has
		// nowhere to keep.
		return nil, jsonrpc.Errorf(mcp.CodeMethodNotFound, "Method not found: %s (this server has no sessions)", msg.Method)
	}
	req := &Request{srv: s, version: version, caps: &mcp.ClientCapabilities{}, out: out, eraID: idLegacy}
	defer req.end()
	return s.dispatch(ctx, req, msg.Method, params(call))
}

// ServesLegacy implements seam.Protocol.
func (c *carrierServer) ServesLegacy(v string) bool { return eraLegacy.supports(v) }

// ModernStatus implements seam.Protocol.
func (c *carrierServer) ModernStatus(e *jsonrpc.Error) int { return eraModern.httpStatus(e) }

// NewSession implements seam.Protocol: a session whose connection writes
// to the carrier and is fed by it instead of a read loop.
func (c *carrierServer) NewSession(cfg seam.SessionConfig) seam.Session {
	s := c.srv()
	ss := newSession(s)
	ss.conn = jsonrpc.NewConn(cfg.Conn, jsonrpc.ConnOptions{
		Handler:     cfg.Handler,
		Limits:      s.opts.Limits,
		MaxInFlight: s.opts.MaxInFlight,
		MaxQueued:   s.opts.MaxQueued,
		CallTimeout: s.opts.CallTimeout,
		Logger:      s.log,
		Observe:     s.opts.Observe,
		IDPrefix:    cfg.IDPrefix,
	})
	ss.closeStream = cfg.CloseStream
	// Everything another goroutine may read is set before the session is
	// registered (Server.Sessions).
	if cfg.ID != "" {
		ss.id = cfg.ID
	}
	ss.principal, ss.onChange = cfg.Principal, cfg.OnChange
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

func (cs *carrierSession) Initialized() error { return cs.ss().initialized() }

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
