package group

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/transport"
)

// errEnded is the failure of a connection that ended, until the client
// says why.
var errEnded = errors.New("connection ended")

// member is one server of a group and its connection. Its fields below mu
// change only under mu; connecting happens outside it, by one caller at a
// time (dialing), the others waiting for that attempt.
type member struct {
	g      *Group
	name   string
	prefix string
	dial   func(context.Context) (transport.Conn, error)
	opts   client.Options

	mu       sync.Mutex
	c        *client.Client
	state    State
	err      error
	since    time.Time
	next     time.Time     // a down server is not tried before
	backoff  time.Duration // the wait after the next failed attempt
	connects int
	dialing  chan struct{} // closed when the attempt in flight ends
	closed   bool
}

func (m *member) join(name string) string { return m.prefix + m.g.opts.Separator + name }

func (m *member) fail(err error) error { return &ServerError{Server: m.name, Err: err} }

// get returns the server's client, connecting it when it is down and its
// retry is due (or waiting for an attempt in flight).
func (m *member) get(ctx context.Context) (*client.Client, error) {
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, m.fail(ErrClosed)
		}
		if c := m.c; c != nil {
			select {
			case <-c.Done():
				m.lost(c) // unlocks
				continue
			default:
				m.mu.Unlock()
				return c, nil
			}
		}
		if ch := m.dialing; ch != nil {
			m.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, m.fail(ctx.Err())
			}
		}
		if now := m.g.opts.Now(); now.Before(m.next) {
			err := fmt.Errorf("%w (retry at %s): %w", ErrServerDown, m.next.Format(time.RFC3339Nano), m.err)
			m.mu.Unlock()
			return nil, m.fail(err)
		}
		ch := make(chan struct{})
		m.dialing = ch
		prev := m.state
		m.state = StateConnecting
		m.g.wg.Add(1) // before Close marks m closed, so before its Wait
		m.mu.Unlock()
		c, err := m.connect(ctx)
		if err != nil && ctx.Err() != nil {
			m.abandon(prev, err) // the caller gave up: not the server's failure
		} else {
			m.settle(c, err)
		}
		close(ch)
		m.g.wg.Done()
		if err != nil {
			return nil, m.fail(err)
		}
	}
}

// lost records that the connection of c ended; called with mu held, it
// unlocks, then learns why and closes c (both may wait for the client's
// shutdown, so outside the lock).
func (m *member) lost(c *client.Client) {
	m.c = nil
	m.state = StateDown
	m.err = errEnded
	m.since = m.g.opts.Now()
	m.next = time.Time{} // a server that was ready is tried again at once
	m.mu.Unlock()
	why := c.Wait()
	_ = c.Close()
	if why == nil {
		return
	}
	m.mu.Lock()
	if m.c == nil && m.state == StateDown && m.err == errEnded { // nothing newer happened
		m.err = fmt.Errorf("%w: %w", errEnded, why)
	}
	m.mu.Unlock()
}

// connect opens a transport and a client within the connect timeout and
// the group's life, then the list-change subscription of a modern server.
func (m *member) connect(ctx context.Context) (*client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, m.g.opts.ConnectTimeout)
	defer cancel()
	stop := context.AfterFunc(m.g.ctx, cancel)
	defer stop()
	conn, err := m.dial(ctx)
	if err != nil {
		return nil, err
	}
	c, err := client.Connect(ctx, conn, &m.opts) // closes conn on failure
	if err != nil {
		return nil, err
	}
	o := &m.opts
	if c.Era() == client.EraModern && (o.OnToolsListChanged != nil || o.OnPromptsListChanged != nil || o.OnResourcesListChanged != nil) {
		m.listen(ctx, c)
	}
	return c, nil
}

// listen opens the subscription that brings a modern server's list
// changes to the client's handlers. It lives as long as the client or the
// group, not the attempt; only the wait for its acknowledgement is bounded
// by ctx. Its notifications are drained by a goroutine the group waits
// for at Close.
func (m *member) listen(ctx context.Context, c *client.Client) {
	lctx, cancel := context.WithCancel(m.g.ctx)
	stop := context.AfterFunc(ctx, cancel) // no acknowledgement in time ends the attempt
	sub, err := c.Listen(lctx, listenFilter)
	if !stop() && err == nil {
		err = ctx.Err()
		_ = sub.Close()
	}
	if err != nil {
		cancel()
		m.g.opts.Logger.Warn("group: no list-change subscription", "server", m.name, "err", err)
		return
	}
	m.g.wg.Add(1) // the attempt's own Add is still held: the count is not zero
	go func() {   // owned by the group: ends with the subscription (client or group closed)
		defer m.g.wg.Done()
		defer cancel()
		for range sub.Notifications() { // the client's handlers already saw each one
		}
	}()
}

// settle records the outcome of an attempt.
func (m *member) settle(c *client.Client, err error) {
	m.mu.Lock()
	now := m.g.opts.Now()
	if m.closed {
		m.mu.Unlock()
		if c != nil {
			_ = c.Close()
		}
		return
	}
	m.dialing = nil
	m.since = now
	if err != nil {
		m.state = StateDown
		m.err = err
		if m.backoff == 0 {
			m.backoff = m.g.opts.RetryMin
		}
		m.next = now.Add(m.backoff)
		m.backoff = min(2*m.backoff, m.g.opts.RetryMax)
		m.mu.Unlock()
		return
	}
	m.c = c
	m.state = StateReady
	m.err = nil
	m.next = time.Time{}
	m.backoff = 0
	m.connects++
	m.mu.Unlock()
}

// abandon records an attempt its caller's context ended: the server is
// as it was, with no retry delay added, so that another caller (whose
// wait on the attempt now ends) tries again at once.
func (m *member) abandon(prev State, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.dialing = nil
	if prev == StateConnecting { // never reached: down, saying why
		prev = StateDown
		if m.err == nil {
			m.err = err
		}
	}
	m.state = prev
}

// shut marks the member closed and hands back its client to close.
func (m *member) shut() *client.Client {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	c := m.c
	m.c = nil
	m.state = StateClosed
	m.since = m.g.opts.Now()
	return c
}

func (m *member) status() Status {
	m.mu.Lock()
	if c := m.c; c != nil {
		select {
		case <-c.Done():
			m.lost(c) // unlocks
			m.mu.Lock()
		default:
		}
	}
	defer m.mu.Unlock()
	s := Status{Name: m.name, Prefix: m.prefix, State: m.state, Err: m.err, Connects: m.connects, Since: m.since, NextRetry: m.next}
	if m.c != nil {
		s.Era = m.c.Era()
		s.ProtocolVersion = m.c.ProtocolVersion()
	}
	return s
}
