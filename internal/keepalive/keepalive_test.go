package keepalive_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/keepalive"
	"github.com/mcpkit/mcpkit/internal/keepalive/keepalivetest"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

var errTimedOut = errors.New("keepalive_test: no answer in time")

// TestLoop: an answer, even an error answer, keeps the peer alive; a
// skipped tick pings nothing; a ping outliving its timeout reports the
// peer dead once, with TimedOut, and the loop ends.
func TestLoop(t *testing.T) {
	clock := keepalivetest.NewManual()
	done := make(chan struct{})
	defer close(done)
	pings := make(chan chan error)
	dead := make(chan error, 1)
	due := make(chan bool, 1)
	keepalive.Loop{
		Interval: time.Minute, Timeout: time.Second, Tick: clock.Tick, Done: done,
		Due: func() bool { return <-due },
		Ping: func(ctx context.Context) error {
			answer := make(chan error)
			pings <- answer
			select {
			case err := <-answer:
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		TimedOut: errTimedOut,
		Dead:     func(err error) { dead <- err },
	}.Start()
	interval := clock.Next(t)

	ping := func() (answer chan error, timeout chan time.Time) {
		t.Helper()
		due <- true
		interval <- time.Now()
		answer = <-pings
		return answer, clock.Next(t)
	}
	answer, _ := ping()
	answer <- nil
	answer, _ = ping()
	answer <- jsonrpc.NewError(-32601, "Method not found") // an answer all the same
	select {
	case err := <-dead:
		t.Fatalf("dead after answers: %v", err)
	default:
	}

	due <- false
	interval <- time.Now() // skipped: no ping, no timeout ticker
	_, timeout := ping()
	if n := clock.Made(); n != 0 {
		t.Fatalf("%d tickers made beyond the pings'", n)
	}
	timeout <- time.Now() // no answer in time
	if err := <-dead; !errors.Is(err, errTimedOut) {
		t.Fatalf("dead with %v, want the TimedOut error", err)
	}
}
