package server

// Tests of the streams of the 2026-07-28 ("modern") era over Streamable
// HTTP: cancellation by closing the response stream, handler panics, and
// subscriptions/listen (acknowledgement, tagged notifications, the filter
// following the capabilities, no leak on close). The fixture and the
// helpers are in modern_http_test.go.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/mcp"
)

// ---------------------------------------------------------------------
// 7. Cancellation.

func TestModernHTTPCancellation(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	t.Run("closing the stream", func(t *testing.T) {
		m := m.sub(t)
		for _, id := range m.IDs() {
			var addr string
			meta := httpenv.Meta26(map[string]any{mcp.MetaKeyProgressToken: "tok", mcp.MetaKeyLogLevel: "debug"})
			s := m.Stream(httpenv.Req26(id, mcp.MethodToolsCall, map[string]any{"_meta": meta, "name": "block", "arguments": map[string]any{}}), httpenv.H26(mcp.MethodToolsCall, "block", httpenv.WithConnAddr(&addr))...)
			if _, n := s.Message(); n.Method != mcp.NotificationProgress {
				t.Fatalf("first message %s", n.Raw)
			}
			httpenv.RecvT(t, f.blocked, "the handler to start")
			s.Close() // the cancellation of a 2026 request over HTTP
			rep := httpenv.RecvT(t, f.unblocked, "the handler's context to end")
			if !errors.Is(rep.cause, context.Canceled) {
				t.Errorf("cancellation cause %v, want context.Canceled", rep.cause)
			}
			// Nothing more goes out for it: what the handler tries to send
			// is refused.
			if rep.progressErr == nil || rep.logErr == nil {
				t.Errorf("after the cancellation Progress = %v, Log = %v; want both refused", rep.progressErr, rep.logErr)
			}
			httpenv.RecvT(t, m.ServerClosed(addr), "the POST handler to return")
		}
	})
	t.Run("before the answer began", func(t *testing.T) {
		m := m.sub(t)
		for _, id := range m.IDs() {
			ctx, cancel := context.WithCancel(m.Ctx)
			var addr string
			ch := m.DoAsync(http.MethodPost, "", httpenv.Req26(id, mcp.MethodToolsCall, map[string]any{"name": "block", "arguments": map[string]any{}}),
				httpenv.H26(mcp.MethodToolsCall, "block", httpenv.WithCtx(ctx), httpenv.WithConnAddr(&addr))...)
			httpenv.RecvT(t, f.blocked, "the handler to start")
			cancel()
			if a := httpenv.RecvT(t, ch, "the client to give up"); a.Err == nil {
				t.Errorf("the request was answered: %d %s", a.Resp.StatusCode, a.Body)
			}
			rep := httpenv.RecvT(t, f.unblocked, "the handler's context to end")
			if !errors.Is(rep.cause, context.Canceled) {
				t.Errorf("cancellation cause %v, want context.Canceled", rep.cause)
			}
			httpenv.RecvT(t, m.ServerClosed(addr), "the POST handler to return")
		}
	})
	// The server is still serving.
	m.Call(m.ID(), mcp.MethodToolsList, "", nil)
}

// A panicking handler is a -32603 error, not the end of the process.
func TestModernHTTPHandlerPanic(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	for _, id := range m.IDs() {
		r := m.Send(httpenv.Req26(id, mcp.MethodToolsCall, map[string]any{"name": "boom", "arguments": map[string]any{}}), true, httpenv.H26(mcp.MethodToolsCall, "boom")...)
		m.WantErr(r, http.StatusOK, mcp.CodeInternalError, id)
	}
	m.Call(m.ID(), mcp.MethodToolsList, "", nil)
}

// ---------------------------------------------------------------------
// 8. subscriptions/listen over HTTP.

// openListen opens a listen stream and checks its acknowledgement: the
// first message, tagged with the listen id (type kept), carrying the
// agreed filter. addr receives the connection's local address.
func (m *modernEnv) openListen(id any, filter map[string]any, agreed string, addr *string) *httpenv.SSEStream {
	m.T.Helper()
	opts := httpenv.H26(mcp.MethodSubscriptionsListen, "")
	if addr != nil {
		opts = append(opts, httpenv.WithConnAddr(addr))
	}
	s := m.Stream(httpenv.Req26(id, mcp.MethodSubscriptionsListen, map[string]any{"notifications": filter}), opts...)
	f, ack := s.Message()
	if f.HasID || f.HasRetry {
		m.T.Errorf("listen frame %v has an event id or retry", f)
	}
	if ack.Method != mcp.NotificationSubscriptionsAcknowledged {
		m.T.Fatalf("first listen message %s, want the acknowledgement", ack.Raw)
	}
	var p struct {
		Meta          map[string]json.RawMessage `json:"_meta"`
		Notifications json.RawMessage            `json:"notifications"`
	}
	if err := json.Unmarshal(ack.Params, &p); err != nil {
		m.T.Fatal(err)
	}
	if got := string(p.Meta[mcp.MetaKeySubscriptionID]); got != httpenv.IDJSON(id) {
		m.T.Errorf("acknowledgement subscriptionId %s, want %s", got, httpenv.IDJSON(id))
	}
	if !httpenv.JSONEqual(m.T, p.Notifications, agreed) {
		m.T.Errorf("acknowledged %s, want %s", p.Notifications, agreed)
	}
	return s
}

// expectListen reads the next listen notification: method, tag, uri.
func (m *modernEnv) expectListen(s *httpenv.SSEStream, id any, method, uri string) {
	m.T.Helper()
	_, n := s.Message()
	if n.Method != method {
		m.T.Fatalf("listen %s: got %s, want %s", httpenv.IDJSON(id), n.Raw, method)
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
		URI  string                     `json:"uri"`
	}
	if err := json.Unmarshal(n.Params, &p); err != nil {
		m.T.Fatal(err)
	}
	if got := string(p.Meta[mcp.MetaKeySubscriptionID]); got != httpenv.IDJSON(id) {
		m.T.Errorf("%s tagged %s, want %s", method, got, httpenv.IDJSON(id))
	}
	if p.URI != uri {
		m.T.Errorf("%s uri %q, want %q", method, p.URI, uri)
	}
}

// trigger makes a change through a tools/call (on a connection of its
// own: every listen holds one).
func (m *modernEnv) trigger(tool string, args map[string]any) {
	m.T.Helper()
	m.Call(m.ID(), mcp.MethodToolsCall, tool, map[string]any{"name": tool, "arguments": args})
}

func TestModernHTTPListen(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	var addr2 string
	id1, id2, id3 := m.ID(), "listen-prompts", "listen-tools"
	l1 := m.openListen(id1, map[string]any{"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": []string{"test://r", "test://t/1"}},
		`{"toolsListChanged":true,"promptsListChanged":true,"resourceSubscriptions":["test://r","test://t/1"]}`, nil)
	l2 := m.openListen(id2, map[string]any{"promptsListChanged": true, "taskIds": []string{"t1"}}, `{"promptsListChanged":true}`, &addr2)
	l3 := m.openListen(id3, map[string]any{"toolsListChanged": true, "resourcesListChanged": true, "promptsListChanged": false}, `{"toolsListChanged":true,"resourcesListChanged":true}`, nil)
	if n := listenerCount(f.s); n != 3 {
		t.Fatalf("%d listeners, want 3", n)
	}

	m.trigger("add_tool", map[string]any{"name": "dyn1"})
	m.expectListen(l1, id1, mcp.NotificationToolsListChanged, "")
	m.expectListen(l3, id3, mcp.NotificationToolsListChanged, "")

	m.trigger("touch", map[string]any{"uri": "test://other"}) // nobody listed it
	m.trigger("touch", map[string]any{"uri": "test://r"})
	m.expectListen(l1, id1, mcp.NotificationResourcesUpdated, "test://r")

	m.trigger("add_prompt", map[string]any{"name": "dyn-prompt"})
	m.expectListen(l1, id1, mcp.NotificationPromptsListChanged, "")
	m.expectListen(l2, id2, mcp.NotificationPromptsListChanged, "") // its first since the ack: no tool change reached it

	m.trigger("add_resource", map[string]any{"uri": "test://dyn"})
	m.expectListen(l3, id3, mcp.NotificationResourcesListChanged, "") // and no resources/updated before it

	// Changes made by the server itself reach the streams the same way.
	f.s.ResourceUpdated("test://t/1")
	m.expectListen(l1, id1, mcp.NotificationResourcesUpdated, "test://t/1") // no resources/list_changed before it

	// The client closing a stream ends that subscription only.
	l2.Close()
	httpenv.RecvT(t, m.ServerClosed(addr2), "the closed listen to end")
	if n := listenerCount(f.s); n != 2 {
		t.Errorf("%d listeners after one stream closed, want 2", n)
	}
	m.trigger("add_prompt", map[string]any{"name": "dyn-prompt-2"})
	m.expectListen(l1, id1, mcp.NotificationPromptsListChanged, "")

	// Shutting down ends the others gracefully: the listen result, then
	// the end of the stream.
	if err := m.h.Close(); err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct {
		s  *httpenv.SSEStream
		id any
	}{{l1, id1}, {l3, id3}} {
		_, resp := l.s.Message()
		if resp.Method != "" || string(resp.ID) != httpenv.IDJSON(l.id) {
			t.Fatalf("want the listen result, got %s", resp.Raw)
		}
		r := httpenv.CheckModernResult(t, httpenv.ParseWire(t, []byte(resp.Raw)), l.id, "fixture26")
		var meta map[string]json.RawMessage
		_ = json.Unmarshal(r["_meta"], &meta)
		if got := string(meta[mcp.MetaKeySubscriptionID]); got != httpenv.IDJSON(l.id) {
			t.Errorf("listen result subscriptionId %s, want %s", got, httpenv.IDJSON(l.id))
		}
		l.s.End()
	}
	if n := listenerCount(f.s); n != 0 {
		t.Errorf("%d listeners after Close, want 0", n)
	}
}

func TestModernHTTPListenFilterFollowsCapabilities(t *testing.T) {
	// No prompts, no resources: only what exists is agreed.
	s := New(&Options{Info: mcp.Implementation{Name: "tools-only", Version: "1"}})
	AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *CallToolRequest, in textIn) (string, error) { return in.Text, nil })
	m := newModernEnv(t, s, nil)
	var addr string
	l := m.openListen("only", map[string]any{"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true, "resourceSubscriptions": []string{"test://x"}},
		`{"toolsListChanged":true}`, &addr)
	// Prompts registered now do not reach a stream that was not granted them.
	s.AddPrompt(&mcp.Prompt{Name: "late"}, func(ctx context.Context, req *GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, nil })
	s.RemoveTools("echo")
	m.expectListen(l, "only", mcp.NotificationToolsListChanged, "")
	// Nothing asked for at all: an empty agreement, and nothing delivered.
	l0 := m.openListen(int64(0), map[string]any{}, `{}`, nil)
	AddTool(s, &mcp.Tool{Name: "echo2"}, func(ctx context.Context, req *CallToolRequest, in textIn) (string, error) { return in.Text, nil })
	m.expectListen(l, "only", mcp.NotificationToolsListChanged, "")
	l.Close()
	httpenv.RecvT(t, m.ServerClosed(addr), "the listen to end")
	if err := m.h.Close(); err != nil {
		t.Fatal(err)
	}
	_, resp := l0.Message()
	if string(resp.ID) != "0" || resp.Method != "" {
		t.Errorf("listen 0 got %s, want its result", resp.Raw)
	}
	l0.End()
	if n := listenerCount(s); n != 0 {
		t.Errorf("%d listeners left", n)
	}
}

// Many listens come and go; none is left registered.
func TestModernHTTPListenNoLeak(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	for i := range 20 {
		var addr string
		var id any = int64(1000 + i) // never answered: ids apart from m.id()'s
		if i%2 == 1 {
			id = fmt.Sprintf("l%d", i)
		}
		l := m.openListen(id, map[string]any{"toolsListChanged": true}, `{"toolsListChanged":true}`, &addr)
		if i%3 == 0 {
			m.trigger("add_tool", map[string]any{"name": fmt.Sprintf("t%d", i)})
			m.expectListen(l, id, mcp.NotificationToolsListChanged, "")
		}
		l.Close()
		httpenv.RecvT(t, m.ServerClosed(addr), "the listen to end")
	}
	if n := listenerCount(f.s); n != 0 {
		t.Errorf("%d listeners left after every stream closed", n)
	}
}
