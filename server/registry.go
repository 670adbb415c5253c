package server

import (
	"encoding/base64"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// registry holds named entries in a copy-on-write snapshot: readers (every
// list and call) load one atomic pointer and never lock; writers (the
// registrations) copy under a mutex. Keys are kept sorted, which gives
// tools/list & co. a deterministic order and lets a cursor name the last
// key of a page, so paging stays correct when entries come and go.
type registry[T any] struct {
	mu   sync.Mutex
	snap atomic.Pointer[snapshot[T]]
}

type snapshot[T any] struct {
	keys  []string // sorted
	items map[string]T
}

func (r *registry[T]) load() *snapshot[T] {
	if s := r.snap.Load(); s != nil {
		return s
	}
	return &snapshot[T]{}
}

// put adds or replaces entries.
func (r *registry[T]) put(entries map[string]T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.load()
	next := &snapshot[T]{items: make(map[string]T, len(old.items)+len(entries))}
	for k, v := range old.items {
		next.items[k] = v
	}
	for k, v := range entries {
		next.items[k] = v
	}
	next.keys = make([]string, 0, len(next.items))
	for k := range next.items {
		next.keys = append(next.keys, k)
	}
	slices.Sort(next.keys)
	r.snap.Store(next)
}

// remove deletes entries and reports whether any existed.
func (r *registry[T]) remove(keys ...string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.load()
	next := &snapshot[T]{items: make(map[string]T, len(old.items))}
	removed := false
	for k, v := range old.items {
		if slices.Contains(keys, k) {
			removed = true
			continue
		}
		next.items[k] = v
	}
	if !removed {
		return false
	}
	next.keys = slices.DeleteFunc(slices.Clone(old.keys), func(k string) bool { return slices.Contains(keys, k) })
	r.snap.Store(next)
	return true
}

func (r *registry[T]) get(key string) (T, bool) {
	v, ok := r.load().items[key]
	return v, ok
}

func (r *registry[T]) len() int { return len(r.load().keys) }

// all returns every entry in key order.
func (r *registry[T]) all() []T {
	s := r.load()
	out := make([]T, len(s.keys))
	for i, k := range s.keys {
		out[i] = s.items[k]
	}
	return out
}

// cursorPrefix versions the cursor format; cursors are opaque to clients.
const cursorPrefix = "k1:"

// page returns up to size entries after the position cursor names (nil:
// from the start) and the cursor of the next page (nil: no more), leaving
// out the entries keep refuses (keep nil: none). A cursor that this
// server did not issue is a -32602 error.
func (r *registry[T]) page(cursor *string, size int, keep func(T) bool) ([]T, *string, error) {
	s := r.load()
	start := 0
	if cursor != nil {
		after, err := decodeCursor(*cursor)
		if err != nil {
			return nil, nil, err
		}
		start, _ = slices.BinarySearch(s.keys, after)
		if start < len(s.keys) && s.keys[start] == after {
			start++
		}
	}
	if keep != nil {
		return r.pageKept(s, start, size, keep)
	}
	end := min(start+size, len(s.keys))
	out := make([]T, 0, end-start)
	for _, k := range s.keys[start:end] {
		out = append(out, s.items[k])
	}
	var next *string
	if end < len(s.keys) {
		c := encodeCursor(s.keys[end-1])
		next = &c
	}
	return out, next, nil
}

// pageKept is page with a filter: it fills the page with kept entries,
// and names a next page only when a kept entry remains after it.
func (r *registry[T]) pageKept(s *snapshot[T], start, size int, keep func(T) bool) ([]T, *string, error) {
	out := make([]T, 0, min(size, len(s.keys)-start))
	i := start
	for ; i < len(s.keys) && len(out) < size; i++ {
		if e := s.items[s.keys[i]]; keep(e) {
			out = append(out, e)
		}
	}
	last := i - 1
	for ; i < len(s.keys); i++ {
		if keep(s.items[s.keys[i]]) {
			c := encodeCursor(s.keys[last])
			return out, &c, nil
		}
	}
	return out, nil, nil
}

func encodeCursor(lastKey string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + lastKey))
}

func decodeCursor(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < len(cursorPrefix) || string(b[:len(cursorPrefix)]) != cursorPrefix {
		return "", jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: unknown cursor %q", c)
	}
	return string(b[len(cursorPrefix):]), nil
}
