package jsonrpc

import (
	"context"
	"errors"
	"runtime"
	"testing"
)

type vfKey struct{}

// TestValuesFromContext: a context derived from a request's parent takes
// its values from the message's context and its cancellation from the
// connection's, without a goroutine watching the parent.
func TestValuesFromContext(t *testing.T) {
	base, cancelBase := context.WithCancelCause(context.Background())
	vals, cancelVals := context.WithCancel(context.WithValue(context.Background(), vfKey{}, "v"))
	defer cancelVals()
	parent := valuesFrom{Context: base, vals: vals}

	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	runtime.Gosched() // a watcher, if any, is counted once it has run
	if n := runtime.NumGoroutine(); n != before {
		t.Errorf("deriving a context started %d goroutines", n-before)
	}
	if ctx.Value(vfKey{}) != "v" {
		t.Error("the message context's value is lost")
	}
	cancelVals()
	if ctx.Err() != nil {
		t.Error("the message context's end cancelled the request")
	}
	errClosed := errors.New("closed")
	cancelBase(errClosed)
	<-ctx.Done()
	if context.Cause(ctx) != errClosed || context.Cause(parent) != errClosed {
		t.Errorf("cause %v (parent's %v), want the connection's", context.Cause(ctx), context.Cause(parent))
	}
}
