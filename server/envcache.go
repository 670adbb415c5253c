package server

import (
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// A client sends the same clientCapabilities and clientInfo in the
// envelope of every 2026-07-28 request, and decoding them (reflection) is
// most of what reading the envelope costs. decodedCaps and decodedInfo
// remember what they decoded, by the bytes: a later request with the same
// bytes shares the value. Shared values are read-only — the SDK never
// changes them and Request's accessors hand out copies — and the caches
// are bounded: values of at most envCacheKey bytes, envCacheEntries of
// each kind, emptied when full. (A value decodes to more than its bytes —
// a clientInfo of many empty icons to some twenty times — so the bounds
// keep the worst case to a few megabytes a kind.)
const (
	envCacheKey     = 512
	envCacheEntries = 256
)

// envCache is one bounded cache of decoded envelope values. (A map under
// a read-write lock, not a sync.Map: its lookup by string(raw) allocates
// nothing, where a sync.Map's boxes the key.)
type envCache[T any] struct {
	mu sync.RWMutex
	m  map[string]*T
}

var (
	capsCache envCache[mcp.ClientCapabilities]
	infoCache envCache[mcp.Implementation]
)

// decode returns raw decoded into a *T, from the cache when raw was seen.
func (c *envCache[T]) decode(raw jsontext.Value) (*T, error) {
	c.mu.RLock()
	v, ok := c.m[string(raw)] // no allocation for the key
	c.mu.RUnlock()
	if ok {
		return v, nil
	}
	v = new(T)
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, err
	}
	if len(raw) <= envCacheKey {
		c.mu.Lock()
		if c.m == nil || len(c.m) >= envCacheEntries {
			// Many clients, or one sending ever new values: start over.
			c.m = make(map[string]*T)
		}
		c.m[string(raw)] = v
		c.mu.Unlock()
	}
	return v, nil
}
