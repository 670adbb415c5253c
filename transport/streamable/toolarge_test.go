package streamable

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// TestEdgeBytes: internal/sse, which may not import transport, keeps as
// much of each end of an oversized event as a TooLargeError holds.
func TestEdgeBytes(t *testing.T) {
	if sse.EdgeBytes != transport.TooLargeEdge {
		t.Fatalf("sse.EdgeBytes = %d, transport.TooLargeEdge = %d", sse.EdgeBytes, transport.TooLargeEdge)
	}
}

// readTooLarge reads from c what stands for an event over MaxEventBytes:
// an error that is a *transport.TooLargeError and ErrEventTooLarge, whose
// ends name the message (id and whether it is a request).
func readTooLarge(t testing.TB, c *Conn, id mcp.ID, request bool) {
	t.Helper()
	type out struct {
		data []byte
		err  error
	}
	ch := make(chan out, 1)
	go func() {
		data, err := c.Read(context.Background())
		ch <- out{data, err}
	}()
	o := recv(t, ch, "Read")
	var e *transport.TooLargeError
	if !errors.As(o.err, &e) || !errors.Is(o.err, ErrEventTooLarge) || !errors.Is(o.err, transport.ErrMessageTooLarge) {
		t.Fatalf("Read = %.80q, %v; want a *transport.TooLargeError that is ErrEventTooLarge", o.data, o.err)
	}
	if got, method, _ := wire.Identity(e.Head, e.Tail); got != id || method != request {
		t.Fatalf("the ends of the oversized message say id %v, request %v; want %v, %v", got, method, id, request)
	}
}

// oversizedServer is a legacy server with a session whose every message
// to the client is over limit: the tools/call POST is answered with an
// event stream that carries a request of the server (id "s-post", its
// id first), waits for the client's answer to it, then answers the
// call; the GET stream carries a request whose id is its last member
// ("s-get"), so that only the event's tail names it. answers gets each
// response the client POSTs.
func oversizedServer(t *testing.T, limit int) (*fake, chan *jsonrpc.Message) {
	answers := make(chan *jsonrpc.Message, 8)
	posted := make(chan *jsonrpc.Message, 8) // the answer to s-post, for its stream
	pad := strings.Repeat("p", 3*limit)
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		switch {
		case r.Method == http.MethodGet:
			sseStart(w)
			sseEvent(w, "", 0, `{"jsonrpc":"2.0","method":"roots/list","params":{"pad":"`+pad+`"},"id":"s-get"}`)
			hold(r)
		case in.Msg == nil: // DELETE
			w.WriteHeader(http.StatusOK)
		case in.Msg.IsResponse():
			w.WriteHeader(http.StatusAccepted)
			answers <- in.Msg
			if in.Msg.ID == mcp.StringID("s-post") {
				posted <- in.Msg
			}
		case in.Msg.Method == mcp.MethodInitialize:
			answerInit(w, in, "sess-1")
		case in.Msg.Method == mcp.MethodToolsCall:
			sseStart(w)
			sseEvent(w, "", 0, `{"jsonrpc":"2.0","id":"s-post","method":"sampling/createMessage","params":{"pad":"`+pad+`"}}`)
			select {
			case <-posted:
			case <-r.Context().Done():
				return
			}
			sseEvent(w, "", 0, result(in.Msg.ID, `{"content":[]}`))
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
	return f, answers
}

// TestOversizedServerRequestAnswered: a server request over
// MaxEventBytes, on the stream of a POST or on the GET stream, is
// answered with -32600 under its own id (the server's handler would
// otherwise wait for ever); the call whose stream carried it then gets
// its answer.
func TestOversizedServerRequestAnswered(t *testing.T) {
	const limit = 1024
	f, answers := oversizedServer(t, limit)
	c := newConn(t, f, &Options{MaxEventBytes: limit})
	rc := jsonrpc.NewConn(c, nil)
	rc.Start()
	t.Cleanup(func() { _ = rc.Close() })
	ctx := testCtx(t)
	if err := rc.Call(ctx, mcp.MethodInitialize, jsontext.Value(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`), nil); err != nil {
		t.Fatal(err)
	}
	if err := rc.Notify(ctx, mcp.NotificationInitialized, nil); err != nil {
		t.Fatal(err)
	}
	c.Listen()
	callErr := make(chan error, 1)
	go func() { callErr <- rc.Call(ctx, mcp.MethodToolsCall, jsontext.Value(`{"name":"x"}`), nil) }()
	want := map[mcp.ID]bool{mcp.StringID("s-post"): true, mcp.StringID("s-get"): true}
	for len(want) > 0 {
		m := recv(t, answers, "the answers to the oversized requests")
		if !want[m.ID] {
			t.Fatalf("an answer to %v: %v", m.ID, m)
		}
		delete(want, m.ID)
		if m.Error == nil || m.Error.Code != mcp.CodeInvalidRequest {
			t.Errorf("the answer to %v: %v %v, want -32600", m.ID, m, m.Error)
		}
	}
	if err := recv(t, callErr, "the call"); err != nil {
		t.Errorf("the call whose stream carried the oversized request: %v", err)
	}
}

// TestOversizedResponseFailsCall: a response over MaxEventBytes fails
// its call at once, with an error that is ErrEventTooLarge, whether its
// id comes first or last, on a legacy or a 2026-07-28 POST's stream; the
// connection goes on and the stream is not resumed.
func TestOversizedResponseFailsCall(t *testing.T) {
	const limit = 1024
	pad := strings.Repeat("r", 3*limit)
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		if r.Method != http.MethodPost || !in.Msg.IsRequest() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(in.Msg.Params, &p)
		sseStart(w)
		switch p.Name {
		case "id-first":
			sseEvent(w, "e1", 0, result(in.Msg.ID, `{"pad":"`+pad+`"}`))
		case "id-last":
			sseEvent(w, "e1", 0, `{"jsonrpc":"2.0","result":{"pad":"`+pad+`"},"id":`+in.Msg.ID.String()+`}`)
		default:
			sseEvent(w, "e1", 0, result(in.Msg.ID, `{}`))
		}
	})
	c := newConn(t, f, &Options{MaxEventBytes: limit})
	rc := jsonrpc.NewConn(c, nil)
	rc.Start()
	t.Cleanup(func() { _ = rc.Close() })
	ctx := testCtx(t)
	for _, tc := range []struct {
		name   string
		params string
		modern transport.Modern
	}{
		{"legacy, id first", `{"name":"id-first"}`, transport.Modern{}},
		{"legacy, id last", `{"name":"id-last"}`, transport.Modern{}},
		{"2026-07-28, id first", modernParams("2026-07-28", `"name":"id-first"`), transport.Modern{Version: "2026-07-28", Name: "id-first", HasName: true}},
		{"2026-07-28, id last", modernParams("2026-07-28", `"name":"id-last"`), transport.Modern{Version: "2026-07-28", Name: "id-last", HasName: true}},
	} {
		err := rc.CallWith(ctx, mcp.MethodToolsCall, jsontext.Value(tc.params), nil, jsonrpc.CallOptions{Modern: tc.modern})
		if !errors.Is(err, ErrEventTooLarge) || !errors.Is(err, transport.ErrMessageTooLarge) {
			t.Errorf("%s: call = %v, want ErrEventTooLarge", tc.name, err)
		}
	}
	if err := rc.Call(ctx, mcp.MethodToolsCall, jsontext.Value(`{"name":"fits"}`), nil); err != nil {
		t.Errorf("a call after the oversized answers: %v", err)
	}
	if n := f.count(http.MethodGet); n != 0 {
		t.Errorf("%d GETs: a stream whose response was over the limit must not be resumed", n)
	}
}

// TestOversizedUnansweredKinds: what JSON-RPC 2.0 does not answer is not
// answered when it comes over MaxEventBytes either, and a request is not
// taken for a response. A notification used to be answered with an
// error (one POST the server could only refuse or log); a server request
// whose "method" came after the member that did not fit read as the
// response to our call of the same id and failed that call. Now the
// notification is dropped, the request is answered -32600 without an id
// (JSON-RPC 2.0 §5: its id could not be read), and the call gets its own
// answer.
func TestOversizedUnansweredKinds(t *testing.T) {
	const limit = 1024
	pad := strings.Repeat("n", 3*limit)
	answers := make(chan *jsonrpc.Message, 8)
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		switch {
		case r.Method != http.MethodPost || in.Msg == nil:
			w.WriteHeader(http.StatusAccepted)
		case in.Msg.IsResponse():
			answers <- in.Msg
			w.WriteHeader(http.StatusAccepted)
		case in.Msg.IsRequest():
			sseStart(w)
			sseEvent(w, "", 0, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`+pad+`"}}`)
			sseEvent(w, "", 0, `{"jsonrpc":"2.0","id":`+in.Msg.ID.String()+`,"params":{"pad":"`+pad+`"},"method":"sampling/createMessage"}`)
			sseEvent(w, "", 0, result(in.Msg.ID, `{"ok":true}`))
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
	c := newConn(t, f, &Options{MaxEventBytes: limit})
	rc := jsonrpc.NewConn(c, nil)
	rc.Start()
	t.Cleanup(func() { _ = rc.Close() })
	var res struct {
		OK bool `json:"ok"`
	}
	if err := rc.Call(testCtx(t), mcp.MethodToolsCall, jsontext.Value(`{"name":"x"}`), &res); err != nil || !res.OK {
		t.Fatalf("the call = %v, %+v; want its own answer", err, res)
	}
	// The reader handles the events in order, and a POST it made returns
	// only once the server has taken it: every answer it made is in
	// answers by now.
	if m := recv(t, answers, "the answer to the oversized request"); m.ID.IsValid() || m.Error == nil || m.Error.Code != mcp.CodeInvalidRequest {
		t.Fatalf("the answer to the oversized request: id %v, error %v; want -32600 without an id", m.ID, m.Error)
	}
	select {
	case m := <-answers:
		t.Fatalf("the client answered the oversized notification too: id %v, error %v", m.ID, m.Error)
	default:
	}
}
