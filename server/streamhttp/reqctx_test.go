package streamhttp

import (
	"context"
	"errors"
	"testing"
)

type ctxKey struct{}

// TestLazyCtx: the lazy context behaves as a context.WithCancelCause of
// its parent, backed or not.
func TestLazyCtx(t *testing.T) {
	errParent, errOwn := errors.New("parent's cause"), errors.New("own cause")

	t.Run("parent cancelled, never backed", func(t *testing.T) {
		parent, cancel := context.WithCancelCause(context.WithValue(context.Background(), ctxKey{}, "v"))
		c := newLazyCtx(parent)
		if c.Err() != nil || c.Value(ctxKey{}) != "v" {
			t.Fatalf("Err %v, Value %v", c.Err(), c.Value(ctxKey{}))
		}
		cancel(errParent)
		if !errors.Is(c.Err(), context.Canceled) || context.Cause(c) != errParent {
			t.Errorf("Err %v, Cause %v", c.Err(), context.Cause(c))
		}
		if c.inner.Load() != nil {
			t.Error("backed without a need")
		}
		c.release()
	})

	t.Run("waited on, then parent cancelled", func(t *testing.T) {
		parent, cancel := context.WithCancelCause(context.Background())
		c := newLazyCtx(parent)
		done := c.Done()
		child, stop := context.WithCancel(c)
		defer stop()
		cancel(errParent)
		<-done
		<-child.Done()
		if context.Cause(c) != errParent || context.Cause(child) != errParent {
			t.Errorf("Cause %v, child's %v", context.Cause(c), context.Cause(child))
		}
	})

	t.Run("own cancel", func(t *testing.T) {
		c := newLazyCtx(context.WithValue(context.Background(), ctxKey{}, "v"))
		child, stop := context.WithCancel(c)
		defer stop()
		c.cancel(errOwn)
		<-c.Done()
		<-child.Done()
		if !errors.Is(c.Err(), context.Canceled) || context.Cause(c) != errOwn || context.Cause(child) != errOwn {
			t.Errorf("Err %v, Cause %v, child's %v", c.Err(), context.Cause(c), context.Cause(child))
		}
		if c.Value(ctxKey{}) != "v" {
			t.Error("values lost once backed")
		}
	})

	t.Run("released unbacked", func(t *testing.T) {
		parent := context.WithValue(context.Background(), ctxKey{}, "v") // never ends
		c := newLazyCtx(parent)
		c.release()
		if c.inner.Load() != nil {
			t.Error("release backed the context")
		}
		if !errors.Is(c.Err(), context.Canceled) || !errors.Is(context.Cause(c), context.Canceled) {
			t.Errorf("after release: Err %v, Cause %v", c.Err(), context.Cause(c))
		}
		select {
		case <-c.Done():
		default:
			t.Error("Done is open after release")
		}
		child, stop := context.WithCancel(c)
		defer stop()
		<-child.Done()
		if c.Value(ctxKey{}) != "v" {
			t.Error("values lost after release")
		}
	})

	t.Run("release", func(t *testing.T) {
		c := newLazyCtx(context.Background())
		fired := make(chan struct{})
		context.AfterFunc(c, func() { close(fired) })
		c.release()
		<-fired
		if !errors.Is(c.Err(), context.Canceled) {
			t.Errorf("Err %v after release", c.Err())
		}
	})
}
