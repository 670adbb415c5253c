package server

import (
	"context"
	"slices"

	"github.com/mcpkit/mcpkit/mcp"
)

// Change notifications (list_changed, resources/updated) never make the
// caller of AddTool and the like wait for a client. A session whose
// transport never waits for its peer (the HTTP carriers: a Streamable
// stream drops past its bound, a 2024-11-05 queue refuses and drops,
// seam.SessionConfig.WriteNeverWaits) is written to by the caller, one
// notification per change, as before. Any other session (stdio, a
// transport.Conn of the application's) gets its changes from a goroutine
// of its own: a client that stopped reading would otherwise hold the
// caller up to notifyTimeout, and every session after it. Such a session
// keeps the changes it has yet to hear, one entry per (method, uri): a
// change already waiting is not queued twice, so what a slow session
// holds is bounded by the list kinds and the resources it subscribed
// to, and a client that hears a change late re-reads the current state
// anyway. The goroutine runs while there is something to send and ends
// when the queue is empty; each send is bounded by notifyTimeout, so it
// also ends soon after the session closes.

// change is one change notification waiting for a session.
type change struct{ method, uri string }

// changeQueue holds a session's changes not yet sent. Its zero value is
// empty: an idle session holds no slice and no goroutine.
type changeQueue struct {
	pending []change
	sending bool // the session's sender goroutine runs
	// held are the changes made between the answer to initialize and
	// notifications/initialized, sent once the session is ready. The
	// client has its list results still to fetch, but a change made in
	// that window may be one it fetched before the server made it: the
	// lists it holds would stay stale with nothing to say so. One entry
	// per (method, uri), as pending; before initialized no resource is
	// subscribed, so at most one per list kind. A pointer, made on the
	// first: every idle session carries this field, few ever hold one.
	held *[]change
}

// deliverWhenReady delivers a change to a ready session, holds it for a
// session that answered initialize but has not heard initialized yet,
// and drops it for one that has not initialized.
func (ss *Session) deliverWhenReady(method, uri string) {
	ss.mu.Lock()
	switch ss.state {
	case stateReady:
		ss.mu.Unlock()
		ss.deliverChange(method, uri)
		return
	case stateInitialized:
		c := change{method, uri}
		if ss.changes.held == nil {
			ss.changes.held = new([]change)
		}
		held := ss.changes.held
		if !slices.Contains(*held, c) {
			*held = append(*held, c)
		}
	}
	ss.mu.Unlock()
}

// releaseHeld delivers the changes held until the session was ready.
func (ss *Session) releaseHeld() {
	ss.mu.Lock()
	held := ss.changes.held
	ss.changes.held = nil
	ss.mu.Unlock()
	if held == nil {
		return
	}
	for _, c := range *held {
		ss.deliverChange(c.method, c.uri)
	}
}

// deliverChange sends a change to ss without waiting for its client.
func (ss *Session) deliverChange(method, uri string) {
	if !ss.inlineChanges {
		ss.queueChange(method, uri)
		return
	}
	ss.sendChange(change{method, uri})
}

// sendChange writes one change notification, within notifyTimeout.
func (ss *Session) sendChange(c change) {
	var params any
	if c.method == mcp.NotificationResourcesUpdated {
		params = &mcp.ResourceUpdatedNotificationParams{URI: c.uri}
	}
	// Every instance of a deployment delivers the change to its own copy
	// of the session: none forwards it (transport.Message.Local).
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	if err := ss.notifyLocal(ctx, c.method, params); err != nil {
		ss.srv.log.Debug("server: notification not delivered", "method", c.method, "err", err)
	}
	cancel()
}

// queueChange schedules a change for ss and returns at once.
func (ss *Session) queueChange(method, uri string) {
	ss.mu.Lock()
	c := change{method, uri}
	for _, p := range ss.changes.pending {
		if p == c {
			ss.mu.Unlock()
			return // already waiting: one notification says it
		}
	}
	ss.changes.pending = append(ss.changes.pending, c)
	start := !ss.changes.sending
	ss.changes.sending = true
	ss.mu.Unlock()
	if start {
		go ss.sendChanges() // owned by ss: ends when its queue is empty
	}
}

// sendChanges sends the queued changes in order, each within
// notifyTimeout, until none is left.
func (ss *Session) sendChanges() {
	for {
		ss.mu.Lock()
		if len(ss.changes.pending) == 0 {
			ss.changes.pending = nil
			ss.changes.sending = false
			ss.mu.Unlock()
			return
		}
		c := ss.changes.pending[0]
		ss.changes.pending = ss.changes.pending[1:]
		ss.mu.Unlock()
		ss.sendChange(c)
	}
}
