package client

import (
	"context"
	"errors"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// DefaultKeepAliveTimeout bounds each keepalive ping (Options.KeepAlive)
// when Options.KeepAliveTimeout is zero.
const DefaultKeepAliveTimeout = 10 * time.Second

// ErrKeepAlive is what Wait returns after the keepalive closed the
// connection: the server did not answer a ping within
// Options.KeepAliveTimeout.
var ErrKeepAlive = errors.New("client: keepalive: the server did not answer ping in time")

// tickFunc starts a ticker of period d: c ticks, stop stops it. Tests
// install a manual one (Options.tick).
type tickFunc func(d time.Duration) (c <-chan time.Time, stop func())

func realTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// keepAlive pings a legacy server every Options.KeepAlive and closes the
// connection when a ping is not answered within the timeout (an error
// answer is an answer). 2026-07-28 has no ping: modern connections are
// never pinged. The goroutine is owned by the client and ends with the
// connection.
func (c *Client) keepAlive() {
	if c.opts.KeepAlive <= 0 || c.era != EraLegacy {
		return
	}
	tick := c.opts.tick
	if tick == nil {
		tick = realTicker
	}
	timeout := c.opts.KeepAliveTimeout
	if timeout <= 0 {
		timeout = DefaultKeepAliveTimeout
	}
	ch, stop := tick(c.opts.KeepAlive)
	go func() {
		defer stop()
		for {
			select {
			case <-c.conn.Done():
				return
			case <-ch:
			}
			if err := c.pingWithin(tick, timeout); err != nil {
				select {
				case <-c.conn.Done():
					return
				default:
				}
				c.log.Warn("client: keepalive: closing the connection", "err", err)
				c.keepAliveErr.Store(&err)
				c.Close()
				return
			}
		}
	}()
}

// pingWithin pings with a context that ends after timeout on tick's
// clock. Only a timeout or a failure to send is an error.
func (c *Client) pingWithin(tick tickFunc, timeout time.Duration) error {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	tc, stop := tick(timeout)
	defer stop()
	go func() { // ends when the ping is over (cancel above) at the latest
		select {
		case <-tc:
			cancel(ErrKeepAlive)
		case <-c.conn.Done():
			cancel(context.Canceled)
		case <-ctx.Done():
		}
	}()
	err := c.Ping(ctx)
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
