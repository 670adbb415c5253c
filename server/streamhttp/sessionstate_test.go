package streamhttp

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/store"

	"github.com/mcpkit/mcpkit/mcp"
)

// staleStore returns, once armed, a state read before hook runs: the
// store answered, then the session changed elsewhere before the answer
// was used.
type staleStore struct {
	*store.MemorySessionStore
	mu   sync.Mutex
	hook func()
}

func (s *staleStore) Get(ctx context.Context, id string) (*store.SessionState, error) {
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
	store.Broker
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
	fst := &staleStore{MemorySessionStore: store.NewMemorySessionStore()}
	events, bus := store.NewMemoryEventStore(nil), store.NewMemoryBus()
	brA, brB := bus.Broker(), bus.Broker()
	t.Cleanup(func() { brA.Close(); brB.Close() })
	tapB := &tapBroker{Broker: brB, states: make(chan struct{}, 8)}
	setup := func(s *server.Server) {
		s.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	}
	srvA, srvB := server.New(&server.Options{Logging: true}), server.New(&server.Options{Logging: true})
	setup(srvA)
	setup(srvB)
	a := newHTTPEnv(t, srvA, &Options{SessionStore: fst, EventStore: events, Broker: brA, KeepAlive: -1})
	b := newHTTPEnv(t, srvB, &Options{SessionStore: fst, EventStore: events, Broker: tapB, KeepAlive: -1})
	t.Cleanup(a.Shutdown)

	sid := a.Initialize("")
	drainStates := func() {
		for {
			select {
			case <-tapB.states:
			default:
				return
			}
		}
	}
	a.Post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	fst.mu.Lock()
	fst.hook = func() {
		// B has read the state; now A changes it, and B takes the
		// broadcast before it has a copy of the session.
		drainStates()
		resp := a.Post(sid, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://r"}}`)
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
	fst.mu.Unlock()
	resp := b.Post(sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("ping on B: %s", resp.Status)
	}
	if !slices.Contains(b.session(sid).ss.State().Subscriptions, "test://r") {
		t.Fatal("B's copy of the session lost the subscription made on A while B loaded it")
	}
}

// holdingStore holds its first Put once armed, and tells of later ones.
type holdingStore struct {
	*store.MemorySessionStore
	armed   atomic.Bool
	holding atomic.Bool
	entered chan struct{} // the held Put began
	release chan struct{}
	later   chan struct{} // another Put began
}

func (s *holdingStore) Put(ctx context.Context, id string, st *store.SessionState) error {
	if s.armed.CompareAndSwap(true, false) {
		s.holding.Store(true)
		close(s.entered)
		<-s.release
		s.holding.Store(false)
	} else if s.holding.Load() {
		select {
		case s.later <- struct{}{}:
		default:
		}
	}
	return s.MemorySessionStore.Put(ctx, id, st)
}

// TestSessionSavesInOrder: two changes of one session made at once (a
// setLevel and a subscribe on parallel POSTs) are saved in the order
// they were made, so the store ends with both — not with the older
// snapshot written last.
func TestSessionSavesInOrder(t *testing.T) {
	fst := &holdingStore{MemorySessionStore: store.NewMemorySessionStore(), entered: make(chan struct{}), release: make(chan struct{}), later: make(chan struct{}, 1)}
	s := server.New(&server.Options{Logging: true})
	s.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	e := newHTTPEnv(t, s, &Options{SessionStore: fst})
	sid := e.Initialize("{}")
	fst.armed.Store(true)
	level := e.PostAsync(sid, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`)
	httpenv.RecvT(t, fst.entered, "the setLevel's Put")
	sub := e.PostAsync(sid, `{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"test://r"}}`)
	// The subscribe has made its change and gone to save it (update
	// applies it before changed); without ordering its Put comes now.
	waitFor(t, "the subscribe to reach its save", func() bool { return slices.Contains(e.session(sid).ss.State().Subscriptions, "test://r") })
	// A short window for that Put (it can only make the test pass when it
	// should fail, by being too short; never fail when it should pass).
	select {
	case <-fst.later:
	case <-time.After(200 * time.Millisecond):
	}
	close(fst.release)
	for _, ch := range []<-chan httpenv.AsyncAnswer{level, sub} {
		a := httpenv.RecvT(t, ch, "an answer")
		if a.Err != nil || a.Resp.StatusCode != http.StatusOK {
			t.Fatalf("answer: %v %v", a.Resp, a.Err)
		}
	}
	st, err := fst.Get(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	if st.LogLevel != mcp.LevelDebug || !slices.Contains(st.Subscriptions, "test://r") {
		t.Fatalf("stored state %+v: a change was lost (saved out of order)", st)
	}
}
