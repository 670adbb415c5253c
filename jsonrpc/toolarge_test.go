package jsonrpc

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/rpccodec"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

func TestIdentity(t *testing.T) {
	big := strings.Repeat("x", 2*transport.TooLargeEdge)
	for _, tc := range []struct {
		name, msg        string
		id               mcp.ID
		method, response bool
	}{
		{"id first", `{"jsonrpc":"2.0","id":7,"result":{"pad":"` + big + `"}}`, mcp.IntID(7), false, true},
		{"string id first", `{"id":"a-1","jsonrpc":"2.0","result":{"pad":"` + big + `"}}`, mcp.StringID("a-1"), false, true},
		{"id last", `{"jsonrpc":"2.0","result":{"pad":"` + big + `"},"id":12}`, mcp.IntID(12), false, true},
		{"string id last", `{"result":{"pad":"` + big + `"} , "id" : "z" }`, mcp.StringID("z"), false, true},
		{"error", `{"jsonrpc":"2.0","id":8,"error":{"code":1,"message":"` + big + `"}}`, mcp.IntID(8), false, true},
		{"request", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"pad":"` + big + `"}}`, mcp.IntID(3), true, false},
		{"request, method after params", `{"jsonrpc":"2.0","id":3,"params":{"pad":"` + big + `"},"method":"tools/call"}`, mcp.IntID(3), false, false},
		{"nested id last", `{"jsonrpc":"2.0","result":{"pad":"` + big + `","id":4}}`, mcp.ID{}, false, true},
		{"id in a string", `{"jsonrpc":"2.0","result":"` + big + `,\"id\":5}"}`, mcp.ID{}, false, true},
		{"escaped string id last", `{"result":"` + big + `","id":"a\"b"}`, mcp.ID{}, false, true},
		{"no id", `{"jsonrpc":"2.0","method":"notifications/x","params":{"pad":"` + big + `"}}`, mcp.ID{}, true, false},
		{"not an object", `["` + big + `"]`, mcp.ID{}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := []byte(tc.msg)
			id, method, response := rpccodec.Identity(transport.Edges(b))
			if id != tc.id || method != tc.method || response != tc.response {
				t.Fatalf("Identity = %v %v %v, want %v %v %v", id, method, response, tc.id, tc.method, tc.response)
			}
		})
	}
}

// An answer over the reader's limit ends the call it answers with an
// error that says so, at once, over a transport that drops it (stdio) as
// over one that hands it whole to the Conn's own limit (memory); the id
// may be at either end of the message.
func TestOversizedAnswerEndsCall(t *testing.T) {
	big := strings.Repeat("x", 4096)
	answers := map[string]func(id string) string{
		"id first": func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":{"pad":"` + big + `"}}` },
		"id last":  func(id string) string { return `{"jsonrpc":"2.0","result":{"pad":"` + big + `"},"id":` + id + `}` },
	}
	for name, answer := range answers {
		t.Run("stdio/"+name, func(t *testing.T) {
			leakCheck(t)
			pr, pw := io.Pipe()
			rr, rw := io.Pipe()
			c := NewConn(stdio.NewConn(pr, rw, &stdio.Options{MaxMessageBytes: 1024}), &ConnOptions{})
			c.Start()
			defer closeWithin(t, c)
			peer := stdio.NewConn(rr, pw, nil)
			defer peer.Close()
			checkDropped(t, c, peer, answer)
		})
		t.Run("memory/"+name, func(t *testing.T) {
			leakCheck(t)
			c, peer := rawPeer(t, ConnOptions{Limits: Limits{MaxBytes: 1024}})
			checkDropped(t, c, peer, answer)
		})
	}
}

func checkDropped(t *testing.T, c *Conn, peer transport.Conn, answer func(id string) string) {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctxGuard(t), "big", nil, nil) }()
	req := recv(t, peer)
	send(t, peer, answer(req.ID.String()))
	err := wait(t, errc, "the call")
	if !errors.Is(err, transport.ErrMessageTooLarge) {
		t.Fatalf("call = %v, want ErrMessageTooLarge", err)
	}
	// The connection goes on, and nothing was written back for the
	// dropped answer: the next message the peer reads is the next call.
	go func() { errc <- c.Call(ctxGuard(t), "small", nil, nil) }()
	req = recv(t, peer)
	if req.Method != "small" {
		t.Fatalf("the peer read %q, want the next call", req.Method)
	}
	send(t, peer, `{"jsonrpc":"2.0","id":`+req.ID.String()+`,"result":{}}`)
	if err := wait(t, errc, "the next call"); err != nil {
		t.Fatalf("next call: %v", err)
	}
}

// An answer that is not a valid response (no result, no error) ends the
// call it names instead of leaving it waiting, and is not answered.
func TestInvalidAnswerEndsCall(t *testing.T) {
	leakCheck(t)
	c, peer := rawPeer(t, ConnOptions{})
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctxGuard(t), "x", nil, nil) }()
	req := recv(t, peer)
	send(t, peer, `{"jsonrpc":"2.0","id":`+req.ID.String()+`}`)
	err := wait(t, errc, "the call")
	var rpcErr *Error
	if err == nil || !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeInvalidRequest {
		t.Fatalf("call = %v, want the reader's -32600", err)
	}
	go func() { errc <- c.Call(ctxGuard(t), "next", nil, nil) }()
	if req := recv(t, peer); req.Method != "next" {
		t.Fatalf("the peer read %q, want the next call", req.Method)
	}
	c.Close()
	<-errc
}

// FuzzIdentity: whatever identity reads from the ends of a valid JSON
// object is that object's top-level id.
func FuzzIdentity(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	f.Add(`{"result":{"a":"` + strings.Repeat("y", 600) + `"},"id":"q"}`)
	f.Add(`{"a":{"id":2},"id":3}`)
	f.Fuzz(func(t *testing.T, msg string) {
		b := []byte(msg)
		var w struct {
			ID jsontext.Value `json:"id"`
		}
		if json.Unmarshal(b, &w, json.RejectUnknownMembers(false)) != nil {
			return
		}
		id, _, _ := rpccodec.Identity(transport.Edges(b))
		if !id.IsValid() {
			return
		}
		want, err := mcp.ParseID(w.ID)
		if w.ID == nil || err != nil || want != id {
			t.Fatalf("identity read %v from %s; the decoder reads %s", id, msg, w.ID)
		}
	})
}

// A peer request whose JSON breaks before its method can be read is
// answered -32700 without an id; it is not taken for the answer to our
// call of the same id, which still gets its own answer.
func TestBrokenRequestIsNotOurAnswer(t *testing.T) {
	leakCheck(t)
	c, peer := rawPeer(t, ConnOptions{})
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctxGuard(t), "x", nil, nil) }()
	req := recv(t, peer)
	send(t, peer, `{"jsonrpc":"2.0","id":`+req.ID.String()+`,"params":{"a":tru},"method":"y"}`)
	if m := recv(t, peer); m.Error == nil || m.Error.Code != mcp.CodeParseError || m.ID.IsValid() {
		t.Fatalf("the broken request got %v (%v), want -32700 without an id", m, m.Error)
	}
	send(t, peer, `{"jsonrpc":"2.0","id":`+req.ID.String()+`,"result":{}}`)
	if err := wait(t, errc, "the call"); err != nil {
		t.Fatalf("call = %v, want its own answer", err)
	}
}
