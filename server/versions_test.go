package server

// Options.ProtocolVersions: validation at New, and the refusal of a
// revision not served in each era, on a stream connection (stdio) and on
// Streamable HTTP (sessions and the session-less legacy path). The
// 2024-11-05 HTTP+SSE transport is tested in server/streamhttp.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/httpenv"
)

// initRequest is a 2025-era initialize asking for version.
func initRequest(id int, version string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`, id, version)
}

// versionServer serves one tool, echo, and the revisions given.
func versionServer(versions ...string) *Server {
	f := newFixture26(&Options{ProtocolVersions: versions})
	return f.s
}

// unsupportedData decodes the data of a refusal.
func unsupportedData(t *testing.T, raw json.RawMessage) mcp.UnsupportedProtocolVersionData {
	t.Helper()
	var d mcp.UnsupportedProtocolVersionData
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("error data %s: %v", raw, err)
	}
	return d
}

func negotiated(t *testing.T, m *httpenv.WireMsg) string {
	t.Helper()
	var r mcp.InitializeResult
	if m.Error != nil || json.Unmarshal(m.Result, &r) != nil {
		t.Fatalf("initialize answered %s", m.Raw)
	}
	return r.ProtocolVersion
}

func TestProtocolVersionsOption(t *testing.T) {
	if got := New(nil).ProtocolVersions(); !slices.Equal(got, mcp.Versions()) {
		t.Errorf("default ProtocolVersions %v, want every known revision %v", got, mcp.Versions())
	}
	s := New(&Options{ProtocolVersions: []string{mcp.Version20250618, "1999-01-01", mcp.Version20260728, ""}})
	if got, want := s.ProtocolVersions(), []string{mcp.Version20260728, mcp.Version20250618}; !slices.Equal(got, want) {
		t.Errorf("ProtocolVersions %v, want %v (newest first, unknown ones dropped)", got, want)
	}
	err := s.Err()
	if err == nil || !strings.Contains(err.Error(), `"1999-01-01"`) || !strings.Contains(err.Error(), `""`) || !strings.Contains(err.Error(), "Options.ProtocolVersions") {
		t.Errorf("Err() = %v, want the two unknown revisions named", err)
	}
	if err := New(&Options{ProtocolVersions: []string{mcp.Version20251125}}).Err(); err != nil {
		t.Errorf("a valid list: Err() = %v", err)
	}
}

func TestProtocolVersionsStdio(t *testing.T) {
	t.Run("initialize offers the newest legacy revision served", func(t *testing.T) {
		s := versionServer(mcp.Version20260728, mcp.Version20250618, mcp.Version20250326)
		p := newStdioPeer(t, s)
		if v := negotiated(t, p.answer(initRequest(1, mcp.Version20251125), sendLegacy, 1)); v != mcp.Version20250618 {
			t.Errorf("asked for 2025-11-25 (not served): negotiated %q, want 2025-06-18", v)
		}
		p2 := newStdioPeer(t, s)
		if v := negotiated(t, p2.answer(initRequest(1, mcp.Version20250326), sendLegacy, 1)); v != mcp.Version20250326 {
			t.Errorf("asked for a served revision: negotiated %q, want it echoed", v)
		}
	})
	t.Run("a modern-only server refuses initialize naming what it serves", func(t *testing.T) {
		p := newStdioPeer(t, versionServer(mcp.Version20260728))
		m := p.answer(initRequest(1, mcp.Version20251125), sendLegacy, 1)
		if m.Error == nil || m.Error.Code != mcp.CodeInvalidParams {
			t.Fatalf("initialize answered %s, want -32602", m.Raw)
		}
		d := unsupportedData(t, m.Error.Data)
		if !slices.Equal(d.Supported, []string{mcp.Version20260728}) || d.Requested != mcp.Version20251125 {
			t.Errorf("data %+v, want supported [2026-07-28], requested 2025-11-25", d)
		}
		// The modern era is still served on the same connection.
		res := httpenv.CheckModernResult(t, p.answer(httpenv.Req26("d", mcp.MethodServerDiscover, nil), sendModern, "d"), "d", "")
		var sv []string
		if err := json.Unmarshal(res["supportedVersions"], &sv); err != nil || !slices.Equal(sv, []string{mcp.Version20260728}) {
			t.Errorf("server/discover supportedVersions %s", res["supportedVersions"])
		}
	})
	t.Run("a legacy-only server refuses a 2026 request with -32022", func(t *testing.T) {
		p := newStdioPeer(t, versionServer(mcp.Version20251125))
		for _, method := range []string{mcp.MethodServerDiscover, mcp.MethodToolsList} {
			m := p.answer(httpenv.Req26(method, method, nil), sendModern, method)
			e := httpenv.CheckErr(t, p.wc, m, mcp.CodeUnsupportedProtocolVersion, method)
			d := unsupportedData(t, e.Data)
			if !slices.Equal(d.Supported, []string{mcp.Version20251125}) || d.Requested != mcp.Version20260728 {
				t.Errorf("%s: data %+v, want supported [2025-11-25] (what is served), requested 2026-07-28", method, d)
			}
		}
		// The legacy era still works.
		if v := negotiated(t, p.answer(initRequest(1, mcp.Version20251125), sendLegacy, 1)); v != mcp.Version20251125 {
			t.Errorf("negotiated %q", v)
		}
	})
}

func TestProtocolVersionsHTTP(t *testing.T) {
	t.Run("session: negotiation and the MCP-Protocol-Version header", func(t *testing.T) {
		e := newHTTPEnv(t, versionServer(mcp.Version20260728, mcp.Version20250618), nil)
		resp := e.Post("", httpenv.InitBody(e.ID(), "{}")) // asks for 2025-11-25
		sid := resp.Header.Get("Mcp-Session-Id")
		m := e.ReadJSON(resp)
		var r mcp.InitializeResult
		if err := json.Unmarshal(m.Result, &r); err != nil || r.ProtocolVersion != mcp.Version20250618 || sid == "" {
			t.Fatalf("initialize answered %s (session %q), want 2025-06-18 and a session", m.Raw, sid)
		}
		h := httpenv.WithHeader("MCP-Protocol-Version", mcp.Version20250618)
		e.Expect202(e.Post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h))
		e.RPC(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, e.ID()), h)
		// A revision not served in the header: 400.
		e.ExpectStatus(e.Post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, e.ID()),
			httpenv.WithHeader("MCP-Protocol-Version", mcp.Version20251125)), http.StatusBadRequest)
	})
	t.Run("session: a modern-only server refuses initialize", func(t *testing.T) {
		e := newHTTPEnv(t, versionServer(mcp.Version20260728), nil)
		id := e.ID()
		resp := e.Post("", httpenv.InitBody(id, "{}"))
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			t.Errorf("a refused initialize opened session %q", sid)
		}
		m := e.ReadJSON(resp)
		if m.Error == nil || m.Error.Code != mcp.CodeInvalidParams {
			t.Fatalf("initialize answered %s, want -32602", m.Raw)
		}
		w := httpenv.ParseWire(t, []byte(m.Raw))
		if d := unsupportedData(t, w.Error.Data); !slices.Equal(d.Supported, []string{mcp.Version20260728}) || d.Requested != mcp.Version20251125 {
			t.Errorf("data %+v", d)
		}
		if n := e.h.SessionCount(); n != 0 {
			t.Errorf("%d sessions after a refused initialize", n)
		}
	})
	t.Run("session-less legacy path", func(t *testing.T) {
		e := newHTTPEnv(t, versionServer(mcp.Version20260728, mcp.Version20251125), &HTTPOptions{Stateless: true})
		// initialize carries its revision in the body: no header needed.
		m := e.RPC("", initRequest(int(e.ID()), mcp.Version20250326))
		var r mcp.InitializeResult
		if err := json.Unmarshal(m.Result, &r); err != nil || r.ProtocolVersion != mcp.Version20251125 {
			t.Fatalf("initialize answered %s, want 2025-11-25 offered", m.Raw)
		}
		list := func() string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, e.ID()) }
		e.RPC("", list(), httpenv.WithHeader("MCP-Protocol-Version", mcp.Version20251125))
		e.ExpectStatus(e.Post("", list(), httpenv.WithHeader("MCP-Protocol-Version", mcp.Version20250618)), http.StatusBadRequest)
		// No header: the spec's assumption, 2025-03-26, is not served.
		e.ExpectStatus(e.Post("", list()), http.StatusBadRequest)

		mo := newHTTPEnv(t, versionServer(mcp.Version20260728), &HTTPOptions{Stateless: true})
		m = mo.ReadJSON(mo.Post("", initRequest(1, mcp.Version20251125)))
		if m.Error == nil || m.Error.Code != mcp.CodeInvalidParams || !strings.Contains(m.Raw, `"supported":["2026-07-28"]`) {
			t.Errorf("modern-only, session-less initialize answered %s, want -32602 naming 2026-07-28", m.Raw)
		}
	})
	t.Run("modern request to a legacy-only server: 400 and -32022", func(t *testing.T) {
		me := newModernEnv(t, versionServer(mcp.Version20251125, mcp.Version20250618), nil)
		for _, method := range []string{mcp.MethodServerDiscover, mcp.MethodToolsList} {
			id := me.ID()
			r := me.Send(httpenv.Req26(id, method, nil), true, httpenv.H26(method, "")...)
			e := me.WantErr(r, http.StatusBadRequest, mcp.CodeUnsupportedProtocolVersion, id)
			if d := unsupportedData(t, e.Data); !slices.Equal(d.Supported, []string{mcp.Version20251125, mcp.Version20250618}) || d.Requested != mcp.Version20260728 {
				t.Errorf("%s: data %+v", method, d)
			}
		}
	})
}
