package redisstore

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"

	"github.com/mcpkit/mcpkit/store"

	"github.com/redis/go-redis/v9"
)

// DefaultBrokerQueueSize is the default of BrokerOptions.QueueSize.
const DefaultBrokerQueueSize = 1024

// readerBuffer is the size of go-redis's channel between its reader and
// the Broker's: a hand-off, since the Broker's reader never waits on the
// handler.
const readerBuffer = 64

// BrokerOptions configures a Broker. The zero value applies the defaults.
type BrokerOptions struct {
	// Prefix is put before every channel name. Default DefaultPrefix.
	// Instances of one deployment must share it.
	Prefix string
	// QueueSize is how many received messages may wait for the handler
	// (the function given to Receive). When that many wait, a message
	// that arrives is dropped and counted (Broker.Dropped), and the gap
	// function (NotifyGaps) is called once the messages queued before it
	// have been handled. Zero or less means DefaultBrokerQueueSize.
	QueueSize int
}

// Broker is a store.Broker on Redis pub/sub. Each instance subscribes to
// two channels: prefix+"i:"+its id, for messages sent to it, and
// prefix+"all", for broadcasts. Send is one PUBLISH, whose count of
// receivers tells whether the instance is there.
//
// Pub/sub delivers at most once: messages published while an instance is
// disconnected from Redis are lost to it (the client library reconnects
// and subscribes again by itself). The server tolerates that (see
// store.Broker); the Broker reports each such gap (store.GapNotifier), so
// that the server reads again from the SessionStore the sessions whose
// news it may have missed.
//
// # Delivery
//
// Two goroutines, both started by NewBroker, carry the messages. The
// reader takes each one from go-redis's channel at once and puts it in
// the Broker's own queue, of BrokerOptions.QueueSize messages; the
// delivery goroutine calls the handler with each in turn. A slow handler
// therefore never holds back go-redis's reader: when the queue is full the
// message is dropped, counted (Dropped) and reported as a gap. A gap
// call comes after the handler has had every message queued before the
// loss it reports, so that what the server reads again at the gap is
// newer than what was kept; losses at one place among the messages
// share one call, and a loss after a due gap's place gets another call,
// after the messages queued before it. A subscription confirmed again after a reconnection is reported
// the same way, in its place among the messages.
//
// go-redis's channel options are left at their defaults on purpose. Its
// send timeout (WithChannelSendTimeout, a minute) is how long go-redis
// waits for a full channel before it drops a message and only logs it:
// the Broker's reader never keeps it waiting longer than a short lock, so
// that silent drop cannot happen, and a shorter timeout would only trade
// the Broker's counted, reported drops for silent ones. Its health check
// (WithChannelHealthCheckInterval, 3 s) pings Redis when no message came
// for that long, and reconnects on failure: that is what finds a
// connection that died silently, so it stays on.
//
// Closing the Broker ends its subscriptions at once and does not wait for
// a call of the handler that is under way: that call, if it blocks, keeps
// only the delivery goroutine, which ends as soon as it returns, with no
// further call.
type Broker struct {
	rdb    redis.UniversalClient
	prefix string
	id     string
	ps     *redis.PubSub
	cast   *castTarget   // CastTarget's answer, made once
	wake   chan struct{} // capacity 1: the reader has queued something
	quit   chan struct{} // closed by Close: the delivery goroutine stops
	read   chan struct{} // closed when the reader has ended
	done   chan struct{} // closed when the delivery goroutine has ended

	mu     sync.Mutex
	fn     func([]byte)
	gap    func()
	closed bool
	// The queue: a ring of len(buf) payloads, the queued-taken waiting
	// ones from buf[taken%len(buf)] on.
	buf     []string
	queued  uint64 // messages ever put in the queue
	taken   uint64 // messages ever taken from it by the delivery goroutine
	dropped uint64 // messages dropped because the queue was full
	// A gap is to be reported once taken reaches gapAt (gapDue); lossAt is
	// where the latest loss happened (queued at that time): a loss after
	// the due gap's place needs another gap, after the messages before it.
	gapDue        bool
	gapAt, lossAt uint64
	// readHook, when set (by tests), is called by the reader after each
	// item it took from go-redis's channel.
	readHook func()
}

var (
	_ store.Broker      = (*Broker)(nil)
	_ store.GapNotifier = (*Broker)(nil)
)

// NewBroker subscribes a new instance to rdb and returns once Redis has
// confirmed the subscriptions: when Redis cannot be reached, it fails
// (within ctx) instead of starting an instance that would hear nothing.
// Close the Broker when the handler using it is closed.
func NewBroker(ctx context.Context, rdb redis.UniversalClient, opts *BrokerOptions) (*Broker, error) {
	b := &Broker{rdb: rdb, id: rand.Text()[:10], wake: make(chan struct{}, 1),
		quit: make(chan struct{}), read: make(chan struct{}), done: make(chan struct{})}
	size := DefaultBrokerQueueSize
	if opts != nil {
		b.prefix = opts.Prefix
		if opts.QueueSize > 0 {
			size = opts.QueueSize
		}
	}
	if b.prefix == "" {
		b.prefix = DefaultPrefix
	}
	b.buf = make([]string, size)
	b.cast = &castTarget{rdb: rdb, channel: b.prefix + "all"}
	b.ps = rdb.Subscribe(ctx, b.channel(b.id), b.prefix+"all")
	for confirmed := 0; confirmed < 2; {
		msg, err := b.ps.Receive(ctx)
		if err != nil {
			_ = b.ps.Close()
			return nil, fmt.Errorf("redisstore: subscribing the broker: %w", err)
		}
		if _, ok := msg.(*redis.Subscription); ok {
			confirmed++
		}
	}
	// With the subscriptions: a confirmation after the first ones is the
	// client library subscribing again after a reconnection.
	ch := b.ps.ChannelWithSubscriptions(redis.WithChannelSize(readerBuffer))
	go b.readLoop(ch)  // owned by b: ends at Close, when go-redis closes ch
	go b.deliverLoop() // owned by b: ends at Close, or after the call under way then
	return b, nil
}

func (b *Broker) channel(id string) string { return b.prefix + "i:" + id }

// readLoop moves what go-redis receives into the queue; it never waits
// for the handler.
func (b *Broker) readLoop(ch <-chan any) {
	defer close(b.read)
	for m := range ch {
		b.mu.Lock()
		switch m := m.(type) {
		case *redis.Message:
			b.put(m.Payload)
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				b.markGap()
			}
		}
		hook := b.readHook
		b.mu.Unlock()
		select {
		case b.wake <- struct{}{}:
		default:
		}
		if hook != nil {
			hook()
		}
	}
}

// put queues a payload, or drops it when the queue is full. b.mu is held.
func (b *Broker) put(payload string) {
	if b.closed {
		return
	}
	if b.queued-b.taken == uint64(len(b.buf)) {
		b.dropped++
		b.markGap()
		return
	}
	b.buf[b.queued%uint64(len(b.buf))] = payload
	b.queued++
}

// markGap records a loss here, among the messages: a gap is reported once
// the messages queued so far have been delivered. When one is due already
// at an earlier place, this loss gets its own after it (deliverNext);
// losses at one place share one gap. b.mu is held.
func (b *Broker) markGap() {
	b.lossAt = b.queued
	if !b.gapDue {
		b.gapDue = true
		b.gapAt = b.queued
	}
}

// deliverLoop calls the handler with each queued message, and the gap
// function where a gap is due.
func (b *Broker) deliverLoop() {
	defer close(b.done)
	for {
		select {
		case <-b.quit:
			return
		case <-b.wake:
		}
		for b.deliverNext() {
		}
	}
}

// deliverNext makes the next call due, if any: false when there is none
// (or b is closed).
func (b *Broker) deliverNext() bool {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return false
	}
	if b.gapDue && b.taken == b.gapAt {
		// A later loss, if any, is reported after the messages before it.
		b.gapDue, b.gapAt = b.lossAt > b.gapAt, b.lossAt
		gap := b.gap
		b.mu.Unlock()
		if gap != nil {
			gap()
		}
		return true
	}
	if b.taken == b.queued {
		b.mu.Unlock()
		return false
	}
	i := b.taken % uint64(len(b.buf))
	payload := b.buf[i]
	b.buf[i] = ""
	b.taken++
	fn := b.fn
	b.mu.Unlock()
	if fn != nil {
		fn([]byte(payload))
	}
	return true
}

// Dropped reports how many received messages the Broker has dropped
// because its queue (BrokerOptions.QueueSize) was full, since NewBroker.
// Each drop is also reported as a gap (NotifyGaps); a count that grows
// means the handler is too slow for the traffic, or the queue too small.
func (b *Broker) Dropped() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dropped
}

// ID implements store.Broker.
func (b *Broker) ID() string { return b.id }

// Send implements store.Broker.
func (b *Broker) Send(ctx context.Context, to string, msg []byte) (bool, error) {
	n, err := b.rdb.Publish(ctx, b.channel(to), msg).Result()
	if err != nil {
		return false, fmt.Errorf("redisstore: publishing: %w", err)
	}
	return n > 0, nil
}

// castTarget is where a Broker's broadcasts go (Broker.CastTarget).
type castTarget struct {
	rdb     redis.UniversalClient
	channel string
}

// CastTarget returns an opaque value naming where b publishes its
// broadcasts, for a TaskStore's UpdateCast: a TaskStore on the same
// client publishes a broadcast of b's in the script of its write.
func (b *Broker) CastTarget() any { return b.cast }

// Broadcast implements store.Broker.
func (b *Broker) Broadcast(ctx context.Context, msg []byte) error {
	if err := b.rdb.Publish(ctx, b.prefix+"all", msg).Err(); err != nil {
		return fmt.Errorf("redisstore: publishing: %w", err)
	}
	return nil
}

// Receive implements store.Broker.
func (b *Broker) Receive(fn func([]byte)) {
	b.mu.Lock()
	b.fn = fn
	b.mu.Unlock()
}

// NotifyGaps implements store.GapNotifier: fn is called, on the
// delivery goroutine, when messages may have been lost: the Broker
// subscribed again after its connection to Redis broke (what was
// published meanwhile is lost to it), or its queue was full and it
// dropped messages (see Broker). It comes after the handler has had every
// message received before the loss.
func (b *Broker) NotifyGaps(fn func()) {
	b.mu.Lock()
	b.gap = fn
	b.mu.Unlock()
}

// Close unsubscribes the instance: from then on the others see it gone.
// It does not close rdb. It returns once go-redis has stopped receiving
// for b; messages still queued are dropped and none is taken from the
// queue after it. A call of the handler or of the gap function already
// taken (under way, or about to start) is not waited for (see Broker).
func (b *Broker) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.fn = nil
	b.gap = nil
	clear(b.buf)
	b.taken = b.queued
	b.mu.Unlock()
	close(b.quit)
	err := b.ps.Close()
	<-b.read
	return err
}
