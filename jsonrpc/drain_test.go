package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// finite is a transport whose input is a fixed list of messages followed
// by the end of input (io.EOF), like standard input fed by a file or a
// pipe the client has closed. eof is closed when the Conn reads the end.
// When hold is set, the end waits for it to close. Writes are recorded.
type finite struct {
	hold    chan struct{}
	mu      sync.Mutex
	in      []string
	out     [][]byte
	eof     chan struct{}
	eofOnce sync.Once
	closed  chan struct{}
	cOnce   sync.Once
}

func newFinite(msgs ...string) *finite {
	return &finite{in: msgs, eof: make(chan struct{}), closed: make(chan struct{})}
}

func (f *finite) Read(ctx context.Context) ([]byte, error) {
	select {
	case <-f.closed:
		return nil, transport.ErrClosed
	default:
	}
	f.mu.Lock()
	if len(f.in) > 0 {
		m := f.in[0]
		f.in = f.in[1:]
		f.mu.Unlock()
		return []byte(m), nil
	}
	f.mu.Unlock()
	if f.hold != nil {
		select {
		case <-f.hold:
		case <-f.closed:
			return nil, transport.ErrClosed
		}
	}
	f.eofOnce.Do(func() { close(f.eof) })
	return nil, io.EOF
}

func (f *finite) Write(ctx context.Context, m transport.Message) error {
	msg := m.Data
	select {
	case <-f.closed:
		return transport.ErrClosed
	default:
	}
	f.mu.Lock()
	f.out = append(f.out, append([]byte(nil), msg...))
	f.mu.Unlock()
	return nil
}

func (f *finite) Close() error {
	f.cOnce.Do(func() { close(f.closed) })
	return nil
}

// answers returns the responses written, by id.
func (f *finite) answers(t *testing.T) map[mcp.ID]*Message {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[mcp.ID]*Message)
	for _, raw := range f.out {
		m, e := decode(raw, Limits{})
		if e != nil {
			t.Fatalf("invalid message written %s: %v", raw, e)
		}
		if m.IsResponse() {
			if _, dup := out[m.ID]; dup {
				t.Errorf("two answers to id %s", m.ID)
			}
			out[m.ID] = m
		}
	}
	return out
}

func waitConn(t *testing.T, c *Conn) error {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- c.Wait() }()
	return wait(t, errc, "the Conn to end")
}

// TestConnEOFDrain: at the end of input the Conn answers every request it
// has already read — running, and queued behind MaxInFlight — and handles
// the notifications read before it, then ends with io.EOF.
func TestConnEOFDrain(t *testing.T) {
	leakCheck(t)
	const n = 5
	msgs := []string{`{"jsonrpc":"2.0","method":"note"}`}
	for i := range n {
		msgs = append(msgs, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"slow"}`, i))
	}
	msgs = append(msgs, `{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	f := newFinite(msgs...)
	var notes sync.WaitGroup
	notes.Add(1)
	h := funcs{
		req: func(ctx context.Context, m *Message) (any, error) {
			if m.Method == "ping" {
				return struct{}{}, nil
			}
			<-f.eof // still running when the input ends; ignores ctx
			return "done", nil
		},
		note: func(ctx context.Context, m *Message) { notes.Done() },
	}
	c := NewConn(f, &ConnOptions{Handler: h, MaxInFlight: 2, DrainTimeout: time.Hour})
	c.Start()
	if err := waitConn(t, c); !IsEOF(err) {
		t.Fatalf("Wait = %v, want io.EOF", err)
	}
	notes.Wait()
	got := f.answers(t)
	for i := range n {
		m := got[mcp.IntID(int64(i))]
		if m == nil || m.Error != nil || string(m.Result) != `"done"` {
			t.Errorf("request %d: answer %v, want \"done\"", i, m)
		}
	}
	if m := got[mcp.StringID("p")]; m == nil || string(m.Result) != `{}` {
		t.Errorf("ping: answer %v", m)
	}
}

// TestConnEOFFailsPendingCalls: a call this side made (a server→client
// request) can never be answered once the peer's input has ended: it fails
// at once, so that the handler waiting on it ends and answers.
func TestConnEOFFailsPendingCalls(t *testing.T) {
	leakCheck(t)
	f := newFinite(`{"jsonrpc":"2.0","id":1,"method":"ask"}`)
	var c *Conn
	callErr := make(chan error, 2)
	h := funcs{req: func(ctx context.Context, m *Message) (any, error) {
		err := c.Call(ctx, "question", nil, nil) // never answered
		callErr <- err
		callErr <- c.Call(ctx, "another", nil, nil) // after the end
		return nil, err
	}}
	c = NewConn(f, &ConnOptions{Handler: h, DrainTimeout: time.Hour})
	c.Start()
	if err := waitConn(t, c); !IsEOF(err) {
		t.Fatalf("Wait = %v, want io.EOF", err)
	}
	for range 2 {
		if err := wait(t, callErr, "the calls"); !errors.Is(err, ErrClosed) || !IsEOF(err) {
			t.Errorf("Call after the end of input = %v, want ErrClosed and io.EOF", err)
		}
	}
	if m := f.answers(t)[mcp.IntID(1)]; m == nil || m.Error == nil || m.Error.Code != mcp.CodeInternalError {
		t.Errorf("answer = %v, want the handler's error", m)
	}
}

// TestConnEOFDrainTimeout: a handler that never returns does not keep the
// Conn past DrainTimeout: its request is answered with an error, the
// others with their results, and the Conn ends.
func TestConnEOFDrainTimeout(t *testing.T) {
	leakCheck(t)
	f := newFinite(`{"jsonrpc":"2.0","id":1,"method":"stuck"}`, `{"jsonrpc":"2.0","id":2,"method":"quick"}`,
		`{"jsonrpc":"2.0","id":3,"method":"queued"}`)
	f.hold = make(chan struct{})
	release, exited := make(chan struct{}), make(chan struct{})
	h := funcs{req: func(ctx context.Context, m *Message) (any, error) {
		switch m.Method {
		case "stuck":
			defer close(exited)
			<-release // ignores ctx
			return "late", nil
		case "queued":
			// Starts once "quick" has finished (its slot): let the input end.
			close(f.hold)
			<-ctx.Done() // ends only when cancelled
			return "late", nil
		}
		return "quick", nil
	}}
	// The timeout is what is tested, not a margin: nothing waits on it.
	c := NewConn(f, &ConnOptions{Handler: h, MaxInFlight: 2, DrainTimeout: time.Millisecond, ShutdownTimeout: time.Millisecond})
	c.Start()
	wait(t, c.Done(), "the Conn to end")
	if !IsEOF(c.Err()) {
		t.Fatalf("Err = %v, want io.EOF", c.Err())
	}
	got := f.answers(t)
	for _, id := range []int64{1, 3} {
		if m := got[mcp.IntID(id)]; m == nil || m.Error == nil || m.Error.Code != mcp.CodeInternalError {
			t.Errorf("request %d: answer %v, want an internal error", id, m)
		}
	}
	if m := got[mcp.IntID(2)]; m == nil || string(m.Result) != `"quick"` {
		t.Errorf("quick request: answer %v", m)
	}
	close(release)
	wait(t, exited, "the stuck handler")
	waitConn(t, c)
	waitHandlers(t, c)
	if n := len(f.answers(t)); n != 3 {
		t.Errorf("%d answers, want 3 (no late answer)", n)
	}
}

// TestConnEOFClosedDuringDrain: Close during the drain ends it at once.
func TestConnEOFClosedDuringDrain(t *testing.T) {
	leakCheck(t)
	f := newFinite(`{"jsonrpc":"2.0","id":1,"method":"wait"}`)
	started := make(chan struct{})
	h := funcs{req: func(ctx context.Context, m *Message) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	c := NewConn(f, &ConnOptions{Handler: h, DrainTimeout: time.Hour})
	c.Start()
	wait(t, started, "the handler")
	wait(t, f.eof, "the end of input")
	closeWithin(t, c)
	if err := c.Err(); !errors.Is(err, ErrClosed) {
		t.Errorf("Err = %v, want ErrClosed", err)
	}
}

// TestConnNoDrain: a negative DrainTimeout ends the Conn at the end of
// input, as the transport's end.
func TestConnNoDrain(t *testing.T) {
	leakCheck(t)
	f := newFinite(`{"jsonrpc":"2.0","id":1,"method":"wait"}`)
	h := funcs{req: func(ctx context.Context, m *Message) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	c := NewConn(f, &ConnOptions{Handler: h, DrainTimeout: -1})
	c.Start()
	if err := waitConn(t, c); !IsEOF(err) {
		t.Fatalf("Wait = %v, want io.EOF", err)
	}
	if n := len(f.answers(t)); n != 0 {
		t.Errorf("%d answers written, want none", n)
	}
}
