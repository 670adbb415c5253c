package memory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/transport"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const hangGuard = 10 * time.Second

func ctxGuard(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	return ctx
}

func TestPairBothDirections(t *testing.T) {
	defer goleak.VerifyNone(t)
	a, b := NewPair()
	defer a.Close()
	defer b.Close()
	ctx := ctxGuard(t)
	for _, dir := range []struct {
		name     string
		from, to transport.Conn
	}{{"a->b", a, b}, {"b->a", b, a}} {
		const n = 100
		errc := make(chan error, 1)
		go func() {
			for i := range n {
				if err := dir.from.Write(ctx, transport.Message{Data: fmt.Appendf(nil, `{"i":%d}`, i)}); err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
		for i := range n {
			got, err := dir.to.Read(ctx)
			if err != nil {
				t.Fatalf("%s Read %d: %v", dir.name, i, err)
			}
			if want := fmt.Sprintf(`{"i":%d}`, i); string(got) != want {
				t.Fatalf("%s message %d = %s, want %s (order or content)", dir.name, i, got, want)
			}
		}
		if err := <-errc; err != nil {
			t.Fatalf("%s Write: %v", dir.name, err)
		}
	}
}

// TestWriteCopies: the reader gets its own copy, so the writer may reuse
// its buffer as soon as Write returns.
func TestWriteCopies(t *testing.T) {
	defer goleak.VerifyNone(t)
	a, b := NewPair()
	defer a.Close()
	defer b.Close()
	buf := []byte(`{"v":1}`)
	got := make(chan []byte, 1)
	go func() {
		m, _ := b.Read(context.Background())
		got <- m
	}()
	if err := a.Write(ctxGuard(t), transport.Message{Data: buf}); err != nil {
		t.Fatal(err)
	}
	copy(buf, `{"v":2}`)
	select {
	case m := <-got:
		if string(m) != `{"v":1}` {
			t.Errorf("reader saw %s after the writer reused its buffer", m)
		}
	case <-time.After(hangGuard):
		t.Fatal("Read hung")
	}
}

func TestWriteWaitsForReader(t *testing.T) {
	defer goleak.VerifyNone(t)
	a, b := NewPair()
	defer a.Close()
	defer b.Close()
	// Without a reader, Write can only end with its ctx.
	short, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := a.Write(short, transport.Message{Data: []byte("{}")}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Write without a reader = %v, want DeadlineExceeded", err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Write(context.Background(), transport.Message{Data: []byte("{}")}) }()
	if _, err := b.Read(ctxGuard(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hangGuard):
		t.Fatal("Write hung after Read")
	}
}

func TestCloseGivesPeerEOF(t *testing.T) {
	defer goleak.VerifyNone(t)
	a, b := NewPair()
	defer b.Close()
	readErr := make(chan error, 1)
	go func() {
		_, err := b.Read(context.Background())
		readErr <- err
	}()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-readErr:
		if err != io.EOF {
			t.Errorf("peer's blocked Read = %v, want io.EOF", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("peer's Read not unblocked by Close")
	}
	// EOF is sticky, and the closed end reports ErrClosed.
	if _, err := b.Read(ctxGuard(t)); err != io.EOF {
		t.Errorf("peer Read = %v, want io.EOF", err)
	}
	if _, err := a.Read(ctxGuard(t)); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Read on the closed end = %v, want ErrClosed", err)
	}
	if err := a.Write(ctxGuard(t), transport.Message{Data: []byte("{}")}); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Write on the closed end = %v, want ErrClosed", err)
	}
	// Writing to a closed peer fails instead of blocking.
	if err := b.Write(ctxGuard(t), transport.Message{Data: []byte("{}")}); err == nil {
		t.Error("Write to a closed peer succeeded")
	}
	if err := a.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestCloseUnblocksOwnReadAndWrite(t *testing.T) {
	defer goleak.VerifyNone(t)
	a, b := NewPair()
	defer b.Close()
	errs := make(chan error, 2)
	go func() { _, err := a.Read(context.Background()); errs <- err }()
	go func() { errs <- a.Write(context.Background(), transport.Message{Data: []byte("{}")}) }()
	a.Close()
	for range 2 {
		select {
		case err := <-errs:
			if !errors.Is(err, transport.ErrClosed) {
				t.Errorf("blocked call after own Close = %v, want ErrClosed", err)
			}
		case <-time.After(hangGuard):
			t.Fatal("Close did not unblock a pending call")
		}
	}
}

func TestWriteToClosedPeerWhileBlocked(t *testing.T) {
	defer goleak.VerifyNone(t)
	a, b := NewPair()
	defer a.Close()
	errc := make(chan error, 1)
	go func() { errc <- a.Write(context.Background(), transport.Message{Data: []byte("{}")}) }()
	b.Close()
	select {
	case err := <-errc:
		if err == nil {
			t.Error("Write blocked on a peer that closed returned nil")
		}
	case <-time.After(hangGuard):
		t.Fatal("peer Close did not unblock Write")
	}
}

func TestContextCancellation(t *testing.T) {
	defer goleak.VerifyNone(t)
	a, b := NewPair()
	defer a.Close()
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 2)
	go func() { _, err := a.Read(ctx); errs <- err }()
	go func() { errs <- a.Write(ctx, transport.Message{Data: []byte("{}")}) }()
	// Nobody writes to a or reads from b: both calls can only end with
	// ctx.
	cancel()
	for range 2 {
		select {
		case err := <-errs:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("blocked call = %v, want context.Canceled", err)
			}
		case <-time.After(hangGuard):
			t.Fatal("ctx cancellation did not unblock")
		}
	}
}

func TestContextDeadline(t *testing.T) {
	defer goleak.VerifyNone(t)
	a, b := NewPair()
	defer a.Close()
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := a.Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Read = %v, want DeadlineExceeded", err)
	}
	if err := a.Write(ctx, transport.Message{Data: []byte("{}")}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Write = %v, want DeadlineExceeded", err)
	}
	// The pair still works.
	go func() { _ = a.Write(context.Background(), transport.Message{Data: []byte(`{"ok":1}`)}) }()
	if m, err := b.Read(ctxGuard(t)); err != nil || !bytes.Equal(m, []byte(`{"ok":1}`)) {
		t.Errorf("Read after timeouts = %s, %v", m, err)
	}
}

func TestConcurrentWriters(t *testing.T) {
	defer goleak.VerifyNone(t)
	a, b := NewPair()
	defer a.Close()
	defer b.Close()
	const writers, each = 20, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := a.Write(context.Background(), transport.Message{Data: fmt.Appendf(nil, "%d-%d", w, i)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	seen := map[string]bool{}
	for range writers * each {
		m, err := b.Read(ctxGuard(t))
		if err != nil {
			t.Fatal(err)
		}
		if seen[string(m)] {
			t.Fatalf("message %s delivered twice", m)
		}
		seen[string(m)] = true
	}
	wg.Wait()
	if len(seen) != writers*each {
		t.Errorf("got %d distinct messages, want %d", len(seen), writers*each)
	}
}
