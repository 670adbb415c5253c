package store

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
)

// Broker carries messages between the instances of a server that share a
// SessionStore and an EventStore (several processes behind one load
// balancer, without sticky sessions). With a Broker in its options a
// Streamable HTTP handler (server/streamhttp):
//
//   - forwards a client's answer to a server→client request (elicitation,
//     sampling, roots, the legacy shim's legs) to the instance whose
//     handler asked, wherever the answer was POSTed;
//   - relays a stream live from the instance that produces it to the one
//     where the client resumed it with Last-Event-ID;
//   - hands notifications that belong to no request to the instance that
//     holds the session's GET stream;
//   - announces list changes and resource updates to every instance, for
//     their sessions and subscriptions/listen streams;
//   - shares session state changes, cancellations and DELETE at once.
//
// Delivery is at most once and, between two instances, in send order:
// what is lost while the broker is disconnected, or while the handler is
// too far behind, stays lost, which the handler tolerates (a relayed
// stream ends and the client resumes it from the event store; a state
// change or a DELETE is read from the SessionStore when the session's
// copy is next checked, within streamhttp's SessionCheckInterval, or at
// once after a gap a GapNotifier reports). See
// docs/design/multi-instance.md.
//
// One Broker serves one HTTP handler. Implementations must be safe for
// concurrent use.
type Broker interface {
	// ID names this instance among those sharing the broker: a short
	// string of letters and digits, unique for the life of the process.
	ID() string
	// Send delivers msg to instance to and reports whether that instance
	// was there to receive it (false: it is gone).
	Send(ctx context.Context, to string, msg []byte) (bool, error)
	// Broadcast delivers msg to every other instance (and may deliver it
	// back to this one: the handler ignores its own messages).
	Broadcast(ctx context.Context, msg []byte) error
	// Receive sets the function called with each message sent or
	// broadcast to this instance; nil stops delivery. Calls come from one
	// goroutine, in order, and must return quickly: a Broker holds a
	// bounded number of messages for a handler that falls behind, and
	// may drop the rest (a GapNotifier then reports the gap). msg is the
	// receiver's to keep.
	Receive(fn func(msg []byte))
}

// GapNotifier is an optional interface of a Broker that can tell when it
// may have lost messages: after its connection to the other instances
// broke and came back (a Redis pub/sub client that subscribed again), or
// when it dropped messages its handler was too slow to take. A Broker
// should report a gap after delivering the messages it received before
// the loss, so that what the handler reads again is newer than them.
// The Streamable HTTP handler then reads every session it holds from the
// SessionStore at the session's next request, since a DELETE or state
// change made elsewhere may not have reached it.
type GapNotifier interface {
	// NotifyGaps sets the function called each time messages may have
	// been lost; nil stops the calls. Calls may come from any goroutine
	// and must return quickly.
	NotifyGaps(fn func())
}

// ErrBrokerClosed is returned by a closed broker.
var ErrBrokerClosed = errors.New("store: broker closed")

// MemoryBus connects Brokers within one process: several HTTP handlers
// (tests, or a single binary that runs several instances) behave as
// instances of one deployment. Messages are delivered on one goroutine
// per broker, in order. The zero value is an empty bus.
type MemoryBus struct {
	mu      sync.Mutex
	members map[string]*memoryBroker
}

// NewMemoryBus returns an empty bus.
func NewMemoryBus() *MemoryBus { return &MemoryBus{} }

// Broker returns a new member of the bus. Close it when its handler is
// closed; a closed member is gone for the others.
func (b *MemoryBus) Broker() *MemoryBroker {
	m := &memoryBroker{bus: b, id: rand.Text()[:10], wake: make(chan struct{}, 1), done: make(chan struct{})}
	b.mu.Lock()
	if b.members == nil {
		b.members = make(map[string]*memoryBroker)
	}
	b.members[m.id] = m
	b.mu.Unlock()
	go m.loop() // owned by m: ends at Close
	return &MemoryBroker{m}
}

// MemoryBroker is one member of a MemoryBus.
type MemoryBroker struct{ *memoryBroker }

type memoryBroker struct {
	bus  *MemoryBus
	id   string
	wake chan struct{}
	done chan struct{}

	mu     sync.Mutex
	queue  [][]byte
	fn     func([]byte)
	closed bool
}

var _ Broker = (*MemoryBroker)(nil)

// ID implements Broker.
func (m *memoryBroker) ID() string { return m.id }

// Send implements Broker.
func (m *memoryBroker) Send(_ context.Context, to string, msg []byte) (bool, error) {
	if m.isClosed() {
		return false, ErrBrokerClosed
	}
	m.bus.mu.Lock()
	peer := m.bus.members[to]
	m.bus.mu.Unlock()
	if peer == nil {
		return false, nil
	}
	return peer.enqueue(msg), nil
}

// Broadcast implements Broker.
func (m *memoryBroker) Broadcast(_ context.Context, msg []byte) error {
	if m.isClosed() {
		return ErrBrokerClosed
	}
	m.bus.mu.Lock()
	peers := make([]*memoryBroker, 0, len(m.bus.members))
	for id, p := range m.bus.members {
		if id != m.id {
			peers = append(peers, p)
		}
	}
	m.bus.mu.Unlock()
	for _, p := range peers {
		p.enqueue(msg)
	}
	return nil
}

// Receive implements Broker.
func (m *memoryBroker) Receive(fn func([]byte)) {
	m.mu.Lock()
	m.fn = fn
	m.mu.Unlock()
}

// Close removes the member from its bus and stops its delivery goroutine.
func (m *memoryBroker) Close() error {
	m.bus.mu.Lock()
	delete(m.bus.members, m.id)
	m.bus.mu.Unlock()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.queue = nil
	m.mu.Unlock()
	close(m.done)
	return nil
}

func (m *memoryBroker) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

func (m *memoryBroker) enqueue(msg []byte) bool {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return false
	}
	m.queue = append(m.queue, append([]byte(nil), msg...))
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
	return true
}

func (m *memoryBroker) loop() {
	for {
		select {
		case <-m.done:
			return
		case <-m.wake:
		}
		for {
			m.mu.Lock()
			if len(m.queue) == 0 || m.closed {
				m.mu.Unlock()
				break
			}
			msg := m.queue[0]
			m.queue = m.queue[1:]
			fn := m.fn
			m.mu.Unlock()
			if fn != nil {
				fn(msg)
			}
		}
	}
}
