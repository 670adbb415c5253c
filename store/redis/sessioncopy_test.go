package redisstore

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/store"
	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
)

// tellingBroker is a Broker that tells the test of each message and each
// gap once the handler has dealt with it.
type tellingBroker struct {
	*Broker
	messages chan string
	gaps     chan struct{}
}

func (b *tellingBroker) Receive(fn func([]byte)) {
	if fn == nil {
		b.Broker.Receive(nil)
		return
	}
	b.Broker.Receive(func(msg []byte) {
		fn(msg)
		select {
		case b.messages <- string(msg):
		default:
		}
	})
}

func (b *tellingBroker) NotifyGaps(fn func()) {
	if fn == nil {
		b.Broker.NotifyGaps(nil)
		return
	}
	b.Broker.NotifyGaps(func() {
		fn()
		select {
		case b.gaps <- struct{}{}:
		default:
		}
	})
}

var _ store.GapNotifier = (*tellingBroker)(nil)

// copyCluster is n instances on Redis, on one manual clock; each broker
// has a client of its own, named name, so that the test can cut its
// pub/sub connection alone.
type copyCluster struct {
	clock   *manualClock
	urls    []string
	brokers []*tellingBroker
	key     func(sid string) string
}

func newCopyCluster(t *testing.T, n int) *copyCluster {
	t.Helper()
	p := prefix(t)
	cc := &copyCluster{clock: &manualClock{now: time.Unix(1_000_000, 0)}}
	sessions := NewSessionStore(rdb, &SessionStoreOptions{Prefix: p})
	cc.key = sessions.key
	events := NewEventStore(rdb, &EventStoreOptions{Prefix: p})
	for i := range n {
		inner, err := NewBroker(context.Background(), namedClient(t, brokerClientName(t, i)), &BrokerOptions{Prefix: p})
		if err != nil {
			t.Fatal(err)
		}
		br := &tellingBroker{Broker: inner, messages: make(chan string, 64), gaps: make(chan struct{}, 4)}
		s := server.New(&server.Options{Logging: true})
		h := streamhttp.NewHandler(s, &streamhttp.Options{SessionStore: sessions, EventStore: events, Broker: br, Now: cc.clock.Now})
		ts := httptest.NewServer(h)
		t.Cleanup(func() {
			ts.Close()
			h.Close()
			_ = br.Close()
		})
		cc.urls = append(cc.urls, ts.URL)
		cc.brokers = append(cc.brokers, br)
	}
	return cc
}

func brokerClientName(t *testing.T, i int) string {
	return strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()) + "-" + string(rune('a'+i))
}

func (cc *copyCluster) ping(t *testing.T, i int, sid string) int {
	t.Helper()
	resp, _ := rtDo(t, http.MethodPost, cc.urls[i], sid, `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	return resp.StatusCode
}

// failAfter bounds a wait for an event: a failure bound, not a delay.
const failAfter = 10 * time.Second

func (cc *copyCluster) waitMessage(t *testing.T, i int, want string) {
	t.Helper()
	timeout := time.NewTimer(failAfter)
	defer timeout.Stop()
	for {
		select {
		case m := <-cc.brokers[i].messages:
			if strings.Contains(m, want) {
				return
			}
		case <-timeout.C:
			t.Fatalf("instance %d never received %s", i, want)
		}
	}
}

// cutPubSub closes the pub/sub connection of instance i's broker on the
// server's side, as a network failure would, and waits until the handler
// has been told of the gap (the client library subscribed again).
func (cc *copyCluster) cutPubSub(t *testing.T, i int) {
	t.Helper()
	killPubSub(context.Background(), t, brokerClientName(t, i))
	select {
	case <-cc.brokers[i].gaps:
	case <-time.After(failAfter):
		t.Fatalf("instance %d's broker reported no gap after its connection was cut", i)
	}
}

// TestSessionCopyOnRedis: the instance holding a session serves it from
// its copy, kept right by the broker and by a read of the store every
// SessionCheckInterval: a DELETE elsewhere is seen at once; a DELETE
// whose message was lost, at the next read; after a broker reconnection,
// at once.
func TestSessionCopyOnRedis(t *testing.T) {
	redistest.Need(t)
	t.Run("delete elsewhere", func(t *testing.T) {
		cc := newCopyCluster(t, 2)
		sid := rtSession(t, cc.urls[0])
		if got := cc.ping(t, 1, sid); got != http.StatusOK {
			t.Fatalf("B: %d", got)
		}
		if resp, body := rtDo(t, http.MethodDelete, cc.urls[1], sid, ""); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("DELETE on B: %s %s", resp.Status, body)
		}
		cc.waitMessage(t, 0, `"k":"ended"`)
		if got := cc.ping(t, 0, sid); got != http.StatusNotFound {
			t.Fatalf("A after a DELETE on B: %d, want 404", got)
		}
	})
	t.Run("lost message", func(t *testing.T) {
		cc := newCopyCluster(t, 1)
		sid := rtSession(t, cc.urls[0])
		if err := rdb.Del(context.Background(), cc.key(sid)).Err(); err != nil { // no message: as if lost
			t.Fatal(err)
		}
		if got := cc.ping(t, 0, sid); got != http.StatusOK {
			t.Fatalf("within the interval: %d, want the copy's 200", got)
		}
		cc.clock.advance(streamhttp.DefaultSessionCheckInterval)
		if got := cc.ping(t, 0, sid); got != http.StatusNotFound {
			t.Fatalf("after the interval: %d, want 404", got)
		}
	})
	t.Run("lost message then a change", func(t *testing.T) {
		// A change saved through a copy that has not heard of the DELETE
		// must not bring the session back: the key stays gone, the change
		// fails with the 404 of an ended session (it was a 503, as if the
		// store were down, and the client retried a session that cannot
		// come back), and the next request reads the store and gets the
		// 404 too.
		cc := newCopyCluster(t, 1)
		sid := rtSession(t, cc.urls[0])
		ctx := context.Background()
		if err := rdb.Del(ctx, cc.key(sid)).Err(); err != nil { // no message: as if lost
			t.Fatal(err)
		}
		resp, body := rtDo(t, http.MethodPost, cc.urls[0], sid, `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"debug"}}`)
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, `"error"`) || !strings.Contains(body, `"id":3`) {
			t.Fatalf("setLevel on a deleted session: %s %s, want 404 with the request's error", resp.Status, body)
		}
		if n := rdb.Exists(ctx, cc.key(sid)).Val(); n != 0 {
			t.Fatal("the change through a stale copy created the deleted session again")
		}
		if got := cc.ping(t, 0, sid); got != http.StatusNotFound {
			t.Fatalf("after the refused change: %d, want 404", got)
		}
	})
	t.Run("broker reconnects", func(t *testing.T) {
		cc := newCopyCluster(t, 2)
		sid := rtSession(t, cc.urls[0])
		if err := rdb.Del(context.Background(), cc.key(sid)).Err(); err != nil {
			t.Fatal(err)
		}
		if got := cc.ping(t, 0, sid); got != http.StatusOK {
			t.Fatalf("before the reconnection: %d, want the copy's 200", got)
		}
		cc.cutPubSub(t, 0)
		if got := cc.ping(t, 0, sid); got != http.StatusNotFound {
			t.Fatalf("after the reconnection: %d, want 404", got)
		}
		// The broker hears again: a DELETE from B reaches A.
		sid = rtSession(t, cc.urls[0])
		if got := cc.ping(t, 1, sid); got != http.StatusOK {
			t.Fatalf("B: %d", got)
		}
		if resp, _ := rtDo(t, http.MethodDelete, cc.urls[1], sid, ""); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("DELETE on B: %s", resp.Status)
		}
		cc.waitMessage(t, 0, `"k":"ended"`)
	})
}

// TestSessionCopyKeepsTTL: a session used only through an instance's
// copy stays alive in Redis: the read every SessionCheckInterval restarts
// its TTL (GETEX).
func TestSessionCopyKeepsTTL(t *testing.T) {
	redistest.Need(t)
	ctx := context.Background()
	cc := newCopyCluster(t, 1)
	sid := rtSession(t, cc.urls[0])
	// As if most of the TTL had passed since the last read.
	const left = 5 * time.Second
	if err := rdb.PExpire(ctx, cc.key(sid), left).Err(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if got := cc.ping(t, 0, sid); got != http.StatusOK {
			t.Fatalf("ping: %d", got)
		}
	}
	if ttl := rdb.PTTL(ctx, cc.key(sid)).Val(); ttl <= 0 || ttl > left {
		t.Fatalf("TTL %v within the interval, want at most %v: the copy answered without the store", ttl, left)
	}
	cc.clock.advance(streamhttp.DefaultSessionCheckInterval)
	if got := cc.ping(t, 0, sid); got != http.StatusOK {
		t.Fatalf("ping: %d", got)
	}
	if ttl := rdb.PTTL(ctx, cc.key(sid)).Val(); ttl < time.Hour-time.Minute {
		t.Fatalf("TTL %v after the read, want it restarted to about an hour", ttl)
	}
}

// TestBrokerReportsGaps: after its pub/sub connection breaks, the Broker
// subscribes again and says so; messages flow again.
func TestBrokerReportsGaps(t *testing.T) {
	redistest.Need(t)
	cc := newCopyCluster(t, 2)
	cc.cutPubSub(t, 1)
	if _, err := cc.brokers[0].Send(context.Background(), cc.brokers[1].ID(), []byte(`{"k":"probe","from":"x"}`)); err != nil {
		t.Fatal(err)
	}
	cc.waitMessage(t, 1, `"probe"`)
}
