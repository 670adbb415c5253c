package server

import (
	"slices"
	"sync"
)

// batchState collects the list changes made while Batch runs.
type batchState struct {
	mu    sync.Mutex
	depth int
	names map[string][]string        // method → the items changed, in order
	seen  map[string]map[string]bool // method → names already in names
	all   map[string]bool            // method → a change that names no item
}

// Batch runs fn and holds back the list-change notifications of the
// registrations and removals made meanwhile (AddRawTool, RemoveTools,
// AddPrompt, …, by any goroutine): when fn returns, each list that changed
// is announced once, naming every item that changed (so per-caller
// visibility still decides who hears of it). Registering a hundred tools
// inside Batch sends one notifications/tools/list_changed instead of a
// hundred. Batches may nest; the outermost one announces. Resource
// updates (ResourceUpdated) are never held back.
func (s *Server) Batch(fn func()) {
	b := &s.batch
	b.mu.Lock()
	b.depth++
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.depth--
		if b.depth > 0 {
			b.mu.Unlock()
			return
		}
		names, all := b.names, b.all
		b.names, b.seen, b.all = nil, nil, nil
		b.mu.Unlock()
		methods := make([]string, 0, len(names)+len(all))
		for m := range names {
			methods = append(methods, m)
		}
		for m := range all {
			if _, ok := names[m]; !ok {
				methods = append(methods, m)
			}
		}
		slices.Sort(methods)
		for _, m := range methods {
			if all[m] {
				s.announceItems(m)
			} else {
				s.announceItems(m, names[m]...)
			}
		}
	}()
	fn()
}

// held records a list change while a batch runs, and reports whether it
// did (the caller then announces nothing now).
func (s *Server) held(method string, names []string) bool {
	b := &s.batch
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.depth == 0 {
		return false
	}
	if len(names) == 0 {
		if b.all == nil {
			b.all = make(map[string]bool)
		}
		b.all[method] = true
		return true
	}
	if b.names == nil {
		b.names = make(map[string][]string)
		b.seen = make(map[string]map[string]bool)
	}
	if b.seen[method] == nil {
		b.seen[method] = make(map[string]bool)
	}
	for _, n := range names {
		if !b.seen[method][n] {
			b.seen[method][n] = true
			b.names[method] = append(b.names[method], n)
		}
	}
	return true
}
