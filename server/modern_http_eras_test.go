package server

// Tests of the 2026-07-28 ("modern") era over Streamable HTTP, beside
// the legacy one: the methods that 2026-07-28 removed and unknown
// methods (-32601, 404), GET and DELETE without a session (405 for a
// 2026 client, 400 for a legacy one), and both eras on one endpoint at
// once. The fixture and the helpers are in modern_http_test.go.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
)

// ---------------------------------------------------------------------
// 2. Removed and unknown methods; GET and DELETE.

func TestModernHTTPMethodNotFound(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	params := map[string]any{"uri": "test://r", "level": "info", "protocolVersion": httpenv.V26, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c", "version": "1"}}
	for _, method := range []string{mcp.MethodInitialize, mcp.MethodPing, mcp.MethodLoggingSetLevel, mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe, "no/such", "tasks/list"} {
		t.Run(method, func(t *testing.T) {
			m := m.sub(t)
			for _, id := range m.IDs() {
				// These methods do not exist in 2026-07-28: the requests are
				// checked on their own, not against the schema.
				r := m.Send(httpenv.Req26(id, method, params), false, httpenv.H26(method, "")...)
				m.WantErr(r, http.StatusNotFound, mcp.CodeMethodNotFound, id)
			}
		})
	}
	t.Run("capability not offered", func(t *testing.T) {
		// A server without prompts does not know prompts/list.
		s := New(nil)
		AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *CallToolRequest, in textIn) (string, error) { return in.Text, nil })
		m := newModernEnv(t, s, nil)
		for _, id := range m.IDs() {
			m.WantErr(m.Send(httpenv.Req26(id, mcp.MethodPromptsList, nil), true, httpenv.H26(mcp.MethodPromptsList, "")...), http.StatusNotFound, mcp.CodeMethodNotFound, id)
		}
	})
}

func TestModernHTTPGetDeleteWithoutSession(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		// A 2026 client has no session: GET and DELETE are not for it
		// (streamable-http: 405).
		resp := m.Do(method, "", "", httpenv.WithHeader("MCP-Protocol-Version", httpenv.V26))
		m.ExpectStatus(resp, http.StatusMethodNotAllowed)
		if allow := resp.Header.Get("Allow"); !strings.Contains(allow, "POST") {
			t.Errorf("%s: 405 with Allow %q, want POST listed", method, allow)
		}
		// A legacy client without a session id is a bad request (2025-11-25).
		m.ExpectStatus(m.Do(method, "", ""), http.StatusBadRequest)
		m.ExpectStatus(m.Do(method, "", "", httpenv.WithHeader("MCP-Protocol-Version", mcp.Version20251125)), http.StatusBadRequest)
	}
	// With a legacy session the session rules apply, whatever the header.
	sid := m.legacy.Initialize("{}")
	m.ExpectStatus(m.Do(http.MethodGet, sid, "", httpenv.WithHeader("MCP-Protocol-Version", httpenv.V26)), http.StatusBadRequest)
	m.ExpectStatus(m.Do(http.MethodDelete, sid, ""), http.StatusNoContent)
}

// ---------------------------------------------------------------------
// 9. Both eras on one endpoint.

func TestModernHTTPBothErasAtOnce(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	sid := m.legacy.Initialize(`{"elicitation":{}}`)

	// A legacy tools/call waits for its user's answer, over its own POST
	// stream, while modern and legacy requests come and go.
	askID := m.ID()
	ask := m.legacy.OpenSSE(m.legacy.Post(sid, httpenv.ToolCall(askID, "ask", "", "")))
	ask.Prime(0)
	_, el := ask.Message()
	if el.Method != mcp.MethodElicitationCreate {
		t.Fatalf("want elicitation/create on the legacy POST stream, got %s", el.Raw)
	}

	const n = 8
	type pending struct {
		id     any
		body   string
		ch     <-chan httpenv.AsyncAnswer
		modern bool
	}
	var all []pending
	for i := range n {
		id := any(m.ID())
		if i%2 == 1 {
			id = fmt.Sprintf("m-%d", m.ID())
		}
		body := httpenv.Req26(id, mcp.MethodToolsCall, map[string]any{"name": "echo", "arguments": map[string]any{"text": fmt.Sprintf("modern %d", i)}})
		m.Obs(wirecheck.ClientToServer, []byte(body))
		all = append(all, pending{id: id, body: body, modern: true, ch: m.DoAsync(http.MethodPost, "", body, httpenv.H26(mcp.MethodToolsCall, "echo")...)})
		lid := m.ID()
		lbody := httpenv.ToolCall(lid, "echo", fmt.Sprintf(`{"text":"legacy %d"}`, i), "")
		all = append(all, pending{id: lid, body: lbody, ch: m.legacy.PostAsync(sid, lbody)})
	}
	// A modern "ask" cannot ask: 2026 has no server→client requests.
	r := m.Call(m.ID(), mcp.MethodToolsCall, "ask", map[string]any{"name": "ask", "arguments": map[string]any{}})
	if text, isErr := httpenv.ResultText(t, r); !isErr || !strings.Contains(text, "input-required") {
		t.Errorf("modern ask answered %q (isError %v)", text, isErr)
	}
	for i, p := range all {
		a := httpenv.RecvT(t, p.ch, "an answer")
		if a.Err != nil {
			t.Fatalf("request %d: %v", i, a.Err)
		}
		if a.Resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: status %d: %s", i, a.Resp.StatusCode, a.Body)
		}
		msg := httpenv.ParseWire(t, a.Body)
		var res map[string]json.RawMessage
		if err := json.Unmarshal(msg.Result, &res); err != nil {
			t.Fatalf("request %d: %s", i, a.Body)
		}
		if p.modern {
			m.Obs(wirecheck.ServerToClient, a.Body)
			httpenv.CheckModernResult(t, msg, p.id, "fixture26")
		} else {
			m.legacy.Obs(wirecheck.ServerToClient, a.Body)
			if _, ok := res["resultType"]; ok {
				t.Errorf("legacy result with resultType: %s", a.Body)
			}
			if _, ok := res["_meta"]; ok {
				t.Errorf("legacy result with _meta: %s", a.Body)
			}
		}
		text, _ := httpenv.ResultText(t, res)
		want := "legacy"
		if p.modern {
			want = "modern"
		}
		if !strings.HasPrefix(text, want) {
			t.Errorf("request %d answered %q, want a %s echo", i, text, want)
		}
	}
	if mo, le := f.modernEcho.Load(), f.legacyEcho.Load(); mo != n || le != n {
		t.Errorf("the echo handler ran %d times for modern and %d for legacy requests, want %d each", mo, le, n)
	}
	// The legacy elicitation completes.
	m.legacy.Expect202(m.legacy.Post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"Ada"}}}`, el.ID)))
	_, res := ask.Message()
	if text, _ := httpenv.ToolText(t, res); text != "answered accept" {
		t.Errorf("legacy ask answered %q", text)
	}
	ask.End()

	// The same list in both shapes.
	legacyList := m.legacy.RPC(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, m.ID()))
	var lr map[string]json.RawMessage
	_ = json.Unmarshal(legacyList.Result, &lr)
	for _, k := range []string{"resultType", "ttlMs", "cacheScope", "_meta"} {
		if _, ok := lr[k]; ok {
			t.Errorf("legacy tools/list has %s", k)
		}
	}
	mr := m.Call(m.ID(), mcp.MethodToolsList, "", nil)
	for _, k := range []string{"resultType", "ttlMs", "cacheScope", "_meta"} {
		if _, ok := mr[k]; !ok {
			t.Errorf("modern tools/list lacks %s", k)
		}
	}
	if !httpenv.JSONEqual(t, mr["tools"], string(lr["tools"])) {
		t.Error("the two eras list different tools")
	}
	if n := m.h.SessionCount(); n != 1 {
		t.Errorf("%d sessions, want only the legacy one", n)
	}
}
