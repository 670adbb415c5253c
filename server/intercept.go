package server

import (
	"context"
	"runtime/debug"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/internal/jsontok"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Interceptors (package intercept; docs/design/interceptors.md). Every
// inbound request is served by one chain, built once in New:
// intercept.Recover outermost, then Options.Interceptors, then
// endOfChain. An inbound request is allocated together with its
// intercept.Call (inbound), so that the chain costs no allocation per
// request. Outbound messages and notifications build their Call (and,
// with interceptors set, their chain) per message.

// serveFunc serves an inbound request at the end of the chain: the part
// of serveModern, Session.handleRequest or ServeStateless after
// classification.
type serveFunc func(ctx context.Context, s *Server, in *inbound, method string) (any, error)

// inbound is a Request as it goes through the interceptors, with what
// the end of the chain needs to serve it.
type inbound struct {
	Request
	// call is the request as the interceptors see it; nil when the
	// server has none (handle then serves the request directly).
	call  *intercept.Call
	wp    *wireParams    // params, decoded once
	raw   jsontext.Value // params as received (Call.Raw until an interceptor changes it)
	serve serveFunc
	// next is the request's own outbound under the interceptors (nil
	// when the server has none: Request.out is then next itself).
	next outbound
	// round is the legacy shim's round while its server→client requests
	// go out (Call.Round of those).
	round int
	// state is the legacy session's lifecycle state when the request
	// arrived.
	state sessionState
}

// newInbound returns a request to fill in for handle; with interceptors
// its Call comes in the same allocation.
func (s *Server) newInbound(wp *wireParams, raw jsontext.Value, serve serveFunc) *inbound {
	if !s.intercepts() {
		return &inbound{wp: wp, raw: raw, serve: serve}
	}
	box := &struct {
		in   inbound
		call intercept.Call
	}{in: inbound{wp: wp, raw: raw, serve: serve}}
	box.in.call = &box.call
	return &box.in
}

// buildChains composes the interceptor chains of the server.
func (s *Server) buildChains() {
	s.userChain = intercept.Chain(s.opts.Interceptors...)
	all := intercept.Chain(intercept.Recover(s.log), s.userChain)
	s.inboundChain = all(s.endOfChain)
}

// intercepts reports whether the user installed interceptors (outbound
// messages and notifications go through them only then).
func (s *Server) intercepts() bool { return s.userChain != nil }

// handle runs an inbound request through the chain. The caller has set
// in.Request (with its out), in.wp, in.raw and in.serve.
func (s *Server) handle(ctx context.Context, in *inbound, method string) (any, error) {
	req := &in.Request
	req.ic = in
	if !s.intercepts() {
		return s.serveRecovered(ctx, in, method)
	}
	in.next, req.out = req.out, (*interceptedOut)(in)
	round := 0
	if in.wp.RequestState != "" || len(in.wp.InputResponses) > 0 {
		round = 1
	}
	*in.call = intercept.Call{
		Side:      intercept.Server,
		Inbound:   true,
		Method:    method,
		ID:        req.id,
		Era:       icEra(req.eraID),
		Version:   req.version,
		Principal: principalFrom(ctx),
		Name:      in.wp.name(),
		Meta:      in.wp.Meta,
		Raw:       in.raw,
		Round:     round,
		Request:   req,
	}
	if req.session != nil {
		in.call.SessionID = req.session.id
	}
	return s.inboundChain(ctx, in.call)
}

// serveRecovered serves a request of a server without interceptors: its
// chain would be intercept.Recover alone, which this does in place,
// without a Call (the same log line and the same -32603 answer).
func (s *Server) serveRecovered(ctx context.Context, in *inbound, method string) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("intercept: handler panic", "method", method, "panic", p, "stack", string(debug.Stack()))
			res, err = nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: handler for %s panicked", method)
		}
	}()
	return in.serve(ctx, s, in, method)
}

// endOfChain serves the Call the interceptors pass on: the method they
// leave, with the params they leave (decoded again if they changed them).
func (s *Server) endOfChain(ctx context.Context, c *intercept.Call) (any, error) {
	req, _ := c.Request.(*Request)
	if req == nil || req.ic == nil {
		return nil, jsonrpc.NewError(mcp.CodeInternalError, "Internal error: an interceptor replaced Call.Request")
	}
	in := req.ic
	if !sameRaw(c.Raw, in.raw) {
		wp, err := decodeWire(c.Raw)
		if err != nil {
			return nil, err
		}
		in.raw, in.wp = c.Raw, wp
	}
	return in.serve(ctx, s, in, c.Method)
}

// sameRaw reports whether got is still exactly raw: the same bytes, not
// a copy (an interceptor that changed the params replaced them).
func sameRaw(got, raw jsontext.Value) bool {
	return len(got) == len(raw) && unsafe.SliceData(got) == unsafe.SliceData(raw)
}

// name is what Call.Name reports.
func (wp *wireParams) name() string {
	switch {
	case wp.Name != "":
		return wp.Name
	case wp.URI != "":
		return wp.URI
	}
	return wp.TaskID
}

// icEra is the intercept.Era of an era.
func icEra(id eraID) intercept.Era {
	if id == idModern {
		return intercept.EraModern
	}
	return intercept.EraLegacy
}

// interceptedOut is a request's outbound under the interceptors: each
// message is a Call of its own (Inbound false) whose chain ends in the
// carrier's outbound (inbound.next).
type interceptedOut inbound

func (o *interceptedOut) outCall(method string, related mcp.ID, params any, note bool) *intercept.Call {
	in := (*inbound)(o)
	return &intercept.Call{
		Side:         intercept.Server,
		Notification: note,
		Method:       method,
		Related:      related,
		Era:          in.call.Era, // set: outCall runs under interceptors only
		Version:      in.Request.version,
		SessionID:    in.call.SessionID,
		Principal:    in.call.Principal,
		Params:       params,
		Round:        in.round,
		Request:      &in.Request,
	}
}

func (o *interceptedOut) Call(ctx context.Context, related mcp.ID, method string, params, result any) error {
	in := (*inbound)(o)
	c := o.outCall(method, related, params, false)
	h := in.srv.userChain(func(ctx context.Context, c *intercept.Call) (any, error) {
		p, err := c.ParamsWithMeta()
		if err != nil {
			return nil, err
		}
		if err := in.next.Call(ctx, c.Related, c.Method, p, result); err != nil {
			return nil, err
		}
		return result, nil
	})
	res, err := h(ctx, c)
	if err != nil {
		return err
	}
	return jsontok.Transcode(res, result)
}

func (o *interceptedOut) Notify(ctx context.Context, related mcp.ID, method string, params any) error {
	in := (*inbound)(o)
	return in.srv.notifyOut(ctx, o.outCall(method, related, params, true), func(ctx context.Context, method string, params any) error {
		return in.next.Notify(ctx, related, method, params)
	})
}

// notifyOut sends an outbound notification through the interceptors
// (directly when there are none).
func (s *Server) notifyOut(ctx context.Context, c *intercept.Call, send func(ctx context.Context, method string, params any) error) error {
	if !s.intercepts() {
		return send(ctx, c.Method, c.Params)
	}
	h := s.userChain(func(ctx context.Context, c *intercept.Call) (any, error) {
		p, err := c.ParamsWithMeta()
		if err != nil {
			return nil, err
		}
		return nil, send(ctx, c.Method, p)
	})
	_, err := h(ctx, c)
	return err
}

// sessionNote is the Call of a notification a session sends outside any
// request (list changes, task statuses).
func (ss *Session) sessionNote(ctx context.Context, method string, params any) *intercept.Call {
	ss.mu.Lock()
	version := ss.version
	ss.mu.Unlock()
	return &intercept.Call{Side: intercept.Server, Notification: true, Method: method, Era: intercept.EraLegacy,
		Version: version, SessionID: ss.id, Principal: ss.principalOf(), Params: params}
}

// handleNotificationIntercepted runs an inbound notification of a
// session through the interceptors.
func (ss *Session) interceptNotification(ctx context.Context, n *mcpNotification, handle func(ctx context.Context, method string, params jsontext.Value)) {
	s := ss.srv
	if !s.intercepts() {
		defer s.recoverNotification(n.method)
		handle(ctx, n.method, n.params)
		return
	}
	c := ss.sessionNote(ctx, n.method, nil)
	c.Inbound, c.Raw = true, n.params
	if wp, err := decodeWire(n.params); err == nil {
		c.Meta, c.Name = wp.Meta, wp.name()
	}
	h := intercept.Chain(intercept.Recover(s.log), s.userChain)(func(ctx context.Context, c *intercept.Call) (any, error) {
		handle(ctx, c.Method, c.Raw)
		return nil, nil
	})
	if _, err := h(ctx, c); err != nil {
		s.log.Debug("server: notification dropped by an interceptor", "method", n.method, "err", err)
	}
}

// recoverNotification, deferred, turns a notification handler's panic
// into a log line: a notification has no answer to carry the error, and
// the session goes on.
func (s *Server) recoverNotification(method string) {
	if p := recover(); p != nil {
		s.log.Error("server: notification handler panic", "method", method, "panic", p, "stack", string(debug.Stack()))
	}
}

// mcpNotification is an inbound notification's method and params.
type mcpNotification struct {
	method string
	params jsontext.Value
}
