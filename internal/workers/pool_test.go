package workers

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitIdle waits until p has n idle goroutines: they become idle after
// their function returns, on their own goroutine.
func waitIdle(t *testing.T, p *Pool, n int) {
	t.Helper()
	waitFor(t, func() bool { return p.Idle() == n })
}

// live counts p's goroutines that have not ended.
func live(p *Pool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started - p.exited
}

// waitFor waits until cond holds. The bound reports a hang; nothing
// races against it.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatal("the pool never got there")
		}
	}
}

// TestReuse: functions run one after another take the same goroutine, so
// one is ever started; Close ends it.
func TestReuse(t *testing.T) {
	p := New(4)
	defer p.Close()
	for i := range 100 {
		done := make(chan struct{})
		p.Go(func() { close(done) })
		<-done
		waitIdle(t, p, 1)
		p.mu.Lock()
		started := p.started
		p.mu.Unlock()
		if started != 1 {
			t.Fatalf("call %d: %d goroutines started, want the one reused", i, started)
		}
	}
	p.Close()
	if n := p.Idle(); n != 0 {
		t.Fatalf("%d idle after Close", n)
	}
	goleak.VerifyNone(t)
}

// TestBoundedIdle: a burst of concurrent functions all run, each on its
// own goroutine; afterwards at most maxIdle stay.
func TestBoundedIdle(t *testing.T) {
	const maxIdle, burst = 3, 20
	p := New(maxIdle)
	defer p.Close()
	release := make(chan struct{})
	var started, ended sync.WaitGroup
	started.Add(burst)
	ended.Add(burst)
	for range burst {
		p.Go(func() {
			started.Done()
			<-release // all run at once: Go never waits for a free goroutine
			ended.Done()
		})
	}
	started.Wait()
	close(release)
	ended.Wait()
	// Every goroutine has either parked or ended: the others ended.
	waitFor(t, func() bool { return p.Idle()+(burst-live(p)) == burst })
	if n, l := p.Idle(), live(p); n != maxIdle || l != maxIdle {
		t.Fatalf("%d idle and %d alive after the burst, want %d of each", n, l, maxIdle)
	}
}

// TestAfterClose: Go after Close still runs the function, and its
// goroutine does not stay.
func TestAfterClose(t *testing.T) {
	p := New(2)
	defer p.Close()
	p.Close()
	done := make(chan struct{})
	p.Go(func() { close(done) })
	<-done
	if n := p.Idle(); n != 0 {
		t.Fatalf("%d idle after Close", n)
	}
	goleak.VerifyNone(t)
}

// TestCloseWhileBusy: a function running at Close finishes, and its
// goroutine ends instead of parking.
func TestCloseWhileBusy(t *testing.T) {
	p := New(2)
	defer p.Close()
	running, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	p.Go(func() { close(running); <-release; close(done) })
	<-running
	p.Close()
	close(release)
	<-done
	goleak.VerifyNone(t)
	if n := p.Idle(); n != 0 {
		t.Fatalf("%d idle after Close", n)
	}
}

// TestDefaultMaxIdle: 0 takes the default.
func TestDefaultMaxIdle(t *testing.T) {
	if p := New(0); p.maxIdle != DefaultMaxIdle() || p.maxIdle < 16 {
		t.Fatalf("maxIdle %d", p.maxIdle)
	}
}
