package streamhttp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/internal/httpenv"
)

// unavailableServer has a tool "echo" whose calls an interceptor refuses
// with an error wrapping jsonrpc.ErrUnavailable, as a rate limiter does
// when its store is down.
func unavailableServer() *server.Server {
	s := server.New(&server.Options{Interceptors: []intercept.Interceptor{func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, c *intercept.Call) (any, error) {
			if c.Side == intercept.Server && c.Inbound && c.Method == mcp.MethodToolsCall {
				return nil, fmt.Errorf("limiter store 10.0.0.7:6379: %w", jsonrpc.ErrUnavailable)
			}
			return next(ctx, c)
		}
	}}})
	server.AddTool(s, &mcp.Tool{Name: "echo"}, func(context.Context, *server.CallToolRequest, struct{}) (string, error) {
		return "echo", nil
	})
	return s
}

// TestHTTPUnavailable: an error answer that is jsonrpc.ErrUnavailable
// gets 503 and the generic -32603 body, in a legacy session, on a
// session-less legacy POST and on a 2026-07-28 POST; the wrapping text
// is not sent.
func TestHTTPUnavailable(t *testing.T) {
	check := func(what string, status int, body []byte) {
		t.Helper()
		m := httpenv.ParseMsg(t, body)
		if status != http.StatusServiceUnavailable || m.Error == nil || m.Error.Code != mcp.CodeInternalError ||
			m.Error.Message != jsonrpc.ErrUnavailable.Message || strings.Contains(string(body), "6379") {
			t.Errorf("%s: %d %s; want 503 with -32603 %q", what, status, body, jsonrpc.ErrUnavailable.Message)
		}
	}
	// A legacy session.
	e := newHTTPEnv(t, unavailableServer(), nil)
	sid := e.Initialize("{}")
	resp := e.Post(sid, httpenv.ToolCall(e.ID(), "echo", "{}", ""))
	m := e.ExpectStatus(resp, http.StatusServiceUnavailable)
	if m == nil || m.Error == nil || m.Error.Code != mcp.CodeInternalError || m.Error.Message != jsonrpc.ErrUnavailable.Message || strings.Contains(string(m.Raw), "6379") {
		t.Errorf("legacy session: %v", m)
	}
	// The session lives on: a request the interceptor lets through works.
	if m := e.RPC(sid, `{"jsonrpc":"2.0","id":99,"method":"tools/list"}`); m.Error != nil {
		t.Errorf("tools/list after the 503: %s", m.Raw)
	}

	// Session-less: a legacy POST and a 2026-07-28 POST.
	h := NewHandler(unavailableServer(), &Options{Stateless: true})
	ts := httptest.NewServer(h)
	t.Cleanup(func() { ts.Close(); h.Close() })
	legacy := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	status, body, err := postToolCall(ts, legacy, mcp.LatestLegacy, "echo")
	if err != nil {
		t.Fatal(err)
	}
	check("session-less legacy", status, body)
	modern := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo","arguments":{}}}`
	status, body, err = postToolCall(ts, modern, mcp.Version20260728, "echo")
	if err != nil {
		t.Fatal(err)
	}
	check("2026-07-28", status, body)
}
