package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// The pace at which TaskResult asks again for a task after a transient
// failure of tasks/result or tasks/get (see Options.TaskRetryBackoff).
const (
	// DefaultTaskRetryBackoff is the default of Options.TaskRetryBackoff:
	// the wait before the first retry; each further one doubles it.
	DefaultTaskRetryBackoff = 250 * time.Millisecond
	// DefaultTaskRetryMaxBackoff is the default of
	// Options.TaskRetryMaxBackoff: the longest wait between two retries.
	DefaultTaskRetryMaxBackoff = 5 * time.Second
)

// httpStatus is what an error carrying an HTTP answer's status has
// (transport/streamable's *StatusError), found without importing the
// transport.
type httpStatus interface {
	error
	HTTPStatus() int
}

// taskOutcome reports whether err, the error of tasks/result, is the
// task's own outcome: a JSON-RPC error response from the server. A
// JSON-RPC error in the body of an HTTP error status (a 503 from an
// instance that cannot reach its store) is the instance's, not the
// task's.
func taskOutcome(err error) bool {
	var hs httpStatus
	if errors.As(err, &hs) {
		return false
	}
	e, ok := jsonrpc.AsError(err)
	return ok && !unavailableError(e)
}

// unavailableError reports whether e is the server's "try again later"
// (jsonrpc.ErrUnavailable: an mcpkit server answers it, with status 503
// when it can, when a store it depends on, its task store or a rate
// limiter's, is unreachable) or the transport's own error for an answer
// the connection lost (transport.LostAnswerData: the request's stream
// broke, as when the instance holding it restarts). Either is about the
// way to the task, not the task.
func unavailableError(e *jsonrpc.Error) bool {
	return e.Code == jsonrpc.ErrUnavailable.Code && e.Message == jsonrpc.ErrUnavailable.Message ||
		string(e.Data) == transport.LostAnswerData
}

// transientTaskError reports whether a failed tasks/result or tasks/get
// may succeed if sent again: the connection is still open, ctx has not ended, and the
// failure is the way there (a broken connection, an HTTP 5xx, 408, 425 or
// 429 from a proxy or a restarting instance, a stream lost by the
// transport, the server's "try again later"), not an answer about the
// task.
func transientTaskError(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil || errors.Is(err, jsonrpc.ErrClosed) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var hs httpStatus
	if errors.As(err, &hs) {
		switch s := hs.HTTPStatus(); {
		case s >= 500, s == http.StatusRequestTimeout, s == http.StatusTooEarly, s == http.StatusTooManyRequests:
			return true
		}
		return false
	}
	e, isRPC := jsonrpc.AsError(err)
	return !isRPC || unavailableError(e)
}

// taskRetry paces the retries of one TaskResult.
type taskRetry struct {
	c       *Client
	id      string
	next    time.Duration
	retries int
}

func (c *Client) newTaskRetry(id string) *taskRetry {
	return &taskRetry{c: c, id: id}
}

// again reports whether the request that failed with err is to be sent
// again, after waiting for the backoff. When it is not, it returns the
// error to return: err itself, or, when ctx ended during the retries,
// ctx's error with the last failure.
func (r *taskRetry) again(ctx context.Context, method string, err error) (bool, error) {
	if !transientTaskError(ctx, err) {
		if r.retries > 0 && ctx.Err() != nil {
			return false, r.gaveUp(method, ctx.Err(), err)
		}
		return false, err
	}
	if r.next == 0 {
		r.next = r.c.opts.TaskRetryBackoff
		if r.next <= 0 {
			r.next = DefaultTaskRetryBackoff
		}
	}
	limit := r.c.opts.TaskRetryMaxBackoff
	if limit <= 0 {
		limit = DefaultTaskRetryMaxBackoff
	}
	d := min(r.next, limit)
	r.next = min(2*r.next, limit)
	r.c.log.Info("client: task request failed; retrying", "method", method, "task", r.id, "after", d, "err", err)
	if werr := r.c.retryWait(ctx, d); werr != nil {
		return false, r.gaveUp(method, werr, err)
	}
	r.retries++
	return true, nil
}

// gaveUp is the error of retries that ended with cause (the context's),
// naming the last failure too.
func (r *taskRetry) gaveUp(method string, cause, last error) error {
	return fmt.Errorf("client: %s for task %s: %w (after %d retries; last failure: %w)", method, r.id, cause, r.retries, last)
}

// reset starts the backoff over after a request that succeeded.
func (r *taskRetry) reset() { r.next = 0 }

// retryWait waits d or until ctx ends (Options.wait in tests).
func (c *Client) retryWait(ctx context.Context, d time.Duration) error {
	if c.opts.wait != nil {
		return c.opts.wait(ctx, d)
	}
	return sleep(ctx, d)
}
