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

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
)

// ---------------------------------------------------------------------
// 2. Removed and unknown methods; GET and DELETE.

func TestModernHTTPMethodNotFound(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	params := map[string]any{"uri": "test://r", "level": "info", "protocolVersion": v26, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c", "version": "1"}}
	for _, method := range []string{mcp.MethodInitialize, mcp.MethodPing, mcp.MethodLoggingSetLevel, mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe, "no/such", "tasks/list"} {
		t.Run(method, func(t *testing.T) {
			m := m.sub(t)
			for _, id := range m.ids() {
				// These methods do not exist in 2026-07-28: the requests are
				// checked on their own, not against the schema.
				r := m.send(req26(id, method, params), false, h26(method, "")...)
				m.wantErr(r, http.StatusNotFound, mcp.CodeMethodNotFound, id)
			}
		})
	}
	t.Run("capability not offered", func(t *testing.T) {
		// A server without prompts does not know prompts/list.
		s := New(nil)
		AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *CallToolRequest, in textIn) (string, error) { return in.Text, nil })
		m := newModernEnv(t, s, nil)
		for _, id := range m.ids() {
			m.wantErr(m.send(req26(id, mcp.MethodPromptsList, nil), true, h26(mcp.MethodPromptsList, "")...), http.StatusNotFound, mcp.CodeMethodNotFound, id)
		}
	})
}

func TestModernHTTPGetDeleteWithoutSession(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		// A 2026 client has no session: GET and DELETE are not for it
		// (streamable-http: 405).
		resp := m.do(method, "", "", withHeader("MCP-Protocol-Version", v26))
		m.expectStatus(resp, http.StatusMethodNotAllowed)
		if allow := resp.Header.Get("Allow"); !strings.Contains(allow, "POST") {
			t.Errorf("%s: 405 with Allow %q, want POST listed", method, allow)
		}
		// A legacy client without a session id is a bad request (2025-11-25).
		m.expectStatus(m.do(method, "", ""), http.StatusBadRequest)
		m.expectStatus(m.do(method, "", "", withHeader("MCP-Protocol-Version", mcp.Version20251125)), http.StatusBadRequest)
	}
	// With a legacy session the session rules apply, whatever the header.
	sid := m.legacy.initialize("{}")
	m.expectStatus(m.do(http.MethodGet, sid, "", withHeader("MCP-Protocol-Version", v26)), http.StatusBadRequest)
	m.expectStatus(m.do(http.MethodDelete, sid, ""), http.StatusNoContent)
}

// ---------------------------------------------------------------------
// 9. Both eras on one endpoint.

func TestModernHTTPBothErasAtOnce(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	sid := m.legacy.initialize(`{"elicitation":{}}`)

	// A legacy tools/call waits for its user's answer, over its own POST
	// stream, while modern and legacy requests come and go.
	askID := m.id()
	ask := m.legacy.openSSE(m.legacy.post(sid, toolCall(askID, "ask", "", "")))
	ask.prime(0)
	_, el := ask.message()
	if el.Method != mcp.MethodElicitationCreate {
		t.Fatalf("want elicitation/create on the legacy POST stream, got %s", el.raw)
	}

	const n = 8
	type pending struct {
		id     any
		body   string
		ch     <-chan asyncAnswer
		modern bool
	}
	var all []pending
	for i := range n {
		id := any(m.id())
		if i%2 == 1 {
			id = fmt.Sprintf("m-%d", m.id())
		}
		body := req26(id, mcp.MethodToolsCall, map[string]any{"name": "echo", "arguments": map[string]any{"text": fmt.Sprintf("modern %d", i)}})
		m.obs(wirecheck.ClientToServer, []byte(body))
		all = append(all, pending{id: id, body: body, modern: true, ch: m.doAsync(http.MethodPost, "", body, h26(mcp.MethodToolsCall, "echo")...)})
		lid := m.id()
		lbody := toolCall(lid, "echo", fmt.Sprintf(`{"text":"legacy %d"}`, i), "")
		all = append(all, pending{id: lid, body: lbody, ch: m.legacy.postAsync(sid, lbody)})
	}
	// A modern "ask" cannot ask: 2026 has no server→client requests.
	r := m.call(m.id(), mcp.MethodToolsCall, "ask", map[string]any{"name": "ask", "arguments": map[string]any{}})
	if text, isErr := resultText(t, r); !isErr || !strings.Contains(text, "input-required") {
		t.Errorf("modern ask answered %q (isError %v)", text, isErr)
	}
	for i, p := range all {
		a := recvT(t, p.ch, "an answer")
		if a.err != nil {
			t.Fatalf("request %d: %v", i, a.err)
		}
		if a.resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: status %d: %s", i, a.resp.StatusCode, a.body)
		}
		msg := parseWire(t, a.body)
		var res map[string]json.RawMessage
		if err := json.Unmarshal(msg.Result, &res); err != nil {
			t.Fatalf("request %d: %s", i, a.body)
		}
		if p.modern {
			m.obs(wirecheck.ServerToClient, a.body)
			checkModernResult(t, msg, p.id, "fixture26")
		} else {
			m.legacy.obs(wirecheck.ServerToClient, a.body)
			if _, ok := res["resultType"]; ok {
				t.Errorf("legacy result with resultType: %s", a.body)
			}
			if _, ok := res["_meta"]; ok {
				t.Errorf("legacy result with _meta: %s", a.body)
			}
		}
		text, _ := resultText(t, res)
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
	m.legacy.expect202(m.legacy.post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"Ada"}}}`, el.ID)))
	_, res := ask.message()
	if text, _ := toolText(t, res); text != "answered accept" {
		t.Errorf("legacy ask answered %q", text)
	}
	ask.end()

	// The same list in both shapes.
	legacyList := m.legacy.rpc(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, m.id()))
	var lr map[string]json.RawMessage
	_ = json.Unmarshal(legacyList.Result, &lr)
	for _, k := range []string{"resultType", "ttlMs", "cacheScope", "_meta"} {
		if _, ok := lr[k]; ok {
			t.Errorf("legacy tools/list has %s", k)
		}
	}
	mr := m.call(m.id(), mcp.MethodToolsList, "", nil)
	for _, k := range []string{"resultType", "ttlMs", "cacheScope", "_meta"} {
		if _, ok := mr[k]; !ok {
			t.Errorf("modern tools/list lacks %s", k)
		}
	}
	if !jsonEqual(t, mr["tools"], string(lr["tools"])) {
		t.Error("the two eras list different tools")
	}
	if n := m.h.SessionCount(); n != 1 {
		t.Errorf("%d sessions, want only the legacy one", n)
	}
}
