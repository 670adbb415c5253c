package streamable

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// TestModernRouteFromWriter: when the writer says what it knows of a
// modern request (transport.Message.Modern), the headers come from that,
// not from the params (which say otherwise here, to tell them apart);
// a zero Modern leaves the params to be read.
func TestModernRouteFromWriter(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		writeJSON(w, http.StatusOK, result(in.Msg.ID, `{"resultType":"complete"}`))
	})
	c := newConn(t, f, nil)
	body := request(mcp.IntID(1), mcp.MethodToolsCall, modernParams("2026-07-28", `"name":"in-body","arguments":{}`))
	known := transport.Modern{Version: "2026-07-28", Name: "from-writer", HasName: true}
	if err := c.Write(testCtx(t), transport.Message{Data: []byte(body), Modern: known}); err != nil {
		t.Fatal(err)
	}
	readMsg(t, c)
	h := f.next(t, http.MethodPost).Header
	if h.Get("Mcp-Name") != "from-writer" || h.Get("Mcp-Method") != mcp.MethodToolsCall || h.Get("MCP-Protocol-Version") != "2026-07-28" {
		t.Errorf("headers %v, want those the writer gave", h)
	}
	// A method without a name: the writer says so, and none is sent.
	body = request(mcp.IntID(2), mcp.MethodToolsList, modernParams("2026-07-28", ""))
	if err := c.Write(testCtx(t), transport.Message{Data: []byte(body), Modern: transport.Modern{Version: "2026-07-28"}}); err != nil {
		t.Fatal(err)
	}
	readMsg(t, c)
	if h := f.next(t, http.MethodPost).Header; h.Values("Mcp-Name") != nil || h.Get("Mcp-Method") != mcp.MethodToolsList {
		t.Errorf("tools/list headers %v", h)
	}
	// With the id and method too (as jsonrpc.Conn gives them), the
	// message is not decoded: its route is the writer's alone.
	body = request(mcp.IntID(4), mcp.MethodPromptsGet, modernParams("2026-07-28", `"name":"in-body"`))
	routed := transport.Modern{Version: "2026-07-28", Name: "p", HasName: true, ID: mcp.IntID(4), Method: mcp.MethodToolsCall}
	if err := c.Write(testCtx(t), transport.Message{Data: []byte(body), Modern: routed}); err != nil {
		t.Fatal(err)
	}
	if m := readMsg(t, c); m.ID != mcp.IntID(4) {
		t.Errorf("answer %v, want the one to id 4", m)
	}
	if h := f.next(t, http.MethodPost).Header; h.Get("Mcp-Method") != mcp.MethodToolsCall || h.Get("Mcp-Name") != "p" {
		t.Errorf("headers %v, want the writer's route (tools/call, p)", h)
	}
	// Zero Modern: read from the params, as for any writer.
	body = request(mcp.IntID(3), mcp.MethodToolsCall, modernParams("2026-07-28", `"name":"in-body","arguments":{}`))
	if err := c.Write(testCtx(t), transport.Message{Data: []byte(body)}); err != nil {
		t.Fatal(err)
	}
	readMsg(t, c)
	if got := f.next(t, http.MethodPost).Header.Get("Mcp-Name"); got != "in-body" {
		t.Errorf("Mcp-Name %q, want the params' in-body", got)
	}
}

// TestCanonicalHeaderNames: the names set straight into a request's
// http.Header map must be in canonical form, or net/http would send them
// apart from (and beside) a value set with Header.Set.
func TestCanonicalHeaderNames(t *testing.T) {
	for _, name := range []string{canonicalSessionID, canonicalProtocolVersion, headerMethod, headerName, "Content-Type", "Accept"} {
		if got := http.CanonicalHeaderKey(name); got != name {
			t.Errorf("%q is not canonical (%q)", name, got)
		}
	}
	if !strings.EqualFold(canonicalProtocolVersion, headerProtocolVersion) || !strings.EqualFold(canonicalSessionID, headerSessionID) {
		t.Error("the canonical names differ from the header names")
	}
}

// TestRouteWithoutEra: jsonrpc.Conn names every request it writes (id
// and method) but states the era only of a modern one. Such a request
// whose params carry the modern envelope is still read as modern (its
// headers from the params), and one without is sent as a plain legacy
// request, without being decoded.
func TestRouteWithoutEra(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		writeJSON(w, http.StatusOK, result(in.Msg.ID, `{"resultType":"complete"}`))
	})
	c := newConn(t, f, nil)
	body := request(mcp.IntID(1), mcp.MethodToolsCall, modernParams("2026-07-28", `"name":"in-body","arguments":{}`))
	named := transport.Modern{ID: mcp.IntID(1), Method: mcp.MethodToolsCall}
	if err := c.Write(testCtx(t), transport.Message{Data: []byte(body), Modern: named}); err != nil {
		t.Fatal(err)
	}
	readMsg(t, c)
	if h := f.next(t, http.MethodPost).Header; h.Get("Mcp-Name") != "in-body" || h.Get("Mcp-Method") != mcp.MethodToolsCall {
		t.Errorf("headers %v, want the params' modern route", h)
	}
	body = request(mcp.IntID(2), mcp.MethodToolsCall, `{"name":"plain","arguments":{}}`)
	named = transport.Modern{ID: mcp.IntID(2), Method: mcp.MethodToolsCall}
	if err := c.Write(testCtx(t), transport.Message{Data: []byte(body), Modern: named}); err != nil {
		t.Fatal(err)
	}
	if m := readMsg(t, c); m.ID != mcp.IntID(2) {
		t.Errorf("answer %v, want the one to id 2", m)
	}
	if h := f.next(t, http.MethodPost).Header; h.Values("Mcp-Method") != nil || h.Values("Mcp-Name") != nil {
		t.Errorf("legacy request sent with modern headers %v", h)
	}
}
