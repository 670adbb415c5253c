package gateway

import (
	"context"

	"github.com/mcpkit/mcpkit/client"
)

// A 2026-07-28 upstream reached by a command or a Connect transport runs
// its calls on its control connection (another connection would be
// another process, with state and tasks of its own): their input requests
// come back as results (certain), and a log message carries nothing that
// names its request. A 2026 server sends log messages only for a request
// that carries a level, and the gateway sends one only when its client
// asked for logs; so a log message is given to a call only when that call
// is certainly its source: the only call in flight on the connection that
// asked for logs, with no such call the gateway gave up on that may still
// have messages on their way. (An upstream reached by URL has its calls
// on leased call connections instead, where attribution is certain:
// forwardModernLeased.) Over stdio or a Connect transport the client sent the upstream
// notifications/cancelled, after which a 2026-07-28 server must send
// nothing more for the call: what it sent before may still be on its way
// in. The gateway then asks the upstream server/discover on the same
// connection (settle): the answer comes after anything the upstream wrote
// before it read the cancellation, so once it is in, the abandoned call
// counts no more (it also counts no more when the connection ends, or
// after the upstream's CallTimeout when it never answers). Other log
// messages go to the gateway's log only.

// addModern and removeModern keep the modern calls in flight; abandoned
// says the gateway gave up on the call (its context ended), c is the
// connection it ran on.
func (u *upstream) addModern(in *inflight) {
	u.mu.Lock()
	u.modern[in] = struct{}{}
	u.mu.Unlock()
}

func (u *upstream) removeModern(in *inflight, abandoned bool, c *client.Client) {
	u.mu.Lock()
	delete(u.modern, in)
	counted := abandoned && in.logs
	if counted {
		u.abandoned++
	}
	u.mu.Unlock()
	if counted {
		u.settle(c)
	}
}

// settle ends the count of one abandoned call once the upstream has
// answered a server/discover sent after its cancellation (see above).
func (u *upstream) settle(c *client.Client) {
	g := u.g
	done := func() {
		u.mu.Lock()
		u.abandoned--
		u.mu.Unlock()
		if h := g.settleHook; h != nil {
			h()
		}
	}
	g.mu.Lock()
	if g.closing || g.ctx == nil {
		g.mu.Unlock()
		done()
		return
	}
	g.wg.Add(1) // under g.mu, before Close's Wait: Close waits for it
	ctx := g.ctx
	g.mu.Unlock()
	go func() {
		defer g.wg.Done()
		defer done()
		sctx, cancel := context.WithTimeout(ctx, u.cfg.CallTimeout)
		defer cancel()
		// Any answer will do, an error too: it was asked after the
		// cancellation was written.
		_, _ = c.Discover(sctx)
	}()
}

// modernSole is the modern call the control connection's log messages
// belong to with certainty (nil: none): the only one in flight that asked
// for them.
func (u *upstream) modernSole() *inflight {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.abandoned > 0 {
		return nil
	}
	var sole *inflight
	for in := range u.modern {
		if !in.logs {
			continue
		}
		if sole != nil {
			return nil
		}
		sole = in
	}
	return sole
}
