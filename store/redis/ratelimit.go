package redisstore

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/ratelimit"
)

// RateLimiterOptions configures a RateLimiter.
type RateLimiterOptions struct {
	// Prefix is put before every key. Default DefaultPrefix.
	Prefix string
	// Now is the clock whose time the buckets are refilled by (tests).
	// Nil: time.Now. Instances sharing the buckets should keep their
	// clocks in step (NTP): a bucket never goes back in time, so an
	// instance behind the others refills nothing until it catches up.
	Now func() time.Time
}

// RateLimiter is a ratelimit.Limiter whose token buckets are Redis
// hashes, taken from atomically by one script, so that a limit holds
// across the instances of a deployment. A bucket expires once it would
// be full again.
type RateLimiter struct {
	rdb  redis.UniversalClient
	opts RateLimiterOptions
}

var _ ratelimit.Limiter = (*RateLimiter)(nil)

// NewRateLimiter returns a Redis-backed limiter; opts may be nil.
func NewRateLimiter(rdb redis.UniversalClient, opts *RateLimiterOptions) *RateLimiter {
	l := &RateLimiter{rdb: rdb}
	if opts != nil {
		l.opts = *opts
	}
	if l.opts.Prefix == "" {
		l.opts.Prefix = DefaultPrefix
	}
	if l.opts.Now == nil {
		l.opts.Now = time.Now
	}
	return l
}

// takeScript takes a token from the bucket KEYS[1] (fields t: tokens,
// at: the time they were counted, in ms), refilled at ARGV[1] tokens per
// ms up to ARGV[2], at time ARGV[3] (ms). It returns 0, or the ms until a
// token is there.
var takeScript = redis.NewScript(`
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local b = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens = tonumber(b[1])
local at = tonumber(b[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate)
  at = now
end
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) / rate)
end
redis.call('HSET', KEYS[1], 't', string.format('%.17g', tokens), 'at', string.format('%d', at))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate) + 1000)
return wait
`)

// Take implements ratelimit.Limiter.
func (l *RateLimiter) Take(ctx context.Context, key string, r ratelimit.Rate) (time.Duration, error) {
	if r.Limit <= 0 || r.Burst <= 0 {
		return 0, nil
	}
	perMs := r.Limit / 1000
	now := l.opts.Now().UnixMilli()
	wait, err := takeScript.Run(ctx, l.rdb, []string{l.opts.Prefix + key},
		strconvFloat(perMs), r.Burst, now).Int64()
	if err != nil {
		return 0, fmt.Errorf("redis: rate limit %s: %w", key, err)
	}
	return time.Duration(wait) * time.Millisecond, nil
}

func strconvFloat(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return "0"
	}
	return fmt.Sprintf("%.17g", f)
}
