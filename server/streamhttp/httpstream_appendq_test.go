package streamhttp

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/store"
)

// gatedEventStore is a MemoryEventStore whose appends wait at a gate:
// each one announces its sequence number on begun, then waits for a
// token on pass, for open to be closed, or for its context to end.
type gatedEventStore struct {
	*store.MemoryEventStore
	begun chan uint64
	pass  chan struct{}
	open  chan struct{}
	once  sync.Once
}

// release lets every append through, from now on.
func (s *gatedEventStore) release() { s.once.Do(func() { close(s.open) }) }

func newGatedEventStore(appends int) *gatedEventStore {
	return &gatedEventStore{MemoryEventStore: store.NewMemoryEventStore(nil), begun: make(chan uint64, appends), pass: make(chan struct{}), open: make(chan struct{})}
}

func (s *gatedEventStore) Append(ctx context.Context, session, stream string, seq uint64, data []byte) error {
	select {
	case <-s.open:
	default:
		s.begun <- seq
		select {
		case <-s.pass:
		case <-s.open:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.MemoryEventStore.Append(ctx, session, stream, seq, data)
}

// gatedStandalone serves a session whose events go to a gated store,
// subscribed to the marker resource (elicitServer), with its standalone stream open and primed.
// addr is the client's address of the stream's connection.
func gatedStandalone(t *testing.T, appends int) (e *httpEnv, store *gatedEventStore, sid string, get *httpenv.SSEStream, stream, addr string) {
	t.Helper()
	store = newGatedEventStore(appends)
	e = newHTTPEnv(t, elicitServer(), &Options{EventStore: store, StoreTimeout: httpenv.HangGuard})
	// Registered after newHTTPEnv, so run before its shutdown: whatever
	// still waits at the gate passes.
	t.Cleanup(store.release)
	sid = e.Initialize("{}")
	e.Subscribe(sid, "file:///marker")
	get = e.OpenSSE(e.Do(http.MethodGet, sid, "", httpenv.WithConnAddr(&addr)))
	get.Plain = true
	stream = get.Prime(0)
	return e, store, sid, get, stream, addr
}

// expectUpdate reads the next message of the standalone stream: the
// marker's update, with event id stream_seq.
func expectUpdate(t *testing.T, get *httpenv.SSEStream, stream string, seq uint64) {
	t.Helper()
	f, m := get.Message()
	if m.Method != "notifications/resources/updated" {
		t.Fatalf("got %s, want the marker's update", m.Raw)
	}
	if got, n := httpenv.SplitEventID(t, f.ID); got != stream || n != seq {
		t.Fatalf("event id %q, want %s_%d", f.ID, stream, seq)
	}
}

// TestHTTPEventAppendProducerReturns: a producer that found the store
// idle appends its own event and returns, however many events other
// producers queue behind it while the store is slow: those go to the
// stream's appender goroutine. Every event still reaches the client in
// order, each once it is stored.
func TestHTTPEventAppendProducerReturns(t *testing.T) {
	const n = 8
	e, store, _, get, stream, _ := gatedStandalone(t, n)
	defer get.Close()
	first := make(chan struct{})
	go func() { // application code announcing a change
		defer close(first)
		e.srv.ResourceUpdated("file:///marker")
	}()
	if seq := httpenv.RecvT(t, store.begun, "the append of event 1"); seq != 1 {
		t.Fatalf("first append of seq %d", seq)
	}
	e.srv.ResourceUpdated("file:///marker") // returns: another goroutine is appending
	store.pass <- struct{}{}                // event 1 is stored
	if seq := httpenv.RecvT(t, store.begun, "the append of event 2"); seq != 2 {
		t.Fatalf("second append of seq %d", seq)
	}
	// The store now holds event 2, which another producer pushed: the
	// first producer is not the one waiting for it.
	httpenv.RecvT(t, first, "the first producer to return while the store holds a later event")
	for range n - 2 {
		e.srv.ResourceUpdated("file:///marker") // each returns, the store still blocked
	}
	expectUpdate(t, get, stream, 1)
	for seq := uint64(2); seq <= n; seq++ {
		store.pass <- struct{}{}
		expectUpdate(t, get, stream, seq)
		if seq < n {
			if got := httpenv.RecvT(t, store.begun, "the next append"); got != seq+1 {
				t.Fatalf("append of seq %d, want %d", got, seq+1)
			}
		}
	}
}

// TestHTTPEventAppendQueueBounded: with a hung store and a chatty stream
// the events waiting for the store stay bounded (maxUnstoredEvents). The
// oldest are given up: delivered live all the same, in order, and
// recorded lost, so that a resumption needing them is refused (409).
// Once the store is back, the others are stored and reach the client.
func TestHTTPEventAppendQueueBounded(t *testing.T) {
	const over = 10
	const n = maxUnstoredEvents + over
	e, store, sid, get, stream, addr := gatedStandalone(t, n)
	st := e.session(sid).standalone()
	first := make(chan struct{})
	go func() {
		defer close(first)
		e.srv.ResourceUpdated("file:///marker")
	}()
	httpenv.RecvT(t, store.begun, "the first append")
	for range n - 1 {
		e.srv.ResourceUpdated("file:///marker")
	}
	st.mu.Lock()
	queued, through := len(st.q.events), st.q.stored
	st.mu.Unlock()
	if queued > maxUnstoredEvents || through != over {
		t.Fatalf("with the store hung after %d pushes: %d events queued, through seq %d; want at most %d queued, through %d", n, queued, through, maxUnstoredEvents, over)
	}
	// Given up, events 1..over are delivered although the store still
	// holds event 1.
	for seq := uint64(1); seq <= over; seq++ {
		expectUpdate(t, get, stream, seq)
	}
	get.Close()
	httpenv.RecvT(t, e.ServerClosed(addr), "the server to see the client leave")
	for _, after := range []uint64{0, over / 2} {
		e.ExpectStatus(e.resume(sid, stream+"_"+httpenv.IDJSON(after)), http.StatusConflict)
	}
	store.release()
	httpenv.RecvT(t, first, "the first producer")
	// Resuming after the lost range: the rest, stored, in order.
	again := e.OpenSSE(e.resume(sid, stream+"_"+httpenv.IDJSON(over)))
	again.Plain = true
	defer again.Close()
	for seq := uint64(over + 1); seq <= n; seq++ {
		expectUpdate(t, again, stream, seq)
	}
}
