package streamable

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// getScript serves the n-th GET (from 1) with steps[n-1]; POSTs are
// accepted. A GET past the script fails the test.
func getScript(t *testing.T, steps ...handlerFunc) *fake {
	var n atomic.Int32
	return newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		i := int(n.Add(1))
		if i > len(steps) {
			t.Errorf("GET %d: the script has %d", i, len(steps))
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		steps[i-1](w, r, in)
	})
}

func status(code int) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, in rec) { w.WriteHeader(code) }
}

// events answers with an event stream of raw text, then ends it cleanly.
func events(text string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, in rec) {
		sseStart(w)
		if text != "" {
			sseRaw(w, text)
		}
	}
}

const listMsg = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`

// listening returns a Conn to f whose listener waits 100 ms (instead of
// DefaultRetry) when the server sent no retry:, and starts it.
func listening(t *testing.T, f *fake, opts *Options) *Conn {
	c := newConn(t, f, opts)
	c.defaultRetry = 100 * time.Millisecond
	c.Listen()
	return c
}

// listeningOn is listening with the waits between attempts on clock, which
// records the delays the listener asks for and ends them at once.
func listeningOn(t *testing.T, f *fake, clock *waitClock) *Conn {
	c := newConn(t, f, nil)
	c.defaultRetry = 100 * time.Millisecond
	c.waitAfter = clock.After
	c.Listen()
	return c
}

// TestListenFailureCounting: MaxListenFailures consecutive failures stop
// the listener; a clean end in between resets the count.
func TestListenFailureCounting(t *testing.T) {
	t.Run("fail success fail fail", func(t *testing.T) {
		f := getScript(t,
			status(http.StatusInternalServerError),
			events("retry: 100\ndata: "+listMsg+"\n\n"),
			status(http.StatusInternalServerError),
			status(http.StatusInternalServerError),
		)
		c := listening(t, f, nil)
		stopped := waitListener(t, c)
		var se *StatusError
		if !errors.Is(stopped, ErrListenFailures) || !errors.As(stopped, &se) || se.StatusCode != 500 || !strings.Contains(stopped.Error(), "(2)") {
			t.Errorf("stopped = %v, want ErrListenFailures after 2, wrapping the 500", stopped)
		}
		if n := f.count(http.MethodGet); n != 4 {
			t.Errorf("%d GETs, want 4", n)
		}
		if m := readMsg(t, c); m.Method != "notifications/tools/list_changed" {
			t.Errorf("the listener delivered %v", m)
		}
	})
	t.Run("connection error then 503", func(t *testing.T) {
		f := getScript(t,
			func(w http.ResponseWriter, r *http.Request, in rec) {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
			},
			status(http.StatusServiceUnavailable),
		)
		c := listening(t, f, nil)
		stopped := waitListener(t, c)
		if !errors.Is(stopped, ErrListenFailures) || statusCode(stopped) != 503 {
			t.Errorf("stopped = %v", stopped)
		}
		if n := f.count(http.MethodGet); n != 2 {
			t.Errorf("%d GETs, want 2", n)
		}
	})
	t.Run("401 and 404 count", func(t *testing.T) {
		f := getScript(t, status(http.StatusUnauthorized), status(http.StatusNotFound))
		c := listening(t, f, nil)
		if stopped := waitListener(t, c); !errors.Is(stopped, ErrListenFailures) || statusCode(stopped) != 404 {
			t.Errorf("stopped = %v", stopped)
		}
	})
	t.Run("a drop after messages starts a new series", func(t *testing.T) {
		f := getScript(t,
			status(http.StatusInternalServerError),
			func(w http.ResponseWriter, r *http.Request, in rec) {
				hijackCut(t, w, "id: d_1\ndata: "+listMsg+"\n\n")
			},
			status(http.StatusInternalServerError),
		)
		c := listening(t, f, nil)
		if stopped := waitListener(t, c); !errors.Is(stopped, ErrListenFailures) {
			t.Errorf("stopped = %v", stopped)
		}
		if n := f.count(http.MethodGet); n != 3 {
			t.Errorf("%d GETs, want 3", n)
		}
		if g := f.of(http.MethodGet); g[2].Header.Get("Last-Event-ID") != "d_1" {
			t.Errorf("GET 3 Last-Event-ID %q", g[2].Header.Get("Last-Event-ID"))
		}
	})
	t.Run("MaxListenFailures", func(t *testing.T) {
		f := getScript(t, status(500), status(500), status(500))
		c := listening(t, f, &Options{MaxListenFailures: 3})
		if stopped := waitListener(t, c); !errors.Is(stopped, ErrListenFailures) || !strings.Contains(stopped.Error(), "(3)") {
			t.Errorf("stopped = %v", stopped)
		}
		if n := f.count(http.MethodGet); n != 3 {
			t.Errorf("%d GETs, want 3", n)
		}
	})
}

// TestListen405: 405 stops the listener at once, after one GET.
func TestListen405(t *testing.T) {
	f := getScript(t, status(http.StatusMethodNotAllowed))
	clock := newWaitClock(true)
	c := listeningOn(t, f, clock)
	stopped := waitListener(t, c)
	if !errors.Is(stopped, ErrListen405) {
		t.Errorf("stopped = %v, want ErrListen405", stopped)
	}
	if d := clock.Delays(); len(d) != 0 {
		t.Errorf("the listener waited %v before stopping on 405, want no wait", d)
	}
	if n := f.count(http.MethodGet); n != 1 {
		t.Errorf("%d GETs, want 1", n)
	}
	c.Listen() // a stopped listener is not restarted
	if running, _ := c.ListenerStatus(); running {
		t.Error("Listen restarted a stopped listener")
	}
}

// TestListenIdleTimeout: an attempt that receives no byte for
// ListenIdleTimeout fails, whether it waits for headers or for events;
// bytes (keep-alive comments) re-arm the timer. The idle timers run on a
// manual clock that the server script advances, so the timeout elapses
// exactly when the script says, however loaded the machine.
func TestListenIdleTimeout(t *testing.T) {
	const idle = 200 * time.Millisecond
	clock := newIdleClock()
	ended := make(chan string, 2)
	silent := func(headers bool) handlerFunc {
		return func(w http.ResponseWriter, r *http.Request, in rec) {
			if headers {
				sseStart(w)
			}
			before := clock.Fired()
			clock.Advance(idle - time.Millisecond)
			if n := clock.Fired() - before; n != 0 {
				t.Errorf("%d idle timers fired before the timeout", n)
			}
			clock.Advance(time.Millisecond)
			hold(r) // the client ends the request when its idle timer fires
			ended <- fmt.Sprintf("headers=%v fired=%d", headers, clock.Fired())
		}
	}
	f := getScript(t,
		func(w http.ResponseWriter, r *http.Request, in rec) {
			sseStart(w)
			// 5 × 3/4 of the timeout in all: without re-arming, the timer
			// armed when the GET was sent would fire on the second step.
			for range 5 {
				clock.DrainResets()
				sseRaw(w, ": keep-alive\n\n")
				select {
				case <-clock.Reset():
				case <-r.Context().Done():
					return
				}
				clock.Advance(idle * 3 / 4)
			}
		},
		silent(true),
		silent(false),
	)
	c := newConn(t, f, &Options{ListenIdleTimeout: idle})
	c.defaultRetry = 100 * time.Millisecond
	c.idleAfter = clock.AfterFunc
	c.Listen()
	stopped := waitListener(t, c)
	if !errors.Is(stopped, ErrListenFailures) || !errors.Is(stopped, ErrListenIdle) {
		t.Errorf("stopped = %v, want ErrListenFailures wrapping ErrListenIdle", stopped)
	}
	if n := f.count(http.MethodGet); n != 3 {
		t.Errorf("%d GETs, want 3 (the kept-alive stream is a success)", n)
	}
	for _, want := range []string{"headers=true fired=1", "headers=false fired=2"} {
		if got := recv(t, ended, "an idle attempt to end"); got != want {
			t.Errorf("idle attempt: %s, want %s", got, want)
		}
	}
}

// idleClock is a manual clock for the idle timers of a Conn (c.idleAfter),
// and for its ResponseGrace timer (c.graceAfter).
type idleClock struct {
	mu     sync.Mutex
	now    time.Duration
	timers []*manualIdleTimer
	fired  int
	resets chan struct{} // one token per Reset of an active timer
}

type manualIdleTimer struct {
	c      *idleClock
	at     time.Duration
	f      func()
	active bool
}

func newIdleClock() *idleClock { return &idleClock{resets: make(chan struct{}, 64)} }

func (c *idleClock) AfterFunc(d time.Duration, f func()) idleTimer {
	c.mu.Lock()
	defer c.mu.Unlock()
	tm := &manualIdleTimer{c: c, at: c.now + d, f: f, active: true}
	c.timers = append(c.timers, tm)
	return tm
}

func (tm *manualIdleTimer) Stop() bool {
	tm.c.mu.Lock()
	defer tm.c.mu.Unlock()
	was := tm.active
	tm.active = false
	return was
}

func (tm *manualIdleTimer) Reset(d time.Duration) bool {
	tm.c.mu.Lock()
	was := tm.active
	tm.at, tm.active = tm.c.now+d, true
	tm.c.mu.Unlock()
	select {
	case tm.c.resets <- struct{}{}:
	default:
	}
	return was
}

// Advance moves the clock and fires the timers now due, each in its own
// goroutine as time.AfterFunc does.
func (c *idleClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now += d
	var due []func()
	for _, tm := range c.timers {
		if tm.active && tm.at <= c.now {
			tm.active = false
			c.fired++
			due = append(due, tm.f)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		go f()
	}
}

// Fired reports how many timers have fired.
func (c *idleClock) Fired() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fired
}

// Reset returns the channel that receives a token on each timer Reset
// (the client read bytes).
func (c *idleClock) Reset() <-chan struct{} { return c.resets }

// DrainResets forgets the Resets seen so far.
func (c *idleClock) DrainResets() {
	for {
		select {
		case <-c.resets:
		default:
			return
		}
	}
}

// TestListenLastEventIDAndRetry: Last-Event-ID and the server's retry:
// persist across reconnects; retry: is honoured, with the MinRetry floor.
func TestListenLastEventIDAndRetry(t *testing.T) {
	f := getScript(t,
		events("retry: 300\nid: a1\ndata: "+listMsg+"\n\n"),
		events("retry: 10\nid: a2\ndata: "+listMsg+"\n\n"),
		events(": nothing\n\n"),
		status(http.StatusMethodNotAllowed),
	)
	clock := newWaitClock(true)
	c := listeningOn(t, f, clock)
	if stopped := waitListener(t, c); !errors.Is(stopped, ErrListen405) {
		t.Fatalf("stopped = %v", stopped)
	}
	g := f.of(http.MethodGet)
	if len(g) != 4 {
		t.Fatalf("%d GETs, want 4", len(g))
	}
	for i, want := range []string{"", "a1", "a2", "a2"} {
		if got := g[i].Header.Get("Last-Event-ID"); got != want {
			t.Errorf("GET %d Last-Event-ID %q, want %q", i+1, got, want)
		}
	}
	// retry: 300, then retry: 10 raised to MinRetry, and kept; the 405
	// stops the listener without a wait.
	if got, want := clock.Delays(), []time.Duration{300 * time.Millisecond, MinRetry, MinRetry}; !slices.Equal(got, want) {
		t.Errorf("the listener waited %v between the GETs, want %v", got, want)
	}
	for range 2 {
		if m := readMsg(t, c); m.Method != "notifications/tools/list_changed" {
			t.Errorf("delivered %v", m)
		}
	}
}

// TestListenDefaultRetry: without retry: the listener waits DefaultRetry.
func TestListenDefaultRetry(t *testing.T) {
	f := getScript(t, events("data: "+listMsg+"\n\n"), status(http.StatusMethodNotAllowed))
	clock := newWaitClock(true)
	c := newConn(t, f, nil)
	c.waitAfter = clock.After
	c.Listen()
	waitListener(t, c)
	if n := f.count(http.MethodGet); n != 2 {
		t.Fatalf("%d GETs", n)
	}
	if got, want := clock.Delays(), []time.Duration{DefaultRetry}; !slices.Equal(got, want) {
		t.Errorf("the listener waited %v before reconnecting, want DefaultRetry (%v)", got, want)
	}
}

// TestListenCleanCloseBackoff: consecutive clean ends without a message
// double the delay; a message resets it (typescript-sdk#2682).
func TestListenCleanCloseBackoff(t *testing.T) {
	f := getScript(t,
		events("retry: 100\n\n"),
		events("id: x\ndata:\n\n"), // a priming event is no message
		events(""),
		events("data: "+listMsg+"\n\n"),
		status(http.StatusMethodNotAllowed),
	)
	clock := newWaitClock(true)
	c := listeningOn(t, f, clock)
	waitListener(t, c)
	g := f.of(http.MethodGet)
	if len(g) != 5 {
		t.Fatalf("%d GETs, want 5", len(g))
	}
	ms := time.Millisecond
	if got, want := clock.Delays(), []time.Duration{100 * ms, 200 * ms, 400 * ms, 100 * ms}; !slices.Equal(got, want) {
		t.Errorf("the listener waited %v between the GETs, want %v", got, want)
	}
	if g[4].Header.Get("Last-Event-ID") != "x" {
		t.Errorf("Last-Event-ID %q", g[4].Header.Get("Last-Event-ID"))
	}
}

func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		n    int
		want time.Duration
	}{
		{time.Second, 0, time.Second},
		{time.Second, 1, 2 * time.Second},
		{time.Second, 4, 16 * time.Second},
		{time.Second, 5, MaxListenBackoff},
		{100 * time.Millisecond, 1000, MaxListenBackoff},
		{time.Minute, 3, time.Minute}, // a longer server retry: is kept
	} {
		if got := backoff(tc.d, tc.n); got != tc.want {
			t.Errorf("backoff(%v, %d) = %v, want %v", tc.d, tc.n, got, tc.want)
		}
	}
}

// TestListenCloseDuringDelay: Close stops a listener waiting out a long
// retry: at once. The wait is on a manual clock that never ends it, so
// Close returning at all shows that it ended the wait.
func TestListenCloseDuringDelay(t *testing.T) {
	f := getScript(t, events("retry: 60000\ndata: "+listMsg+"\n\n"))
	clock := newWaitClock(false)
	c := listeningOn(t, f, clock)
	readMsg(t, c)
	if w := clock.next(t); w.d != time.Minute {
		t.Errorf("the listener waits %v, want the server's retry: (1m)", w.d)
	}
	if err := closeConn(t, c); err != nil {
		t.Fatal(err)
	}
	if stopped := waitListener(t, c); !errors.Is(stopped, transport.ErrClosed) {
		t.Errorf("stopped = %v, want ErrClosed", stopped)
	}
	if n := f.count(http.MethodGet); n != 1 {
		t.Errorf("%d GETs", n)
	}
}

// TestListenCloseDuringStream: Close ends a listener reading a stream.
func TestListenCloseDuringStream(t *testing.T) {
	gone := make(chan struct{})
	f := getScript(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		sseStart(w)
		sseRaw(w, "data: "+listMsg+"\n\n")
		hold(r)
		close(gone)
	})
	c := listening(t, f, nil)
	readMsg(t, c)
	if err := closeConn(t, c); err != nil {
		t.Fatal(err)
	}
	recv(t, gone, "the server to see the GET end")
	if running, stopped := c.ListenerStatus(); running || !errors.Is(stopped, transport.ErrClosed) {
		t.Errorf("ListenerStatus = %v %v", running, stopped)
	}
}

// TestListenOversizedEvent: an event over MaxEventBytes is dropped and
// the listener reads on: Read returns a *transport.TooLargeError naming
// each (a notification, the response to 7) instead of leaving anyone
// waiting, and the next event arrives on the same GET.
func TestListenOversizedEvent(t *testing.T) {
	big := strings.Repeat("x", 2048)
	f := getScript(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		sseStart(w)
		sseRaw(w, "id: big\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"x\":\""+big+"\"}}\n\n")
		sseRaw(w, "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"x\":\""+big+"\"}}\n\n")
		sseRaw(w, "data: "+listMsg+"\n\n")
		hold(r)
	})
	c := listening(t, f, &Options{MaxEventBytes: 1024})
	readTooLarge(t, c, mcp.ID{}, true)
	readTooLarge(t, c, mcp.IntID(7), false)
	if m := readMsg(t, c); m.Method != "notifications/tools/list_changed" {
		t.Errorf("after the oversized events: %v", m)
	}
	if running, stopped := c.ListenerStatus(); !running {
		t.Errorf("the listener stopped: %v", stopped)
	}
	if n := f.count(http.MethodGet); n != 1 {
		t.Errorf("%d GETs, want 1", n)
	}
}

// TestListenNotAStream: a 200 that is not an event stream is a failure.
func TestListenNotAStream(t *testing.T) {
	f := getScript(t,
		func(w http.ResponseWriter, r *http.Request, in rec) { writeJSON(w, 200, `{}`) },
		func(w http.ResponseWriter, r *http.Request, in rec) { writeJSON(w, 200, `{}`) },
	)
	c := listening(t, f, nil)
	if stopped := waitListener(t, c); !errors.Is(stopped, ErrListenFailures) || !strings.Contains(stopped.Error(), "application/json") {
		t.Errorf("stopped = %v", stopped)
	}
}
