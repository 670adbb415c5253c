package streamable

import (
	"context"
	"time"
)

// wait waits d or until ctx ends, and reports whether d passed. Every
// pause of the Conn between attempts goes through it: the listener's
// reconnection delay, the delay before resuming a POST stream, and the
// pauses before sending an answer again. It waits on a wall-clock timer
// unless a test has set c.waitAfter to a manual clock, so that tests see
// the delays asked for and end them when they say, not after a sleep.
func (c *Conn) wait(ctx context.Context, d time.Duration) bool {
	var fired <-chan time.Time
	if c.waitAfter != nil {
		fired = c.waitAfter(d)
	} else {
		t := time.NewTimer(d)
		defer t.Stop()
		fired = t.C
	}
	select {
	case <-fired:
		return true
	case <-ctx.Done():
		return false
	}
}

// newGraceTimer starts the timer that calls f, which ends a POST stream,
// ResponseGrace after its response: a wall-clock timer unless a test has
// set c.graceAfter to a manual one. Only its Stop is used.
func (c *Conn) newGraceTimer(d time.Duration, f func()) idleTimer {
	if c.graceAfter != nil {
		return c.graceAfter(d, f)
	}
	return time.AfterFunc(d, f)
}
