package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// Notification is one change notification delivered on a Subscription.
type Notification struct {
	// Method is the notification: notifications/tools/list_changed,
	// notifications/prompts/list_changed,
	// notifications/resources/list_changed,
	// notifications/resources/updated or (tasks extension, TaskIDs)
	// notifications/tasks, whose params are the task as tasks/get
	// answers it.
	Method string
	// URI is the resource of notifications/resources/updated.
	URI string
	// Params are the notification's params as received.
	Params jsontext.Value
}

// Subscription is an open subscriptions/listen stream (2026-07-28): the
// server acknowledged it and sends the change notifications it agreed to,
// each tagged with the subscription's id. See Client.Listen.
type Subscription struct {
	c      *Client
	filter mcp.SubscriptionFilter
	cancel context.CancelCauseFunc
	acked  chan struct{} // closed by the acknowledgement
	done   chan struct{} // closed when the listen request is over
	wake   chan struct{} // signals the iterator (capacity 1)

	mu      sync.Mutex
	id      mcp.ID
	queue   []Notification
	ackOnce bool
	err     error
}

// maxQueuedNotifications bounds the notifications a Subscription keeps for
// a consumer that does not read them; beyond it the oldest are dropped.
const maxQueuedNotifications = 4096

// errServerEnded is the cancellation cause of a listen request the server
// ended with notifications/cancelled (stdio).
var errServerEnded = errors.New("client: the server ended the subscription")

// Listen opens a subscriptions/listen stream (2026-07-28) for the change
// notifications filter asks for, and returns once the server acknowledged
// it; Filter then reports what the server agreed to send (it omits what it
// does not support). On a legacy connection it returns ErrLegacy (legacy
// servers send change notifications unasked, to the OnToolsListChanged…
// handlers; resources/subscribe is Subscribe there).
//
// ctx bounds the whole subscription, not only the wait for the
// acknowledgement: when it ends (or Close is called), the client ends the
// stream — on stdio with notifications/cancelled, on Streamable HTTP by
// closing the POST's response stream. The server may end it too, with the
// listen result (a graceful end, also on server shutdown) or, on stdio,
// notifications/cancelled for its id; Err is then nil. Several
// subscriptions may be open at once; notifications are told apart by
// their io.modelcontextprotocol/subscriptionId.
//
// Every notification also goes where it would go without a subscription:
// list changes invalidate the Cache and reach OnToolsListChanged,
// OnPromptsListChanged, OnResourcesListChanged and OnResourceUpdated.
//
// A filter with TaskIDs (the tasks extension: notifications/tasks for
// those tasks) makes the listen request declare the extension, whether or
// not Options.Tasks is set.
//
// A subscription does not survive the connection: after a stdio server
// restart (a new Client), the caller listens again.
func (c *Client) Listen(ctx context.Context, filter mcp.SubscriptionFilter) (*Subscription, error) {
	if err := c.mode().lacks(mcp.MethodSubscriptionsListen); err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancelCause(ctx)
	s := &Subscription{
		c:      c,
		cancel: cancel,
		acked:  make(chan struct{}),
		done:   make(chan struct{}),
		wake:   make(chan struct{}, 1),
	}
	lctx := sctx
	if len(filter.TaskIDs) > 0 {
		lctx = tasksExt(lctx) // task status is for requests that declare the extension
	}
	// sent learns the request's JSON-RPC id (the subscription id) just
	// before the request is written, so before any notification for it
	// can arrive; a -32022 retry writes it again with a new id.
	sent := func(id mcp.ID) { c.register(s, id) }
	go func() { // owned by s: ends when the listen request is over
		p := &mcp.SubscriptionsListenParams{Notifications: filter}
		_, err := c.send(lctx, mcp.MethodSubscriptionsListen, p, &p.Meta, nil, sent)
		s.finish(err, context.Cause(sctx))
	}()
	select {
	case <-s.acked:
		return s, nil
	case <-s.done:
		if err := s.Err(); err != nil {
			return nil, err
		}
		return nil, errors.New("client: subscriptions/listen ended before the server acknowledged it")
	case <-ctx.Done():
		cancel(context.Cause(ctx))
		<-s.done
		return nil, ctx.Err()
	}
}

// Filter returns what the server agreed to send.
func (s *Subscription) Filter() mcp.SubscriptionFilter { return s.filter }

// ID returns the subscription id: the JSON-RPC id of the listen request.
func (s *Subscription) ID() mcp.ID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// Done is closed when the subscription has ended.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Err reports why the subscription ended: nil while it is open and when
// the server ended it gracefully; the context's error when the client
// ended it (ctx or Close); the failure otherwise (such as the connection
// ending).
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close ends the subscription (see Listen) and waits until the listen
// request is over. It returns nil. It is idempotent.
func (s *Subscription) Close() error {
	s.cancel(context.Canceled)
	<-s.done
	return nil
}

// Notifications returns an iterator over the subscription's
// notifications, in arrival order. It ends once the subscription has
// ended and every notification received before has been yielded; the
// caller may also stop early (the subscription stays open). Notifications
// are kept for the iterator until it reads them (at most 4096, oldest
// dropped first), so the loop may call the client. One iterator at a time.
func (s *Subscription) Notifications() iter.Seq[Notification] {
	return func(yield func(Notification) bool) {
		for {
			s.mu.Lock()
			if len(s.queue) > 0 {
				n := s.queue[0]
				s.queue[0] = Notification{}
				s.queue = s.queue[1:]
				s.mu.Unlock()
				if !yield(n) {
					return
				}
				continue
			}
			s.mu.Unlock()
			select {
			case <-s.wake:
			case <-s.done:
				s.mu.Lock()
				empty := len(s.queue) == 0
				s.mu.Unlock()
				if empty {
					return
				}
			}
		}
	}
}

// push queues one notification for the iterator.
func (s *Subscription) push(n Notification) {
	s.mu.Lock()
	if len(s.queue) >= maxQueuedNotifications {
		s.queue = s.queue[1:]
		s.c.log.Warn("client: a subscription's notifications are not read; dropped the oldest", "subscription", s.id.String())
	}
	s.queue = append(s.queue, n)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// ack records the server's acknowledgement.
func (s *Subscription) ack(f mcp.SubscriptionFilter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ackOnce {
		return
	}
	s.ackOnce = true
	s.filter = f
	close(s.acked)
}

// finish ends the subscription once its listen request is over: err is
// what the call returned, cause why its context ended (if it did).
func (s *Subscription) finish(err, cause error) {
	switch {
	case err == nil, errors.Is(cause, errServerEnded):
		err = nil // the listen result, or the server's cancellation: graceful
	case cause != nil:
		err = cause
		if !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) {
			err = fmt.Errorf("%w: %w", context.Canceled, cause)
		}
	}
	c := s.c
	c.mu.Lock()
	s.mu.Lock()
	if c.subs[s.id] == s {
		delete(c.subs, s.id)
		c.nsubs.Add(-1)
	}
	s.err = err
	s.mu.Unlock()
	c.mu.Unlock()
	s.cancel(nil)
	close(s.done)
}

// register files s under id, the id of its listen request, just before
// the request is written (replacing the id of an earlier attempt).
func (c *Client) register(s *Subscription, id mcp.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.subs == nil {
		c.subs = make(map[mcp.ID]*Subscription)
	}
	s.mu.Lock()
	if c.subs[s.id] == s {
		delete(c.subs, s.id)
		c.nsubs.Add(-1)
	}
	s.id = id
	s.mu.Unlock()
	c.subs[id] = s
	c.nsubs.Add(1)
}

func (c *Client) subscription(id mcp.ID) *Subscription {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.subs[id]
}

// demux hands a notification tagged with a subscription id to its
// subscription, and reports whether the client consumed it (the
// acknowledgement, which goes nowhere else).
func (c *Client) demux(n *jsonrpc.Message) bool {
	if c.nsubs.Load() == 0 || n.Params.Kind() != '{' {
		return false
	}
	var p struct {
		Meta mcp.Meta `json:"_meta"`
	}
	if json.Unmarshal(n.Params, &p) != nil {
		return false
	}
	id, ok := p.Meta.SubscriptionID()
	if !ok {
		return false
	}
	s := c.subscription(id)
	if s == nil {
		return n.Method == mcp.NotificationSubscriptionsAcknowledged
	}
	switch n.Method {
	case mcp.NotificationSubscriptionsAcknowledged:
		var a mcp.SubscriptionsAcknowledgedParams
		if json.Unmarshal(n.Params, &a) == nil {
			s.ack(a.Notifications)
		}
		return true
	case mcp.NotificationResourcesUpdated:
		var u struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(n.Params, &u)
		s.push(Notification{Method: n.Method, URI: u.URI, Params: n.Params})
	default:
		s.push(Notification{Method: n.Method, Params: n.Params})
	}
	return false
}

// cancelledMethod is searched for in incoming messages while
// subscriptions are open.
var cancelledMethod = []byte(`"` + mcp.NotificationCancelled + `"`)

// tap is the transport as the client's jsonrpc.Conn sees it: it notices
// notifications/cancelled from the server for a subscription (on stdio a
// server ends a listen stream that way; the jsonrpc layer keeps
// cancellations for itself). Writes pass through untouched.
type tap struct {
	transport.Conn
	c *Client
}

func (t *tap) Read(ctx context.Context) ([]byte, error) {
	msg, err := t.Conn.Read(ctx)
	if err == nil && t.c.nsubs.Load() > 0 && bytes.Contains(msg, cancelledMethod) {
		t.c.serverCancelled(msg)
	}
	return msg, err
}

// SetResponder passes jsonrpc's direct delivery of responses on to the
// transport when it takes one (jsonrpc.Responder): a response is no
// cancellation, so the tap has nothing to see in it.
func (t *tap) SetResponder(deliver func(data []byte) bool) {
	if r, ok := t.Conn.(jsonrpc.Responder); ok {
		r.SetResponder(deliver)
	}
}

// serverCancelled ends the subscription a server's notifications/cancelled
// names.
func (c *Client) serverCancelled(msg []byte) {
	m, derr := wire.Decode(msg, c.opts.Limits)
	if derr != nil || !m.IsNotification() || m.Method != mcp.NotificationCancelled {
		return
	}
	var p mcp.CancelledParams
	if json.Unmarshal(m.Params, &p) != nil {
		return
	}
	if s := c.subscription(p.RequestID); s != nil {
		s.cancel(errServerEnded)
	}
}
