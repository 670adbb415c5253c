package streamhttp

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/mcpkit/mcpkit/server/internal/seam"

	"github.com/mcpkit/mcpkit/store"
)

// saver returns what makes a session save its state to the SessionStore
// on change (nil without one). A failed Put fails the request that made
// the change (seam.ErrStoreUnavailable: -32603, HTTP 503), so that no
// client is told of a change — or handed a session id — that other
// instances do not know. It runs only on the session's requests, after
// newSession has set hs.ss.
func (h *Handler) saver(hs *httpSession) func() error {
	st := h.opts.SessionStore
	if st == nil {
		return nil
	}
	// saving orders the session's own writes: two changes made at once
	// (setLevel and subscribe on parallel POSTs) would otherwise Put their
	// snapshots in either order, and the store could keep the older one.
	// It is held across one Put, bounded by StoreTimeout, and only ever
	// by the requests that change this session's state.
	var saving sync.Mutex
	return func() error {
		ss := hs.ss
		saving.Lock()
		defer saving.Unlock()
		state := ss.Snapshot()
		ctx, cancel := context.WithTimeout(context.Background(), h.opts.StoreTimeout)
		defer cancel()
		if err := st.Put(ctx, ss.ID(), state); err != nil {
			h.log.Warn("streamhttp: session store put failed", "session", ss.ID(), "err", err)
			// The change is undone (update): this revision was never
			// recorded, and the next change takes its number.
			ss.Unrecord(state.Revision)
			return seam.ErrStoreUnavailable
		}
		if h.cluster != nil {
			h.cluster.broadcast(ctx, &clusterMsg{Kind: kindState, Session: ss.ID(), State: state})
		}
		return nil
	}
}

// sharedSession checks a session against the SessionStore on each of its
// requests: the store knows whether it still exists (DELETE or the
// store's TTL may have ended it on another instance), and has its latest
// state, which other instances may have changed. hs is this instance's
// copy (nil if none, or busy). It returns the session marked busy (nil
// when unknown), or a status when the store failed.
func (h *Handler) sharedSession(ctx context.Context, id string, hs *httpSession) (*httpSession, int) {
	ctx, cancel := context.WithTimeout(ctx, h.opts.StoreTimeout)
	defer cancel()
	st, err := h.opts.SessionStore.Get(ctx, id)
	switch {
	case errors.Is(err, store.ErrUnknownSession):
		if hs != nil {
			hs.busy.release()
			h.endSession(hs)
		}
		return nil, 0
	case err != nil:
		h.log.Warn("streamhttp: session store get failed", "session", id, "err", err)
		if hs != nil {
			hs.busy.release()
		}
		return nil, http.StatusServiceUnavailable
	case hs != nil:
		hs.ss.Restore(st)
		return hs, 0
	}
	hs = h.loadSession(id, st)
	if hs != nil {
		// A change broadcast while this copy was being made found no copy
		// here to apply to; the store has it now (Put precedes the
		// broadcast), and restore skips it if it is not newer.
		if again, err := h.opts.SessionStore.Get(ctx, id); err == nil {
			hs.ss.Restore(again)
		}
	}
	return hs, 0
}

// loadSession serves here a session another instance created, from its
// stored state. The session is returned marked busy, as session does;
// nil once the handler is closed.
func (h *Handler) loadSession(id string, st *store.SessionState) *httpSession {
	hs := h.newSession(id, "")
	hs.ss.Restore(st)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		hs.ss.Close()
		hs.ss.Remove()
		return nil
	}
	if existing := h.sessions[id]; existing != nil { // loaded concurrently
		hs.ss.Close()
		hs.ss.Remove()
		hs = existing
	} else {
		h.sessions[id] = hs
		h.startSweeper()
	}
	hs.busy.hold()
	return hs
}

// idPrefix is the prefix of the ids of server→client requests: the
// instance's, in a cluster.
func (h *Handler) idPrefix() string {
	if h.cluster == nil {
		return ""
	}
	return h.cluster.idPrefix()
}
