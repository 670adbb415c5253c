// Package keepalivetest is test support for the keepalive of the server
// and the client: a keepalive.Ticker whose tickers tick when the test
// says. It imports internal/keepalive only (and testing).
package keepalivetest

import (
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/keepalive"
)

// Manual makes tickers that tick only when the test sends on them: each
// ticker it makes (the interval's, then each ping's timeout) is handed
// over by Next, in order.
type Manual struct{ made chan chan time.Time }

// NewManual returns a Manual with room for 16 tickers not yet taken.
func NewManual() *Manual { return &Manual{made: make(chan chan time.Time, 16)} }

// Tick is the keepalive.Ticker.
func (m *Manual) Tick(time.Duration) (<-chan time.Time, func()) {
	ch := make(chan time.Time, 1)
	m.made <- ch
	return ch, func() {}
}

var _ keepalive.Ticker = (*Manual)(nil).Tick

// Next returns the next ticker made, failing the test when none comes
// within 10 s (a hang guard, not a timing assumption).
func (m *Manual) Next(t testing.TB) chan time.Time {
	t.Helper()
	select {
	case ch := <-m.made:
		return ch
	case <-time.After(10 * time.Second):
		t.Fatal("no ticker was started")
		return nil
	}
}

// Made reports how many tickers were made and not yet taken by Next.
func (m *Manual) Made() int { return len(m.made) }
