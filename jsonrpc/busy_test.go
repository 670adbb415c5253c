package jsonrpc

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// These tests fill every in-flight slot with handlers that block, and
// check what still gets through: pings, responses to this side's calls,
// cancellations.

// fill sends n "block" requests (ids 1..n) and waits until want of them
// run.
func fill(t *testing.T, bl *blocker, raw interface {
	Write(context.Context, transport.Message) error
}, n, want int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		if err := raw.Write(ctxGuard(t), transport.Message{Data: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"block"}`, i)}); err != nil {
			t.Fatal(err)
		}
	}
	for range want {
		wait(t, bl.started, "the handlers to start")
	}
}

// TestConnPingWhileSlotsBusy: a ping is answered while every slot is held
// by a handler that does not return, and while requests wait behind them.
func TestConnPingWhileSlotsBusy(t *testing.T) {
	for _, queued := range []int{0, 1} {
		t.Run(fmt.Sprintf("queued=%d", queued), func(t *testing.T) {
			leakCheck(t)
			const slots = 3
			bl := newBlocker()
			_, raw := rawPeer(t, ConnOptions{Handler: bl.handler(), MaxInFlight: slots})
			fill(t, bl, raw, slots+queued, slots)
			for i := range 3 {
				send(t, raw, fmt.Sprintf(`{"jsonrpc":"2.0","id":"ping-%d","method":"ping"}`, i))
				m := recv(t, raw)
				if m.ID != mcp.StringID(fmt.Sprintf("ping-%d", i)) || string(m.Result) != `"pong"` {
					t.Fatalf("ping %d: got %v %s %v", i, m.ID, m.Result, m.Error)
				}
			}
			select {
			case <-bl.finished:
				t.Fatal("a blocked handler ended")
			default:
			}
			// A ping may not reuse the id of a request in flight.
			send(t, raw, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			if m := recv(t, raw); m.ID != mcp.IntID(1) || m.Error == nil || m.Error.Code != mcp.CodeInvalidRequest {
				t.Fatalf("ping with the id of a request in flight: got %v %v", m.ID, m.Error)
			}
			for range slots + queued {
				bl.release <- struct{}{}
				if m := recv(t, raw); string(m.Result) != `"released"` {
					t.Fatalf("got %v %s %v", m.ID, m.Result, m.Error)
				}
			}
		})
	}
}

// TestConnResponsesWhileSlotsBusy: the handler in the only slot waits for
// the peer's answer to its own call while the peer's next request waits
// for the slot. The answer must still be read — otherwise neither side
// moves again.
func TestConnResponsesWhileSlotsBusy(t *testing.T) {
	leakCheck(t)
	var c *Conn
	h := funcs{req: func(ctx context.Context, m *Message) (any, error) {
		var s string
		err := c.Call(ctx, "question", nil, &s)
		return s, err
	}}
	c, raw := rawPeer(t, ConnOptions{Handler: h, MaxInFlight: 1})
	send(t, raw, `{"jsonrpc":"2.0","id":"a","method":"ask"}`)
	q1 := recv(t, raw)
	send(t, raw, `{"jsonrpc":"2.0","id":"b","method":"ask"}`) // waits for the slot
	out, _ := encodeResult(q1.ID, "first")
	send(t, raw, string(out))
	// The answer to "a" and the question of "b" (which takes the slot "a"
	// frees) may come in either order.
	var q2 *Message
	answered := false
	for range 2 {
		switch m := recv(t, raw); {
		case m.ID == mcp.StringID("a") && string(m.Result) == `"first"`:
			answered = true
		case m.Method == "question" && q2 == nil:
			q2 = m
		default:
			t.Fatalf("first request: %v %s %v", m.ID, m.Result, m.Error)
		}
	}
	if !answered || q2 == nil {
		t.Fatal("want the answer to a and the question of b")
	}
	out, _ = encodeResult(q2.ID, "second")
	send(t, raw, string(out))
	if m := recv(t, raw); m.ID != mcp.StringID("b") || string(m.Result) != `"second"` {
		t.Fatalf("second request: %v %s %v", m.ID, m.Result, m.Error)
	}
}

// TestConnCancelWhileSlotsBusy: the peer can cancel the request holding the
// only slot while another waits for it; the waiting one then runs, and a
// waiting request it cancels never runs.
func TestConnCancelWhileSlotsBusy(t *testing.T) {
	leakCheck(t)
	bl := newBlocker()
	_, raw := rawPeer(t, ConnOptions{Handler: bl.handler(), MaxInFlight: 1})
	fill(t, bl, raw, 3, 1) // 1 runs, 2 and 3 wait
	send(t, raw, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
	send(t, raw, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	if cause := wait(t, bl.finished, "the first handler"); cause != errPeerCancelled {
		t.Fatalf("first handler ended with %v, want the peer's cancellation", cause)
	}
	if m := wait(t, bl.started, "the third request"); m.ID != mcp.IntID(3) {
		t.Fatalf("request %v started, want 3 (2 was cancelled while waiting)", m.ID)
	}
	bl.release <- struct{}{}
	if m := recv(t, raw); m.ID != mcp.IntID(3) || string(m.Result) != `"released"` {
		t.Fatalf("got %v %s %v, want only the answer to 3", m.ID, m.Result, m.Error)
	}
}

// TestConnPingFloodWhileSlotsBusy: pings take neither a slot nor a place
// in the queue, and start no goroutine: each is answered before the next
// message is read, so a flood of them holds nothing.
func TestConnPingFloodWhileSlotsBusy(t *testing.T) {
	leakCheck(t)
	const slots = 2
	bl := newBlocker()
	c, raw := rawPeer(t, ConnOptions{Handler: bl.handler(), MaxInFlight: slots})
	fill(t, bl, raw, slots+1, slots)
	for i := range 1000 {
		send(t, raw, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 100+i))
		if m := recv(t, raw); m.ID != mcp.IntID(int64(100+i)) || string(m.Result) != `"pong"` {
			t.Fatalf("ping %d: got %v %s %v", i, m.ID, m.Result, m.Error)
		}
	}
	c.mu.Lock()
	running, queued, inbound := c.running, len(c.queue), len(c.inbound)
	c.mu.Unlock()
	if running != slots || queued != 1 || inbound != slots+1 {
		t.Errorf("after the flood: %d running, %d queued, %d ids held; want %d, 1, %d", running, queued, inbound, slots, slots+1)
	}
	for range slots + 1 {
		bl.release <- struct{}{}
		recv(t, raw)
	}
}

// TestConnInitializeBeforeNext: the requests that follow initialize on the
// stream run after it is answered, even when the client wrote them at once
// (a pipe): each sees it done.
func TestConnInitializeBeforeNext(t *testing.T) {
	leakCheck(t)
	const rounds = 200
	msgs := make([]string, 0, 2*rounds)
	for i := range rounds {
		msgs = append(msgs, fmt.Sprintf(`{"jsonrpc":"2.0","id":"i%d","method":"initialize"}`, i),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":"n%d","method":"next"}`, i))
	}
	f := newFinite(msgs...)
	var mu sync.Mutex
	initialized := 0
	h := funcs{req: func(ctx context.Context, m *Message) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		if m.Method == "initialize" {
			initialized++
		}
		return initialized, nil
	}}
	c := NewConn(f, &ConnOptions{Handler: h})
	c.Start()
	waitConn(t, c)
	got := f.answers(t)
	for i := range rounds {
		m := got[mcp.StringID(fmt.Sprintf("n%d", i))]
		var n int
		if m == nil || json.Unmarshal(m.Result, &n) != nil || n < i+1 {
			t.Fatalf("the request after initialize %d saw %d initializations, want at least %d (answer %v)", i, n, i+1, m)
		}
	}
}
