package server

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/mcpkit/mcpkit/mcp"
)

// SessionState is what a legacy session negotiated and what the client
// asked of it since: everything another server instance needs to serve
// the session's next request.
type SessionState struct {
	ProtocolVersion    string                 `json:"protocolVersion"`
	ClientCapabilities mcp.ClientCapabilities `json:"clientCapabilities"`
	ClientInfo         mcp.Implementation     `json:"clientInfo"`
	// Ready: notifications/initialized was received.
	Ready bool `json:"ready,omitzero"`
	// LogLevel set with logging/setLevel ("" before).
	LogLevel mcp.LoggingLevel `json:"logLevel,omitzero"`
	// Subscriptions are the resource URIs the client subscribed to.
	Subscriptions []string `json:"subscriptions,omitempty"`
}

// SessionStore keeps the state of legacy HTTP sessions outside one
// process, so that several instances behind a load balancer can serve the
// same session: an instance that receives a request for a session it has
// not seen loads the session's state and serves it. Pair it with a shared
// EventStore for resumption across instances. Answers to server→client
// requests must still reach the instance that sent them; routing those
// between instances is beyond this interface.
//
// Implementations must be safe for concurrent use. Get returns
// ErrUnknownSession for an id it does not hold.
type SessionStore interface {
	Put(ctx context.Context, id string, st *SessionState) error
	Get(ctx context.Context, id string) (*SessionState, error)
	Delete(ctx context.Context, id string) error
}

// ErrUnknownSession is returned by SessionStore.Get for an id it does not
// hold (never created, deleted, or expired).
var ErrUnknownSession = errors.New("mcp: unknown session")

// snapshot returns the session's current state.
func (ss *Session) snapshot() *SessionState {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	st := &SessionState{
		ProtocolVersion:    ss.version,
		ClientCapabilities: ss.caps,
		ClientInfo:         ss.info,
		Ready:              ss.state == stateReady,
		LogLevel:           ss.level,
	}
	st.Subscriptions = slices.Sorted(maps.Keys(ss.subscribed))
	return st
}

// restore sets an initialized session from stored state.
func (ss *Session) restore(st *SessionState) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.version, ss.caps, ss.info, ss.level = st.ProtocolVersion, st.ClientCapabilities, st.ClientInfo, st.LogLevel
	ss.state = stateInitialized
	if st.Ready {
		ss.state = stateReady
	}
	for _, uri := range st.Subscriptions {
		ss.subscribed[uri] = struct{}{}
	}
}

// changed tells the session's owner that its state changed.
func (ss *Session) changed() {
	if ss.onChange != nil {
		ss.onChange()
	}
}
