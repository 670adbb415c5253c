package ratelimit

import (
	"context"
	"sync"
	"time"
)

// DefaultMaxKeys is how many buckets a Memory keeps when
// MemoryOptions.MaxKeys is zero.
const DefaultMaxKeys = 100_000

// MemoryOptions configures a Memory limiter.
type MemoryOptions struct {
	// MaxKeys bounds the buckets kept. Past it, full buckets are dropped
	// (a full bucket is what a new one would be); if that is not enough,
	// arbitrary ones are, which lets their keys start full again.
	// Default DefaultMaxKeys.
	MaxKeys int
	// Now is the clock (tests). Nil: time.Now.
	Now func() time.Time
}

// Memory is a Limiter in this process's memory: one instance.
type Memory struct {
	max int
	now func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewMemory returns an in-memory Limiter; opts may be nil.
func NewMemory(opts *MemoryOptions) *Memory {
	m := &Memory{max: DefaultMaxKeys, now: time.Now, buckets: make(map[string]*bucket)}
	if opts != nil {
		if opts.MaxKeys > 0 {
			m.max = opts.MaxKeys
		}
		if opts.Now != nil {
			m.now = opts.Now
		}
	}
	return m
}

// Take implements Limiter.
func (m *Memory) Take(_ context.Context, key string, r Rate) (time.Duration, error) {
	if !r.on() {
		return 0, nil
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.buckets[key]
	if !ok {
		if len(m.buckets) >= m.max {
			m.evict(now, r)
		}
		b = &bucket{tokens: float64(r.Burst), at: now}
		m.buckets[key] = b
	}
	if el := now.Sub(b.at); el > 0 {
		b.tokens = min(float64(r.Burst), b.tokens+el.Seconds()*r.Limit)
		b.at = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0, nil
	}
	return r.wait(b.tokens), nil
}

// evict makes room for a bucket: full ones first, then any (mu held).
func (m *Memory) evict(now time.Time, r Rate) {
	for k, b := range m.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*r.Limit >= float64(r.Burst) {
			delete(m.buckets, k)
		}
	}
	for k := range m.buckets {
		if len(m.buckets) < m.max {
			return
		}
		delete(m.buckets, k)
	}
}

// Len returns how many buckets are kept.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.buckets)
}
