package client

import (
	"errors"
	"time"

	"github.com/mcpkit/mcpkit/internal/keepalive"
)

// DefaultKeepAliveTimeout bounds each keepalive ping (Options.KeepAlive)
// when Options.KeepAliveTimeout is zero.
const DefaultKeepAliveTimeout = 10 * time.Second

// ErrKeepAlive is what Wait returns after the keepalive closed the
// connection: the server did not answer a ping within
// Options.KeepAliveTimeout.
var ErrKeepAlive = errors.New("client: keepalive: the server did not answer ping in time")

// tickFunc is the keepalive's clock (Options.tick in tests).
type tickFunc = keepalive.Ticker

// keepAlive pings a legacy server every Options.KeepAlive and closes the
// connection when a ping is not answered within the timeout (an error
// answer is an answer). 2026-07-28 has no ping: modern connections are
// never pinged. The goroutine is owned by the client and ends with the
// connection.
func (c *Client) keepAlive() {
	if c.opts.KeepAlive <= 0 || c.Era() != EraLegacy {
		return
	}
	timeout := c.opts.KeepAliveTimeout
	if timeout <= 0 {
		timeout = DefaultKeepAliveTimeout
	}
	keepalive.Loop{
		Interval: c.opts.KeepAlive, Timeout: timeout, Tick: c.opts.tick,
		Done: c.conn.Done(), Ping: c.Ping, TimedOut: ErrKeepAlive,
		Dead: func(err error) {
			c.log.Warn("client: keepalive: closing the connection", "err", err)
			c.keepAliveErr.Store(&err)
			c.Close()
		},
	}.Start()
}
