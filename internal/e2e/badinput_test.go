package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// reply is a JSON-RPC response as read raw from the wire.
type reply struct {
	raw     []byte
	JSONRPC string         `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Result  jsontext.Value `json:"result"`
	Error   *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rawPeer speaks bytes to a server over a transport.
type rawPeer struct {
	t  testing.TB
	tr transport.Conn
}

func (p rawPeer) send(msg string) {
	p.t.Helper()
	if err := p.tr.Write(testCtx(p.t), transport.Message{Data: []byte(msg)}); err != nil {
		p.t.Fatalf("writing %s: %v", msg, err)
	}
}

func (p rawPeer) read() *reply {
	p.t.Helper()
	data, err := p.tr.Read(testCtx(p.t))
	if err != nil {
		p.t.Fatalf("reading a reply: %v", err)
	}
	r := &reply{raw: data}
	if err := json.Unmarshal(data, r); err != nil {
		p.t.Fatalf("the server sent invalid JSON %s: %v", data, err)
	}
	if r.JSONRPC != "2.0" {
		p.t.Errorf("reply %s: jsonrpc %q", data, r.JSONRPC)
	}
	return r
}

// wantError reads a reply and checks its code and id (raw JSON text; ""
// for no id).
func (p rawPeer) wantError(code int64, id string) *reply {
	p.t.Helper()
	r := p.read()
	if r.Error == nil || r.Result != nil {
		p.t.Fatalf("got %s, want error %d", r.raw, code)
	}
	if r.Error.Code != code {
		p.t.Errorf("got %s, want error code %d", r.raw, code)
	}
	if string(r.ID) != id {
		p.t.Errorf("got %s, want id %s", r.raw, id)
	}
	return r
}

// initialize runs the handshake by hand.
func (p rawPeer) initialize() {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if r := p.read(); r.Error != nil || string(r.ID) != "1" {
		p.t.Fatalf("initialize: %s", r.raw)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// checkErrorReply validates an error reply against the schema of
// revision c. When the request's id could not be read, the reply carries
// no id: 2025-11-25 types the id of an error response as optional and
// never null (bare JSON-RPC 2.0 would write null). Older revisions require
// a string or integer id, so no reply to an unreadable id conforms to them.
func checkErrorReply(t testing.TB, c *wirecheck.Checker, r *reply) {
	t.Helper()
	if err := c.Check(r.raw); err != nil {
		t.Errorf("error reply does not conform: %v", err)
	}
}

// noID is wantError's id for a reply without one.
const noID = ""

// TestBadInput sends malformed messages to a server and reads its replies
// raw: every one is answered with the right code and, when readable, the
// request's id, and the session keeps serving.
func TestBadInput(t *testing.T) {
	t.Parallel()
	f := newFixture(nil)
	a, b := memory.NewPair()
	ss := f.srv.Connect(b)
	t.Cleanup(func() { a.Close(); ss.Close() })
	p := rawPeer{t, a}
	checker := wirecheck.For(t, mcp.LatestLegacy)

	// Before initialize, params that are not an object are still -32602.
	p.send(`{"jsonrpc":"2.0","id":"early","method":"initialize","params":[1]}`)
	checkErrorReply(t, checker, p.wantError(mcp.CodeInvalidParams, `"early"`))
	p.initialize()

	for _, tc := range []struct {
		name, send string
		code       int64
		id         string
	}{
		{"truncated JSON", `{"jsonrpc":"2.0","id":2,"method":`, mcp.CodeParseError, noID},
		{"not JSON", `hello`, mcp.CodeParseError, noID},
		{"method not a string", `{"jsonrpc":"2.0","id":3,"method":5}`, mcp.CodeInvalidRequest, "3"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":"s4","method":"ping"}`, mcp.CodeInvalidRequest, `"s4"`},
		{"jsonrpc missing", `{"id":41,"method":"ping"}`, mcp.CodeInvalidRequest, "41"},
		{"id an object", `{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, mcp.CodeInvalidRequest, noID},
		{"id fractional", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, mcp.CodeInvalidRequest, noID},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, mcp.CodeInvalidRequest, noID},
		{"params a string", `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":"x"}`, mcp.CodeInvalidRequest, "5"},
		{"params an array", `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":[1]}`, mcp.CodeInvalidParams, "6"},
		{"params member of the wrong type", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}`, mcp.CodeInvalidParams, "7"},
		{"arguments not an object", `{"jsonrpc":"2.0","id":71,"method":"prompts/get","params":{"name":"plain","arguments":[]}}`, mcp.CodeInvalidParams, "71"},
		{"unknown method", `{"jsonrpc":"2.0","id":8,"method":"nope/nothing"}`, mcp.CodeMethodNotFound, "8"},
		{"method of another revision", `{"jsonrpc":"2.0","id":81,"method":"server/discover","params":{}}`, mcp.CodeMethodNotFound, "81"},
		{"batch", `[{"jsonrpc":"2.0","id":9,"method":"ping"}]`, mcp.CodeInvalidRequest, noID},
		{"request with a result", `{"jsonrpc":"2.0","id":10,"method":"ping","result":{}}`, mcp.CodeInvalidRequest, "10"},
		{"response with neither", `{"jsonrpc":"2.0","id":11}`, mcp.CodeInvalidRequest, "11"},
		{"top-level array of nothing", `[]`, mcp.CodeInvalidRequest, noID},
		{"a string", `"ping"`, mcp.CodeInvalidRequest, noID},
	} {
		p.send(tc.send)
		r := p.wantError(tc.code, tc.id)
		checkErrorReply(t, checker, r)
		t.Logf("%s: %s", tc.name, r.raw)
	}

	// A tool call whose arguments are not an object is a tool error.
	p.send(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"add","arguments":[1,2]}}`)
	r := p.read()
	var res mcp.CallToolResult
	if r.Error != nil || json.Unmarshal(r.Result, &res) != nil || !res.IsError {
		t.Errorf("tools/call with array arguments: %s", r.raw)
	}

	// Unsolicited responses and unknown notifications are dropped without
	// a reply: the next reply is the ping's.
	p.send(`{"jsonrpc":"2.0","id":999,"result":{}}`)
	p.send(`{"jsonrpc":"2.0","id":998,"error":{"code":1,"message":"x"}}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/unheard-of","params":{}}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":424242}}`)
	p.send(`{"jsonrpc":"2.0","id":13,"method":"ping"}`)
	if r := p.read(); string(r.ID) != "13" || r.Error != nil || string(r.Result) != "{}" {
		t.Errorf("ping after bad input: %s", r.raw)
	}
	p.send(`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"add","arguments":{"a":20,"b":22}}}`)
	if r := p.read(); r.Error != nil || !strings.Contains(string(r.Result), `"structuredContent":{"sum":42}`) {
		t.Errorf("add after bad input: %s", r.raw)
	}
}

// TestClientClosesMidRequest: the client going away while a handler runs
// ends the session cleanly: the handler is cancelled, Wait returns, and
// (goleak, in TestMain) nothing is left running.
func TestClientClosesMidRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(nil)
	s := f.connect(t, "", nil)
	done := make(chan error, 1)
	go func() {
		_, err := s.call(t, context.Background(), "wait", nil)
		done <- err
	}()
	recv(t, f.waitStarted, "the wait tool to start")
	if err := s.c.Close(); err != nil {
		t.Errorf("client Close: %v", err)
	}
	if err := recv(t, done, "CallTool to return"); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("CallTool after Close = %v, want ErrClosed", err)
	}
	if cause := recv(t, f.waitEnded, "the handler to be cancelled"); !errors.Is(cause, context.Canceled) {
		t.Errorf("the handler's context ended with %v, want context.Canceled", cause)
	}
	waited := make(chan error, 1)
	go func() { waited <- s.ss.Wait() }()
	if err := recv(t, waited, "the session to end"); !jsonrpc.IsEOF(err) {
		t.Errorf("session Wait = %v, want io.EOF", err)
	}
	select {
	case <-s.c.Done():
	default:
		t.Errorf("the client is not done after Close")
	}
}
