package client

import (
	"context"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// Cache keeps the cacheable results of modern servers (SEP-2549):
// tools/list, prompts/list, resources/list, resources/templates/list and
// resources/read, each page or resource under its own key (the method and
// the cursor or URI), fresh for the ttlMs the server gave it (absent or
// negative: 0, not kept). A list_changed notification drops the pages of
// its list (resources/list_changed both resource lists), and
// notifications/resources/updated the reads of its URI; the notification
// may come on a Listen stream. Retries that answer an input-required
// result (MRTR) are never cached.
//
// Scopes: a result the server marked "private" is served only to the
// client that fetched it; a "public" one to every client that shares the
// Cache. Share a Cache only among clients of the same server.
//
// The zero value is an empty Cache that tells time with time.Now, as
// NewCache(nil) returns. A Cache is safe for concurrent use.
type Cache struct {
	now func() time.Time

	mu      sync.Mutex
	entries map[cacheKey]cacheEntry
	gen     map[string]uint64 // per method: bumped by each invalidation
}

// maxCacheEntries bounds a Cache; when it is full, expired entries go
// first, then arbitrary ones.
const maxCacheEntries = 1024

type cacheKey struct {
	method string
	param  string  // the cursor ("" first page, "c:"+cursor) or "u:"+URI
	owner  *Client // nil for a public result; else the client it is private to
}

type cacheEntry struct {
	raw     jsontext.Value
	expires time.Time
}

// NewCache returns an empty Cache that tells time with now (nil:
// time.Now).
func NewCache(now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	return &Cache{now: now}
}

// clock returns the time now.
func (c *Cache) clock() time.Time {
	if c.now == nil {
		return time.Now()
	}
	return c.now()
}

// get returns a fresh result for owner: a public one, else one private to
// owner.
func (c *Cache) get(owner *Client, k cacheKey) (jsontext.Value, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock()
	for _, o := range []*Client{nil, owner} {
		k.owner = o
		e, ok := c.entries[k]
		if !ok {
			continue
		}
		if !now.Before(e.expires) {
			delete(c.entries, k)
			continue
		}
		return e.raw, true
	}
	return nil, false
}

// generation returns the invalidation count of method, to be passed to
// put: a result fetched across an invalidation is not kept.
func (c *Cache) generation(method string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen[method]
}

// put keeps raw, a complete result, for the ttlMs it carries.
func (c *Cache) put(owner *Client, k cacheKey, gen uint64, raw jsontext.Value) {
	var hints struct {
		TTLMs      *int64         `json:"ttlMs"`
		CacheScope mcp.CacheScope `json:"cacheScope"`
	}
	if json.Unmarshal(raw, &hints) != nil || hints.TTLMs == nil || *hints.TTLMs <= 0 {
		return
	}
	k.owner = owner
	if hints.CacheScope == mcp.CachePublic {
		k.owner = nil // absent or unknown scopes are read as private
	}
	now := c.clock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen[k.method] != gen {
		return
	}
	if c.entries == nil {
		c.entries = make(map[cacheKey]cacheEntry)
	}
	if _, ok := c.entries[k]; !ok && len(c.entries) >= maxCacheEntries {
		c.evictLocked(now)
	}
	c.entries[k] = cacheEntry{raw: raw, expires: now.Add(time.Duration(*hints.TTLMs) * time.Millisecond)}
}

func (c *Cache) evictLocked(now time.Time) {
	for k, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, k)
		}
	}
	for k := range c.entries {
		if len(c.entries) < maxCacheEntries {
			return
		}
		delete(c.entries, k)
	}
}

// invalidate drops every entry of method, or only the one of param when
// param is set.
func (c *Cache) invalidate(method, param string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == nil {
		c.gen = make(map[string]uint64)
	}
	c.gen[method]++
	for k := range c.entries {
		if k.method == method && (param == "" || k.param == param) {
			delete(c.entries, k)
		}
	}
}

// forget drops the entries private to owner (a closed client).
func (c *Cache) forget(owner *Client) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.entries {
		if k.owner == owner {
			delete(c.entries, k)
		}
	}
}

// Clear empties the cache.
func (c *Cache) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == nil {
		c.gen = make(map[string]uint64)
	}
	for k := range c.entries {
		c.gen[k.method]++
	}
	clear(c.entries)
}

// invalidateFor applies a notification to the cache.
func (c *Cache) invalidateFor(method string, params jsontext.Value) {
	switch method {
	case mcp.NotificationToolsListChanged:
		c.invalidate(mcp.MethodToolsList, "")
	case mcp.NotificationPromptsListChanged:
		c.invalidate(mcp.MethodPromptsList, "")
	case mcp.NotificationResourcesListChanged:
		c.invalidate(mcp.MethodResourcesList, "")
		c.invalidate(mcp.MethodResourcesTemplatesList, "")
	case mcp.NotificationResourcesUpdated:
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(params, &p) == nil && p.URI != "" {
			c.invalidate(mcp.MethodResourcesRead, "u:"+p.URI)
		} else {
			c.invalidate(mcp.MethodResourcesRead, "")
		}
	}
}

// cursorKey is the cache key part of a list request's cursor.
func cursorKey(cursor *string) string {
	if cursor == nil {
		return ""
	}
	return "c:" + *cursor
}

// cachedCall is call for a cacheable modern request: a fresh cached
// result is decoded into result without asking the server; a complete
// result from the server is kept for its ttlMs. key is the result-affecting
// part of the params; use false skips the cache (legacy connections, MRTR
// retries the caller makes itself); a result the driver needed retries
// for is not kept.
func (c *Client) cachedCall(ctx context.Context, method, key string, use bool, params any, meta *mcp.Meta, result any) error {
	cache := c.mode().resultCache()
	if !use || cache == nil {
		return c.call(ctx, method, params, meta, result)
	}
	k := cacheKey{method: method, param: key}
	if raw, ok := cache.get(c, k); ok {
		return json.Unmarshal(raw, result)
	}
	gen := cache.generation(method)
	var raw jsontext.Value
	retries, err := c.send(ctx, method, params, meta, &raw, nil)
	if err != nil {
		return err
	}
	if retries == 0 { // the answer to a retry is never kept (SEP-2322)
		cache.put(c, k, gen, raw)
	}
	return json.Unmarshal(raw, result)
}
