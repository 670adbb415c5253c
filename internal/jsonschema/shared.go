package jsonschema

import (
	"runtime"
	"sync"
	"weak"
)

// shared maps the bytes of every schema document compiled and still in
// use to its compiled Schema, so that compiling the same document again
// (a server with many tools of one Go type, a tool registered again)
// returns the Schema already built instead of a second copy: a compiled
// schema is several kilobytes and is immutable once built. The map holds
// its Schemas weakly; an entry goes away with the last user of its Schema.
var shared = struct {
	mu sync.Mutex
	m  map[string]weak.Pointer[Schema]
}{m: map[string]weak.Pointer[Schema]{}}

// sharedEntry is the argument of the cleanup that removes an entry.
type sharedEntry struct {
	key string
	wp  weak.Pointer[Schema]
}

// lookupShared returns the live Schema compiled from doc, or nil.
func lookupShared(doc []byte) *Schema {
	shared.mu.Lock()
	wp, ok := shared.m[string(doc)]
	shared.mu.Unlock()
	if !ok {
		return nil
	}
	return wp.Value()
}

// storeShared records s as the Schema of doc and returns the Schema to
// use: s, or the one another caller stored first.
func storeShared(doc []byte, s *Schema) *Schema {
	key := string(doc)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if old := shared.m[key].Value(); old != nil {
		return old
	}
	wp := weak.Make(s)
	shared.m[key] = wp
	runtime.AddCleanup(s, forgetShared, sharedEntry{key: key, wp: wp})
	return s
}

// forgetShared removes an entry whose Schema is gone, unless the key has
// been stored again since.
func forgetShared(e sharedEntry) {
	shared.mu.Lock()
	if shared.m[e.key] == e.wp {
		delete(shared.m, e.key)
	}
	shared.mu.Unlock()
}
