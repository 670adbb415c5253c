// Package keepalive is the ping loop that the server (legacy sessions
// over a connection) and the client (legacy connections) share: ping the
// peer every interval and report it dead when a ping is not answered
// within a timeout. An error answer is an answer: the peer is there.
// Time comes from a Ticker, so tests move it themselves. It imports only
// jsonrpc (to tell an error answer from a failure).
package keepalive

import (
	"context"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Ticker starts a ticker of period d: c ticks, stop stops it.
type Ticker func(d time.Duration) (c <-chan time.Time, stop func())

// RealTicker is the wall clock's Ticker.
func RealTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// Loop describes one peer's keepalive.
type Loop struct {
	Interval, Timeout time.Duration
	// Tick is the clock (nil: RealTicker).
	Tick Ticker
	// Done closes when the connection ends; the loop ends with it.
	Done <-chan struct{}
	// Due, when set, says whether a tick should ping now (a session not
	// yet initialized is skipped).
	Due func() bool
	// Ping sends one ping and waits for its answer.
	Ping func(ctx context.Context) error
	// TimedOut is the error a ping that outlived Timeout reports.
	TimedOut error
	// Dead is called once, from the loop's goroutine, with why the peer
	// is taken for gone; the loop then ends.
	Dead func(err error)
}

// Start runs the loop on a goroutine of its own, which ends when Done
// closes or after Dead. It does nothing when Interval is not positive.
func (l Loop) Start() {
	if l.Interval <= 0 {
		return
	}
	if l.Tick == nil {
		l.Tick = RealTicker
	}
	c, stop := l.Tick(l.Interval)
	go func() {
		defer stop()
		for {
			select {
			case <-l.Done:
				return
			case <-c:
			}
			if l.Due != nil && !l.Due() {
				continue
			}
			if err := l.pingWithin(); err != nil {
				select {
				case <-l.Done:
					return
				default:
				}
				l.Dead(err)
				return
			}
		}
	}()
}

// pingWithin pings with a context that ends after Timeout on the loop's
// clock, or when Done closes. Only a timeout or a failure to send is an
// error.
func (l Loop) pingWithin() error {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	tc, stop := l.Tick(l.Timeout)
	defer stop()
	go func() { // ends when the ping is over (cancel above) at the latest
		select {
		case <-tc:
			cancel(l.TimedOut)
		case <-l.Done:
			cancel(context.Canceled)
		case <-ctx.Done():
		}
	}()
	err := l.Ping(ctx)
	if err == nil {
		return nil
	}
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	if _, ok := jsonrpc.AsError(err); ok {
		return nil
	}
	return err
}
