package streamhttp

// Tests of MCP headers sent more than once: the handler checks the
// first value, a proxy may act on the last, so a request carrying two
// values of one MCP header is refused (400) before anything runs.

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/mcp"
)

// addHeader adds a second (or further) value of a header: net/http's
// client sends each value as a header line of its own.
func addHeader(k, v string) httpenv.ReqOpt {
	return func(r *http.Request) { r.Header.Add(k, v) }
}

// TestHTTPDuplicateHeadersModern: on a 2026-07-28 request every MCP
// header sent twice is a header mismatch (-32020, 400) with the
// request's id, whether the two values agree or not.
func TestHTTPDuplicateHeadersModern(t *testing.T) {
	var runs atomic.Int32
	m := newModernEnv(t, xhServer(&runs), nil)
	args := map[string]any{"region": "eu-west", "level": 7}
	params := map[string]any{"name": "xh", "arguments": args}
	base := func(more ...httpenv.ReqOpt) []httpenv.ReqOpt {
		return httpenv.H26(mcp.MethodToolsCall, "xh", append([]httpenv.ReqOpt{
			httpenv.WithHeader("Mcp-Param-Region", "eu-west"),
			httpenv.WithHeader("Mcp-Param-Level", "7"),
		}, more...)...)
	}
	// The request is served as it is.
	for _, id := range m.IDs() {
		m.WantOK(m.Send(httpenv.Req26(id, mcp.MethodToolsCall, params), true, base()...), id)
	}
	for _, tc := range []struct{ name, header, second string }{
		{"MCP-Protocol-Version, same value", "MCP-Protocol-Version", httpenv.V26},
		{"MCP-Protocol-Version, legacy second", "MCP-Protocol-Version", mcp.Version20251125},
		{"Mcp-Method, same value", "Mcp-Method", mcp.MethodToolsCall},
		{"Mcp-Method, other value", "Mcp-Method", mcp.MethodToolsList},
		{"Mcp-Name, same value", "Mcp-Name", "xh"},
		{"Mcp-Name, other tool", "Mcp-Name", "boom"},
		{"annotated Mcp-Param, same value", "Mcp-Param-Region", "eu-west"},
		{"annotated Mcp-Param, other value", "Mcp-Param-Level", "8"},
		{"unannotated Mcp-Param", "Mcp-Param-Other", "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := m.Sub(t)
			opts := base()
			if tc.header == "Mcp-Param-Other" {
				opts = append(opts, httpenv.WithHeader(tc.header, "x"))
			}
			opts = append(opts, addHeader(tc.header, tc.second))
			for _, id := range m.IDs() {
				r := m.Send(httpenv.Req26(id, mcp.MethodToolsCall, params), true, opts...)
				m.WantErr(r, http.StatusBadRequest, mcp.CodeHeaderMismatch, id)
			}
		})
	}
	// The era is the header's when the body has no envelope: a second,
	// modern MCP-Protocol-Version makes the request a 2026 one.
	t.Run("era from a second header value", func(t *testing.T) {
		m := m.Sub(t)
		id := m.ID()
		r := m.Send(httpenv.RawReq(id, mcp.MethodToolsList, nil), false, httpenv.WithHeader("MCP-Protocol-Version", mcp.Version20251125), addHeader("MCP-Protocol-Version", httpenv.V26), httpenv.WithHeader("Mcp-Method", mcp.MethodToolsList))
		m.WantErr(r, http.StatusBadRequest, mcp.CodeHeaderMismatch, id)
	})
	if n := runs.Load(); n != 2 { // the two requests served as they are
		t.Errorf("the tool ran %d times, want 2: a refused request reached it", n)
	}
}

// TestHTTPDuplicateHeadersLegacy: on legacy traffic (sessions,
// initialize, session-less servers, GET and DELETE) a repeated MCP
// header is an invalid request (-32600, 400), and nothing runs.
func TestHTTPDuplicateHeadersLegacy(t *testing.T) {
	e := newHTTPEnv(t, echoServer(), nil)
	sid := e.Initialize("{}")
	other := e.Initialize("{}")
	call := func(id int64) string { return httpenv.ToolCall(id, "echo", `{"text":"x"}`, "") }
	headers := []struct{ name, header, second string }{
		{"Mcp-Session-Id, same value", "Mcp-Session-Id", sid},
		{"Mcp-Session-Id, another session", "Mcp-Session-Id", other},
		{"MCP-Protocol-Version", "MCP-Protocol-Version", mcp.Version20251125},
		{"Mcp-Method", "Mcp-Method", mcp.MethodToolsCall},
		{"Mcp-Name", "Mcp-Name", "echo"},
		{"Mcp-Param", "Mcp-Param-Text", "x"},
	}
	for _, tc := range headers {
		t.Run("POST "+tc.name, func(t *testing.T) {
			e := e.sub(t)
			id := e.ID()
			m := e.ExpectStatus(e.Do(http.MethodPost, sid, call(id), httpenv.WithHeader(tc.header, tc.second), addHeader(tc.header, tc.second)), http.StatusBadRequest)
			if m == nil || m.Error.Code != mcp.CodeInvalidRequest {
				t.Fatalf("want -32600, got %+v", m)
			}
			if got, want := string(m.ID), httpenv.IDJSON(id); got != want {
				t.Errorf("error id %s, want %s", got, want)
			}
		})
		t.Run("GET and DELETE "+tc.name, func(t *testing.T) {
			e := e.sub(t)
			for _, method := range []string{http.MethodGet, http.MethodDelete} {
				m := e.ExpectStatus(e.Do(method, sid, "", httpenv.WithHeader(tc.header, tc.second), addHeader(tc.header, tc.second)), http.StatusBadRequest)
				if m == nil || m.Error.Code != mcp.CodeInvalidRequest {
					t.Fatalf("%s: want -32600, got %+v", method, m)
				}
			}
		})
	}
	// The session was not ended by the refused DELETEs.
	e.ReadJSON(e.Post(sid, call(e.ID())))

	t.Run("initialize", func(t *testing.T) {
		e := e.sub(t)
		before := e.h.SessionCount()
		for _, h := range []string{"MCP-Protocol-Version", "Mcp-Method"} {
			m := e.ExpectStatus(e.Do(http.MethodPost, "", httpenv.InitBody(e.ID(), "{}"), addHeader(h, mcp.Version20251125), addHeader(h, mcp.MethodInitialize)), http.StatusBadRequest)
			if m == nil || m.Error.Code != mcp.CodeInvalidRequest {
				t.Fatalf("%s twice: want -32600, got %+v", h, m)
			}
		}
		if n := e.h.SessionCount(); n != before {
			t.Errorf("SessionCount %d after refused initializes, want %d", n, before)
		}
	})
	t.Run("session-less server", func(t *testing.T) {
		e := newHTTPEnv(t, echoServer(), &Options{Stateless: true})
		id := e.ID()
		m := e.ExpectStatus(e.Do(http.MethodPost, "", call(id), httpenv.WithHeader("Mcp-Name", "echo"), addHeader("Mcp-Name", "other")), http.StatusBadRequest)
		if m == nil || m.Error.Code != mcp.CodeInvalidRequest {
			t.Fatalf("want -32600, got %+v", m)
		}
	})
}
