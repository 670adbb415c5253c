package server

import (
	"errors"
	"time"

	"github.com/mcpkit/mcpkit/internal/keepalive"
)

// DefaultKeepAliveTimeout bounds each keepalive ping (Options.KeepAlive)
// when Options.KeepAliveTimeout is zero.
const DefaultKeepAliveTimeout = 10 * time.Second

// errKeepAlive is the cause of a keepalive ping that timed out.
var errKeepAlive = errors.New("server: keepalive: the client did not answer ping in time")

// tickFunc is the keepalive's clock (Options.tick in tests).
type tickFunc = keepalive.Ticker

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
	timeout := s.opts.KeepAliveTimeout
	if timeout <= 0 {
		timeout = DefaultKeepAliveTimeout
	}
	keepalive.Loop{
		Interval: s.opts.KeepAlive, Timeout: timeout, Tick: s.opts.tick,
		Done: ss.conn.Done(), Ping: ss.Ping, TimedOut: errKeepAlive,
		Due: ss.ready, // not (yet) a legacy session: 2026-07-28 has no ping
		Dead: func(err error) {
			s.log.Warn("server: keepalive: closing the session", "session", ss.id, "err", err)
			ss.Close()
		},
	}.Start()
}
