package streamable

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// heldServer is a server that reads the body of a tools/call POST and
// holds its answer's headers until the client goes away (as go-sdk's
// server does until its first message), and reports every
// notifications/cancelled POSTed to it.
func heldServer(t *testing.T) (f *fake, held <-chan mcp.ID, cancels <-chan mcp.ID) {
	h := make(chan mcp.ID, 4)
	cs := make(chan mcp.ID, 4)
	f = newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		switch {
		case in.Msg.Method == mcp.MethodInitialize:
			answerInit(w, in, "s-1")
		case in.Msg.Method == mcp.MethodToolsCall:
			h <- in.Msg.ID
			hold(r)
		case in.Msg.Method == mcp.NotificationCancelled:
			var p struct {
				RequestID mcp.ID `json:"requestId"`
			}
			if err := json.Unmarshal(in.Msg.Params, &p); err != nil {
				t.Errorf("notifications/cancelled params %s: %v", in.Msg.Params, err)
			}
			cs <- p.RequestID
			w.WriteHeader(http.StatusAccepted)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
	return f, h, cs
}

// TestLegacyCancelBeforeHeaders: a 2025-11-25 call cancelled while the
// server holds its answer's headers is cancelled with
// notifications/cancelled, since the server has the request: aborting
// the POST is not a cancellation in that revision.
func TestLegacyCancelBeforeHeaders(t *testing.T) {
	f, held, cancels := heldServer(t)
	c := newConn(t, f, nil)
	rc := jsonrpc.NewConn(c, nil)
	rc.Start()
	t.Cleanup(func() { _ = rc.Close() })
	if err := rc.Call(testCtx(t), mcp.MethodInitialize, jsontext.Value(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`), nil); err != nil {
		t.Fatal(err)
	}
	if err := rc.Notify(testCtx(t), mcp.NotificationInitialized, nil); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(testCtx(t))
	callErr := make(chan error, 1)
	go func() { callErr <- rc.Call(ctx, mcp.MethodToolsCall, jsontext.Value(`{"name":"slow"}`), nil) }()
	id := recv(t, held, "the server to read the call")
	cancel()
	if err := recv(t, callErr, "the call to return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("call = %v, want context.Canceled", err)
	}
	if got := recv(t, cancels, "notifications/cancelled"); got != id {
		t.Errorf("notifications/cancelled names %s, want %s", got, id)
	}
}

// TestModernCancelBeforeHeaders: a 2026-07-28 call cancelled before its
// answer's headers is cancelled by closing its POST alone; no
// notifications/cancelled is POSTed.
func TestModernCancelBeforeHeaders(t *testing.T) {
	f, held, _ := heldServer(t)
	c := newConn(t, f, nil)
	rc := jsonrpc.NewConn(c, nil)
	rc.Start()
	t.Cleanup(func() { _ = rc.Close() })

	ctx, cancel := context.WithCancel(testCtx(t))
	callErr := make(chan error, 1)
	params := jsontext.Value(modernParams("2026-07-28", `"name":"slow"`))
	go func() {
		callErr <- rc.CallWith(ctx, mcp.MethodToolsCall, params, nil, jsonrpc.CallOptions{Modern: transport.Modern{Version: "2026-07-28", Name: "slow", HasName: true}})
	}()
	recv(t, held, "the server to read the call")
	cancel()
	if err := recv(t, callErr, "the call to return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("call = %v, want context.Canceled", err)
	}
	// The cancellation, if any, is written before the call returns, and
	// Write POSTs before it returns.
	for _, r := range f.of(http.MethodPost) {
		if r.Msg.Method == mcp.NotificationCancelled {
			t.Errorf("notifications/cancelled POSTed for a modern request: %s", r.Body)
		}
	}
	if n := len(f.of(http.MethodPost)); n != 1 {
		t.Errorf("%d POSTs, want the request only", n)
	}
}

// TestSessionlessCancelAfterHeaders: a 2025-11-25 call without a session
// whose answer is an event stream, cancelled once the stream is being
// read, is cancelled by closing its POST, the one thing a session-less
// server can tie to the call; notifications/cancelled is not POSTed
// (issue 33). With a session the notification is POSTed and the stream
// stays open: there, disconnection is not cancellation.
func TestSessionlessCancelAfterHeaders(t *testing.T) {
	for _, session := range []string{"", "s-1"} {
		t.Run("session="+session, func(t *testing.T) {
			gone := make(chan struct{})
			release := make(chan struct{})
			cancels := make(chan mcp.ID, 1)
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
				switch {
				case r.Method != http.MethodPost:
					w.WriteHeader(http.StatusMethodNotAllowed)
				case in.Msg.Method == mcp.MethodInitialize:
					answerInit(w, in, session)
				case in.Msg.Method == mcp.MethodToolsCall:
					sseStart(w)
					sseEvent(w, "", 0, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`)
					select {
					case <-r.Context().Done():
						close(gone)
					case <-release:
						sseEvent(w, "", 0, result(in.Msg.ID, `{"content":[]}`))
					}
				case in.Msg.Method == mcp.NotificationCancelled:
					var p struct {
						RequestID mcp.ID `json:"requestId"`
					}
					_ = json.Unmarshal(in.Msg.Params, &p)
					cancels <- p.RequestID
					w.WriteHeader(http.StatusAccepted)
				default:
					w.WriteHeader(http.StatusAccepted)
				}
			})
			c := newConn(t, f, nil)
			ctx := testCtx(t)
			if err := c.Write(ctx, transport.Message{Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)}); err != nil {
				t.Fatal(err)
			}
			readMsg(t, c) // the initialize result
			if err := c.Write(ctx, transport.Message{Data: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}}`)}); err != nil {
				t.Fatal(err)
			}
			if m := readMsg(t, c); m.Method != mcp.NotificationProgress {
				t.Fatalf("want the progress event first, got %s %s", m.Method, m.ID)
			}
			// The stream's headers and first event are in: cancel.
			if err := c.Write(ctx, transport.Message{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)}); err != nil {
				t.Fatal(err)
			}
			if session == "" {
				recv(t, gone, "the server to see the POST closed")
				for _, r := range f.of(http.MethodPost) {
					if r.Msg.Method == mcp.NotificationCancelled {
						t.Errorf("notifications/cancelled POSTed without a session: %s", r.Body)
					}
				}
				return
			}
			if got := recv(t, cancels, "notifications/cancelled"); got != mcp.IntID(2) {
				t.Errorf("notifications/cancelled names %s, want 2", got)
			}
			close(release)
			if m := readMsg(t, c); m.ID != mcp.IntID(2) || !m.IsResponse() {
				t.Errorf("want the call's answer on its open stream, got %s %s", m.Method, m.ID)
			}
			select {
			case <-gone:
				t.Error("the POST of a call with a session was closed by its cancellation")
			default:
			}
		})
	}
}
