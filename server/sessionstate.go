package server

import (
	"maps"
	"slices"

	"github.com/mcpkit/mcpkit/store"
)

// snapshot returns the session's current state as a new revision: it is
// called once per change.
func (ss *Session) snapshot() *store.SessionState {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.rev++
	return ss.stateLocked()
}

// stateLocked returns the session's state at the revision it holds;
// ss.mu is held.
func (ss *Session) stateLocked() *store.SessionState {
	st := &store.SessionState{
		Revision:           ss.rev,
		ProtocolVersion:    ss.version,
		ClientCapabilities: deref(ss.caps),
		ClientInfo:         deref(ss.info),
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
	defer func() {
		ready := ss.state == stateReady && ss.changes.held != nil
		ss.mu.Unlock()
		if ready { // initialized reached another instance first
			ss.releaseHeld()
		}
	}()
	if st.Revision < ss.rev {
		return
	}
	ss.rev = st.Revision
	caps, info := st.ClientCapabilities, st.ClientInfo
	ss.version, ss.caps, ss.info, ss.level = st.ProtocolVersion, &caps, &info, st.LogLevel
	ss.principal = st.Principal
	ss.state = stateInitialized
	if st.Ready {
		ss.state = stateReady
	}
	clear(ss.subscribed)
	for _, uri := range st.Subscriptions {
		ss.addSubscription(uri)
	}
}

// changed tells the session's owner that its state changed; an error
// means the owner could not record it (seam.ErrStoreUnavailable).
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

// deref is *p, or the zero value for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
