package workers

import (
	"runtime"
	"sync"
)

// DefaultMaxIdle is the bound on idle goroutines of a Pool made with
// maxIdle 0: four per CPU, at least 16.
func DefaultMaxIdle() int { return max(16, 4*runtime.GOMAXPROCS(0)) }

// Pool runs functions on reused goroutines. Its zero value is not usable:
// make one with New. Go never blocks; Close ends the idle goroutines and
// makes every busy one end once its function returns. Go after Close
// still runs fn, on a goroutine of its own.
//
// The idle goroutines are bounded (at most maxIdle) and owned by the
// Pool: they end at Close, not by themselves. What an idle goroutine
// holds is its stack, which the garbage collector shrinks while it is
// unused.
type Pool struct {
	maxIdle int

	mu      sync.Mutex
	idle    []*worker // last in, first out: the warmest stack first
	closed  bool
	started int // goroutines started; live = started - exited (tests)
	exited  int
}

// worker is one pooled goroutine, idle while it waits on work. The
// channel holds one function, so that Go never waits for the worker to
// reach its receive.
type worker struct {
	work chan func()
}

// New returns a Pool keeping at most maxIdle goroutines idle (0 or less:
// DefaultMaxIdle).
func New(maxIdle int) *Pool {
	if maxIdle <= 0 {
		maxIdle = DefaultMaxIdle()
	}
	return &Pool{maxIdle: maxIdle}
}

// Go runs fn on an idle goroutine, or on a new one when none is idle.
func (p *Pool) Go(fn func()) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 && !p.closed {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.work <- fn // buffered, and empty: w was idle
		return
	}
	p.started++
	p.mu.Unlock()
	go p.run(&worker{work: make(chan func(), 1)}, fn) // owned by p: ends at Close or when too many are idle
}

// run serves fn, then waits idle for the next function until the pool
// closes or holds enough idle goroutines.
func (p *Pool) run(w *worker, fn func()) {
	for {
		fn()
		fn = nil // nothing of the last request stays reachable while idle
		p.mu.Lock()
		if p.closed || len(p.idle) >= p.maxIdle {
			p.exited++
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, w)
		p.mu.Unlock()
		if fn = <-w.work; fn == nil {
			p.mu.Lock()
			p.exited++ // Close
			p.mu.Unlock()
			return
		}
	}
}

// Close ends the idle goroutines; busy ones end when their function
// returns. It does not wait for them.
func (p *Pool) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, w := range idle {
		close(w.work)
	}
}

// Idle reports how many goroutines wait for work.
func (p *Pool) Idle() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}
