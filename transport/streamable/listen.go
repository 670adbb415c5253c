package streamable

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// listenState is the listener's part of the Conn, guarded by Conn.mu.
type listenState struct {
	wanted  bool               // Listen was called
	running bool               // a listener goroutine runs
	stopped error              // why the last listener stopped
	cancel  context.CancelFunc // ends the running listener
	done    chan struct{}      // closed when the running listener's goroutine exits
}

// Listen starts the GET listening stream, which carries the server's
// messages that belong to no request (notifications, pings, and responses
// of resumed POST streams), and returns at once: nothing waits for the GET
// to be answered. Only the first call starts a listener; later calls do
// nothing, even once it stopped — except that a new session (after a 404,
// see ErrSessionLost) restarts a stopped listener, unless it stopped on
// 405. ListenerStatus tells whether it runs and why it stopped.
//
// Each attempt sends GET with Accept: text/event-stream, the session
// headers, and Last-Event-ID when an event id was seen on this listener
// in this session; the last event id and the server's retry: persist
// across attempts. Then:
//
//   - a clean end of the stream is a success: it resets the count of
//     consecutive failures;
//   - 405 stops the listener at once (ErrListen405);
//   - any other failure counts: an HTTP error status (401 and 404
//     included: the listener does not authenticate, and a lost session is
//     recovered by the next Write), a connection error, a stream that is
//     not text/event-stream, and no byte for Options.ListenIdleTimeout
//     (ErrListenIdle). Options.MaxListenFailures in a row stop the
//     listener (ErrListenFailures, wrapping the last failure). A failed
//     connection that delivered a message first counts as the first of a
//     new series, so that rare drops of a long-lived stream do not add up;
//   - an event over Options.MaxEventBytes does not stop it: the event is
//     dropped and the stream read on (Read returns a
//     *transport.TooLargeError in its place: see Options.MaxEventBytes);
//   - Close stops it (transport.ErrClosed), also during a delay, and so
//     does the loss of the session (ErrSessionLost).
//
// The delay before the next attempt is the server's retry: value, or
// DefaultRetry, never under MinRetry. Servers that end the stream cleanly
// at once would be reconnected forever at that pace (typescript-sdk#2682),
// so consecutive clean ends that delivered no message back off: the n-th
// in a row waits the delay doubled n-1 times, capped at MaxListenBackoff
// (a longer server retry: is kept); a message resets it.
func (c *Conn) Listen() {
	if c.Legacy() {
		return // the one stream of the 2024-11-05 transport carries everything
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lis.wanted {
		return
	}
	c.lis.wanted = true
	c.startListenerLocked()
}

// ListenerStatus reports whether the listener runs and, when it stopped,
// why: ErrListen405, ErrListenFailures (wrapping the last failure),
// ErrSessionLost or transport.ErrClosed. Both are zero
// before Listen.
func (c *Conn) ListenerStatus() (running bool, stopped error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lis.running, c.lis.stopped
}

// Listening returns a channel that is closed once the listener's GET
// stream is first established (the server answered it with an event
// stream). Connect never waits for it (B4); an application that relies
// on messages the server sends only on the standalone stream — change
// notifications, or a server that sends requests there — can wait for it
// before making the calls that trigger them.
func (c *Conn) Listening() <-chan struct{} { return c.listening }

// listenerDone returns a channel closed when the current listener's
// goroutine exits (nil before Listen). Tests wait on it.
func (c *Conn) listenerDone() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lis.done
}

// startListenerLocked starts a listener goroutine. Called with mu held.
func (c *Conn) startListenerLocked() {
	switch {
	case c.lis.running:
		return
	case c.closed:
		c.lis.stopped = transport.ErrClosed
		return
	case c.lostErr != nil:
		c.lis.stopped = c.lostErr
		return
	}
	ctx, cancel := context.WithCancel(c.ctx)
	done := make(chan struct{})
	c.lis.running, c.lis.stopped, c.lis.cancel, c.lis.done = true, nil, cancel, done
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(done)
		defer cancel()
		c.listen(ctx)
	}()
}

// restartListener restarts a stopped listener for a new session.
func (c *Conn) restartListener() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lis.wanted && !c.lis.running && !errors.Is(c.lis.stopped, ErrListen405) {
		c.startListenerLocked()
	}
}

func (c *Conn) listenerStopped(err error) {
	c.mu.Lock()
	c.lis.running, c.lis.stopped = false, err
	c.mu.Unlock()
	if errors.Is(err, transport.ErrClosed) {
		c.log.Debug("streamable: GET listener stopped", "err", err)
		return
	}
	c.log.Warn("streamable: GET listener stopped", "err", err)
}

// listen runs the listener until it stops (see Listen).
func (c *Conn) listen(ctx context.Context) {
	var cur cursor
	session := ""
	failures := 0 // consecutive failed attempts
	empty := 0    // consecutive clean ends without a message
	for {
		if ctx.Err() != nil {
			c.listenerStopped(c.stopCause())
			return
		}
		if s := c.SessionID(); s != session {
			// Event ids name the streams of one session.
			session, cur.lastID = s, ""
		}
		res := c.listenOnce(ctx, &cur)
		var stop error
		switch {
		case ctx.Err() != nil:
			stop = c.stopCause()
		case statusCode(res.err) == http.StatusMethodNotAllowed:
			stop = ErrListen405
		case res.err == nil:
			failures = 0
		default:
			if res.messages > 0 {
				failures = 0
			}
			failures++
			c.log.Debug("streamable: GET listener attempt failed", "failures", failures, "err", res.err)
			if failures >= c.opts.MaxListenFailures {
				stop = fmt.Errorf("%w (%d): %w", ErrListenFailures, failures, res.err)
			}
		}
		if stop != nil {
			c.listenerStopped(stop)
			return
		}
		delay := c.retryDelay(cur.retry, cur.hasRetry)
		switch {
		case res.messages > 0:
			empty = 0
		case res.err == nil:
			empty++
			delay = backoff(delay, empty-1)
		}
		if !c.wait(ctx, delay) {
			c.listenerStopped(c.stopCause())
			return
		}
	}
}

// listenOnce makes one listener attempt.
func (c *Conn) listenOnce(ctx context.Context, cur *cursor) consumed {
	g, err := c.openGET(ctx, cur.lastID, c.opts.ListenIdleTimeout)
	if err != nil {
		return consumed{err: err}
	}
	defer g.close()
	c.listeningOnce.Do(func() { close(c.listening) })
	res := c.consume(g.body, cur, func(in inbound, _ *jsonrpc.Message) bool {
		return c.enqueueIn(ctx, in) == nil
	})
	if res.err != nil && g.idleFired() {
		res.err = ErrListenIdle
	}
	return res
}

// stopCause is why the listener's context ended.
func (c *Conn) stopCause() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lostErr != nil && !c.closed {
		return c.lostErr
	}
	return transport.ErrClosed
}

// backoff doubles d n times, up to MaxListenBackoff (a d already above
// it is kept).
func backoff(d time.Duration, n int) time.Duration {
	for range n {
		if d >= MaxListenBackoff {
			break
		}
		d = min(2*d, MaxListenBackoff)
	}
	return d
}

func statusCode(err error) int {
	var se *StatusError
	if errors.As(err, &se) {
		return se.StatusCode
	}
	return 0
}
