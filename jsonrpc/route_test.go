package jsonrpc

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// routeTap is a transport that records every Message written through it
// (copies: Write may not retain them) before handing it to next, if any.
type routeTap struct {
	next    transport.Conn
	written chan transport.Message
}

func (r *routeTap) Read(ctx context.Context) ([]byte, error) { return r.next.Read(ctx) }

func (r *routeTap) Write(ctx context.Context, m transport.Message) error {
	r.written <- transport.Message{Data: bytes.Clone(m.Data), Related: m.Related, Final: m.Final, Header: slices.Clone(m.Header), Local: m.Local}
	if r.next == nil {
		return nil
	}
	return r.next.Write(ctx, m)
}

func (r *routeTap) Close() error {
	if r.next == nil {
		return nil
	}
	return r.next.Close()
}

// tapped starts a Conn over a routeTap on a memory pair and returns the
// tap and the raw other end.
func tapped(t *testing.T, opts ConnOptions) (*Conn, *routeTap, transport.Conn) {
	t.Helper()
	ta, tb := memory.NewPair()
	tap := &routeTap{next: ta, written: make(chan transport.Message, 16)}
	c := NewConn(tap, &opts)
	c.Start()
	t.Cleanup(func() {
		closeWithin(t, c)
		tb.Close()
	})
	return c, tap, tb
}

// written returns the next message the Conn wrote, decoded, and its route.
func written(t *testing.T, tap *routeTap) (*Message, transport.Message) {
	t.Helper()
	w := wait(t, tap.written, "a write")
	m, e := decode(w.Data, Limits{})
	if e != nil {
		t.Fatalf("the Conn wrote an invalid message %s: %v", w.Data, e)
	}
	return m, w
}

// TestRouteOfWrites: the Conn fills each Message's route itself — a
// response relates to its request and is final; what a handler sends
// with its context, or names explicitly with NotifyWith, relates to the
// request it handles; anything else relates to nothing.
func TestRouteOfWrites(t *testing.T) {
	leakCheck(t)
	var c *Conn
	other := NewConn(&routeTap{written: make(chan transport.Message, 4)}, nil)
	t.Cleanup(func() { closeWithin(t, other) })
	c, tap, peer := tapped(t, ConnOptions{Handler: funcs{req: func(ctx context.Context, m *Message) (any, error) {
		if err := c.Notify(ctx, "implicit", nil); err != nil {
			return nil, err
		}
		if err := c.NotifyWith(context.Background(), "explicit", nil, CallOptions{Related: m.ID}); err != nil {
			return nil, err
		}
		if err := c.Notify(context.Background(), "unrelated", nil); err != nil {
			return nil, err
		}
		// Another Conn's handler context says nothing about this one.
		if err := other.Notify(ctx, "elsewhere", nil); err != nil {
			return nil, err
		}
		return "done", nil
	}}})
	send(t, peer, `{"jsonrpc":"2.0","id":7,"method":"work"}`)
	want := []struct {
		method  string
		related mcp.ID
		final   bool
	}{
		{"implicit", mcp.IntID(7), false},
		{"explicit", mcp.IntID(7), false},
		{"unrelated", mcp.ID{}, false},
		{"", mcp.IntID(7), true}, // the response
	}
	for _, w := range want {
		m, got := written(t, tap)
		if m.Method != w.method || got.Related != w.related || got.Final != w.final || got.Header != nil {
			t.Errorf("wrote %s with route (%v, final %v, header %v); want %q with (%v, final %v)",
				got.Data, got.Related, got.Final, got.Header, w.method, w.related, w.final)
		}
		if w.method != "" {
			recv(t, peer)
		}
	}
	if m := recv(t, peer); !m.IsResponse() || string(m.Result) != `"done"` {
		t.Fatalf("response = %+v", m)
	}
	if got := wait(t, other.t.(*routeTap).written, "the other Conn's write"); got.Related.IsValid() {
		t.Errorf("a notification sent on another Conn with this handler's context relates to %v", got.Related)
	}
}

// TestRouteOfCancelledCall: CallWith's request carries its route and
// headers; the cancellation it sends when its context ends keeps the
// route (it follows the request it cancels) and carries no headers.
func TestRouteOfCancelledCall(t *testing.T) {
	leakCheck(t)
	c, tap, peer := tapped(t, ConnOptions{})
	ctx, cancel := context.WithCancel(ctxGuard(t))
	defer cancel()
	hdr := []transport.Header{{Name: "Mcp-Param-Region", Value: "eu"}}
	done := make(chan error, 1)
	go func() {
		done <- c.CallWith(ctx, "ask", nil, nil, CallOptions{Related: mcp.StringID("r1"), Header: hdr})
	}()
	m, got := written(t, tap)
	if m.Method != "ask" || got.Related != mcp.StringID("r1") || got.Final || !slices.Equal(got.Header, hdr) {
		t.Errorf("request %s written with (%v, final %v, header %v)", got.Data, got.Related, got.Final, got.Header)
	}
	recv(t, peer)
	cancel()
	m, got = written(t, tap)
	if m.Method != MethodCancelled || got.Related != mcp.StringID("r1") || got.Final || got.Header != nil {
		t.Errorf("cancellation %s written with (%v, final %v, header %v)", got.Data, got.Related, got.Final, got.Header)
	}
	if n := recv(t, peer); n.Method != MethodCancelled {
		t.Fatalf("peer read %+v", n)
	}
	if err := wait(t, done, "CallWith to return"); err != context.Canceled {
		t.Errorf("CallWith = %v, want context.Canceled", err)
	}
}

// TestLocalWrites: NotifyWith marks a message Local only when asked;
// nothing else the Conn writes is.
func TestLocalWrites(t *testing.T) {
	leakCheck(t)
	c, tap, peer := tapped(t, ConnOptions{})
	for _, tc := range []struct {
		local bool
		send  func() error
	}{
		{true, func() error { return c.NotifyWith(context.Background(), "change", nil, CallOptions{Local: true}) }},
		{false, func() error { return c.Notify(context.Background(), "plain", nil) }},
	} {
		errc := make(chan error, 1)
		go func() { errc <- tc.send() }()
		if _, w := written(t, tap); w.Local != tc.local {
			t.Errorf("wrote %s with Local %v, want %v", w.Data, w.Local, tc.local)
		}
		recv(t, peer)
		if err := wait(t, errc, "the notification to be sent"); err != nil {
			t.Fatal(err)
		}
	}
}
