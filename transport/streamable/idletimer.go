package streamable

import "time"

// idleTimer is the timer that ends a listening GET stream after
// Options.ListenIdleTimeout without a byte; *time.Timer is one.
type idleTimer interface {
	Stop() bool
	Reset(d time.Duration) bool
}

// newIdleTimer starts an idle timer that calls f after d: a wall-clock
// timer unless a test has set c.idleAfter to a manual one, so that idle
// timeouts elapse when the test says, not after a sleep.
func (c *Conn) newIdleTimer(d time.Duration, f func()) idleTimer {
	if c.idleAfter != nil {
		return c.idleAfter(d, f)
	}
	return time.AfterFunc(d, f)
}
