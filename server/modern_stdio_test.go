package server

// Tests of the 2026-07-28 era on a stream connection (stdio, here an
// in-memory pair) with a raw peer that sees every message: the error
// table without HTTP (code and echoed id), a modern request on a legacy
// connection served statelessly, per-request logging, cancellation by
// notifications/cancelled, and subscriptions/listen. Helpers shared with
// the HTTP tests are in the modern_http*_test.go files.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// Kinds of messages a stdioPeer sends, which decide how the answers are
// checked.
const (
	sendModern    = iota // well-formed 2026-07-28: observed with its answer
	sendLegacy           // well-formed 2025-11-25: observed with its answer
	sendMalformed        // on purpose: only the answer is checked, on its own
)

// stdioPeer is a raw client of one server connection: it writes
// hand-built messages and reads every message the server writes.
type stdioPeer struct {
	t      *testing.T
	srv    *Server
	conn   *memory.Conn
	in     chan []byte
	wc     *wirecheck.Checker
	obs    func(dir string, msg []byte) // 2026-07-28
	legObs func(dir string, msg []byte) // 2025-11-25

	mu    sync.Mutex
	kinds map[string]int // request id (JSON) → how it was sent
}

func newStdioPeer(t *testing.T, s *Server) *stdioPeer {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) }) // registered first: runs last
	a, b := memory.NewPair()
	ss := s.Connect(a)
	wc := wirecheck.For(t, httpenv.V26)
	p := &stdioPeer{t: t, srv: s, conn: b, in: make(chan []byte, 256), wc: wc, obs: wc.Observe(t),
		legObs: wirecheck.For(t, mcp.Version20251125).Observe(t), kinds: map[string]int{}}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { // owned by the peer: ends at cleanup
		defer close(done)
		for {
			msg, err := b.Read(context.Background())
			if err != nil {
				return
			}
			select {
			case p.in <- msg:
			case <-stop:
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		b.Close()
		ss.Close()
		<-done
	})
	return p
}

// send writes one message.
func (p *stdioPeer) send(body string, kind int) {
	p.t.Helper()
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal([]byte(body), &m)
	if m.ID != nil {
		p.mu.Lock()
		p.kinds[string(m.ID)] = kind
		p.mu.Unlock()
	}
	switch kind {
	case sendModern:
		p.obs(wirecheck.ClientToServer, []byte(body))
	case sendLegacy:
		p.legObs(wirecheck.ClientToServer, []byte(body))
	}
	ctx, cancel := context.WithTimeout(context.Background(), httpenv.HangGuard)
	defer cancel()
	if err := p.conn.Write(ctx, transport.Message{Data: []byte(body)}); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

// next reads the next message the server wrote and checks it: a
// response as the answer to its request, a notification against the
// 2026 schema (or, with legacy, the 2025 one).
func (p *stdioPeer) next(legacy bool) *httpenv.WireMsg {
	p.t.Helper()
	var raw []byte
	ok := false
	select {
	case raw, ok = <-p.in:
	case <-time.After(httpenv.HangGuard):
		p.t.Fatal("timed out waiting for a message from the server")
	}
	if !ok {
		p.t.Fatal("the connection ended")
	}
	m := httpenv.ParseWire(p.t, raw)
	obs := p.obs
	if legacy {
		obs = p.legObs
	}
	if m.Method == "" {
		p.mu.Lock()
		kind, known := p.kinds[string(m.ID)]
		p.mu.Unlock()
		switch {
		case !known:
			p.t.Errorf("response to no request sent: %s", raw)
		case kind == sendMalformed:
			if err := p.wc.Check(raw); err != nil {
				p.t.Errorf("answer does not conform: %v\n%s", err, raw)
			}
			return m
		case kind == sendLegacy:
			obs = p.legObs
		case kind == sendModern:
			obs = p.obs
		}
	}
	obs(wirecheck.ServerToClient, raw)
	return m
}

// until reads messages up to the response to id, which it returns after
// the notifications that came before it.
func (p *stdioPeer) until(id any) (notes []*httpenv.WireMsg, resp *httpenv.WireMsg) {
	p.t.Helper()
	for {
		m := p.next(false)
		if m.Method != "" {
			notes = append(notes, m)
			continue
		}
		if string(m.ID) != httpenv.IDJSON(id) {
			p.t.Fatalf("response %s, want the answer to %s", m.Raw, httpenv.IDJSON(id))
		}
		return notes, m
	}
}

// answer sends a request and reads its answer, which must come next.
func (p *stdioPeer) answer(body string, kind int, id any) *httpenv.WireMsg {
	p.t.Helper()
	p.send(body, kind)
	notes, resp := p.until(id)
	if len(notes) > 0 {
		p.t.Errorf("unexpected notifications before the answer: %s", notes[0].Raw)
	}
	return resp
}

// marker proves that nothing is pending: the next message the server
// writes is the answer to a fresh tools/list.
func (p *stdioPeer) marker(what string) {
	p.t.Helper()
	id := fmt.Sprintf("marker-%d", time.Now().UnixNano())
	p.send(httpenv.Req26(id, mcp.MethodToolsList, nil), sendModern)
	m := p.next(false)
	if m.Method != "" || string(m.ID) != httpenv.IDJSON(id) {
		p.t.Fatalf("%s: got %s before the marker's answer", what, m.Raw)
	}
}

func TestModernStdioErrors(t *testing.T) {
	f := newFixture26(nil)
	p := newStdioPeer(t, f.s)
	var supported []string
	resp := p.answer(httpenv.Req26("discover", mcp.MethodServerDiscover, nil), sendModern, "discover")
	res := httpenv.CheckModernResult(t, resp, "discover", "fixture26")
	if err := json.Unmarshal(res["supportedVersions"], &supported); err != nil {
		t.Fatal(err)
	}
	echo := func(meta map[string]any) map[string]any {
		return map[string]any{"_meta": meta, "name": "echo", "arguments": map[string]any{"text": "x"}}
	}
	n := 0
	for _, tc := range []struct {
		name   string
		method string
		params map[string]any
		kind   int
		code   int64
		data   string // the data, when it is fixed
	}{
		{"no clientCapabilities", mcp.MethodToolsCall, echo(httpenv.Meta26(map[string]any{mcp.MetaKeyClientCapabilities: nil})), sendMalformed, mcp.CodeInvalidParams, ""},
		{"clientCapabilities not an object", mcp.MethodToolsCall, echo(httpenv.Meta26(map[string]any{mcp.MetaKeyClientCapabilities: true})), sendMalformed, mcp.CodeInvalidParams, ""},
		{"protocolVersion not a string", mcp.MethodToolsCall, echo(httpenv.Meta26(map[string]any{mcp.MetaKeyProtocolVersion: 1})), sendMalformed, mcp.CodeInvalidParams, ""},
		{"clientInfo not an object", mcp.MethodToolsCall, echo(httpenv.Meta26(map[string]any{mcp.MetaKeyClientInfo: []any{}})), sendMalformed, mcp.CodeInvalidParams, ""},
		{"unknown logLevel", mcp.MethodToolsCall, echo(httpenv.Meta26(map[string]any{mcp.MetaKeyLogLevel: "verbose"})), sendMalformed, mcp.CodeInvalidParams, ""},
		{"unsupported version", mcp.MethodToolsCall, echo(httpenv.Meta26(map[string]any{mcp.MetaKeyProtocolVersion: "v999.0.0"})), sendModern, mcp.CodeUnsupportedProtocolVersion, ""},
		{"modern-style claim of 2025-11-25", mcp.MethodToolsList, map[string]any{"_meta": httpenv.Meta26(map[string]any{mcp.MetaKeyProtocolVersion: mcp.Version20251125})}, sendModern, mcp.CodeUnsupportedProtocolVersion, ""},
		{"initialize", mcp.MethodInitialize, map[string]any{"protocolVersion": mcp.Version20251125, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c", "version": "1"}}, sendMalformed, mcp.CodeMethodNotFound, ""},
		{"ping", mcp.MethodPing, nil, sendMalformed, mcp.CodeMethodNotFound, ""},
		{"logging/setLevel", mcp.MethodLoggingSetLevel, map[string]any{"level": "debug"}, sendMalformed, mcp.CodeMethodNotFound, ""},
		{"resources/subscribe", mcp.MethodResourcesSubscribe, map[string]any{"uri": "test://r"}, sendMalformed, mcp.CodeMethodNotFound, ""},
		{"resources/unsubscribe", mcp.MethodResourcesUnsubscribe, map[string]any{"uri": "test://r"}, sendMalformed, mcp.CodeMethodNotFound, ""},
		{"unknown method", "no/such", nil, sendMalformed, mcp.CodeMethodNotFound, ""},
		{"missing capability", mcp.MethodToolsCall, map[string]any{"name": "needs", "arguments": map[string]any{"sampling": true, "url": true}}, sendModern, mcp.CodeMissingRequiredClientCapability, `{"requiredCapabilities":{"sampling":{},"elicitation":{"url":{}}}}`},
		{"unknown resource", mcp.MethodResourcesRead, map[string]any{"uri": "test://none"}, sendModern, mcp.CodeInvalidParams, `{"uri":"test://none"}`},
		{"unknown tool", mcp.MethodToolsCall, map[string]any{"name": "nope", "arguments": map[string]any{}}, sendModern, mcp.CodeInvalidParams, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.t = t
			defer func() { p.t = nil }()
			n++
			for _, id := range []any{int64(n), fmt.Sprintf("s-%d", n)} {
				params := tc.params
				if params == nil {
					params = map[string]any{}
				}
				e := httpenv.CheckErr(t, p.wc, p.answer(httpenv.Req26(id, tc.method, params), tc.kind, id), tc.code, id)
				if tc.data != "" && !httpenv.JSONEqual(t, e.Data, tc.data) {
					t.Errorf("data %s, want %s", e.Data, tc.data)
				}
				if tc.code == mcp.CodeUnsupportedProtocolVersion {
					var d mcp.UnsupportedProtocolVersionData
					if err := json.Unmarshal(e.Data, &d); err != nil || len(d.Supported) == 0 || d.Requested == "" {
						t.Errorf("data %s", e.Data)
					}
					for _, v := range d.Supported {
						if !slices.Contains(supported, v) {
							t.Errorf("data.supported %v not within supportedVersions %v", d.Supported, supported)
						}
					}
				}
			}
		})
	}
	p.t = t
	// Each result carries resultType and serverInfo; the cacheable ones
	// their hints.
	for _, id := range []any{int64(100), "s-100"} {
		r := httpenv.CheckModernResult(t, p.answer(httpenv.Req26(id, mcp.MethodResourcesList, nil), sendModern, id), id, "fixture26")
		if string(r["ttlMs"]) != "0" || string(r["cacheScope"]) != `"private"` {
			t.Errorf("resources/list hints %s %s", r["ttlMs"], r["cacheScope"])
		}
	}
}

// A request with a modern envelope is served statelessly on any
// connection, before or after a legacy initialize, with its own
// capabilities (never the session's).
func TestModernStdioServedStatelessly(t *testing.T) {
	f := newFixture26(nil)
	p := newStdioPeer(t, f.s)
	// Before initialize: modern works, legacy is refused.
	r := httpenv.CheckModernResult(t, p.answer(httpenv.Req26(1, mcp.MethodToolsCall, map[string]any{"name": "echo", "arguments": map[string]any{"text": "early"}}), sendModern, 1), 1, "fixture26")
	if text, _ := httpenv.ResultText(t, r); text != "early" {
		t.Errorf("answered %q", text)
	}
	m := p.answer(httpenv.RawReq("legacy-early", mcp.MethodToolsList, nil), sendLegacy, "legacy-early")
	if m.Error == nil || m.Error.Code != mcp.CodeInvalidRequest {
		t.Errorf("legacy request before initialize answered %s", m.Raw)
	}
	// A legacy session declaring sampling.
	init := httpenv.RawReq(2, mcp.MethodInitialize, map[string]any{"protocolVersion": mcp.Version20251125,
		"capabilities": map[string]any{"sampling": map[string]any{}}, "clientInfo": map[string]any{"name": "legacy", "version": "1"}})
	if m := p.answer(init, sendLegacy, 2); m.Error != nil {
		t.Fatalf("initialize: %s", m.Raw)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sendLegacy)
	// The session's capabilities do not carry over to modern requests.
	for _, id := range []any{int64(3), "three"} {
		m := p.answer(httpenv.Req26(id, mcp.MethodToolsCall, map[string]any{"name": "needs", "arguments": map[string]any{"sampling": true}}), sendModern, id)
		e := httpenv.CheckErr(t, p.wc, m, mcp.CodeMissingRequiredClientCapability, id)
		if !httpenv.JSONEqual(t, e.Data, `{"requiredCapabilities":{"sampling":{}}}`) {
			t.Errorf("data %s", e.Data)
		}
	}
	// Legacy requests on the session: its capabilities, the legacy shape.
	m = p.answer(httpenv.RawReq(4, mcp.MethodToolsCall, map[string]any{"name": "needs", "arguments": map[string]any{"sampling": true}}), sendLegacy, 4)
	var lr map[string]json.RawMessage
	if err := json.Unmarshal(m.Result, &lr); err != nil {
		t.Fatalf("legacy needs: %s", m.Raw)
	}
	if text, _ := httpenv.ResultText(t, lr); text != "served" {
		t.Errorf("legacy needs answered %q", text)
	}
	if _, ok := lr["resultType"]; ok {
		t.Errorf("legacy result with resultType: %s", m.Raw)
	}
	// And modern ones in between keep working, with their own shape.
	r = httpenv.CheckModernResult(t, p.answer(httpenv.Req26("5", mcp.MethodToolsCall, map[string]any{"name": "echo", "arguments": map[string]any{"text": "late"}}), sendModern, "5"), "5", "fixture26")
	if text, _ := httpenv.ResultText(t, r); text != "late" {
		t.Errorf("answered %q", text)
	}
	if mo, le := f.modernEcho.Load(), f.legacyEcho.Load(); mo != 2 || le != 0 {
		t.Errorf("echo ran %d modern / %d legacy, want 2 / 0", mo, le)
	}
}

func TestModernStdioLogging(t *testing.T) {
	f := newFixture26(nil)
	p := newStdioPeer(t, f.s)
	for _, tc := range []struct {
		level, token string
		want         []string
	}{
		{"", "", nil},
		{"", "tok", []string{"progress 1", "progress 2"}},
		{"warning", "", []string{"log error:error line"}},
		{"warning", "tok", []string{"progress 1", "log error:error line", "progress 2"}},
		{"debug", "", []string{"log debug:debug line", "log error:error line"}},
	} {
		for _, id := range []any{int64(len(tc.level) + len(tc.token)*7), fmt.Sprintf("log-%s-%s", tc.level, tc.token)} {
			mods := map[string]any{}
			if tc.level != "" {
				mods[mcp.MetaKeyLogLevel] = tc.level
			}
			if tc.token != "" {
				mods[mcp.MetaKeyProgressToken] = tc.token
			}
			p.send(httpenv.Req26(id, mcp.MethodToolsCall, map[string]any{"_meta": httpenv.Meta26(mods), "name": "logs", "arguments": map[string]any{}}), sendModern)
			notes, resp := p.until(id)
			var got []string
			for _, n := range notes {
				switch n.Method {
				case mcp.NotificationProgress:
					var pp struct {
						Token    string  `json:"progressToken"`
						Progress float64 `json:"progress"`
					}
					_ = json.Unmarshal(n.Params, &pp)
					if pp.Token != tc.token {
						t.Errorf("progress token %q, want %q", pp.Token, tc.token)
					}
					got = append(got, fmt.Sprintf("progress %v", pp.Progress))
				case mcp.NotificationMessage:
					got = append(got, "log "+logLevelOf(t, &httpenv.RPCMsg{Params: json.RawMessage(n.Params)}))
				default:
					got = append(got, n.Method)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("level %q token %q: sent %q, want %q", tc.level, tc.token, got, tc.want)
			}
			httpenv.CheckModernResult(t, resp, id, "fixture26")
		}
	}
}

func TestModernStdioCancellation(t *testing.T) {
	f := newFixture26(nil)
	p := newStdioPeer(t, f.s)
	// Repeated: the guarantee must not depend on scheduling.
	for i := range 20 {
		var id any = int64(i)
		if i%2 == 1 {
			id = fmt.Sprintf("block-%d", i)
		}
		meta := httpenv.Meta26(map[string]any{mcp.MetaKeyProgressToken: "tok", mcp.MetaKeyLogLevel: "debug"})
		p.send(httpenv.Req26(id, mcp.MethodToolsCall, map[string]any{"_meta": meta, "name": "block", "arguments": map[string]any{}}), sendModern)
		if n := p.next(false); n.Method != mcp.NotificationProgress {
			t.Fatalf("first message %s", n.Raw)
		}
		httpenv.RecvT(t, f.blocked, "the handler to start")
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"enough"}}`, httpenv.IDJSON(id)), sendModern)
		rep := httpenv.RecvT(t, f.unblocked, "the handler's context to end")
		if rep.cause == nil {
			t.Error("the handler's context ended without a cause")
		}
		if rep.progressErr == nil || rep.logErr == nil {
			t.Errorf("after the cancellation Progress = %v, Log = %v; want both refused", rep.progressErr, rep.logErr)
		}
		// No progress, no log, no response for the cancelled request.
		p.marker("after a cancellation")
	}
}

func TestModernStdioListen(t *testing.T) {
	f := newFixture26(nil)
	p := newStdioPeer(t, f.s)
	type sub struct {
		id     any
		filter map[string]any
		agreed string
	}
	subs := []sub{
		{int64(7), map[string]any{"toolsListChanged": true, "resourceSubscriptions": []string{"test://r"}}, `{"toolsListChanged":true,"resourceSubscriptions":["test://r"]}`},
		{"listen-b", map[string]any{"toolsListChanged": true, "promptsListChanged": true}, `{"toolsListChanged":true,"promptsListChanged":true}`},
		{"listen-c", map[string]any{"resourcesListChanged": true}, `{"resourcesListChanged":true}`},
	}
	for _, s := range subs {
		p.send(httpenv.Req26(s.id, mcp.MethodSubscriptionsListen, map[string]any{"notifications": s.filter}), sendModern)
		ack := p.next(false)
		if ack.Method != mcp.NotificationSubscriptionsAcknowledged {
			t.Fatalf("listen %s: first message %s, want the acknowledgement", httpenv.IDJSON(s.id), ack.Raw)
		}
		var ap struct {
			Meta          map[string]json.RawMessage `json:"_meta"`
			Notifications json.RawMessage            `json:"notifications"`
		}
		_ = json.Unmarshal(ack.Params, &ap)
		if got := string(ap.Meta[mcp.MetaKeySubscriptionID]); got != httpenv.IDJSON(s.id) {
			t.Errorf("ack subscriptionId %s, want %s (type kept)", got, httpenv.IDJSON(s.id))
		}
		if !httpenv.JSONEqual(t, ap.Notifications, s.agreed) {
			t.Errorf("acknowledged %s, want %s", ap.Notifications, s.agreed)
		}
	}
	if n := listenerCount(f.s); n != 3 {
		t.Fatalf("%d listeners, want 3", n)
	}
	// trigger runs a tools/call that changes something and returns the
	// listen notifications it caused, as "method subscriptionId [uri]".
	nextID := 100
	trigger := func(tool string, args map[string]any) []string {
		t.Helper()
		nextID++
		id := nextID
		p.send(httpenv.Req26(id, mcp.MethodToolsCall, map[string]any{"name": tool, "arguments": args}), sendModern)
		notes, resp := p.until(id)
		httpenv.CheckModernResult(t, resp, id, "fixture26")
		var got []string
		for _, n := range notes {
			var np struct {
				Meta map[string]json.RawMessage `json:"_meta"`
				URI  string                     `json:"uri"`
			}
			_ = json.Unmarshal(n.Params, &np)
			got = append(got, fmt.Sprintf("%s %s %s", n.Method, np.Meta[mcp.MetaKeySubscriptionID], np.URI))
		}
		slices.Sort(got)
		return got
	}
	expect := func(got []string, want ...string) {
		t.Helper()
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("listen notifications %q, want %q", got, want)
		}
	}
	expect(trigger("add_tool", map[string]any{"name": "dyn"}),
		"notifications/tools/list_changed 7 ", `notifications/tools/list_changed "listen-b" `)
	expect(trigger("touch", map[string]any{"uri": "test://other"}))
	expect(trigger("touch", map[string]any{"uri": "test://r"}), "notifications/resources/updated 7 test://r")
	expect(trigger("add_prompt", map[string]any{"name": "dyn"}), `notifications/prompts/list_changed "listen-b" `)
	expect(trigger("add_resource", map[string]any{"uri": "test://dyn"}), `notifications/resources/list_changed "listen-c" `)

	// notifications/cancelled ends a listen: no result, nothing more.
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"listen-b"}}`, sendModern)
	expect(trigger("add_tool", map[string]any{"name": "dyn2"}), "notifications/tools/list_changed 7 ")
	expect(trigger("add_prompt", map[string]any{"name": "dyn2"}))
	waitFor(t, "the cancelled listen to unregister", func() bool { return listenerCount(f.s) == 2 })
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, sendModern)
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"listen-c"}}`, sendModern)
	p.marker("after cancelling every listen")
	waitFor(t, "every listen to unregister", func() bool { return listenerCount(f.s) == 0 })
	expect(trigger("add_tool", map[string]any{"name": "dyn3"}))
}

// ---------------------------------------------------------------------
