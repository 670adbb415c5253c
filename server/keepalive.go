package server

import (
	"context"
	"errors"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// DefaultKeepAliveTimeout bounds each keepalive ping (Options.KeepAlive)
// when Options.KeepAliveTimeout is zero.
const DefaultKeepAliveTimeout = 10 * time.Second

// errKeepAlive is the cause of a keepalive ping that timed out.
var errKeepAlive = errors.New("server: keepalive: the client did not answer ping in time")

// tickFunc starts a ticker of period d: c ticks, stop stops it. Tests
// install a manual one (Options.tick) so that intervals and timeouts
// elapse when the test says.
type tickFunc func(d time.Duration) (c <-chan time.Time, stop func())

func realTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// keepAlive pings the client of a connection-based legacy session every
// Options.KeepAlive and closes the session when a ping is not answered
// within Options.KeepAliveTimeout (an error answer is an answer: the
// client is there). Sessions of the Streamable HTTP server end by their
// idle TTL instead (streamhttp.Options), since a server→client ping there
// needs the client's GET stream. The goroutine is owned by the session
// and ends with its connection.
func (s *Server) keepAlive(ss *Session) {
	if s.opts.KeepAlive <= 0 {
		return
	}
	tick := s.opts.tick
	if tick == nil {
		tick = realTicker
	}
	timeout := s.opts.KeepAliveTimeout
	if timeout <= 0 {
		timeout = DefaultKeepAliveTimeout
	}
	c, stop := tick(s.opts.KeepAlive)
	go func() {
		defer stop()
		for {
			select {
			case <-ss.conn.Done():
				return
			case <-c:
			}
			if !ss.ready() {
				continue // not (yet) a legacy session: 2026-07-28 has no ping
			}
			if err := pingWithin(ss.conn.Done(), tick, timeout, ss.Ping); err != nil {
				select {
				case <-ss.conn.Done():
					return
				default:
				}
				s.log.Warn("server: keepalive: closing the session", "session", ss.id, "err", err)
				ss.Close()
				return
			}
		}
	}()
}

// pingWithin runs ping with a context that ends after timeout on tick's
// clock, or when done closes. Only a timeout or a failure to send is an
// error: an error answer means the peer is there.
func pingWithin(done <-chan struct{}, tick tickFunc, timeout time.Duration, ping func(context.Context) error) error {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	tc, stop := tick(timeout)
	defer stop()
	go func() { // ends when the ping is over (cancel above) at the latest
		select {
		case <-tc:
			cancel(errKeepAlive)
		case <-done:
			cancel(context.Canceled)
		case <-ctx.Done():
		}
	}()
	err := ping(ctx)
	if err == nil {
		return nil
	}
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	if answeredWithError(err) {
		return nil
	}
	return err
}

// answeredWithError reports whether err is the client's error answer.
func answeredWithError(err error) bool {
	_, ok := jsonrpc.AsError(err)
	return ok
}
