package server

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"sync"

	"github.com/mcpkit/mcpkit/store"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// snapshot returns the session's current state as a new revision: it is
// called once per change.
func (ss *Session) snapshot() *store.SessionState {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.rev++
	st := &store.SessionState{
		Revision:           ss.rev,
		ProtocolVersion:    ss.version,
		ClientCapabilities: ss.caps,
		ClientInfo:         ss.info,
		Ready:              ss.state == stateReady,
		LogLevel:           ss.level,
		Principal:          ss.principal,
	}
	st.Subscriptions = slices.Sorted(maps.Keys(ss.subscribed))
	return st
}

// restore sets an initialized session from stored state, replacing what
// it had, unless st is older than what the session holds.
func (ss *Session) restore(st *store.SessionState) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if st.Revision < ss.rev {
		return
	}
	ss.rev = st.Revision
	ss.version, ss.caps, ss.info, ss.level = st.ProtocolVersion, st.ClientCapabilities, st.ClientInfo, st.LogLevel
	ss.principal = st.Principal
	ss.state = stateInitialized
	if st.Ready {
		ss.state = stateReady
	}
	clear(ss.subscribed)
	for _, uri := range st.Subscriptions {
		ss.subscribed[uri] = struct{}{}
	}
}

// changed tells the session's owner that its state changed; an error
// means the owner could not record it (errStoreUnavailable).
func (ss *Session) changed() error {
	if ss.onChange != nil {
		return ss.onChange()
	}
	return nil
}

// update makes a change of the session's state with ss.mu held (apply
// returns how to undo it) and records it (changed). When the change
// cannot be recorded it is undone, so that the client's error means the
// change did not happen: no instance acts on a state the others do not
// know.
func (ss *Session) update(apply func() (undo func())) error {
	ss.mu.Lock()
	undo := apply()
	ss.mu.Unlock()
	if err := ss.changed(); err != nil {
		ss.mu.Lock()
		undo()
		ss.mu.Unlock()
		return err
	}
	return nil
}

// track makes a session save its state to the SessionStore on change. A
// failed Put fails the request that made the change (errStoreUnavailable:
// -32603, HTTP 503), so that no client is told of a change — or handed a
// session id — that other instances do not know.
func (h *HTTPHandler) track(hs *httpSession) {
	st := h.opts.SessionStore
	if st == nil {
		return
	}
	ss := hs.ss
	// saving orders the session's own writes: two changes made at once
	// (setLevel and subscribe on parallel POSTs) would otherwise Put their
	// snapshots in either order, and the store could keep the older one.
	// It is held across one Put, bounded by StoreTimeout, and only ever
	// by the requests that change this session's state.
	var saving sync.Mutex
	ss.onChange = func() error {
		saving.Lock()
		defer saving.Unlock()
		state := ss.snapshot()
		ctx, cancel := context.WithTimeout(context.Background(), h.opts.StoreTimeout)
		defer cancel()
		if err := st.Put(ctx, ss.id, state); err != nil {
			h.log.Warn("mcp: session store put failed", "session", ss.id, "err", err)
			// The change is undone (update): this revision was never
			// recorded, and the next change takes its number.
			ss.mu.Lock()
			if ss.rev == state.Revision {
				ss.rev--
			}
			ss.mu.Unlock()
			return errStoreUnavailable
		}
		if h.cluster != nil {
			h.cluster.broadcast(ctx, &clusterMsg{Kind: kindState, Session: ss.id, State: state})
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
func (h *HTTPHandler) sharedSession(ctx context.Context, id string, hs *httpSession) (*httpSession, int) {
	ctx, cancel := context.WithTimeout(ctx, h.opts.StoreTimeout)
	defer cancel()
	st, err := h.opts.SessionStore.Get(ctx, id)
	switch {
	case errors.Is(err, store.ErrUnknownSession):
		if hs != nil {
			hs.busy.Add(-1)
			h.endSession(hs)
		}
		return nil, 0
	case err != nil:
		h.log.Warn("mcp: session store get failed", "session", id, "err", err)
		if hs != nil {
			hs.busy.Add(-1)
		}
		return nil, http.StatusServiceUnavailable
	case hs != nil:
		hs.ss.restore(st)
		return hs, 0
	}
	hs = h.loadSession(id, st)
	if hs != nil {
		// A change broadcast while this copy was being made found no copy
		// here to apply to; the store has it now (Put precedes the
		// broadcast), and restore skips it if it is not newer.
		if again, err := h.opts.SessionStore.Get(ctx, id); err == nil {
			hs.ss.restore(again)
		}
	}
	return hs, 0
}

// loadSession serves here a session another instance created, from its
// stored state. The session is returned marked busy, as session does;
// nil once the handler is closed.
func (h *HTTPHandler) loadSession(id string, st *store.SessionState) *httpSession {
	hs := &httpSession{h: h}
	hs.ss = h.srv.newHTTPSession(hs)
	hs.ss.id = id
	hs.ss.restore(st)
	h.track(hs)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		hs.ss.Close()
		h.srv.removeSession(hs.ss)
		return nil
	}
	if existing := h.sessions[id]; existing != nil { // loaded concurrently
		hs.ss.Close()
		h.srv.removeSession(hs.ss)
		hs = existing
	} else {
		h.sessions[id] = hs
		h.startSweeper()
	}
	hs.busy.Add(1)
	return hs
}

// idPrefix is the prefix of the ids of server→client requests: the
// instance's, in a cluster.
func (h *HTTPHandler) idPrefix() string {
	if h.cluster == nil {
		return ""
	}
	return h.cluster.idPrefix()
}

// errStoreUnavailable fails a request whose change of session state the
// SessionStore did not take: -32603, answered with 503 on HTTP, so that
// the client knows the change did not happen and may try again.
var errStoreUnavailable = jsonrpc.NewError(mcp.CodeInternalError, "Service Unavailable: the session store is unreachable; the session's state was not saved")
