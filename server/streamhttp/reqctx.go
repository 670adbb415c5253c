package streamhttp

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// lazyCtx is the context of a session-less request whose handler runs on
// its POST's goroutine (serveRequest). It is the POST's own context,
// r.Context(), until something needs a cancellation of its own: a
// Done channel (a select, a derived context, context.AfterFunc), or a
// cancel (Shutdown, the client gone while a reader serves the stream).
// Only then is it backed by a context.WithCancelCause of r.Context().
// A handler that never waits on its context (most tool calls) so costs
// no cancelable context: deriving one registers it with r.Context(),
// which is most of a small request's context work.
//
// Before it is backed, Err and Value are r.Context()'s: the request has
// not been cancelled on its own, so its cause, as context.Cause finds it
// through Value, is r.Context()'s too. A cancel always backs it first.
type lazyCtx struct {
	parent   context.Context
	mu       sync.Mutex // serializes backing and releasing
	inner    atomic.Pointer[backedCtx]
	released atomic.Bool // the request is over (release); set under mu
}

type backedCtx struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

func newLazyCtx(parent context.Context) *lazyCtx { return &lazyCtx{parent: parent} }

func (c *lazyCtx) Deadline() (time.Time, bool) { return c.parent.Deadline() }

func (c *lazyCtx) Done() <-chan struct{} { return c.backed().ctx.Done() }

func (c *lazyCtx) Err() error {
	if b := c.inner.Load(); b != nil {
		return b.ctx.Err()
	}
	if c.released.Load() {
		return c.backed().ctx.Err()
	}
	return c.parent.Err()
}

func (c *lazyCtx) Value(key any) any {
	if b := c.inner.Load(); b != nil {
		return b.ctx.Value(key)
	}
	if c.released.Load() { // ended on its own: its cause is its own
		return c.backed().ctx.Value(key)
	}
	return c.parent.Value(key)
}

// backed returns the cancelable context behind c, making it first.
func (c *lazyCtx) backed() *backedCtx {
	if b := c.inner.Load(); b != nil {
		return b
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.inner.Load(); b != nil {
		return b
	}
	ctx, cancel := context.WithCancelCause(c.parent)
	b := &backedCtx{ctx: ctx, cancel: cancel}
	if c.released.Load() {
		cancel(context.Canceled) // used after the request: already over
	}
	c.inner.Store(b)
	return b
}

// cancel ends c with cause.
func (c *lazyCtx) cancel(cause error) { c.backed().cancel(cause) }

// release ends c once the request is over (context.Canceled). A backed
// context is cancelled now and leaves r.Context(); an unbacked one is
// only marked, and is backed, already cancelled, by whatever uses it
// after the request (a goroutine the handler left, a task), so that it
// is over even where r.Context() never ends (a handler served outside
// net/http's server).
func (c *lazyCtx) release() {
	c.mu.Lock()
	b := c.inner.Load()
	if b == nil {
		c.released.Store(true)
	}
	c.mu.Unlock()
	if b != nil {
		b.cancel(context.Canceled)
	}
}
