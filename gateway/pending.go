package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

var (
	errInputTimeout = errors.New("gateway: the client did not answer the upstream's input request in time")
	errClosed       = errors.New("gateway: closed")
)

// A pending call is a call to a legacy upstream, run by a goroutine of
// its own so that it can outlive the client request that started it: the
// upstream's elicitation and sampling requests during the call become
// input requests of the client's call (input-required results on the 2026
// wire, the legacy shim's requests on a legacy session), and the
// client's next round (its retry, or the shim's next run) finds the call
// by the id sealed in the requestState and hands it the answer.
type pending struct {
	id     string
	u      *upstream
	ctx    context.Context
	cancel context.CancelCauseFunc
	lease  *lease // the call's connection and slot, for its whole run
	key    string // the client key of the call (MaxPendingPerClient)
	asks   chan *ask
	done   chan struct{}
	res    any
	err    error
	call   *inflight

	mu      sync.Mutex
	waiting *ask // the input request the client was given, awaiting its answer
	n       int
	parked  bool        // between the client's rounds
	stop    func() bool // the parked call's timer
}

// ask is one input request of a legacy upstream, waiting for the answer.
type ask struct {
	method string
	params any
	key    string
	answer chan jsontext.Value
}

// inflight is a call in flight to an upstream, the holder of its call
// connection: where its log messages and progress go (the client request
// now attached), and its pending call when the upstream is legacy.
type inflight struct {
	sink atomic.Pointer[relay]
	pc   atomic.Pointer[pending]
	// logs: the call asked its upstream for log messages (a 2026
	// upstream sends none for a request without a level).
	logs bool
}

// pend is the call's pending call (nil: none).
func (in *inflight) pend() *pending { return in.pc.Load() }

// pendingTable holds the pending calls of every upstream.
type pendingTable struct {
	g      *Gateway
	max    int
	ttl    time.Duration
	mu     sync.Mutex
	m      map[string]*pending
	parked int
	// perClient counts the parked calls of each client key, bounded by
	// maxPerClient.
	perClient    map[string]int
	maxPerClient int
	closed       bool
}

func newPendingTable(max, maxPerClient int, ttl time.Duration, g *Gateway) *pendingTable {
	return &pendingTable{g: g, max: max, maxPerClient: maxPerClient, ttl: ttl, m: make(map[string]*pending), perClient: make(map[string]int)}
}

func randomID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// startLegacy starts a pending call on the connection l holds for in
// (whose relay, r, is the client request's) and waits for its first
// outcome.
func startLegacy[R any](ctx context.Context, u *upstream, req *server.Request, l *lease, in *inflight, r *relay, call callFunc[R]) (R, error) {
	var zero R
	t := u.g.pending
	pctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	// The call holds the slot and the connection acquire took; it gives
	// the slot back while it waits for the client (dropSlot, takeSlot),
	// never the connection.
	p := &pending{id: u.g.peers.newID(), u: u, ctx: pctx, cancel: cancel, lease: l, key: l.key, asks: make(chan *ask), done: make(chan struct{}), call: in}
	in.pc.Store(p)
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		cancel(errClosed)
		l.release(false)
		r.stop()
		return zero, upstreamError(errClosed)
	}
	t.m[p.id] = p
	u.g.wg.Add(1) // under t.mu, before Close's closeAll: Close waits for it
	t.mu.Unlock()
	c := l.cc.c
	go func() {
		// Owned by the gateway (Close waits for it): it ends with the
		// upstream call, which the client's cancellation, the input
		// timeout, the upstream's CallTimeout or Close ends.
		defer u.g.wg.Done()
		cctx := pctx
		if _, ok := req.Meta().ProgressToken(); ok {
			cctx = client.WithProgress(pctx, func(pp *mcp.ProgressParams) {
				if r := p.call.sink.Load(); r != nil {
					r.progress(pp)
				}
			})
		}
		res, err := call(cctx, c, nil, "")
		p.res, p.err = res, err
		// Abandoned (the gateway stopped tracking the call: the client
		// went away, a timeout, Close): the client sent the upstream
		// notifications/cancelled as the call's context ended; the
		// connection is retired, so nothing the upstream still sends for
		// the call reaches anyone.
		l.release(retiring(pctx, err))
		close(p.done)
		// Ended while parked (the upstream ended it, its own timeout
		// for its question say): it waits for no answer and counts
		// against no limit; the client's next round is told it is no
		// longer pending.
		t.remove(p)
		cancel(nil)
		if h := u.g.callEndHook; h != nil {
			h()
		}
	}()
	return waitLegacy[R](ctx, u, req, p, r)
}

// resumeLegacy hands the client's answer to the pending call its
// requestState names and waits for the call's next outcome.
func resumeLegacy[R any](ctx context.Context, u *upstream, req *server.Request, st roundState, call callFunc[R]) (R, error) {
	var zero R
	raw, ok := req.InputResponses()[st.Key]
	if !ok {
		return zero, jsonrpc.NewError(mcp.CodeInvalidParams, fmt.Sprintf("Invalid params: inputResponses has no answer for %q", st.Key))
	}
	p := u.g.pending.take(st.Pending, u.cfg.Name)
	if p == nil {
		if owner := u.g.peers.owner(st.Pending); owner != "" {
			return resumeRemote[R](ctx, u, req, owner, st, raw)
		}
		return zero, errNotPending
	}
	if err := p.lease.takeSlot(ctx); err != nil {
		p.end(err)
		return zero, upstreamError(err)
	}
	// The round's relay first: what the upstream sends as soon as it has
	// the answer is this round's.
	r := newRelay(ctx, req)
	p.call.sink.Store(r)
	if err := p.answer(st.Key, raw); err != nil {
		p.call.sink.CompareAndSwap(r, nil)
		r.stop()
		return zero, err
	}
	return waitLegacy[R](ctx, u, req, p, r)
}

// outcome is how one client round of a pending call ends: the call's
// result or error, or an input request of the upstream for the client.
type outcome struct {
	res any
	err error
	ask *ask
}

// wait waits until the pending call ends or asks for input, or ctx ends
// (which cancels the call). A call that asks is parked for the next round.
func (p *pending) wait(ctx context.Context) outcome {
	t := p.u.g.pending
	select {
	case <-p.done:
		t.remove(p)
		if p.err != nil {
			return outcome{err: upstreamError(p.err)}
		}
		return outcome{res: p.res}
	case a := <-p.asks:
		p.mu.Lock()
		p.waiting = a
		p.mu.Unlock()
		if err := t.park(p); err != nil {
			p.end(err)
			return outcome{err: jsonrpc.NewError(mcp.CodeInternalError, "Internal error: "+err.Error())}
		}
		// Waiting for a person is not running: the slot goes to other calls.
		p.lease.dropSlot()
		return outcome{ask: a}
	case <-ctx.Done():
		p.end(context.Cause(ctx))
		return outcome{err: ctx.Err()}
	}
}

// waitLegacy waits, for one client round, until the pending call ends or
// asks for input. Meanwhile its progress and log messages go to req.
func waitLegacy[R any](ctx context.Context, u *upstream, req *server.Request, p *pending, r *relay) (R, error) {
	o := p.wait(ctx)
	p.call.sink.CompareAndSwap(r, nil)
	r.stop()
	res, err := roundResult[R](u, req, p.id, o)
	if o.ask != nil && err != nil && !isInput(err) {
		// The client cannot be asked (it lacks the capability): the
		// upstream's request fails now rather than at the input timeout.
		if u.g.pending.take(p.id, "") == p {
			p.end(err)
		}
	}
	return res, err
}

// isInput reports whether err is an input request for the client.
func isInput(err error) bool {
	var in *server.Input
	return errors.As(err, &in)
}

// roundResult is an outcome as the handler returns it.
func roundResult[R any](u *upstream, req *server.Request, id string, o outcome) (R, error) {
	var zero R
	switch {
	case o.err != nil:
		return zero, o.err
	case o.ask != nil:
		return zero, askInput(u, req, id, o.ask.key, o.ask.params)
	}
	res, _ := o.res.(R)
	return res, nil
}

// askInput is the input request of a pending call for the client, with
// the call named in the state.
func askInput(u *upstream, req *server.Request, id, key string, params any) error {
	in := server.NeedInput()
	putInput(in, key, params)
	// Checked here, not only when the server gets in: waitLegacy ends the
	// parked call at once on this error.
	if err := req.Require(in.Needed()); err != nil {
		return err
	}
	b, err := json.Marshal(roundState{Upstream: u.cfg.Name, Pending: id, Key: key})
	if err != nil {
		return err
	}
	return in.State(string(b))
}

var errNotPending = jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: the upstream call this request continues is no longer pending (it timed out or ended); start the call again")

// answer hands the client's answer to the input request the call waits
// for (the call was taken: it is the caller's).
func (p *pending) answer(key string, raw jsontext.Value) error {
	p.mu.Lock()
	a := p.waiting
	p.waiting = nil
	p.mu.Unlock()
	if a == nil {
		return nil // the call ended meanwhile: the next wait sees it
	}
	if a.key != key {
		p.end(errors.New("gateway: the client answered another input request"))
		return jsonrpc.NewError(mcp.CodeInvalidParams, fmt.Sprintf("Invalid params: the call waits for %q, not %q", a.key, key))
	}
	a.answer <- raw
	return nil
}

// end cancels the pending call and forgets it: from now on it claims
// none of the upstream's requests (the upstream call itself ends as soon
// as the upstream hears of the cancellation).
func (p *pending) end(cause error) {
	p.cancel(cause)
	p.u.g.pending.remove(p)
}

// ask passes one of the upstream's input requests to the client's call and
// waits for the answer.
func (p *pending) ask(ctx context.Context, method string, params any) (jsontext.Value, error) {
	p.mu.Lock()
	p.n++
	a := &ask{method: method, params: params, key: fmt.Sprintf("upstream-%d", p.n), answer: make(chan jsontext.Value, 1)}
	p.mu.Unlock()
	select {
	case p.asks <- a:
	case <-p.ctx.Done():
		return nil, context.Cause(p.ctx)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case raw := <-a.answer:
		return raw, nil
	case <-p.ctx.Done():
		p.unask(a)
		return nil, context.Cause(p.ctx)
	case <-ctx.Done():
		// The upstream gave up on its request: the call no longer waits
		// for this answer.
		p.unask(a)
		return nil, ctx.Err()
	}
}

// unask forgets a, if the call still waits for its answer.
func (p *pending) unask(a *ask) {
	p.mu.Lock()
	if p.waiting == a {
		p.waiting = nil
	}
	p.mu.Unlock()
}

// park marks p as waiting for the client's next round, for at most the
// input timeout.
func (t *pendingTable) park(p *pending) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errClosed
	}
	if t.parked >= t.max {
		return errors.New("gateway: too many upstream calls are waiting for input")
	}
	if n := t.perClient[p.key]; n >= t.maxPerClient {
		return fmt.Errorf("gateway: too many upstream calls of this client are waiting for its input (%d, the per-client limit); answer or cancel them first", n)
	}
	if _, ok := t.m[p.id]; !ok {
		return errors.New("gateway: the upstream call ended")
	}
	t.parked++
	t.perClient[p.key]++
	p.parked = true
	p.stop = t.g.afterFunc(t.ttl, func() {
		if q := t.take(p.id, ""); q == p {
			p.end(errInputTimeout)
		}
	})
	return nil
}

// take claims the parked call id of upstream up ("": of any) for the
// client's round (nil when there is none: unknown, of another upstream,
// expired or claimed by a concurrent round). A call not claimed stays
// parked, its timer running.
func (t *pendingTable) take(id, up string) *pending {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.m[id]
	if p == nil || !p.parked || (up != "" && p.u.cfg.Name != up) {
		return nil
	}
	t.unparkLocked(p)
	return p
}

// unparkLocked counts p out of the parked calls (under t.mu).
func (t *pendingTable) unparkLocked(p *pending) {
	p.parked = false
	t.parked--
	if t.perClient[p.key]--; t.perClient[p.key] <= 0 {
		delete(t.perClient, p.key)
	}
	if p.stop != nil {
		p.stop()
	}
}

// remove forgets p.
func (t *pendingTable) remove(p *pending) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m[p.id] != p {
		return
	}
	delete(t.m, p.id)
	if p.parked {
		t.unparkLocked(p)
	}
}

// count is how many of u's calls wait for the client's input.
func (t *pendingTable) count(u *upstream) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, p := range t.m {
		if p.u == u && p.parked {
			n++
		}
	}
	return n
}

// closeAll ends every pending call.
func (t *pendingTable) closeAll() {
	t.mu.Lock()
	t.closed = true
	ps := make([]*pending, 0, len(t.m))
	for _, p := range t.m {
		ps = append(ps, p)
	}
	t.mu.Unlock()
	for _, p := range ps {
		p.end(errClosed)
	}
}
