package server

// Tests of the SEP-2243 headers of the 2026-07-28 ("modern") era over
// Streamable HTTP: the standard headers (Mcp-Method, Mcp-Name) and their
// checks, the headers as sent on the wire, whitespace in what a handler
// sees, the parameter headers (Mcp-Param-*, from x-mcp-header) and the
// checks of x-mcp-header at registration. The fixture and the helpers
// are in modern_http_test.go.

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
)

// ---------------------------------------------------------------------
// 3. SEP-2243 headers.

func b64(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }

func TestModernHTTPStandardHeaders(t *testing.T) {
	f := newFixture26(nil)
	// Names that look like the sentinel without being one.
	for _, name := range []string{"=?base64?ZWNobw==", "ZWNobw==?=", "=?BASE64?ZWNobw==?="} {
		AddTool(f.s, &mcp.Tool{Name: name}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
			return "literal", nil
		})
	}
	for _, name := range []string{"héllo wörld", "ÿþ"} {
		AddTool(f.s, &mcp.Tool{Name: name}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
			return "unicode", nil
		})
	}
	if b64("ÿþ") == "=?base64?"+base64.URLEncoding.EncodeToString([]byte("ÿþ"))+"?=" {
		t.Fatal("the url-alphabet case needs a name whose encodings differ")
	}
	m := newModernEnv(t, f.s, nil)
	call := func(name string) map[string]any {
		return map[string]any{"name": name, "arguments": map[string]any{}}
	}
	echo := map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}
	greet := map[string]any{"name": "greet", "arguments": map[string]any{"who": "Ada"}}
	read := map[string]any{"uri": "test://r"}
	cases := []struct {
		name   string
		method string
		params map[string]any
		opts   []httpenv.ReqOpt // after the correct headers
		ok     bool             // served; otherwise -32020/400
	}{
		{"Mcp-Method missing", mcp.MethodToolsList, nil, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Method", "")}, false},
		{"Mcp-Method other than the body", mcp.MethodToolsList, nil, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Method", mcp.MethodPromptsList)}, false},
		{"Mcp-Method uppercase", mcp.MethodToolsCall, echo, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Method", "TOOLS/CALL")}, false},
		{"Mcp-Method capitalized", mcp.MethodServerDiscover, nil, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Method", "Server/Discover")}, false},
		{"Mcp-Method empty", mcp.MethodToolsList, nil, []httpenv.ReqOpt{httpenv.WithRawHeader("Mcp-Method", "")}, false},
		{"header name lowercase", mcp.MethodToolsCall, echo, []httpenv.ReqOpt{httpenv.WithRawHeader("mcp-method", mcp.MethodToolsCall), httpenv.WithRawHeader("mcp-name", "echo"), httpenv.WithRawHeader("mcp-protocol-version", httpenv.V26)}, true},
		{"header name uppercase", mcp.MethodToolsCall, echo, []httpenv.ReqOpt{httpenv.WithRawHeader("MCP-METHOD", mcp.MethodToolsCall), httpenv.WithRawHeader("MCP-NAME", "echo")}, true},
		{"Mcp-Name missing (tools/call)", mcp.MethodToolsCall, echo, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", "")}, false},
		{"Mcp-Name other (tools/call)", mcp.MethodToolsCall, echo, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", "greet")}, false},
		{"Mcp-Name other case (tools/call)", mcp.MethodToolsCall, echo, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", "Echo")}, false},
		{"Mcp-Name missing (prompts/get)", mcp.MethodPromptsGet, greet, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", "")}, false},
		{"Mcp-Name other (prompts/get)", mcp.MethodPromptsGet, greet, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", "echo")}, false},
		{"Mcp-Name missing (resources/read)", mcp.MethodResourcesRead, read, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", "")}, false},
		{"Mcp-Name other (resources/read)", mcp.MethodResourcesRead, read, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", "test://cached")}, false},
		{"Mcp-Name the name, not the uri (resources/read)", mcp.MethodResourcesRead, read, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", "r")}, false},
		{"Mcp-Name base64", mcp.MethodToolsCall, echo, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", b64("echo"))}, true},
		{"Mcp-Name base64 of a uri", mcp.MethodResourcesRead, read, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", b64("test://r"))}, true},
		{"Mcp-Name base64 of non-ASCII", mcp.MethodToolsCall, call("héllo wörld"), []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", b64("héllo wörld"))}, true},
		{"Mcp-Name base64 of another name", mcp.MethodToolsCall, echo, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", b64("greet"))}, false},
		{"Mcp-Name base64 bad padding", mcp.MethodToolsCall, echo, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", "=?base64?ZWNobw?=")}, false},
		{"Mcp-Name base64 bad alphabet", mcp.MethodToolsCall, echo, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", "=?base64?ZW*obw==?=")}, false},
		{"Mcp-Name base64 url alphabet", mcp.MethodToolsCall, call("ÿþ"), []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", "=?base64?"+base64.URLEncoding.EncodeToString([]byte("ÿþ"))+"?=")}, false},
		{"Mcp-Name base64 std alphabet", mcp.MethodToolsCall, call("ÿþ"), []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", b64("ÿþ"))}, true},
		{"Mcp-Name prefix only is literal", mcp.MethodToolsCall, call("=?base64?ZWNobw=="), []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", "=?base64?ZWNobw==")}, true},
		{"Mcp-Name suffix only is literal", mcp.MethodToolsCall, call("ZWNobw==?="), []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", "ZWNobw==?=")}, true},
		{"Mcp-Name uppercase marker is literal", mcp.MethodToolsCall, call("=?BASE64?ZWNobw==?="), []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", "=?BASE64?ZWNobw==?=")}, true},
		{"Mcp-Name uppercase marker is not decoded", mcp.MethodToolsCall, echo, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", "=?BASE64?ZWNobw==?=")}, false},
		{"Mcp-Name ignored where not defined", mcp.MethodToolsList, nil, []httpenv.ReqOpt{httpenv.WithHeader("Mcp-Name", "whatever")}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := m.sub(t)
			name := ""
			switch tc.method {
			case mcp.MethodToolsCall, mcp.MethodPromptsGet:
				name, _ = tc.params["name"].(string)
			case mcp.MethodResourcesRead:
				name, _ = tc.params["uri"].(string)
			}
			for _, id := range m.IDs() {
				r := m.Send(httpenv.Req26(id, tc.method, tc.params), true, httpenv.H26(tc.method, name, tc.opts...)...)
				if tc.ok {
					m.WantOK(r, id)
				} else {
					m.WantErr(r, http.StatusBadRequest, mcp.CodeHeaderMismatch, id)
				}
			}
		})
	}
}

// rawPost sends a POST written byte for byte (header names and values
// exactly as given, which net/http's client would normalize) on a fresh
// connection and returns the answer.
func (m *modernEnv) rawPost(headers []string, body string) *httpenv.Reply {
	m.T.Helper()
	conn, err := net.Dial("tcp", m.TS.Listener.Addr().String())
	if err != nil {
		m.T.Fatal(err)
	}
	defer conn.Close()
	var b strings.Builder
	b.WriteString("POST / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n")
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	if _, err := io.WriteString(conn, b.String()); err != nil {
		m.T.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(httpenv.HangGuard))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		m.T.Fatal(err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		m.T.Fatal(err)
	}
	m.Obs(wirecheck.ClientToServer, []byte(body))
	m.Obs(wirecheck.ServerToClient, raw)
	return &httpenv.Reply{Status: resp.StatusCode, Ctype: resp.Header.Get("Content-Type"), WireMsg: httpenv.ParseWire(m.T, raw)}
}

// The wire as another client may write it: header names in any case,
// optional whitespace around values (RFC 9110 OWS, not part of the value),
// values compared case-sensitively.
func TestModernHTTPHeadersOnTheWire(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	echo := map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}
	for _, tc := range []struct {
		name    string
		headers []string
		ok      bool
	}{
		{"lowercase names", []string{"mcp-protocol-version: " + httpenv.V26, "mcp-method: tools/call", "mcp-name: echo"}, true},
		{"uppercase names", []string{"MCP-PROTOCOL-VERSION: " + httpenv.V26, "MCP-METHOD: tools/call", "MCP-NAME: echo"}, true},
		{"whitespace around values", []string{"MCP-Protocol-Version: \t" + httpenv.V26 + " ", "Mcp-Method:   tools/call  ", "Mcp-Name: \techo\t"}, true},
		{"whitespace around a base64 value", []string{"MCP-Protocol-Version: " + httpenv.V26, "Mcp-Method: tools/call", "Mcp-Name:  " + b64("echo") + "  "}, true},
		{"uppercase value", []string{"MCP-Protocol-Version: " + httpenv.V26, "Mcp-Method: Tools/Call", "Mcp-Name: echo"}, false},
		{"uppercase name value", []string{"MCP-Protocol-Version: " + httpenv.V26, "Mcp-Method: tools/call", "Mcp-Name: ECHO"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := m.sub(t)
			for _, id := range m.IDs() {
				r := m.rawPost(tc.headers, httpenv.Req26(id, mcp.MethodToolsCall, echo))
				if tc.ok {
					m.WantOK(r, id)
				} else {
					m.WantErr(r, http.StatusBadRequest, mcp.CodeHeaderMismatch, id)
				}
			}
		})
	}
}

// Surrounding whitespace reaching the handler itself (an embedding that
// does not trim header values, here a recorder) is tolerated too.
func TestModernHTTPHeaderWhitespaceInHandler(t *testing.T) {
	f := newFixture26(nil)
	h := NewHTTPHandler(f.s, nil)
	defer h.Close()
	wc := wirecheck.For(t, httpenv.V26)
	for _, id := range []any{int64(1), "one"} {
		body := httpenv.Req26(id, mcp.MethodToolsCall, map[string]any{"name": "xh", "arguments": map[string]any{"region": "eu", "level": 3}})
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.Host = "localhost"
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", httpenv.AcceptBoth)
		r.Header.Set("MCP-Protocol-Version", httpenv.V26)
		r.Header["Mcp-Method"] = []string{" tools/call\t"}
		r.Header["Mcp-Name"] = []string{"\txh "}
		r.Header["Mcp-Param-Region"] = []string{"  eu "}
		r.Header["Mcp-Param-Level"] = []string{" 3 "}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		msg := httpenv.ParseWire(t, w.Body.Bytes())
		if w.Code != http.StatusOK || msg.Error != nil {
			t.Fatalf("status %d: %s", w.Code, w.Body.Bytes())
		}
		if err := wc.CheckResponse([]byte(body), w.Body.Bytes()); err != nil {
			t.Error(err)
		}
		httpenv.CheckModernResult(t, msg, id, "fixture26")
	}
}

func TestModernHTTPParamHeaders(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	base := func() map[string]any {
		return map[string]any{"region": "eu-west", "level": 7, "dry": true, "scope": map[string]any{"zone": "z1"}, "note": "n"}
	}
	with := func(mods map[string]any) map[string]any {
		a := base()
		for k, v := range mods {
			if v == nil {
				delete(a, k)
			} else {
				a[k] = v
			}
		}
		return a
	}
	hs := func(mods ...httpenv.ReqOpt) []httpenv.ReqOpt {
		return append([]httpenv.ReqOpt{
			httpenv.WithHeader("Mcp-Param-Region", "eu-west"),
			httpenv.WithHeader("Mcp-Param-Level", "7"),
			httpenv.WithHeader("Mcp-Param-Dry-Run", "true"),
			httpenv.WithHeader("Mcp-Param-Zone", "z1"),
		}, mods...)
	}
	cases := []struct {
		name string
		args map[string]any
		opts []httpenv.ReqOpt
		ok   bool // served (a result); otherwise -32020/400
	}{
		{"all match", base(), hs(), true},
		{"integer compared numerically", base(), hs(httpenv.WithHeader("Mcp-Param-Level", "07")), true},
		{"integer written 7.0 in the body", with(map[string]any{"level": json.RawMessage("7.0")}), hs(), true},
		{"negative integer", with(map[string]any{"level": -12}), hs(httpenv.WithHeader("Mcp-Param-Level", "-12")), true},
		{"string as base64", base(), hs(httpenv.WithHeader("Mcp-Param-Region", b64("eu-west"))), true},
		{"non-ASCII string as base64", with(map[string]any{"region": "Grüße, 世界"}), hs(httpenv.WithHeader("Mcp-Param-Region", b64("Grüße, 世界"))), true},
		{"string with spaces inside as base64", with(map[string]any{"region": " padded "}), hs(httpenv.WithHeader("Mcp-Param-Region", b64(" padded "))), true},
		{"sentinel-looking string, literal", with(map[string]any{"region": "=?base64?abc"}), hs(httpenv.WithHeader("Mcp-Param-Region", "=?base64?abc")), true},
		{"sentinel-looking string, encoded", with(map[string]any{"region": "=?base64?abc?="}), hs(httpenv.WithHeader("Mcp-Param-Region", b64("=?base64?abc?="))), true},
		{"absent value, no header", with(map[string]any{"dry": nil}), hs(httpenv.WithHeader("Mcp-Param-Dry-Run", "")), true},
		{"absent nested value, no header", with(map[string]any{"scope": map[string]any{}}), hs(httpenv.WithHeader("Mcp-Param-Zone", "")), true},
		{"header name lowercase", base(), hs(httpenv.WithHeader("Mcp-Param-Region", ""), httpenv.WithRawHeader("mcp-param-region", "eu-west")), true},
		{"header name uppercase", base(), hs(httpenv.WithHeader("Mcp-Param-Level", ""), httpenv.WithRawHeader("MCP-PARAM-LEVEL", "7")), true},
		{"unannotated argument needs no header", with(map[string]any{"note": "anything"}), hs(), true},

		{"string mismatch", base(), hs(httpenv.WithHeader("Mcp-Param-Region", "eu-east")), false},
		{"string case differs", base(), hs(httpenv.WithHeader("Mcp-Param-Region", "EU-WEST")), false},
		{"integer mismatch", base(), hs(httpenv.WithHeader("Mcp-Param-Level", "8")), false},
		{"integer not a number", base(), hs(httpenv.WithHeader("Mcp-Param-Level", "seven")), false},
		{"integer written as a float", base(), hs(httpenv.WithHeader("Mcp-Param-Level", "7.0")), false},
		{"boolean mismatch", base(), hs(httpenv.WithHeader("Mcp-Param-Dry-Run", "false")), false},
		{"boolean capitalized", base(), hs(httpenv.WithHeader("Mcp-Param-Dry-Run", "True")), false},
		{"boolean as 1", base(), hs(httpenv.WithHeader("Mcp-Param-Dry-Run", "1")), false},
		{"header missing, value in the body", base(), hs(httpenv.WithHeader("Mcp-Param-Region", "")), false},
		{"nested header missing", base(), hs(httpenv.WithHeader("Mcp-Param-Zone", "")), false},
		{"nested mismatch", base(), hs(httpenv.WithHeader("Mcp-Param-Zone", "z2")), false},
		{"header present, value absent", with(map[string]any{"dry": nil}), hs(), false},
		{"header present, value null", with(map[string]any{"dry": json.RawMessage("null")}), hs(), false},
		{"header present, nested value null", with(map[string]any{"scope": map[string]any{"zone": nil}}), hs(), false},
		{"base64 bad padding", base(), hs(httpenv.WithHeader("Mcp-Param-Region", "=?base64?ZXUtd2VzdA=?=")), false},
		{"base64 bad alphabet", base(), hs(httpenv.WithHeader("Mcp-Param-Region", "=?base64?ZXUt*2VzdA==?=")), false},
		{"base64 of another value", base(), hs(httpenv.WithHeader("Mcp-Param-Region", b64("eu-east"))), false},
		{"base64 for an integer, other value", base(), hs(httpenv.WithHeader("Mcp-Param-Level", b64("8"))), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := m.sub(t)
			for _, id := range m.IDs() {
				r := m.Send(httpenv.Req26(id, mcp.MethodToolsCall, map[string]any{"name": "xh", "arguments": tc.args}), true, httpenv.H26(mcp.MethodToolsCall, "xh", tc.opts...)...)
				if !tc.ok {
					m.WantErr(r, http.StatusBadRequest, mcp.CodeHeaderMismatch, id)
					continue
				}
				res := m.WantOK(r, id)
				if text, isErr := httpenv.ResultText(t, res); text != "xh ok" || isErr {
					t.Errorf("xh answered %q (isError %v)", text, isErr)
				}
			}
		})
	}
	t.Run("null value without header reaches argument validation", func(t *testing.T) {
		// null counts as absent for the header (the client omits it); the
		// schema then rejects null for a boolean: a tool error, not -32020.
		m := m.sub(t)
		id := m.ID()
		r := m.Send(httpenv.Req26(id, mcp.MethodToolsCall, map[string]any{"name": "xh", "arguments": with(map[string]any{"dry": json.RawMessage("null")})}), true,
			httpenv.H26(mcp.MethodToolsCall, "xh", hs(httpenv.WithHeader("Mcp-Param-Dry-Run", ""))...)...)
		if _, isErr := httpenv.ResultText(t, m.WantOK(r, id)); !isErr {
			t.Error("a null boolean passed the input schema")
		}
	})
	t.Run("stdio has no headers", func(t *testing.T) {
		// On stdio nothing mirrors arguments: the same call is served.
		p := newModernPeer(t, newFixture26(nil).s, true)
		var res mcp.CallToolResult
		if err := p.call(t, mcp.MethodToolsCall, map[string]any{"_meta": httpenv.EnvelopeMeta(nil), "name": "xh", "arguments": base()}, &res); err != nil || res.IsError {
			t.Fatalf("xh over stdio: %v %+v", err, res)
		}
	})
}

func TestModernHeaderAnnotationsAtRegistration(t *testing.T) {
	for _, tc := range []struct {
		name, schema, fails string // fails: part of the error; "" registers
	}{
		{"valid", xhSchema, ""},
		{"empty name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`, "not an HTTP token"},
		{"space in name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Bad Name"}}}`, "not an HTTP token"},
		{"colon in name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"a:b"}}}`, "not an HTTP token"},
		{"non-ASCII name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Régión"}}}`, "not an HTTP token"},
		{"control character", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"a\u0001"}}}`, "not an HTTP token"},
		{"duplicate, other case", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"region"}}}`, "used twice"},
		{"duplicate, nested", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Zone"},"b":{"type":"object","properties":{"c":{"type":"integer","x-mcp-header":"ZONE"}}}}}`, "used twice"},
		{"on a number", `{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`, "only string, integer and boolean"},
		{"on an object", `{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`, "only string, integer and boolean"},
		{"on an array", `{"type":"object","properties":{"a":{"type":"array","x-mcp-header":"A"}}}`, "only string, integer and boolean"},
		{"without a type", `{"type":"object","properties":{"a":{"x-mcp-header":"A"}}}`, "only string, integer and boolean"},
		{"on the root", `{"type":"object","x-mcp-header":"Root","properties":{}}`, "root"},
		{"not a string", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":5}}}`, "x-mcp-header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(nil)
			err := s.AddRawTool(&mcp.Tool{Name: "t", InputSchema: jsontext.Value(tc.schema)}, func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
				return nil, nil
			})
			switch {
			case tc.fails == "" && err != nil:
				t.Fatalf("registration failed: %v", err)
			case tc.fails != "" && err == nil:
				t.Fatal("registration of an invalid annotation succeeded")
			case tc.fails != "" && !strings.HasPrefix(err.Error(), `server: AddRawTool "t": `):
				t.Errorf("error %q does not start with the tool", err)
			case tc.fails != "" && !strings.Contains(err.Error(), tc.fails):
				t.Errorf("error %q, want it to mention %q", err, tc.fails)
			}
			if tc.fails != "" && s.tools.len() != 0 {
				t.Error("the invalid tool was registered")
			}
		})
	}
	// Found once, at registration: the entry holds them precomputed.
	s := New(nil)
	s.AddRawTool(&mcp.Tool{Name: "xh", InputSchema: jsontext.Value(xhSchema)}, func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	e, _ := s.tools.get("xh")
	var got []string
	for _, h := range e.headers {
		got = append(got, h.name+"="+strings.Join(h.path, ".")+":"+h.kind)
	}
	slices.Sort(got)
	want := []string{"Dry-Run=dry:boolean", "Level=level:integer", "Region=region:string", "Zone=scope.zone:string"}
	if !slices.Equal(got, want) {
		t.Errorf("precomputed annotations %v, want %v", got, want)
	}
}
