package redisstore

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"

	"github.com/mcpkit/mcpkit/store"

	"github.com/redis/go-redis/v9"
)

// BrokerOptions configures a Broker. The zero value applies the defaults.
type BrokerOptions struct {
	// Prefix is put before every channel name. Default DefaultPrefix.
	// Instances of one deployment must share it.
	Prefix string
	// QueueSize is how many received messages may wait for the handler
	// before Redis's client starts to hold them back. Default 1024.
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
// store.Broker); the Broker reports each new subscription after the first
// ones (store.GapNotifier), so that the server reads again from the
// SessionStore the sessions whose news it may have missed.
type Broker struct {
	rdb    redis.UniversalClient
	prefix string
	id     string
	ps     *redis.PubSub
	done   chan struct{}

	mu     sync.Mutex
	fn     func([]byte)
	gap    func()
	closed bool
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
	b := &Broker{rdb: rdb, id: rand.Text()[:10], done: make(chan struct{})}
	size := 1024
	if opts != nil {
		b.prefix = opts.Prefix
		if opts.QueueSize > 0 {
			size = opts.QueueSize
		}
	}
	if b.prefix == "" {
		b.prefix = DefaultPrefix
	}
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
	ch := b.ps.ChannelWithSubscriptions(redis.WithChannelSize(size))
	go b.loop(ch) // owned by b: ends at Close, when ch is closed
	return b, nil
}

func (b *Broker) channel(id string) string { return b.prefix + "i:" + id }

func (b *Broker) loop(ch <-chan any) {
	defer close(b.done)
	for m := range ch {
		switch m := m.(type) {
		case *redis.Message:
			b.mu.Lock()
			fn := b.fn
			b.mu.Unlock()
			if fn != nil {
				fn([]byte(m.Payload))
			}
		case *redis.Subscription:
			b.mu.Lock()
			gap := b.gap
			b.mu.Unlock()
			if gap != nil && m.Kind == "subscribe" {
				gap()
			}
		}
	}
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
func (b *Broker) CastTarget() any { return &castTarget{rdb: b.rdb, channel: b.prefix + "all"} }

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
// delivery goroutine, each time the Broker subscribes again after its
// connection to Redis broke (once per channel), since what was published
// meanwhile is lost to it.
func (b *Broker) NotifyGaps(fn func()) {
	b.mu.Lock()
	b.gap = fn
	b.mu.Unlock()
}

// Close unsubscribes the instance: from then on the others see it gone.
// It does not close rdb.
func (b *Broker) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.fn = nil
	b.gap = nil
	b.mu.Unlock()
	err := b.ps.Close()
	<-b.done
	return err
}
