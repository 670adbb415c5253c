package redisstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
)

// brokerWaitLimit bounds every wait of the Broker tests. It is well under
// go-redis's channel send timeout (a minute): a Broker whose delivery
// waits for that timeout fails these tests instead of passing slowly.
const brokerWaitLimit = 20 * time.Second

// blockingReceiver is the handler of a Broker under test: it records
// each message and gap in events, in order, and blocks on each message
// "hold" until the test closes the channel it got from held.
type blockingReceiver struct {
	events chan string
	held   chan chan struct{} // one per "hold": close it to let the handler go on
	reads  chan struct{}      // one per item the Broker's reader took
	stop   chan struct{}      // closed at the test's end: no hold blocks
}

// newBlockingBroker starts a Broker with a queue of size messages and a
// blockingReceiver for it; the test's end lets the handler go and closes
// the Broker.
func newBlockingBroker(t *testing.T, cl *redis.Client, size int) (*Broker, *blockingReceiver) {
	t.Helper()
	b, err := NewBroker(context.Background(), cl, &BrokerOptions{Prefix: prefix(t), QueueSize: size})
	if err != nil {
		t.Fatal(err)
	}
	r := &blockingReceiver{
		events: make(chan string, 1024),
		held:   make(chan chan struct{}, 16),
		reads:  make(chan struct{}, 1024),
		stop:   make(chan struct{}),
	}
	b.mu.Lock()
	b.readHook = func() { r.reads <- struct{}{} }
	b.mu.Unlock()
	b.Receive(func(msg []byte) {
		if string(msg) == "hold" {
			release := make(chan struct{})
			r.held <- release
			select {
			case <-release:
			case <-r.stop:
			}
		}
		r.events <- string(msg)
	})
	b.NotifyGaps(func() { r.events <- "gap" })
	t.Cleanup(func() {
		close(r.stop)
		_ = b.Close()
	})
	return b, r
}

// wait receives from ch within ctx, or fails the test saying what.
func wait[T any](ctx context.Context, t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("waiting for %s: %v", what, ctx.Err())
		var zero T
		return zero
	}
}

func sendSelf(ctx context.Context, t *testing.T, b *Broker, msg string) {
	t.Helper()
	if ok, err := b.Send(ctx, b.ID(), []byte(msg)); err != nil || !ok {
		t.Fatalf("Send %q: %v, %v", msg, ok, err)
	}
}

// TestBrokerOverflowReportsGap: while the handler is blocked, the Broker
// keeps reading; what does not fit in its queue is dropped, counted and
// reported as one gap after the queued messages. Twice, to see that a
// second overflow is a second episode. Then messages flow again.
func TestBrokerOverflowReportsGap(t *testing.T) {
	redistest.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), brokerWaitLimit)
	defer cancel()
	const size, extra = 4, 8
	b, r := newBlockingBroker(t, rdb, size)

	var reads int
	for round := range 2 {
		sendSelf(ctx, t, b, "hold")
		release := wait(ctx, t, r.held, "the handler to hold")
		for i := range size + extra {
			sendSelf(ctx, t, b, fmt.Sprintf("m%d.%d", round, i))
		}
		// Every message reaches the reader while the handler holds.
		for reads < (round+1)*(1+size+extra) {
			wait(ctx, t, r.reads, fmt.Sprintf("read %d of round %d", reads, round))
			reads++
		}
		if got, want := b.Dropped(), uint64((round+1)*extra); got != want {
			t.Fatalf("round %d: Dropped() = %d, want %d", round, got, want)
		}
		close(release)

		want := []string{"hold"}
		for i := range size {
			want = append(want, fmt.Sprintf("m%d.%d", round, i))
		}
		want = append(want, "gap")
		for i, w := range want {
			if got := wait(ctx, t, r.events, fmt.Sprintf("event %d (%s) of round %d", i, w, round)); got != w {
				t.Fatalf("round %d: event %d is %q, want %q", round, i, got, w)
			}
		}
	}

	// The Broker still delivers, and reports no further gap.
	sendSelf(ctx, t, b, "after")
	if got := wait(ctx, t, r.events, "the message after the overflows"); got != "after" {
		t.Fatalf("after the overflows: %q, want %q", got, "after")
	}
	if got := b.Dropped(); got != 2*extra {
		t.Fatalf("Dropped() = %d at the end, want %d", got, 2*extra)
	}
}

// TestBrokerCloseWithHandlerBlocked: Close returns while the handler is
// blocked; once the handler returns, the delivery goroutine ends without
// calling it with what was still queued.
func TestBrokerCloseWithHandlerBlocked(t *testing.T) {
	redistest.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), brokerWaitLimit)
	defer cancel()
	b, r := newBlockingBroker(t, rdb, 4)

	sendSelf(ctx, t, b, "hold")
	release := wait(ctx, t, r.held, "the handler to hold")
	sendSelf(ctx, t, b, "queued")
	for range 2 {
		wait(ctx, t, r.reads, "the reader")
	}
	closed := make(chan error, 1)
	go func() { closed <- b.Close() }() // ends with Close, which must return
	if err := wait(ctx, t, closed, "Close with the handler blocked"); err != nil {
		t.Fatalf("Close: %v", err)
	}
	close(release)
	wait(ctx, t, b.done, "the delivery goroutine to end")
	close(r.events)
	var got []string
	for e := range r.events {
		got = append(got, e)
	}
	if len(got) != 1 || got[0] != "hold" {
		t.Fatalf("handler calls: %q, want only the one under way at Close", got)
	}
}

// TestBrokerResubscriptionGapInOrder: a resubscription after a broken
// connection is reported after the messages received before it, even
// when the handler was holding them back.
func TestBrokerResubscriptionGapInOrder(t *testing.T) {
	redistest.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), brokerWaitLimit)
	defer cancel()
	name := brokerClientName(t, 0)
	b, r := newBlockingBroker(t, namedClient(t, name), 4)

	sendSelf(ctx, t, b, "hold")
	release := wait(ctx, t, r.held, "the handler to hold")
	sendSelf(ctx, t, b, "m1")
	sendSelf(ctx, t, b, "m2")
	for i := range 3 {
		wait(ctx, t, r.reads, fmt.Sprintf("read %d", i))
	}
	killPubSub(ctx, t, name)
	// The client library subscribes again: two confirmations, one per
	// channel, reach the reader.
	for i := range 2 {
		wait(ctx, t, r.reads, fmt.Sprintf("confirmation %d", i))
	}
	close(release)
	for i, w := range []string{"hold", "m1", "m2", "gap"} {
		if got := wait(ctx, t, r.events, fmt.Sprintf("event %d (%s)", i, w)); got != w {
			t.Fatalf("event %d is %q, want %q", i, got, w)
		}
	}
	sendSelf(ctx, t, b, "after")
	if got := wait(ctx, t, r.events, "the message after the reconnection"); got != "after" {
		t.Fatalf("after the reconnection: %q, want %q", got, "after")
	}
	if got := b.Dropped(); got != 0 {
		t.Fatalf("Dropped() = %d, want 0", got)
	}
}

// TestBrokerSecondLossGetsItsOwnGap: a loss that happens while a gap is
// still due for an earlier one, after more messages were queued, gets a
// gap of its own after those messages, not only the earlier one before
// them; whether the second loss is a drop or a reconnection.
func TestBrokerSecondLossGetsItsOwnGap(t *testing.T) {
	redistest.Need(t)
	for _, second := range []string{"drop", "reconnection"} {
		t.Run(second, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), brokerWaitLimit)
			defer cancel()
			name := brokerClientName(t, 0)
			b, r := newBlockingBroker(t, namedClient(t, name), 2)

			// First loss: the handler holds, the queue fills, x is dropped.
			sendSelf(ctx, t, b, "hold")
			first := wait(ctx, t, r.held, "the first hold")
			for _, m := range []string{"a", "hold", "x"} {
				sendSelf(ctx, t, b, m)
			}
			for i := range 4 {
				wait(ctx, t, r.reads, fmt.Sprintf("read %d", i))
			}
			// The handler takes a, then holds on the second hold: the gap of
			// the first loss is still due when b and c are queued.
			close(first)
			second2 := wait(ctx, t, r.held, "the second hold")
			sendSelf(ctx, t, b, "b")
			sendSelf(ctx, t, b, "c")
			for i := range 2 {
				wait(ctx, t, r.reads, fmt.Sprintf("read of b, c %d", i))
			}
			wantDropped := uint64(1)
			if second == "drop" {
				sendSelf(ctx, t, b, "y")
				wait(ctx, t, r.reads, "the read of y")
				wantDropped = 2
			} else {
				killPubSub(ctx, t, name)
				for i := range 2 { // one confirmation per channel
					wait(ctx, t, r.reads, fmt.Sprintf("confirmation %d", i))
				}
			}
			close(second2)
			for i, w := range []string{"hold", "a", "hold", "gap", "b", "c", "gap"} {
				if got := wait(ctx, t, r.events, fmt.Sprintf("event %d (%s)", i, w)); got != w {
					t.Fatalf("event %d is %q, want %q", i, got, w)
				}
			}
			if got := b.Dropped(); got != wantDropped {
				t.Fatalf("Dropped() = %d, want %d", got, wantDropped)
			}
		})
	}
}

// namedClient is a client of the tests' redis-server whose connections
// carry name (CLIENT LIST), so that killPubSub finds its pub/sub
// connection; it is closed at the test's end.
func namedClient(t *testing.T, name string) *redis.Client {
	o := rdb.Options()
	cl := redis.NewClient(&redis.Options{Network: o.Network, Addr: o.Addr, ClientName: name})
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// killPubSub closes, on the server's side, the pub/sub connection of the
// client named name, as a network failure would.
func killPubSub(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	list, err := rdb.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(list, "\n") {
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		if f["name"] == name && f["sub"] != "" && f["sub"] != "0" {
			if err := rdb.Do(ctx, "CLIENT", "KILL", "ID", f["id"]).Err(); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no pub/sub connection named %s in CLIENT LIST:\n%s", name, list)
}

// TestBrokerQueueSizeDefault: a zero or negative QueueSize means
// DefaultBrokerQueueSize.
func TestBrokerQueueSizeDefault(t *testing.T) {
	redistest.Need(t)
	for _, size := range []int{0, -1} {
		b, err := NewBroker(context.Background(), rdb, &BrokerOptions{Prefix: prefix(t), QueueSize: size})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(b.buf); got != DefaultBrokerQueueSize {
			t.Errorf("QueueSize %d: a queue of %d, want %d", size, got, DefaultBrokerQueueSize)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
