package streamhttp

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/seam"

	"github.com/mcpkit/mcpkit/store"
)

// saver returns what makes a session save its state to the SessionStore
// on change (nil without one). A failed Put fails the request that made
// the change (seam.ErrStoreUnavailable: -32603, HTTP 503; errSessionGone,
// HTTP 404, when the store no longer holds the session), so that no
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
		gap, start := h.gaps.Load(), h.now()
		ctx, cancel := context.WithTimeout(context.Background(), h.opts.StoreTimeout)
		defer cancel()
		if err := st.Put(ctx, ss.ID(), state); err != nil {
			// The change is undone (update): this revision was never
			// recorded, and the next change takes its number.
			ss.Unrecord(state.Revision)
			if errors.Is(err, store.ErrUnknownSession) {
				// Ended elsewhere (DELETE, TTL) and this copy has not heard
				// of it: the store did not bring it back. This request gets
				// the 404 of an ended session, and so does the next, which
				// reads the store.
				hs.invalidate()
				return errSessionGone
			}
			h.log.Warn("streamhttp: session store put failed", "session", ss.ID(), "err", err)
			return seam.ErrStoreUnavailable
		}
		// The store holds this state now, its TTL restarted.
		hs.checked(gap, start)
		if h.cluster != nil {
			h.cluster.broadcast(ctx, &clusterMsg{Kind: kindState, Session: ss.ID(), State: state})
		}
		return nil
	}
}

// sharedSession checks a session against the SessionStore: the store
// knows whether it still exists (DELETE or the store's TTL may have ended
// it on another instance), and has its latest state, which other
// instances may have changed. A copy read within SessionCheckInterval,
// and since the Broker last reported a gap, is served as it is: the
// Broker brings it DELETE and state changes made elsewhere meanwhile. hs
// is this instance's copy (nil if none, or busy). It returns the session
// marked busy (nil when unknown), or a status when the store failed.
func (h *Handler) sharedSession(ctx context.Context, id string, hs *httpSession) (*httpSession, int) {
	if hs != nil && hs.fresh() {
		return hs, 0
	}
	gap, start := h.gaps.Load(), h.now()
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
		hs.checked(gap, start)
		return hs, 0
	}
	hs = h.loadSession(id, st)
	if hs != nil {
		// A change broadcast while this copy was being made found no copy
		// here to apply to; the store has it now (Put precedes the
		// broadcast), and restore skips it if it is not newer.
		if again, err := h.opts.SessionStore.Get(ctx, id); err == nil {
			hs.ss.Restore(again)
			hs.checked(gap, start)
		}
	}
	return hs, 0
}

// fresh reports whether the copy may be served without reading the
// store: it was read (or written) less than SessionCheckInterval ago,
// and the Broker has reported no gap since.
func (hs *httpSession) fresh() bool {
	h := hs.h
	if !h.keepsCopies() {
		return false
	}
	until := hs.checkedUntil.Load()
	return until != 0 && hs.checkedGap.Load() == h.gaps.Load() && h.now().UnixNano() < until
}

// checked records that the store held the copy's state at start, when
// the Broker had reported gap gaps. Two checks racing may mix their
// fields: each was a true reading of the store, and the copy has applied
// both (Restore keeps the newer state).
func (hs *httpSession) checked(gap uint64, start time.Time) {
	if !hs.h.keepsCopies() {
		return
	}
	hs.checkedGap.Store(gap)
	hs.checkedUntil.Store(start.Add(hs.h.opts.SessionCheckInterval).UnixNano())
}

// keepsCopies reports whether a copy checked within
// SessionCheckInterval may be served without the store: only with a
// Broker, which brings the copy the DELETEs and state changes made
// elsewhere meanwhile. With a SessionStore alone nothing would, so every
// request reads the store.
func (h *Handler) keepsCopies() bool {
	return h.opts.SessionCheckInterval >= 0 && h.cluster != nil
}

// invalidate makes the copy read the store at its next request.
func (hs *httpSession) invalidate() { hs.checkedUntil.Store(0) }

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
