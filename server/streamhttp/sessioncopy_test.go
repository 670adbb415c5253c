package streamhttp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/store"
)

// countingStore is a mapStore that counts its reads.
type countingStore struct {
	mapStore
	gets atomic.Int64
}

func (s *countingStore) Get(ctx context.Context, id string) (*store.SessionState, error) {
	s.gets.Add(1)
	return s.mapStore.Get(ctx, id)
}

// testClock is a clock the test moves by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// watchedBroker is a MemoryBroker that reports the messages it has
// delivered (after the handler's function returned) and lets the test
// report a gap, as a Redis broker does after reconnecting.
type watchedBroker struct {
	*store.MemoryBroker
	delivered chan string // each message, once handled
	mu        sync.Mutex
	gap       func()
}

func (b *watchedBroker) Receive(fn func([]byte)) {
	if fn == nil {
		b.MemoryBroker.Receive(nil)
		return
	}
	b.MemoryBroker.Receive(func(msg []byte) {
		fn(msg)
		select {
		case b.delivered <- string(msg):
		default: // nobody waits for this one
		}
	})
}

func (b *watchedBroker) NotifyGaps(fn func()) {
	b.mu.Lock()
	b.gap = fn
	b.mu.Unlock()
}

func (b *watchedBroker) reportGap(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	gap := b.gap
	b.mu.Unlock()
	if gap == nil {
		t.Fatal("the handler did not ask the broker for its gaps")
	}
	gap()
}

// copyInstances are instances sharing a counted SessionStore, a memory
// event store and a MemoryBus, on one test clock.
type copyInstances struct {
	st      *countingStore
	clock   *testClock
	urls    []string
	hs      []*Handler
	brokers []*watchedBroker
}

func newCopyInstances(t *testing.T, n int, interval time.Duration) *copyInstances {
	t.Helper()
	ci := &copyInstances{st: &countingStore{mapStore: mapStore{m: map[string][]byte{}}}, clock: &testClock{now: time.Unix(1_000_000, 0)}}
	events := store.NewMemoryEventStore(nil)
	bus := store.NewMemoryBus()
	for range n {
		s := server.New(&server.Options{Logging: true})
		br := &watchedBroker{MemoryBroker: bus.Broker(), delivered: make(chan string, 16)}
		h := NewHandler(s, &Options{SessionStore: ci.st, EventStore: events, Broker: br, SessionCheckInterval: interval, Now: ci.clock.Now})
		ts := httptest.NewServer(h)
		t.Cleanup(func() { ts.Close(); h.Close(); _ = br.Close() })
		ci.urls = append(ci.urls, ts.URL)
		ci.hs = append(ci.hs, h)
		ci.brokers = append(ci.brokers, br)
	}
	return ci
}

func copyDo(t *testing.T, method, url, sid, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, string(out)
}

func (ci *copyInstances) open(t *testing.T, i int) string {
	t.Helper()
	resp, body := copyDo(t, http.MethodPost, ci.urls[i], "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("no session: %s %s", resp.Status, body)
	}
	if resp, body := copyDo(t, http.MethodPost, ci.urls[i], sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %s %s", resp.Status, body)
	}
	return sid
}

// ping sends a ping of the session to instance i and returns the status.
func (ci *copyInstances) ping(t *testing.T, i int, sid string) int {
	t.Helper()
	resp, _ := copyDo(t, http.MethodPost, ci.urls[i], sid, `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	return resp.StatusCode
}

// waitDelivered waits until instance i's broker has handled a message
// containing want.
func (ci *copyInstances) waitDelivered(t *testing.T, i int, want string) {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second) // a failure bound, not a wait
	defer timeout.Stop()
	for {
		select {
		case m := <-ci.brokers[i].delivered:
			if strings.Contains(m, want) {
				return
			}
		case <-timeout.C:
			t.Fatalf("instance %d never received %s", i, want)
		}
	}
}

// TestSessionCopyServesWithoutStore: the instance that holds a session
// answers its requests from its copy, with no SessionStore read, until
// SessionCheckInterval has passed; then one request reads the store (and
// the next ones do not). A negative interval reads it on every request.
func TestSessionCopyServesWithoutStore(t *testing.T) {
	ci := newCopyInstances(t, 1, 0)
	sid := ci.open(t, 0)
	ci.st.gets.Store(0)
	for range 5 {
		if got := ci.ping(t, 0, sid); got != http.StatusOK {
			t.Fatalf("ping: %d", got)
		}
	}
	if n := ci.st.gets.Load(); n != 0 {
		t.Fatalf("the holder read the store %d times within the interval, want 0", n)
	}
	ci.clock.Advance(DefaultSessionCheckInterval)
	for range 3 {
		if got := ci.ping(t, 0, sid); got != http.StatusOK {
			t.Fatalf("ping: %d", got)
		}
	}
	if n := ci.st.gets.Load(); n != 1 {
		t.Fatalf("after the interval the holder read the store %d times, want 1", n)
	}

	every := newCopyInstances(t, 1, -1)
	sid = every.open(t, 0)
	every.st.gets.Store(0)
	for range 3 {
		every.ping(t, 0, sid)
	}
	if n := every.st.gets.Load(); n != 3 {
		t.Fatalf("with a negative interval: %d store reads for 3 requests, want 3", n)
	}
}

// TestSessionCopyDeleteElsewhere: a DELETE on another instance reaches
// the holder's copy through the broker at once, well within the interval.
func TestSessionCopyDeleteElsewhere(t *testing.T) {
	ci := newCopyInstances(t, 2, time.Hour)
	sid := ci.open(t, 0)
	if got := ci.ping(t, 1, sid); got != http.StatusOK { // B holds a copy too
		t.Fatalf("ping on B: %d", got)
	}
	if resp, body := copyDo(t, http.MethodDelete, ci.urls[1], sid, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE on B: %s %s", resp.Status, body)
	}
	ci.waitDelivered(t, 0, `"k":"ended"`)
	if got := ci.ping(t, 0, sid); got != http.StatusNotFound {
		t.Fatalf("A after a DELETE on B: %d, want 404", got)
	}
}

// TestSessionCopyLostMessage: a DELETE whose broker message never came
// (the session removed from the store behind the holder's back) is
// caught by the holder's next read of the store, once the interval has
// passed; and a state change that came only to the store is applied.
func TestSessionCopyLostMessage(t *testing.T) {
	ci := newCopyInstances(t, 1, 0)
	sid := ci.open(t, 0)
	st, err := ci.st.Get(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	st.LogLevel, st.Revision = mcp.LevelError, st.Revision+1
	if err := ci.st.Put(context.Background(), sid, st); err != nil {
		t.Fatal(err)
	}
	ci.clock.Advance(DefaultSessionCheckInterval - time.Nanosecond)
	ci.ping(t, 0, sid)
	if lvl := ci.hs[0].local(sid).ss.State().LogLevel; lvl != "" {
		t.Fatalf("within the interval the copy read the store (level %q)", lvl)
	}
	ci.clock.Advance(time.Nanosecond)
	ci.ping(t, 0, sid)
	if lvl := ci.hs[0].local(sid).ss.State().LogLevel; lvl != mcp.LevelError {
		t.Fatalf("after the interval the copy's level is %q, want the stored %q", lvl, mcp.LevelError)
	}

	if err := ci.st.Delete(context.Background(), sid); err != nil {
		t.Fatal(err)
	}
	if got := ci.ping(t, 0, sid); got != http.StatusOK {
		t.Fatalf("within the interval: %d, want the copy's 200", got)
	}
	ci.clock.Advance(DefaultSessionCheckInterval)
	if got := ci.ping(t, 0, sid); got != http.StatusNotFound {
		t.Fatalf("after the interval: %d, want 404", got)
	}
	if ci.hs[0].local(sid) != nil {
		t.Fatal("the holder kept its copy of a deleted session")
	}
}

// TestSessionCopyGap: when the broker reports that it may have lost
// messages, every copy reads the store at its next request.
func TestSessionCopyGap(t *testing.T) {
	ci := newCopyInstances(t, 1, time.Hour)
	sid := ci.open(t, 0)
	other := ci.open(t, 0)
	if err := ci.st.Delete(context.Background(), sid); err != nil { // the lost DELETE
		t.Fatal(err)
	}
	if got := ci.ping(t, 0, sid); got != http.StatusOK {
		t.Fatalf("before the gap: %d, want the copy's 200", got)
	}
	ci.brokers[0].reportGap(t)
	ci.st.gets.Store(0)
	if got := ci.ping(t, 0, sid); got != http.StatusNotFound {
		t.Fatalf("after the gap: %d, want 404", got)
	}
	for range 2 {
		if got := ci.ping(t, 0, other); got != http.StatusOK {
			t.Fatalf("the other session after the gap: %d", got)
		}
	}
	if n := ci.st.gets.Load(); n != 2 {
		t.Fatalf("after the gap: %d store reads, want 2 (one per session)", n)
	}
}

// goneStore is a mapStore that, once gone is set, holds no session any
// more: as a shared store after a DELETE or the TTL on another instance.
type goneStore struct {
	mapStore
	gone atomic.Bool
}

func (s *goneStore) Put(ctx context.Context, id string, st *store.SessionState) error {
	if s.gone.Load() {
		return store.ErrUnknownSession
	}
	return s.mapStore.Put(ctx, id, st)
}

func (s *goneStore) Get(ctx context.Context, id string) (*store.SessionState, error) {
	if s.gone.Load() {
		return nil, store.ErrUnknownSession
	}
	return s.mapStore.Get(ctx, id)
}

// TestSessionCopyChangeOfGoneSession: a change made through a copy whose
// session the store no longer holds (its ended message lost) fails with
// the 404 of an ended session and the request's id, for a request and
// for the initialized notification alike; it used to be a 503, as if the
// store were down, which a client retries. The next request reads the
// store and gets 404 too.
func TestSessionCopyChangeOfGoneSession(t *testing.T) {
	for _, tc := range []struct{ name, body, wantID string }{
		{"request", `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"debug"}}`, `"id":3`},
		{"initialized", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""}, // no id to answer under
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &goneStore{mapStore: mapStore{m: map[string][]byte{}}}
			br := store.NewMemoryBus().Broker()
			h := NewHandler(server.New(&server.Options{Logging: true}), &Options{SessionStore: st, Broker: br, SessionCheckInterval: time.Hour})
			ts := httptest.NewServer(h)
			t.Cleanup(func() { ts.Close(); h.Close(); _ = br.Close() })
			resp, body := copyDo(t, http.MethodPost, ts.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
			sid := resp.Header.Get("Mcp-Session-Id")
			if sid == "" {
				t.Fatalf("no session: %s %s", resp.Status, body)
			}
			if tc.name == "request" {
				if resp, body := copyDo(t, http.MethodPost, ts.URL, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
					t.Fatalf("initialized: %s %s", resp.Status, body)
				}
			}
			st.gone.Store(true)
			resp, body = copyDo(t, http.MethodPost, ts.URL, sid, tc.body)
			if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, `"error"`) {
				t.Fatalf("a change of a gone session: %s %s, want 404 with the error", resp.Status, body)
			}
			if hasID := strings.Contains(body, `"id"`); tc.wantID == "" && hasID || tc.wantID != "" && !strings.Contains(body, tc.wantID) {
				t.Fatalf("a change of a gone session: %s, want the id %q", body, tc.wantID)
			}
			if resp, _ := copyDo(t, http.MethodPost, ts.URL, sid, `{"jsonrpc":"2.0","id":9,"method":"ping"}`); resp.StatusCode != http.StatusNotFound {
				t.Fatalf("the next request: %s, want 404", resp.Status)
			}
		})
	}
}
