package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// Attribution (see docs/design/gateway.md). Every call the gateway
// forwards runs on a call connection of its own: leased by that call
// alone from before its request is written until its upstream run ends,
// the rounds it waits for the client included. What the upstream sends
// on a leased connection (log messages, progress, elicitation, sampling
// and roots requests) belongs to the lease's holder; on a connection
// nobody holds (the control connection, an idle or retired one) input
// requests are refused and log messages go to the gateway's log only.
// A call the gateway stops tracking while the upstream may still run it
// (cancelled, timed out, abandoned, closed) retires its connection:
// closed, never leased again, so nothing it sends later reaches a client.

// callConn is one call connection of an upstream.
type callConn struct {
	c       *client.Client
	control bool // the control connection itself (MaxConnections 1)
	leased  bool // the control connection is leased (under upstream.mu)
	retired bool // the control connection was retired: never leased again (under upstream.mu)
	// holder is the call that leased the connection (nil: idle, or
	// retired). Read by the connection's handlers, on its reader.
	holder atomic.Pointer[inflight]
	gen    uint64 // the control connection's generation it was opened in
	// who is the caller the connection is bound to (an upstream with a
	// caller identity, identity.go): leased only to that caller's calls.
	who *connIdentity
}

// owner is the caller cc is bound to ("" for the gateway's own).
func (cc *callConn) owner() string {
	if cc.who == nil {
		return ""
	}
	return cc.who.key
}

// lease is a call's hold of a connection and of one of the upstream's
// MaxInFlight slots, for the client key.
type lease struct {
	u    *upstream
	cc   *callConn
	key  string
	once sync.Once
	mu   sync.Mutex
	slot bool // holds one of the upstream's MaxInFlight slots
	// released: the lease ended (release); a slot taken for a late round
	// of its call is given back at once (takeSlot).
	released bool
}

var errUnheld = jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: this request belongs to no client request of the gateway (the call it was made for has ended, or it was made outside any call)")

// clientKeyKey is the context key of WithClientKey.
type clientKeyKey struct{}

// WithClientKey returns a context naming the client a request comes from,
// for the gateway's per-client limits when the request has neither a
// principal nor a legacy session (see Options.ClientKey).
// ClientAddressKeys sets it from the HTTP connection's remote address.
func WithClientKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, clientKeyKey{}, key)
}

// ClientAddressKeys wraps the gateway server's HTTP handler so that a
// request's client key (WithClientKey) is its connection's remote IP
// address: stateless 2026-07-28 clients without authentication are then
// counted apart by address (clients behind one proxy or NAT share a key).
func ClientAddressKeys(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		if host != "" {
			r = r.WithContext(WithClientKey(r.Context(), host))
		}
		next.ServeHTTP(w, r)
	})
}

// DefaultClientKey is the client a request counts against: its principal
// (server.WithPrincipal), else its legacy session, else the key set by
// WithClientKey (such as ClientAddressKeys'), else "" (every anonymous
// stateless client shares one count).
func DefaultClientKey(ctx context.Context, req *server.Request) string {
	c := server.CallerOf(ctx, req)
	switch {
	case c.Principal != "":
		return "principal:" + c.Principal
	case c.Session != nil:
		return "session:" + c.Session.ID()
	}
	if k, _ := ctx.Value(clientKeyKey{}).(string); k != "" {
		return "key:" + k
	}
	return ""
}

// clientKey is the key of the client making req.
func (g *Gateway) clientKey(ctx context.Context, req *server.Request) string {
	if req == nil {
		return ""
	}
	if f := g.opts.ClientKey; f != nil {
		return f(ctx, req)
	}
	return DefaultClientKey(ctx, req)
}

// perClientCap is how many calls one client may have at once on u
// (waiting for a connection, running or waiting for input): the
// configured cap, and never more than half the upstream's slots or (a
// legacy upstream's) connections, at least one, so that one client cannot
// hold them all.
func (u *upstream) perClientCap(legacy bool) int {
	n := u.cfg.MaxInFlight
	if legacy {
		n = min(n, u.cfg.MaxConnections)
	}
	return max(1, min(u.g.opts.MaxInFlightPerClient, n/2))
}

// reserve counts one more call of the client key on u, unless it has
// limit already.
func (u *upstream) reserve(key string, limit int) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if n := u.perClient[key]; n >= limit {
		return errClientBusy(u, n)
	}
	u.perClient[key]++
	return nil
}

func errClientBusy(u *upstream, n int) error {
	return jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: this client already has %d calls in progress on upstream %q (the gateway's per-client limit); try again when one ends", n, u.cfg.Name)
}

func errQueueTimeout(u *upstream, d time.Duration) error {
	return jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: upstream %q is busy: no call slot or connection came free within %s; try again later", u.cfg.Name, d)
}

// acquire leases a call connection of u for in, the call of the client
// key: an idle connection or a new one, then a MaxInFlight slot, each
// waited for at most QueueTimeout. A client over its per-client cap is
// refused at once. The connection comes first: a slot is then only ever
// held by a call that runs, so a parked call's next round (which holds
// its connection and needs a slot) never waits behind calls that hold
// slots while they wait for a connection.
func (u *upstream) acquire(ctx context.Context, key string, in *inflight) (*lease, error) {
	if err := u.reserve(key, u.perClientCap(true)); err != nil {
		return nil, err
	}
	l := &lease{u: u, key: key, slot: true}
	deadline := u.queueWait()
	cc, err := u.takeConn(ctx, deadline)
	if err != nil {
		u.unreserve(key)
		return nil, err
	}
	if err := u.takeSlot(ctx, deadline); err != nil {
		u.finish(cc, false)
		u.unreserve(key)
		return nil, err
	}
	cc.holder.Store(in)
	l.cc = cc
	return l, nil
}

// queueWait is the QueueTimeout of one acquisition. Its clock starts when
// the call first has to wait: a call that finds a connection and a slot
// free, as most do, costs no timer.
type queueWait struct {
	u *upstream
	c <-chan time.Time
}

func (u *upstream) queueWait() *queueWait { return &queueWait{u: u} }

// C is the channel the timeout fires on, started at the first call.
func (q *queueWait) C() <-chan time.Time {
	if q.c == nil {
		q.c = q.u.g.queueAfter(q.u.cfg.QueueTimeout)
	}
	return q.c
}

// takeSlot takes one of u's MaxInFlight slots.
func (u *upstream) takeSlot(ctx context.Context, deadline *queueWait) error {
	select {
	case u.sem <- struct{}{}:
		return nil
	default:
	}
	select {
	case u.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-deadline.C():
		return errQueueTimeout(u, u.cfg.QueueTimeout)
	}
}

func (u *upstream) unreserve(key string) {
	u.mu.Lock()
	if u.perClient[key]--; u.perClient[key] <= 0 {
		delete(u.perClient, key)
	}
	u.mu.Unlock()
}

// takeConn takes an idle connection, or opens one while fewer than
// MaxConnections are open, or waits for one to come free.
//
// With a caller identity the pool is partitioned by caller: a connection
// bound to one caller is leased only to that caller's calls, and when
// MaxConnections are open and none idle is the caller's, the least
// recently idle one of another caller is closed to make room.
func (u *upstream) takeConn(ctx context.Context, deadline *queueWait) (*callConn, error) {
	who := callerFrom(ctx)
	owner := ""
	if who != nil {
		owner = who.key
	}
	// dialed reports the end of the connection this call had opened, while
	// it is being opened.
	var dialed chan error
	for {
		u.mu.Lock()
		if u.c == nil || u.poolClosed {
			u.mu.Unlock()
			return nil, fmt.Errorf("%w: %q", ErrUnavailable, u.cfg.Name)
		}
		if cc := u.ctlCC; cc != nil {
			// MaxConnections 1: the control connection is the call
			// connection, one call at a time. A retired one waits for
			// run to connect again (setClient wakes the waiters).
			if !cc.leased && !cc.retired && !ended(cc.c) {
				cc.leased = true
				u.leased++
				u.mu.Unlock()
				return cc, nil
			}
		} else {
			for i := len(u.idle) - 1; i >= 0; i-- {
				cc := u.idle[i]
				if cc.owner() != owner {
					continue
				}
				u.idle = slices.Delete(u.idle, i, i+1)
				if !ended(cc.c) {
					u.leased++
					u.mu.Unlock()
					if who != nil {
						cc.who.token.Store(&who.token)
					}
					return cc, nil
				}
				// It died idle (the upstream closed it): closed and
				// forgotten, a new one opened in its place.
				u.dropConnLocked(cc)
				u.closers.Add(1)
				go func() {
					defer u.closers.Done()
					cc.c.Close()
				}()
			}
		}
		if u.ctlCC == nil && u.open >= u.cfg.MaxConnections && len(u.idle) > 0 && dialed == nil {
			// (Not while this call's own connection is being opened: it
			// counts in open, and room was made for it already.)
			// Every connection is open, none idle is this caller's: the
			// one idle longest (another caller's) makes room.
			cc := u.idle[0]
			u.idle = slices.Delete(u.idle, 0, 1)
			u.dropConnLocked(cc)
			u.closers.Add(1)
			go func() {
				defer u.closers.Done()
				cc.c.Close()
			}()
		}
		if u.ctlCC == nil && u.open < u.cfg.MaxConnections && dialed == nil {
			// A connection is opened for the pool, not for this call:
			// the call takes whichever comes first, a connection another
			// call gives back or the new one. Opening one costs a
			// handshake (server/discover, or initialize), which on a
			// busy upstream takes longer than most calls: a call that
			// waited for its own would pay for it in its latency.
			u.open++
			u.closers.Add(1)
			dialed = make(chan error, 1)
			gen, version := u.gen, u.c.ProtocolVersion()
			go u.dialIdle(ctx, gen, version, who, dialed)
		}
		wake := u.wake
		u.waiting++
		u.mu.Unlock()
		if u.onWait != nil {
			u.onWait()
		}
		// While the connection this call asked for is being opened, the
		// connect timeout bounds the wait, not QueueTimeout.
		var timeout <-chan time.Time
		if dialed == nil {
			timeout = deadline.C()
		}
		var err error
		select {
		case <-wake:
		case derr := <-dialed:
			dialed = nil
			if derr != nil {
				err = upstreamError(derr)
			}
		case <-ctx.Done():
			err = ctx.Err()
		case <-timeout:
			err = errQueueTimeout(u, u.cfg.QueueTimeout)
		}
		u.mu.Lock()
		u.waiting--
		u.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
}

// ended reports whether c's connection has ended.
func ended(c *client.Client) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

// wakeLocked wakes the calls waiting for a connection (under u.mu); with
// none waiting, as on most releases, it costs nothing.
func (u *upstream) wakeLocked() {
	if u.waiting == 0 {
		return
	}
	close(u.wake)
	u.wake = make(chan struct{})
}

// dropConnLocked forgets a connection that is being closed (under u.mu).
func (u *upstream) dropConnLocked(cc *callConn) {
	if u.conns[cc] {
		delete(u.conns, cc)
		u.open--
	}
}

// release ends the lease: the connection goes back to the pool, or is
// retired (retire, or it ended, or it belongs to an earlier control
// connection), and the slot and the client's count are given back.
func (l *lease) release(retire bool) {
	l.once.Do(func() {
		u := l.u
		u.finish(l.cc, retire)
		l.mu.Lock()
		l.released = true
		l.mu.Unlock()
		l.dropSlot()
		u.unreserve(l.key)
	})
}

// dropSlot gives the lease's MaxInFlight slot back, if it holds one: a
// call waiting for its client's answer is not running (it keeps its
// connection, which the upstream's question came on).
func (l *lease) dropSlot() {
	l.mu.Lock()
	held := l.slot
	l.slot = false
	l.mu.Unlock()
	if held {
		<-l.u.sem
	}
}

// takeSlot takes a slot again for the call's next round, waiting at most
// QueueTimeout.
func (l *lease) takeSlot(ctx context.Context) error {
	if err := l.u.takeSlot(ctx, l.u.queueWait()); err != nil {
		return err
	}
	l.mu.Lock()
	if l.slot || l.released {
		// Held already (cannot happen: a parked call holds none), or the
		// call ended meanwhile (the upstream ended it while it was
		// parked): the slot is not kept, and the round finds the call's
		// outcome.
		l.mu.Unlock()
		<-l.u.sem
		return nil
	}
	l.slot = true
	l.mu.Unlock()
	return nil
}

// finish takes a leased connection back: idle again, or closed.
func (u *upstream) finish(cc *callConn, retire bool) {
	cc.holder.Store(nil)
	u.mu.Lock()
	u.leased--
	if cc.control {
		cc.leased = false
		if retire {
			// Never leased again, even before the close takes effect:
			// what the upstream still sends for the abandoned call must
			// not reach the next call.
			cc.retired = true
		}
		u.wakeLocked()
		closing := u.poolClosed
		if retire && !closing {
			u.closers.Add(1)
		}
		u.mu.Unlock()
		if retire && !closing {
			// Nothing the upstream still sends for the abandoned call may
			// reach the next: the connection is closed, and run connects
			// again.
			u.g.log.Warn("gateway: closing the upstream's only connection after an abandoned call", "upstream", u.cfg.Name)
			go func() {
				defer u.closers.Done()
				cc.c.Close()
			}()
		}
		return
	}
	u.putBackLocked(cc, retire)
}

// putBackLocked puts call connection cc (not the control one) with the
// idle ones, or closes it when it is retired, ended, of an earlier
// generation or the pool closed. It is called with u.mu held and
// releases it.
func (u *upstream) putBackLocked(cc *callConn, retire bool) {
	if !retire && !ended(cc.c) && cc.gen == u.gen && !u.poolClosed && u.conns[cc] {
		u.idle = append(u.idle, cc)
		u.wakeLocked()
		u.mu.Unlock()
		return
	}
	u.dropConnLocked(cc)
	u.wakeLocked()
	closing := u.poolClosed
	if !closing {
		u.closers.Add(1)
	}
	u.mu.Unlock()
	if closing {
		cc.c.Close()
		return
	}
	// Closing a command waits for it to exit (transport/command's bounded
	// shutdown): not on the caller's path. run waits for it.
	go func() {
		defer u.closers.Done()
		cc.c.Close()
	}()
}

// closeConns closes every call connection (the control connection ended,
// or the gateway closes): idle ones and leased ones, whose calls fail.
// final marks the pool closed for good.
func (u *upstream) closeConns(final bool) {
	u.mu.Lock()
	u.gen++
	if final {
		u.poolClosed = true
	}
	all := make([]*callConn, 0, len(u.conns))
	for cc := range u.conns {
		all = append(all, cc)
	}
	u.idle = nil
	u.wakeLocked()
	u.mu.Unlock()
	var wg sync.WaitGroup
	for _, cc := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cc.c.Close()
		}()
	}
	wg.Wait()
	u.mu.Lock()
	for _, cc := range all {
		if u.conns[cc] && cc.holder.Load() == nil {
			u.dropConnLocked(cc)
		}
	}
	u.mu.Unlock()
	if final {
		u.closers.Wait()
	}
}

// dialIdle opens a call connection for the pool in the era (the revision)
// of the control connection of generation gen, bound to caller who (nil:
// the gateway's own), and puts it with the idle ones, where the calls
// waiting for a connection find it. It runs for at most ConnectTimeout and
// while the gateway does, however long the call that asked for it waits,
// and reports the outcome on done. The caller counted the connection in
// open and added to closers.
func (u *upstream) dialIdle(ctx context.Context, gen uint64, version string, who *caller, done chan<- error) {
	defer u.closers.Done()
	cc := &callConn{gen: gen}
	if who != nil {
		cc.who = newConnIdentity(who)
	}
	// The call's values (its caller's identity) without its end.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), u.cfg.ConnectTimeout)
	stop := context.AfterFunc(u.g.ctx, cancel)
	c, err := u.connectWith(u.g.ctx, cctx, version, cc)
	stop()
	cancel()
	if err != nil {
		// The call that asked for it may have taken another connection
		// and gone: the failure is logged here too.
		u.g.log.Debug("gateway: opening a call connection failed", "upstream", u.cfg.Name, "err", err)
		u.mu.Lock()
		u.open--
		u.wakeLocked()
		u.mu.Unlock()
		done <- err
		return
	}
	cc.c = c
	u.mu.Lock()
	u.conns[cc] = true
	u.putBackLocked(cc, false) // closed instead when its generation has passed or the pool closed
	done <- nil
}

// retiring reports whether a call that ended with err on ctx leaves its
// connection unfit for another call: the gateway stopped waiting for it
// (ctx ended, the call timed out) while the upstream may still run it.
func retiring(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
