package streamhttp

import (
	"sync"
	"sync/atomic"
	"time"
)

// inflight tracks what may have to turn into an event stream after
// SSEAfter of silence, each as a flight: the session-less requests whose
// handlers run on their POST's goroutine (serveRequest), which Shutdown
// also cancels, and every stream a reader waits on (stream.serve). It
// replaces, for each request, a context.AfterFunc on the handler's
// closing context and the timers of its wait: joining is a lock of one
// of a few shards and two pointer writes, with nothing allocated.
//
// The watcher is one goroutine, owned by the Handler, that runs only
// while some request is in flight: it wakes every SSEAfter/4 (a
// millisecond at least) and marks a request silent once enough of its
// wake-ups have passed since the request joined (init), so between
// SSEAfter and SSEAfter plus one period after it began. It exits at a
// wake-up that finds no request, and at Shutdown; from then on nothing
// turns silent (session-less requests are cancelled, sessions closed).
type inflight struct {
	shards [inflightShards]inflightShard
	pick   atomic.Uint32 // round-robin choice of a shard
	ticks  atomic.Uint64 // the watcher's wake-ups so far
	closed atomic.Bool   // Shutdown has begun: joiners are cancelled at once

	every time.Duration // the watcher's period; 0: no watcher (SSEAfter < 0)
	after uint64        // wake-ups after which a flight is silent

	mu       sync.Mutex    // serializes starting the watcher and closing
	watching atomic.Bool   // a watcher runs (or is about to)
	done     chan struct{} // closed by close: the watcher exits
}

const inflightShards = 8

type inflightShard struct {
	mu    sync.Mutex
	head  *flight
	count atomic.Int32
	_     [40]byte // a shard to a cache line
}

// flight is one member of inflight. Its owner is told when it has been
// silent for SSEAfter, and when the handler shuts down.
type flight struct {
	owner flightOwner
	// Its place: the shard's list (under the shard's mu), the watcher's
	// count of wake-ups when it joined, and whether the watcher has
	// marked it silent (or must never).
	prev, next *flight
	shard      *inflightShard
	joined     uint64
	watched    bool
}

// flightOwner is what a flight belongs to. Both methods are called
// without inflight's locks and may be called after the flight left.
type flightOwner interface {
	silent()        // silent for SSEAfter
	cancelClosing() // the handler shuts down
}

// init sets the watcher's period from SSEAfter (negative: never): a
// quarter of it (a millisecond at least), and the wake-ups a flight
// waits for: one more than fit in SSEAfter, so that it is silent between
// SSEAfter and SSEAfter plus one period after it joined.
func (in *inflight) init(sseAfter time.Duration) {
	in.done = make(chan struct{})
	if sseAfter > 0 {
		in.every = max(sseAfter/4, time.Millisecond)
		in.after = uint64((sseAfter+in.every-1)/in.every) + 1
	}
}

// join adds is. The caller calls leave(is) once it is over.
func (in *inflight) join(is *flight) {
	neverSilent := is.watched // read before the watcher can see is
	sh := &in.shards[in.pick.Add(1)%inflightShards]
	is.shard = sh
	is.joined = in.ticks.Load()
	sh.mu.Lock()
	is.next = sh.head
	if sh.head != nil {
		sh.head.prev = is
	}
	sh.head = is
	sh.count.Add(1)
	sh.mu.Unlock()
	if in.closed.Load() {
		is.owner.cancelClosing()
		return
	}
	if in.every > 0 && !neverSilent && !in.watching.Load() {
		in.startWatcher() // a flight never silent (AlwaysSSE) needs no watcher
	}
}

// leave removes is.
func (in *inflight) leave(is *flight) {
	sh := is.shard
	sh.mu.Lock()
	if is.prev != nil {
		is.prev.next = is.next
	} else {
		sh.head = is.next
	}
	if is.next != nil {
		is.next.prev = is.prev
	}
	is.prev, is.next = nil, nil
	sh.count.Add(-1)
	sh.mu.Unlock()
}

func (in *inflight) startWatcher() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.watching.Load() || in.closed.Load() {
		return
	}
	in.watching.Store(true)
	go in.watch() // owned by the Handler: ends when idle or at close
}

// watch is the watcher's loop.
func (in *inflight) watch() {
	t := time.NewTimer(in.every)
	defer t.Stop()
	var silent []*flight
	for {
		select {
		case <-in.done:
			return
		case <-t.C:
		}
		now := in.ticks.Add(1)
		silent = silent[:0]
		for i := range in.shards {
			sh := &in.shards[i]
			sh.mu.Lock()
			for is := sh.head; is != nil; is = is.next {
				if !is.watched && now-is.joined >= in.after {
					is.watched = true
					silent = append(silent, is)
				}
			}
			sh.mu.Unlock()
		}
		for i, is := range silent {
			is.owner.silent() // outside the shards' locks: it takes the stream's
			silent[i] = nil
		}
		if in.idle() {
			return
		}
		t.Reset(in.every)
	}
}

// idle ends the watcher when no request is in flight. The counts and
// watching are atomics, so all of them fall in one order: a request that
// joins after the watcher cleared watching sees it cleared and starts
// another watcher; one that joined before is found by the second look,
// and this watcher goes on unless another has started meanwhile.
func (in *inflight) idle() bool {
	if in.count() > 0 {
		return false
	}
	in.watching.Store(false)
	if in.count() == 0 {
		return true
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.watching.Load() || in.closed.Load() {
		return true
	}
	in.watching.Store(true)
	return false
}

func (in *inflight) count() int32 {
	var n int32
	for i := range in.shards {
		n += in.shards[i].count.Load()
	}
	return n
}

// close stops the watcher and cancels every request in flight (cause
// ErrServerClosing); requests joining later are cancelled as they join.
func (in *inflight) close() {
	in.closed.Store(true)
	in.mu.Lock()
	select {
	case <-in.done:
	default:
		close(in.done)
	}
	in.mu.Unlock()
	var all []*flight
	for i := range in.shards {
		sh := &in.shards[i]
		sh.mu.Lock()
		for is := sh.head; is != nil; is = is.next {
			all = append(all, is)
		}
		sh.mu.Unlock()
	}
	for _, is := range all {
		is.owner.cancelClosing()
	}
}
