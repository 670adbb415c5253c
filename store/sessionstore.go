package store

import (
	"context"
	"errors"
	"slices"
	"sync"

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
	// Principal is the authenticated principal that opened the session
	// (see WithPrincipal); "" without authentication.
	Principal string `json:"principal,omitzero"`
	// Revision grows with every change of the state. An instance applies
	// a state only when it is not older than the one it holds, so that a
	// state read from the store before a change cannot undo the change
	// broadcast after it.
	Revision uint64 `json:"revision,omitzero"`
}

// SessionStore keeps the state of legacy HTTP sessions outside one
// process, so that several instances behind a load balancer can serve the
// same session. Whether the session still exists and its latest state
// are the store's to say: the handler calls Get for a session it holds
// no copy of, and for one it does once its copy is older than
// streamhttp's SessionCheckInterval (or after the Broker reported a
// gap), and Put whenever the state changes. Pair it with a shared
// EventStore for resumption across instances, and a Broker for answers,
// notifications and live streams that cross instances.
//
// Implementations must be safe for concurrent use. Get returns
// ErrUnknownSession for an id it does not hold; a store that expires idle
// sessions restarts the session's idle time on Get as on Put.
//
// Put with a Revision of 1 creates the session (initialize). A later
// revision updates a session that must still exist: a store should
// return ErrUnknownSession when it holds none (deleted or expired)
// rather than create it again, so that an instance whose copy has not
// yet heard of a DELETE cannot bring the session back by saving a change.
type SessionStore interface {
	Put(ctx context.Context, id string, st *SessionState) error
	Get(ctx context.Context, id string) (*SessionState, error)
	Delete(ctx context.Context, id string) error
}

// ErrUnknownSession is returned by SessionStore.Get for an id it does not
// hold (never created, deleted, or expired).
var ErrUnknownSession = errors.New("store: unknown session")

// MemorySessionStore is a SessionStore in this process's memory: several
// HTTP handlers in one process (with a MemoryBus) serve the same sessions
// through it. It keeps sessions until they are deleted; a deployment of
// several processes needs a shared store (such as the store/redis module).
type MemorySessionStore struct {
	mu sync.Mutex
	m  map[string]SessionState
}

// NewMemorySessionStore returns an empty store.
func NewMemorySessionStore() *MemorySessionStore {
	return &MemorySessionStore{m: make(map[string]SessionState)}
}

var _ SessionStore = (*MemorySessionStore)(nil)

// Put implements SessionStore.
func (s *MemorySessionStore) Put(_ context.Context, id string, st *SessionState) error {
	c := *st
	c.Subscriptions = slices.Clone(st.Subscriptions)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[id]; !ok && st.Revision > 1 {
		return ErrUnknownSession // ended meanwhile: not created again
	}
	s.m[id] = c
	return nil
}

// Get implements SessionStore.
func (s *MemorySessionStore) Get(_ context.Context, id string) (*SessionState, error) {
	s.mu.Lock()
	st, ok := s.m[id]
	s.mu.Unlock()
	if !ok {
		return nil, ErrUnknownSession
	}
	st.Subscriptions = slices.Clone(st.Subscriptions)
	return &st, nil
}

// Delete implements SessionStore.
func (s *MemorySessionStore) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	delete(s.m, id)
	s.mu.Unlock()
	return nil
}
