package auth

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/expiry"
)

// DefaultReplayCacheSize is how many proofs a MemoryReplayCache
// remembers at most by default. Each is kept until its proof expires
// (iat plus DPoPOptions.IATWindow), so the default holds a steady 1600
// proofs a second with the default window of a minute either way.
const DefaultReplayCacheSize = 200_000

// ErrReplayCacheFull is returned by a MemoryReplayCache holding its
// maximum of unexpired entries: the request fails closed (503) rather
// than forget a proof that could then be replayed.
var ErrReplayCacheFull = errors.New("auth: DPoP replay cache full")

// MemoryReplayCache is a ReplayCache in memory, for one process: share
// one value between the Require instances of a process; across
// processes, use a shared store (store/redis). Expired entries are
// dropped as time passes. It is safe for concurrent use.
type MemoryReplayCache struct {
	max int
	now func() time.Time

	mu    sync.Mutex
	until map[string]time.Time
	queue expiry.Queue
}

// NewMemoryReplayCache returns a cache of at most max entries (default
// DefaultReplayCacheSize when max <= 0).
func NewMemoryReplayCache(max int) *MemoryReplayCache {
	if max <= 0 {
		max = DefaultReplayCacheSize
	}
	return &MemoryReplayCache{max: max, now: time.Now, until: map[string]time.Time{}}
}

// Seen implements ReplayCache.
func (c *MemoryReplayCache) Seen(_ context.Context, key string, until time.Time) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for e, ok := c.queue.Peek(); ok && !e.At.After(now); e, ok = c.queue.Peek() {
		c.queue.Pop()
		if u, ok := c.until[e.Key]; ok && !u.After(now) {
			delete(c.until, e.Key)
		}
	}
	if u, ok := c.until[key]; ok && u.After(now) {
		return true, nil
	}
	if !until.After(now) {
		return false, nil // expired already: nothing to remember
	}
	if len(c.until) >= c.max {
		return false, ErrReplayCacheFull
	}
	c.until[key] = until
	c.queue.Push(key, until)
	return false, nil
}

// Len returns the number of entries held (some may have expired).
func (c *MemoryReplayCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.until)
}
