package gateway

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/store"
)

// Several gateway instances behind one load balancer: a 2026 client's
// retry of a call held pending (a legacy upstream asked for input) may
// reach another instance than the one holding the upstream call. With a
// Broker (Options.Broker), pending call ids name their instance, and an
// instance that gets a retry for another's call hands it the answer and
// relays the outcome back: the call's result, its error, or its next
// input request. Progress and log messages of a round served this way
// stay on the owning instance (they are dropped).

// peerMsg is one message between gateway instances.
type peerMsg struct {
	// Op is "resume" (a client's answer for a parked call), "outcome"
	// (the answer to a resume) or "cancel" (the client's request ended).
	Op   string `json:"op"`
	RID  string `json:"rid"`
	From string `json:"from,omitzero"`
	// resume
	Upstream string         `json:"upstream,omitzero"`
	Pending  string         `json:"pending,omitzero"`
	Key      string         `json:"key,omitzero"`
	Answer   jsontext.Value `json:"answer,omitzero"`
	// outcome
	Result jsontext.Value `json:"result,omitzero"`
	Error  *jsonrpc.Error `json:"error,omitzero"`
	Ask    *peerAsk       `json:"ask,omitzero"`
}

type peerAsk struct {
	Method string         `json:"method"`
	Params jsontext.Value `json:"params,omitzero"`
	Key    string         `json:"key"`
}

// peers is this instance's side of the broker (nil broker: one instance).
type peers struct {
	g      *Gateway
	broker store.Broker
	mu     sync.Mutex
	wait   map[string]chan *peerMsg           // resumes sent, by rid
	served map[string]context.CancelCauseFunc // resumes served, by from+rid
}

func newPeers(g *Gateway, b store.Broker) *peers {
	return &peers{g: g, broker: b, wait: make(map[string]chan *peerMsg), served: make(map[string]context.CancelCauseFunc)}
}

// newID is a pending call's id: random, and prefixed by the instance's
// broker id when there is a broker.
func (ps *peers) newID() string {
	if ps.broker == nil {
		return randomID()
	}
	return ps.broker.ID() + "." + randomID()
}

// owner is the instance holding pending call id, when it is another one.
func (ps *peers) owner(id string) string {
	if ps.broker == nil {
		return ""
	}
	inst, _, ok := strings.Cut(id, ".")
	if !ok || inst == ps.broker.ID() {
		return ""
	}
	return inst
}

func (ps *peers) send(ctx context.Context, to string, m *peerMsg) (bool, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return false, err
	}
	return ps.broker.Send(ctx, to, b)
}

// resumeRemote hands the client's answer to the instance holding the
// pending call and returns the outcome it relays.
func resumeRemote[R any](ctx context.Context, u *upstream, req *server.Request, owner string, st roundState, answer jsontext.Value) (R, error) {
	var zero R
	ps := u.g.peers
	rid := randomID()
	ch := make(chan *peerMsg, 1)
	ps.mu.Lock()
	ps.wait[rid] = ch
	ps.mu.Unlock()
	defer func() {
		ps.mu.Lock()
		delete(ps.wait, rid)
		ps.mu.Unlock()
	}()
	there, err := ps.send(ctx, owner, &peerMsg{Op: "resume", RID: rid, From: ps.broker.ID(), Upstream: u.cfg.Name, Pending: st.Pending, Key: st.Key, Answer: answer})
	if err != nil {
		return zero, upstreamError(err)
	}
	if !there {
		return zero, errNotPending
	}
	// The broker delivers at most once: an outcome lost, or an owner that
	// died, must not hold the client's request for ever.
	wait := time.NewTimer(u.cfg.CallTimeout)
	defer wait.Stop()
	select {
	case <-wait.C:
		return zero, jsonrpc.NewError(mcp.CodeInternalError, "Internal error: the gateway instance holding the upstream call did not answer")
	case m := <-ch:
		switch {
		case m.Error != nil:
			return zero, m.Error
		case m.Ask != nil:
			params, err := askParams(m.Ask.Method, m.Ask.Params)
			if err != nil {
				return zero, err
			}
			return zero, askInput(u, req, st.Pending, m.Ask.Key, params)
		}
		var res R
		if err := json.Unmarshal(m.Result, &res); err != nil {
			return zero, upstreamError(err)
		}
		return res, nil
	case <-ctx.Done():
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), u.cfg.ConnectTimeout)
		defer cancel()
		_, _ = ps.send(cctx, owner, &peerMsg{Op: "cancel", RID: rid, From: ps.broker.ID()}) // best effort: the caller has gone
		return zero, ctx.Err()
	}
}

// receive takes the broker's messages (one goroutine, quick).
func (ps *peers) receive(b []byte) {
	var m peerMsg
	if json.Unmarshal(b, &m) != nil {
		return
	}
	switch m.Op {
	case "outcome":
		ps.mu.Lock()
		ch := ps.wait[m.RID]
		ps.mu.Unlock()
		if ch != nil {
			select {
			case ch <- &m:
			default:
			}
		}
	case "cancel":
		ps.mu.Lock()
		cancel := ps.served[m.From+"/"+m.RID]
		ps.mu.Unlock()
		if cancel != nil {
			cancel(context.Canceled)
		}
	case "resume":
		ps.g.mu.Lock()
		ctx := ps.g.ctx
		if ctx == nil || ps.g.closing {
			ps.g.mu.Unlock()
			return
		}
		ps.g.wg.Add(1) // under g.mu, before Close's Wait
		ps.g.mu.Unlock()
		go func() {
			defer ps.g.wg.Done()
			ps.serve(ctx, &m)
		}()
	}
}

// serve runs one round of a pending call of this instance for another
// instance, and sends it the outcome.
func (ps *peers) serve(ctx context.Context, m *peerMsg) {
	out := &peerMsg{Op: "outcome", RID: m.RID}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultConnectTimeout)
		defer cancel()
		_, _ = ps.send(sctx, m.From, out) // best effort: the asking instance times out on its own
	}()
	// Registered before anything else, so that a cancel sent at once is
	// not lost.
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	key := m.From + "/" + m.RID
	ps.mu.Lock()
	ps.served[key] = cancel
	ps.mu.Unlock()
	defer func() {
		ps.mu.Lock()
		delete(ps.served, key)
		ps.mu.Unlock()
	}()
	p := ps.g.pending.take(m.Pending, m.Upstream)
	if p == nil {
		out.Error = errNotPending
		return
	}
	if err := p.lease.takeSlot(rctx); err != nil {
		p.end(err)
		out.Error = asRPCError(err)
		return
	}
	if err := p.answer(m.Key, m.Answer); err != nil {
		out.Error = asRPCError(err)
		return
	}
	o := p.wait(rctx)
	switch {
	case o.err != nil:
		out.Error = asRPCError(o.err)
	case o.ask != nil:
		raw, err := json.Marshal(o.ask.params)
		if err != nil {
			out.Error = asRPCError(err)
			return
		}
		out.Ask = &peerAsk{Method: o.ask.method, Params: raw, Key: o.ask.key}
	default:
		raw, err := json.Marshal(o.res)
		if err != nil {
			out.Error = asRPCError(err)
			return
		}
		out.Result = raw
	}
}

func asRPCError(err error) *jsonrpc.Error {
	if je, ok := upstreamError(err).(*jsonrpc.Error); ok {
		return je
	}
	return jsonrpc.NewError(mcp.CodeInternalError, "Internal error: "+err.Error())
}
