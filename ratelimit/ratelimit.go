// Package ratelimit limits the requests a server accepts, per principal,
// per legacy session and per tool, with token buckets, as an interceptor
// (package intercept). A request over a limit is answered with the
// JSON-RPC error mcp.CodeRateLimited, whose data says when to retry
// ({"retryAfterMs": n}); on Streamable HTTP a 2026-07-28 request gets
// status 429 and every such JSON answer a Retry-After header.
//
// The buckets live in a Limiter: Memory (one instance), or the Redis
// limiter of the store/redis module, which holds across instances.
//
// A Limiter that fails (its store is unreachable) cannot say whether a
// request is within its limits. By default the request is then refused
// with jsonrpc.ErrUnavailable (-32603 "Service Unavailable", HTTP 503 on
// Streamable HTTP), which carries none of the failure's details: those
// (the store's address, the bucket's key) go to Options.Logger only.
// Options.FailOpen lets such requests through instead.
//
// Package ratelimit imports intercept, jsonrpc and mcp.
package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Rate is a token bucket: it holds up to Burst tokens and gains Limit
// tokens per second; each request takes one. The zero Rate limits
// nothing.
type Rate struct {
	Limit float64
	Burst int
}

// Every returns the Rate of one request per interval, with a burst of
// burst requests.
func Every(interval time.Duration, burst int) Rate {
	return Rate{Limit: float64(time.Second) / float64(interval), Burst: burst}
}

func (r Rate) on() bool { return r.Limit > 0 && r.Burst > 0 }

// wait is how long until the bucket holding tokens has one.
func (r Rate) wait(tokens float64) time.Duration {
	if tokens >= 1 {
		return 0
	}
	return time.Duration(math.Ceil((1 - tokens) / r.Limit * float64(time.Second)))
}

// Limiter keeps token buckets by key. Take takes one token from the
// bucket of key (created full), refilled at r; when it is empty it takes
// nothing and reports how long until a token is there. It must be safe
// for concurrent use. An error (the store is down) refuses the request
// with jsonrpc.ErrUnavailable unless Options.FailOpen is set: limits are
// never silently lifted. Its text is logged, never sent to the client.
type Limiter interface {
	Take(ctx context.Context, key string, r Rate) (retryAfter time.Duration, err error)
}

// Options configures the interceptor. Each zero Rate is a limit not
// applied.
type Options struct {
	// Limiter keeps the buckets. Nil: NewMemory(nil).
	Limiter Limiter
	// Principal limits the requests of each authenticated principal
	// (server.WithPrincipal), whatever session or era they use.
	Principal Rate
	// Session limits the requests of each legacy session.
	Session Rate
	// Tool limits the calls of each tool (tools/call, by name), all
	// callers together.
	Tool Rate
	// Prefix is prepended to every key, so that servers sharing a store
	// keep separate buckets. Default DefaultPrefix.
	Prefix string
	// FailOpen lets a request through when the Limiter fails (its store
	// is unreachable), as if its buckets had tokens. False, the default:
	// such a request is refused with jsonrpc.ErrUnavailable (-32603
	// "Service Unavailable", HTTP 503), the safe choice for a limit that
	// protects the server or an upstream. Set it when availability
	// matters more than the limit. Either way the failure is logged.
	FailOpen bool
	// Logger receives a Limiter's failures, with their details (the
	// error, the bucket, the method), at level Error. Nil: slog.Default().
	Logger *slog.Logger
}

// DefaultPrefix is the key prefix when Options.Prefix is empty.
const DefaultPrefix = "mcpkit:rl:"

// Interceptor returns the rate-limiting interceptor of a server: it
// counts the requests the server receives (not notifications, not ping)
// against each bucket that applies, in the order principal, session,
// tool; the first empty one answers the request with
// mcp.CodeRateLimited. Tokens taken from the buckets before it are not
// given back. A bucket whose Limiter fails refuses the request with
// jsonrpc.ErrUnavailable, or is skipped with Options.FailOpen.
func Interceptor(opts Options) intercept.Interceptor {
	if opts.Limiter == nil {
		opts.Limiter = NewMemory(nil)
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, c *intercept.Call) (any, error) {
			if c.Side != intercept.Server || !c.Inbound || c.Notification || c.Method == mcp.MethodPing {
				return next(ctx, c)
			}
			if err := opts.check(ctx, c); err != nil {
				return nil, err
			}
			return next(ctx, c)
		}
	}
}

func (o *Options) check(ctx context.Context, c *intercept.Call) error {
	if o.Principal.on() && c.Principal != "" {
		if err := o.take(ctx, c, "principal", "p:"+c.Principal, o.Principal); err != nil {
			return err
		}
	}
	if o.Session.on() && c.SessionID != "" {
		if err := o.take(ctx, c, "session", "s:"+c.SessionID, o.Session); err != nil {
			return err
		}
	}
	if o.Tool.on() && c.Method == mcp.MethodToolsCall && c.Name != "" {
		if err := o.take(ctx, c, "tool "+c.Name, "t:"+c.Name, o.Tool); err != nil {
			return err
		}
	}
	return nil
}

func (o *Options) take(ctx context.Context, c *intercept.Call, what, key string, r Rate) error {
	wait, err := o.Limiter.Take(ctx, o.Prefix+key, r)
	if err != nil {
		bucket, _, _ := strings.Cut(what, " ")
		o.Logger.LogAttrs(ctx, slog.LevelError, "ratelimit: the limiter failed",
			slog.String("bucket", bucket), slog.String("method", c.Method), slog.Bool("failOpen", o.FailOpen), slog.Any("err", err))
		if o.FailOpen {
			return nil
		}
		return jsonrpc.ErrUnavailable
	}
	if wait <= 0 {
		return nil
	}
	return Exceeded(what, wait)
}

// Exceeded returns the error of a request over a limit: code
// mcp.CodeRateLimited, data {"retryAfterMs": n} (at least 1).
func Exceeded(what string, retryAfter time.Duration) *jsonrpc.Error {
	ms := max(int64(math.Ceil(float64(retryAfter)/float64(time.Millisecond))), 1)
	e := jsonrpc.Errorf(mcp.CodeRateLimited, "Rate limit exceeded (%s): retry after %s", what, time.Duration(ms)*time.Millisecond)
	e.Data = []byte(fmt.Sprintf(`{"retryAfterMs":%d}`, ms))
	return e
}
