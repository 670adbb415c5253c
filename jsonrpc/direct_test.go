package jsonrpc

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// responderConn answers each request it is written with answer(id),
// offered first to the Conn's deliver (as the Streamable HTTP client does
// with a JSON answer) and, when declined, sent through its memory pair
// for Read.
type responderConn struct {
	transport.Conn                // the Conn's end of a memory pair
	peer           transport.Conn // the other end
	answer         func(id string) string
	deliver        func([]byte) bool
	direct, queued atomic.Int32
}

func (r *responderConn) SetResponder(deliver func([]byte) bool) { r.deliver = deliver }

func (r *responderConn) Write(ctx context.Context, m transport.Message) error {
	req, e := decode(m.Data, Limits{})
	if e != nil || !req.IsRequest() {
		return nil
	}
	data := []byte(r.answer(req.ID.String()))
	if r.deliver != nil && r.deliver(data) {
		r.direct.Add(1)
		return nil
	}
	r.queued.Add(1)
	return r.peer.Write(ctx, transport.Message{Data: data})
}

// TestResponderDelivers: a transport that implements Responder hands a
// response to its call on the writer's goroutine (Observe sees it), and
// whatever deliver declines (a notification, a response without an id,
// bytes that do not decode, a message over the Limits) still reaches the
// Conn through Read, as before.
func TestResponderDelivers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer string // %s: the request's id
		direct bool
	}{
		{"result", `{"jsonrpc":"2.0","id":%s,"result":{"ok":true}}`, true},
		{"error", `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`, true},
		{"too deep", `{"jsonrpc":"2.0","id":%s,"result":{"a":{"b":{"c":{}}}}}`, false},
		{"not JSON", `{"jsonrpc":"2.0","id":%s,"result":`, false},
		{"no id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}`, false},
		{"a notification", `{"jsonrpc":"2.0","method":"notifications/message","params":{"x":%s}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := memory.NewPair()
			rc := &responderConn{Conn: a, peer: b, answer: func(id string) string { return fmt.Sprintf(tc.answer, id) }}
			seen := make(chan struct{}, 4)
			c := NewConn(rc, &ConnOptions{Limits: Limits{MaxDepth: 3}, Observe: func(in bool, _ []byte) {
				if in {
					seen <- struct{}{}
				}
			}})
			c.Start()
			defer func() {
				closeWithin(t, c)
				b.Close()
			}()
			if rc.deliver == nil {
				t.Fatal("Start did not hand the transport its deliver function")
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var res struct {
				OK bool `json:"ok"`
			}
			errc := make(chan error, 1)
			go func() { errc <- c.Call(ctx, "tools/call", nil, &res) }()
			wait(t, seen, "the answer") // observed, directly or through Read
			if !tc.direct {
				cancel() // a declined answer may answer nothing: end the call
			}
			err := wait(t, errc, "the call's end")
			if got := rc.direct.Load() == 1; got != tc.direct {
				t.Fatalf("delivered directly: %v, want %v (queued %d)", got, tc.direct, rc.queued.Load())
			}
			switch tc.name {
			case "result":
				if err != nil || !res.OK {
					t.Fatalf("Call: %v %+v", err, res)
				}
			case "error":
				if e, ok := AsError(err); !ok || e.Code != mcp.CodeMethodNotFound {
					t.Fatalf("Call: %v, want the peer's -32601", err)
				}
			default:
				if err == nil {
					t.Fatal("Call succeeded on an answer it cannot use")
				}
			}
		})
	}
}
