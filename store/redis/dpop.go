package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultReplayPrefix is the key prefix of a ReplayCache.
const DefaultReplayPrefix = "mcpkit:dpop:"

// ReplayCache remembers used DPoP proofs (RFC 9449 §11.1) in Redis, so
// that a proof accepted by one instance of a resource server is refused
// by every other: it satisfies auth.ReplayCache (pass it as
// auth.DPoPOptions.Replay on every instance). Each proof is one key,
// written with SET NX and a lifetime (PX) measured on this instance's
// clock, never an absolute time read on Redis's, so recording and
// checking are one atomic step and Redis drops the key when the proof
// could no longer be accepted anyway, whatever its own clock says. Keys are the fixed-length hashes
// auth hands over, never raw jti values. It is safe for concurrent use.
type ReplayCache struct {
	rdb    redis.UniversalClient
	prefix string
}

// NewReplayCache returns a replay cache on rdb whose keys start with
// prefix (default DefaultReplayPrefix when empty).
func NewReplayCache(rdb redis.UniversalClient, prefix string) *ReplayCache {
	if prefix == "" {
		prefix = DefaultReplayPrefix
	}
	return &ReplayCache{rdb: rdb, prefix: prefix}
}

// Seen records key until the time until and reports whether it was
// recorded already. An error (Redis unreachable) makes the resource
// server refuse the request with 503: a proof is never accepted
// unchecked.
func (c *ReplayCache) Seen(ctx context.Context, key string, until time.Time) (bool, error) {
	life := time.Until(until)
	if life <= 0 {
		return false, nil // nothing to remember: the proof is expired
	}
	ms := (life + time.Millisecond - 1) / time.Millisecond // rounded up
	err := c.rdb.Do(ctx, "SET", c.prefix+key, "1", "NX", "PX", int64(ms)).Err()
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, redis.Nil): // NX: the key exists
		return true, nil
	}
	return false, err
}
