package httpenv

// The 2026-07-28 side: request builders, message checks, and Modern, an
// Env whose checker and observer are those of 2026-07-28.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"testing"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
)

// EnvelopeMeta returns the 2026 request _meta, with extra members merged in.
func EnvelopeMeta(extra map[string]any) map[string]any {
	m := map[string]any{
		mcp.MetaKeyProtocolVersion:    mcp.Version20260728,
		mcp.MetaKeyClientCapabilities: map[string]any{},
		mcp.MetaKeyClientInfo:         map[string]any{"name": "t", "version": "1"},
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

const V26 = mcp.Version20260728

// RawReq is a JSON-RPC request body; params nil leaves them out.
func RawReq(id any, method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Req26 is a 2026 request: params carry the standard envelope in _meta
// (see EnvelopeMeta) plus the given members; a member given as nil is
// removed (so {"_meta": nil} sends no envelope).
func Req26(id any, method string, params map[string]any) string {
	p := map[string]any{"_meta": EnvelopeMeta(nil)}
	for k, v := range params {
		if v == nil {
			delete(p, k)
		} else {
			p[k] = v
		}
	}
	return RawReq(id, method, p)
}

// Meta26 is the standard envelope changed by mods (a nil value removes
// the key).
func Meta26(mods map[string]any) map[string]any {
	m := EnvelopeMeta(nil)
	for k, v := range mods {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

// IDJSON is the JSON text of a request id.
func IDJSON(id any) string {
	b, err := json.Marshal(id)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// WireMsg is a decoded JSON-RPC message with its raw text.
type WireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *WireError      `json:"error"`
	Raw    []byte          `json:"-"`
}

type WireError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func ParseWire(t testing.TB, b []byte) *WireMsg {
	t.Helper()
	var m WireMsg
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON-RPC message: %v: %q", err, b)
	}
	m.Raw = b
	return &m
}

// errorDefs are the 2026-07-28 schema definitions of the error codes:
// the MCP errors describe the whole response, the JSON-RPC ones the error
// object.
var errorDefs = map[int64]struct {
	name  string
	whole bool
}{
	mcp.CodeHeaderMismatch:                  {"HeaderMismatchError", true},
	mcp.CodeMissingRequiredClientCapability: {"MissingRequiredClientCapabilityError", true},
	mcp.CodeUnsupportedProtocolVersion:      {"UnsupportedProtocolVersionError", true},
	mcp.CodeMethodNotFound:                  {"MethodNotFoundError", false},
	mcp.CodeInvalidParams:                   {"InvalidParamsError", false},
	mcp.CodeInternalError:                   {"InternalError", false},
}

// CheckErr checks that m is the error code answering the request id,
// conforming to the schema's definition of that error.
func CheckErr(t testing.TB, wc *wirecheck.Checker, m *WireMsg, code int64, id any) *WireError {
	t.Helper()
	if m.Error == nil {
		t.Fatalf("want error %d, got %s", code, m.Raw)
	}
	if m.Error.Code != code {
		t.Errorf("error code %d, want %d: %s", m.Error.Code, code, m.Raw)
	}
	if got, want := string(m.ID), IDJSON(id); got != want {
		t.Errorf("error id %s, want the request's id %s: %s", got, want, m.Raw)
	}
	if def, ok := errorDefs[code]; ok {
		instance := m.Raw
		if !def.whole {
			var e struct {
				Error json.RawMessage `json:"error"`
			}
			_ = json.Unmarshal(m.Raw, &e)
			instance = e.Error
		}
		if err := wc.CheckDefinition(def.name, instance); err != nil {
			t.Errorf("error body is not a %s: %v\n%s", def.name, err, m.Raw)
		}
	}
	return m.Error
}

// CheckModernResult checks what every 2026 result carries: resultType
// "complete" and the server's identity in _meta (server: its name; ""
// any name). It returns the result's members.
func CheckModernResult(t testing.TB, m *WireMsg, id any, server string) map[string]json.RawMessage {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("want a result, got %s", m.Raw)
	}
	if got, want := string(m.ID), IDJSON(id); got != want {
		t.Errorf("result id %s, want %s", got, want)
	}
	var r map[string]json.RawMessage
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatalf("result is not an object: %s", m.Raw)
	}
	if string(r["resultType"]) != `"complete"` {
		t.Errorf("resultType %s, want \"complete\": %s", r["resultType"], m.Raw)
	}
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(r["_meta"], &meta)
	var info mcp.Implementation
	if err := json.Unmarshal(meta[mcp.MetaKeyServerInfo], &info); err != nil || info.Name == "" || (server != "" && info.Name != server) || info.Version == "" {
		t.Errorf("_meta[%s] = %s, want the server's identity (%s)", mcp.MetaKeyServerInfo, meta[mcp.MetaKeyServerInfo], server)
	}
	return r
}

// ResultText returns the first text of a tools/call result and isError.
func ResultText(t testing.TB, r map[string]json.RawMessage) (string, bool) {
	t.Helper()
	var c []struct {
		Text string `json:"text"`
	}
	var isErr bool
	_ = json.Unmarshal(r["isError"], &isErr)
	if err := json.Unmarshal(r["content"], &c); err != nil || len(c) == 0 {
		t.Fatalf("not a tools/call result: %v", r)
	}
	return c[0].Text, isErr
}

// JSONEqual reports whether two JSON texts hold the same value.
func JSONEqual(t testing.TB, got []byte, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		return false
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation %q: %v", want, err)
	}
	return reflect.DeepEqual(g, w)
}

// Modern is an Env whose checker and observer are those of 2026-07-28:
// a view of a legacy Env's endpoint.
type Modern struct {
	Env
	WC26 *wirecheck.Checker
	// ServerName is the serverInfo name every result must carry ("":
	// any non-empty name).
	ServerName string
}

// NewModern returns the 2026-07-28 view of legacy's endpoint.
func NewModern(t testing.TB, legacy *Env, serverName string) *Modern {
	t.Helper()
	m := &Modern{Env: *legacy, WC26: wirecheck.For(t, V26), ServerName: serverName}
	m.WC = m.WC26
	m.Obs = m.WC26.Observe(t)
	return m
}

// Sub returns a view of m whose failures (and 2026 observer) belong to t.
func (m *Modern) Sub(t testing.TB) *Modern {
	c := *m
	c.T = t
	c.Obs = m.WC26.Observe(t)
	return &c
}

// IDs returns a fresh integer id and a fresh string id.
func (m *Modern) IDs() []any {
	n := m.ID()
	return []any{n, fmt.Sprintf("req-%d", n)}
}

// H26 are the headers of a 2026 request (MCP-Protocol-Version, Mcp-Method
// and, when name is set, Mcp-Name), then more.
func H26(method, name string, more ...ReqOpt) []ReqOpt {
	opts := []ReqOpt{WithHeader("MCP-Protocol-Version", V26), WithHeader("Mcp-Method", method)}
	if name != "" {
		opts = append(opts, WithHeader("Mcp-Name", name))
	}
	return append(opts, more...)
}

// WithRawHeader sets a header under exactly the name given (not
// canonicalized), replacing the canonical one.
func WithRawHeader(k, v string) ReqOpt {
	return func(r *http.Request) {
		r.Header.Del(k)
		r.Header[k] = []string{v}
	}
}

// Reply is an HTTP answer read whole.
type Reply struct {
	Status int
	Ctype  string
	*WireMsg
}

// Send posts body. A well-formed request is observed as sent and its
// JSON answer as its response; the answer to a malformed one is checked
// on its own.
func (m *Modern) Send(body string, wellFormed bool, opts ...ReqOpt) *Reply {
	m.T.Helper()
	if wellFormed {
		m.Obs(wirecheck.ClientToServer, []byte(body))
	}
	resp := m.Do(http.MethodPost, "", body, opts...)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		m.T.Fatalf("reading the answer: %v", err)
	}
	r := &Reply{Status: resp.StatusCode, Ctype: resp.Header.Get("Content-Type")}
	if r.Ctype != "application/json" {
		m.T.Fatalf("status %d, Content-Type %q, want a JSON answer: %q", r.Status, r.Ctype, raw)
	}
	r.WireMsg = ParseWire(m.T, raw)
	if wellFormed {
		m.Obs(wirecheck.ServerToClient, raw)
	} else if err := m.WC26.Check(raw); err != nil {
		m.T.Errorf("answer does not conform: %v\n%s", err, raw)
	}
	return r
}

// WantErr checks an error answer: HTTP status, code, echoed id, schema.
func (m *Modern) WantErr(r *Reply, status int, code int64, id any) *WireError {
	m.T.Helper()
	if r.Status != status {
		m.T.Errorf("HTTP status %d, want %d: %s", r.Status, status, r.Raw)
	}
	return CheckErr(m.T, m.WC26, r.WireMsg, code, id)
}

// WantOK checks a result answer (200, resultType, serverInfo).
func (m *Modern) WantOK(r *Reply, id any) map[string]json.RawMessage {
	m.T.Helper()
	if r.Status != http.StatusOK {
		m.T.Errorf("HTTP status %d, want 200: %s", r.Status, r.Raw)
	}
	return CheckModernResult(m.T, r.WireMsg, id, m.ServerName)
}

// Call sends a well-formed 2026 request with its headers and expects a
// result.
func (m *Modern) Call(id any, method, name string, params map[string]any) map[string]json.RawMessage {
	m.T.Helper()
	return m.WantOK(m.Send(Req26(id, method, params), true, H26(method, name)...), id)
}

// Stream posts a well-formed 2026 request whose answer is an event
// stream and returns the stream once its headers have arrived.
func (m *Modern) Stream(body string, opts ...ReqOpt) *SSEStream {
	m.T.Helper()
	return m.OpenSSE(m.Post("", body, opts...))
}

// Rest reads a 2026 request's stream to its end: the messages before
// the response, then the response, after which the stream must end.
func (m *Modern) Rest(s *SSEStream, id any) (notes []*RPCMsg, resp *RPCMsg) {
	m.T.Helper()
	for {
		f, msg := s.Message()
		if f.HasID || f.HasRetry {
			m.T.Errorf("2026 streams are not resumable, yet frame %v has an id or retry", f)
		}
		if msg.Method != "" {
			notes = append(notes, msg)
			continue
		}
		if string(msg.ID) != IDJSON(id) {
			m.T.Fatalf("response %s answers another request than %s", msg.Raw, IDJSON(id))
		}
		s.End()
		return notes, msg
	}
}
