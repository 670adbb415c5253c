package gateway

// A 2026-07-28 upstream's calls run on its control connection: their
// input requests come back as results (certain), and a log message
// carries nothing that names its request. It is given to a call only
// when that call is certainly its source: the only call in flight on the
// connection, with no call the gateway gave up on that may still run
// there. Over Streamable HTTP a call given up on is over (its response
// stream is closed, so the upstream can send it nothing more); over stdio
// or a Connect transport it counts for the upstream's CallTimeout, a
// bound on how long the gateway would have waited for it. Other log
// messages go to the gateway's log only.

// addModern and removeModern keep the modern calls in flight; abandoned
// says the gateway gave up on the call (its context ended).
func (u *upstream) addModern(in *inflight) {
	u.mu.Lock()
	u.modern[in] = struct{}{}
	u.mu.Unlock()
}

func (u *upstream) removeModern(in *inflight, abandoned bool) {
	u.mu.Lock()
	delete(u.modern, in)
	counted := abandoned && u.cfg.URL == ""
	if counted {
		u.abandoned++
	}
	u.mu.Unlock()
	if counted {
		u.g.afterFunc(u.cfg.CallTimeout, func() {
			u.mu.Lock()
			u.abandoned--
			u.mu.Unlock()
		})
	}
}

// modernSole is the modern call the control connection's log messages
// belong to with certainty (nil: none).
func (u *upstream) modernSole() *inflight {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.modern) != 1 || u.abandoned > 0 {
		return nil
	}
	for in := range u.modern {
		return in
	}
	return nil
}
