package server

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestSessionRestoreSkipsOlder: a state older than the one a copy of the
// session holds does not replace it; the same or a newer one does.
func TestSessionRestoreSkipsOlder(t *testing.T) {
	ss := newSession(New(nil))
	ss.subscribed["test://a"] = struct{}{}
	older := ss.snapshot()
	ss.subscribed["test://b"] = struct{}{}
	newer := ss.snapshot()
	if older.Revision >= newer.Revision {
		t.Fatalf("revisions %d then %d: not increasing", older.Revision, newer.Revision)
	}
	ss.restore(older)
	if !ss.isSubscribed("test://b") {
		t.Fatal("an older state undid a newer change")
	}
	other := newSession(New(nil))
	other.restore(older)
	other.restore(newer)
	if !other.isSubscribed("test://b") || other.rev != newer.Revision {
		t.Fatalf("a newer state was not applied (revision %d)", other.rev)
	}
	other.restore(newer) // again: the same revision applies
	if !other.isSubscribed("test://a") {
		t.Fatal("restoring the same revision lost state")
	}
}

// staleStore returns, once armed, a state read before hook runs: the
// store answered, then the session changed elsewhere before the answer
// was used.
type staleStore struct {
	*MemorySessionStore
	mu   sync.Mutex
	hook func()
}

func (s *staleStore) Get(ctx context.Context, id string) (*SessionState, error) {
	st, err := s.MemorySessionStore.Get(ctx, id)
	s.mu.Lock()
	hook := s.hook
	s.hook = nil
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	return st, err
}

// tapBroker tells the test when its handler has taken a state message.
type tapBroker struct {
	Broker
	states chan struct{}
}

func (b *tapBroker) Receive(fn func([]byte)) {
	if fn == nil {
		b.Broker.Receive(nil)
		return
	}
	b.Broker.Receive(func(msg []byte) {
		fn(msg)
		if bytes.Contains(msg, []byte(`"k":"state"`)) {
			b.states <- struct{}{}
		}
	})
}

// TestSessionChangeWhileLoading: an instance that first meets a session
// reads its state from the store; a change made on another instance
// between that read and the new copy's registration is broadcast while no
// copy is there to take it. The instance must still end up with the
// change (the subscription), or the resource updates it owes the client's
// GET stream are lost.
func TestSessionChangeWhileLoading(t *testing.T) {
	store := &staleStore{MemorySessionStore: NewMemorySessionStore()}
	events, bus := NewMemoryEventStore(nil), NewMemoryBus()
	brA, brB := bus.Broker(), bus.Broker()
	t.Cleanup(func() { brA.Close(); brB.Close() })
	tapB := &tapBroker{Broker: brB, states: make(chan struct{}, 8)}
	setup := func(s *Server) {
		s.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	}
	srvA, srvB := New(&Options{Logging: true}), New(&Options{Logging: true})
	setup(srvA)
	setup(srvB)
	a := newHTTPEnv(t, srvA, &HTTPOptions{SessionStore: store, EventStore: events, Broker: brA, KeepAlive: -1})
	b := newHTTPEnv(t, srvB, &HTTPOptions{SessionStore: store, EventStore: events, Broker: tapB, KeepAlive: -1})
	t.Cleanup(a.shutdown)

	sid := a.initialize("")
	drainStates := func() {
		for {
			select {
			case <-tapB.states:
			default:
				return
			}
		}
	}
	a.post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	store.mu.Lock()
	store.hook = func() {
		// B has read the state; now A changes it, and B takes the
		// broadcast before it has a copy of the session.
		drainStates()
		resp := a.post(sid, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://r"}}`)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("subscribe on A: %s", resp.Status)
		}
		select {
		case <-tapB.states:
		case <-time.After(20 * time.Second): // a guard against a hang, not a margin
			t.Error("B never took A's state broadcast")
		}
	}
	store.mu.Unlock()
	resp := b.post(sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("ping on B: %s", resp.Status)
	}
	if !b.session(sid).ss.isSubscribed("test://r") {
		t.Fatal("B's copy of the session lost the subscription made on A while B loaded it")
	}
}
