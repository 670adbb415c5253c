package streamable

import (
	"sync"
	"testing"
	"time"
)

// waitClock is a manual clock for the waits of a Conn between attempts
// (c.waitAfter): it records the delay each wait asks for, and ends the
// wait at once when auto, else when the test releases it. Tests assert
// the delays the transport asked for, not the time that went by.
type waitClock struct {
	auto    bool
	pending chan pendingWait // the waits to release, unless auto

	mu     sync.Mutex
	delays []time.Duration
}

// pendingWait is a wait of the Conn that the test ends with release.
type pendingWait struct {
	d    time.Duration
	fire chan<- time.Time
}

func (w pendingWait) release() { w.fire <- time.Time{} }

func newWaitClock(auto bool) *waitClock {
	return &waitClock{auto: auto, pending: make(chan pendingWait, 64)}
}

// After is the Conn's waitAfter.
func (c *waitClock) After(d time.Duration) <-chan time.Time {
	fire := make(chan time.Time, 1)
	c.mu.Lock()
	c.delays = append(c.delays, d)
	c.mu.Unlock()
	if c.auto {
		fire <- time.Time{}
	} else {
		c.pending <- pendingWait{d, fire}
	}
	return fire
}

// Delays returns the delays asked for so far, in order.
func (c *waitClock) Delays() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.delays...)
}

// next returns the next wait the Conn started (not auto).
func (c *waitClock) next(t testing.TB) pendingWait {
	t.Helper()
	return recv(t, c.pending, "the Conn to wait")
}
