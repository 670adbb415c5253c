package streamhttp

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
)

func TestHTTPStateless(t *testing.T) {
	s := elicitServer()
	addProgressTool(s, nil)
	e := newHTTPEnv(t, s, &Options{Stateless: true})

	// initialize is answered and creates nothing.
	resp := e.Post("", httpenv.InitBody(e.ID(), httpenv.ElicitCaps))
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		t.Errorf("stateless initialize issued session id %q", sid)
	}
	m := e.ReadJSON(resp)
	e.Obs(wirecheck.ServerToClient, []byte(m.Raw))
	if m.Error != nil || !strings.Contains(string(m.Result), `"protocolVersion":"2025-11-25"`) {
		t.Errorf("initialize answered %s", m.Raw)
	}
	e.Expect202(e.Post("", `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if n := e.h.SessionCount(); n != 0 {
		t.Errorf("SessionCount = %d, want 0", n)
	}
	if n := len(e.srv.Sessions()); n != 0 {
		t.Errorf("Server.Sessions: %d, want 0", n)
	}

	// Requests need no session id, with or without a version header.
	m = e.RPC("", httpenv.ToolCall(e.ID(), "echo", `{"text":"s"}`, ""), httpenv.WithHeader("MCP-Protocol-Version", "2025-11-25"))
	if text, _ := httpenv.ToolText(t, m); text != `{"text":"s"}` {
		t.Errorf("echo answered %q", text)
	}
	e.RPC("", `{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	e.ExpectStatus(e.Do(http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, httpenv.WithHeader("MCP-Protocol-Version", "1999-01-01")), http.StatusBadRequest)
	// A session id from elsewhere is ignored, not looked up.
	e.RPC("", `{"jsonrpc":"2.0","id":"p2","method":"ping"}`, httpenv.WithHeader("Mcp-Session-Id", "whatever"))

	// Per-client state has nowhere to live.
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":"lvl","method":"logging/setLevel","params":{"level":"debug"}}`,
		`{"jsonrpc":"2.0","id":"sub","method":"resources/subscribe","params":{"uri":"file:///marker"}}`,
	} {
		if m := e.RPC("", body); m.Error == nil || m.Error.Code != mcp.CodeMethodNotFound {
			t.Errorf("%s answered %s, want -32601", body, m.Raw)
		}
	}

	// Server→client requests are refused: the tool gets ErrNoSession.
	m = e.RPC("", httpenv.ToolCall(e.ID(), "ask", "", ""))
	text, isErr := httpenv.ToolText(t, m)
	if !isErr || !strings.Contains(text, server.ErrNoSession.Error()) {
		t.Errorf("ask answered %q (isError %v), want an isError result with %q", text, isErr, server.ErrNoSession)
	}

	// Notifications of a request still ride its own stream, without ids
	// (nothing can be resumed) and so without a priming event.
	id := e.ID()
	st := e.OpenSSE(e.Post("", httpenv.ToolCall(id, "progress", `{"steps":2,"tag":"s"}`, "tok")))
	var methods []string
	for {
		f, m := st.Message()
		if f.HasID {
			t.Errorf("stateless event with id %q", f.ID)
		}
		methods = append(methods, m.Method)
		if m.Method == "" {
			break
		}
	}
	st.End()
	if strings.Join(methods, ",") != "notifications/progress,notifications/message,notifications/progress," {
		t.Errorf("stream carried %q", methods)
	}

	// No GET stream, no DELETE.
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		resp := e.Do(method, "", "")
		allow := resp.Header.Get("Allow")
		e.ExpectStatus(resp, http.StatusMethodNotAllowed)
		if allow != "POST" {
			t.Errorf("%s: Allow %q, want POST", method, allow)
		}
	}
	// The hardening applies.
	e.ExpectStatus(e.Do(http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, httpenv.WithHost("evil.example.com")), http.StatusForbidden)
	e.ExpectStatus(e.Do(http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, httpenv.WithHeader("Content-Type", "text/plain")), http.StatusUnsupportedMediaType)
	if n := e.h.SessionCount(); n != 0 {
		t.Errorf("SessionCount = %d, want 0", n)
	}
}
