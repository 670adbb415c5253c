package server

// Tests of the 2026-07-28 ("modern") era over Streamable HTTP: the
// envelope and its errors, the SEP-2243 header checks, result stamping,
// -32021, per-request logging, cancellation by closing the stream,
// subscriptions/listen, and both eras on one endpoint at once. Every
// error is checked for its JSON-RPC code, its HTTP status and the echoed
// request id (an integer id and a string id), and every well-formed
// message against the 2026-07-28 schema (SEP-2575 envelope and discovery,
// SEP-2243 headers, SEP-2549 cache hints, the 2026-07-28 Streamable HTTP
// transport).
//
// The helpers shared with modern_stdio_test.go live here.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
)

const v26 = mcp.Version20260728

// ---------------------------------------------------------------------
// The fixture

// fixture26 is the server of the modern tests, with what its handlers saw.
type fixture26 struct {
	s                      *Server
	modernEcho, legacyEcho atomic.Int64
	gate                   chan struct{}    // closed by a test: the "gate" tool goes on
	blocked                chan struct{}    // the "block" tool is running
	unblocked              chan blockReport // what "block" saw once cancelled
}

// blockReport is what the "block" tool saw after its context ended.
type blockReport struct {
	cause       error // context.Cause of the handler's context
	progressErr error // Request.Progress after the cancellation
	logErr      error // Request.Log after the cancellation
}

type textIn struct {
	Text string `json:"text"`
}

type nameIn struct {
	Name string `json:"name"`
}

type uriIn struct {
	URI string `json:"uri"`
}

type tagIn struct {
	Tag string `json:"tag"`
}

// needIn selects what the "needs" tool requires of the client.
type needIn struct {
	Sampling bool `json:"sampling,omitzero"`
	Form     bool `json:"form,omitzero"`
	URL      bool `json:"url,omitzero"`
	Roots    bool `json:"roots,omitzero"`
	// Elicitation requires an empty elicitation object (form mode).
	Elicitation bool `json:"elicitation,omitzero"`
}

// xhSchema annotates string, integer and boolean arguments, one of them
// nested, with x-mcp-header (SEP-2243).
const xhSchema = `{"type":"object","properties":{` +
	`"region":{"type":"string","x-mcp-header":"Region"},` +
	`"level":{"type":"integer","x-mcp-header":"Level"},` +
	`"dry":{"type":"boolean","x-mcp-header":"Dry-Run"},` +
	`"scope":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},` +
	`"note":{"type":"string"}}}`

func newFixture26(opts *Options) *fixture26 {
	if opts == nil {
		opts = &Options{Info: mcp.Implementation{Name: "fixture26", Version: "1.2.3"}, Instructions: "Try the echo tool.", Logging: true}
	}
	s := New(opts)
	f := &fixture26{s: s, gate: make(chan struct{}), blocked: make(chan struct{}, 8), unblocked: make(chan blockReport, 8)}
	AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text"}, func(ctx context.Context, req *CallToolRequest, in textIn) (string, error) {
		if mcp.IsModern(req.ProtocolVersion()) {
			f.modernEcho.Add(1)
		} else {
			f.legacyEcho.Add(1)
		}
		return in.Text, nil
	})
	AddTool(s, &mcp.Tool{Name: "logs", Description: "Logs at debug and error, with progress"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		if err := req.Progress(ctx, 1, 2, "half"); err != nil {
			return "", err
		}
		if err := req.Log(ctx, mcp.LevelDebug, "fixture", "debug line"); err != nil {
			return "", err
		}
		if err := req.Log(ctx, mcp.LevelError, "fixture", "error line"); err != nil {
			return "", err
		}
		if err := req.Progress(ctx, 2, 2, "done"); err != nil {
			return "", err
		}
		return "logged", nil
	})
	AddTool(s, &mcp.Tool{Name: "gate", Description: "Reports progress, waits for the gate, logs, answers"}, func(ctx context.Context, req *CallToolRequest, in tagIn) (string, error) {
		if err := req.Progress(ctx, 1, 2, "before "+in.Tag); err != nil {
			return "", err
		}
		select {
		case <-f.gate:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if err := req.Log(ctx, mcp.LevelInfo, "gate", "log "+in.Tag); err != nil {
			return "", err
		}
		if err := req.Progress(ctx, 2, 2, "after "+in.Tag); err != nil {
			return "", err
		}
		return "gate " + in.Tag, nil
	})
	AddTool(s, &mcp.Tool{Name: "block", Description: "Blocks until cancelled"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		_ = req.Progress(ctx, 1, 0, "started") // with a token, the answer becomes a stream
		f.blocked <- struct{}{}
		<-ctx.Done()
		rep := blockReport{cause: context.Cause(ctx)}
		rep.progressErr = req.Progress(ctx, 2, 0, "after the cancellation")
		rep.logErr = req.Log(ctx, mcp.LevelError, "fixture", "after the cancellation")
		f.unblocked <- rep
		return "too late", nil
	})
	AddTool(s, &mcp.Tool{Name: "needs", Description: "Requires client capabilities"}, func(ctx context.Context, req *CallToolRequest, in needIn) (string, error) {
		var need mcp.ClientCapabilities
		if in.Sampling {
			need.Sampling = &mcp.SamplingCapability{}
		}
		if in.Form || in.URL || in.Elicitation {
			need.Elicitation = &mcp.ElicitationCapability{}
			if in.Form {
				need.Elicitation.Form = &mcp.FormElicitationCapability{}
			}
			if in.URL {
				need.Elicitation.URL = &struct{}{}
			}
		}
		if in.Roots {
			need.Roots = &mcp.RootsCapability{}
		}
		if err := req.Require(need); err != nil {
			return "", err
		}
		return "served", nil
	})
	AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks the user (legacy sessions only)"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return "", err
		}
		return "answered " + res.Action, nil
	})
	AddTool(s, &mcp.Tool{Name: "boom", Description: "Panics"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		panic("boom")
	})
	AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Registers a tool"}, func(ctx context.Context, req *CallToolRequest, in nameIn) (string, error) {
		AddTool(s, &mcp.Tool{Name: in.Name, Description: "Added at run time"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
			return "dynamic", nil
		})
		return "added", nil
	})
	AddTool(s, &mcp.Tool{Name: "add_prompt", Description: "Registers a prompt"}, func(ctx context.Context, req *CallToolRequest, in nameIn) (string, error) {
		s.AddPrompt(&mcp.Prompt{Name: in.Name}, func(ctx context.Context, req *GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "dynamic"}}}}, nil
		})
		return "added", nil
	})
	AddTool(s, &mcp.Tool{Name: "add_resource", Description: "Registers a resource"}, func(ctx context.Context, req *CallToolRequest, in uriIn) (string, error) {
		s.AddResource(&mcp.Resource{URI: in.URI, Name: "dynamic"}, textResource("dynamic"))
		return "added", nil
	})
	AddTool(s, &mcp.Tool{Name: "touch", Description: "Reports a resource update"}, func(ctx context.Context, req *CallToolRequest, in uriIn) (string, error) {
		s.ResourceUpdated(in.URI)
		return "touched", nil
	})
	s.AddRawTool(&mcp.Tool{Name: "xh", Description: "Mirrors arguments into Mcp-Param-* headers", InputSchema: jsontext.Value(xhSchema)},
		func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "xh ok"}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []mcp.PromptArgument{{Name: "who", Required: true}}}, func(ctx context.Context, req *GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["who"]}}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, textResource("r"))
	s.AddResource(&mcp.Resource{URI: "test://cached", Name: "cached"}, func(ctx context.Context, req *ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		ttl := int64(5)
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: "c"}}, TTLMs: &ttl, CacheScope: mcp.CachePublic}, nil
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://t/{id}", Name: "t"}, func(ctx context.Context, req *ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: "t " + req.Vars["id"]}}}, nil
	})
	s.SetCompletionHandler(func(ctx context.Context, req *CompleteRequest) (*mcp.CompleteResult, error) {
		return &mcp.CompleteResult{Completion: mcp.Completion{Values: []string{"ada", "alan"}}}, nil
	})
	return f
}

func textResource(text string) ResourceHandler {
	return func(ctx context.Context, req *ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: text}}}, nil
	}
}

// listenerCount reports the open subscriptions/listen streams of s.
func listenerCount(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.listeners)
}

// ---------------------------------------------------------------------
// Messages (shared with modern_stdio_test.go).

// rawReq is a JSON-RPC request body; params nil leaves them out.
func rawReq(id any, method string, params any) string {
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

// req26 is a 2026 request: params carry the standard envelope in _meta
// (see envelopeMeta) plus the given members; a member given as nil is
// removed (so {"_meta": nil} sends no envelope).
func req26(id any, method string, params map[string]any) string {
	p := map[string]any{"_meta": envelopeMeta(nil)}
	for k, v := range params {
		if v == nil {
			delete(p, k)
		} else {
			p[k] = v
		}
	}
	return rawReq(id, method, p)
}

// meta26 is the standard envelope changed by mods (a nil value removes
// the key).
func meta26(mods map[string]any) map[string]any {
	m := envelopeMeta(nil)
	for k, v := range mods {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

// idJSON is the JSON text of a request id.
func idJSON(id any) string {
	b, err := json.Marshal(id)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// wireMsg is a decoded JSON-RPC message with its raw text.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *wireError      `json:"error"`
	raw    []byte
}

type wireError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func parseWire(t testing.TB, b []byte) *wireMsg {
	t.Helper()
	var m wireMsg
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON-RPC message: %v: %q", err, b)
	}
	m.raw = b
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

// checkErr checks that m is the error code answering the request id,
// conforming to the schema's definition of that error.
func checkErr(t testing.TB, wc *wirecheck.Checker, m *wireMsg, code int64, id any) *wireError {
	t.Helper()
	if m.Error == nil {
		t.Fatalf("want error %d, got %s", code, m.raw)
	}
	if m.Error.Code != code {
		t.Errorf("error code %d, want %d: %s", m.Error.Code, code, m.raw)
	}
	if got, want := string(m.ID), idJSON(id); got != want {
		t.Errorf("error id %s, want the request's id %s: %s", got, want, m.raw)
	}
	if def, ok := errorDefs[code]; ok {
		instance := m.raw
		if !def.whole {
			var e struct {
				Error json.RawMessage `json:"error"`
			}
			_ = json.Unmarshal(m.raw, &e)
			instance = e.Error
		}
		if err := wc.CheckDefinition(def.name, instance); err != nil {
			t.Errorf("error body is not a %s: %v\n%s", def.name, err, m.raw)
		}
	}
	return m.Error
}

// checkModernResult checks what every 2026 result carries: resultType
// "complete" and the server's identity in _meta. It returns the result's
// members.
func checkModernResult(t testing.TB, m *wireMsg, id any, server string) map[string]json.RawMessage {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("want a result, got %s", m.raw)
	}
	if got, want := string(m.ID), idJSON(id); got != want {
		t.Errorf("result id %s, want %s", got, want)
	}
	var r map[string]json.RawMessage
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatalf("result is not an object: %s", m.raw)
	}
	if string(r["resultType"]) != `"complete"` {
		t.Errorf("resultType %s, want \"complete\": %s", r["resultType"], m.raw)
	}
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(r["_meta"], &meta)
	var info mcp.Implementation
	if err := json.Unmarshal(meta[mcp.MetaKeyServerInfo], &info); err != nil || info.Name != server || info.Version == "" {
		t.Errorf("_meta[%s] = %s, want the server's identity (%s)", mcp.MetaKeyServerInfo, meta[mcp.MetaKeyServerInfo], server)
	}
	return r
}

// resultText returns the first text of a tools/call result and isError.
func resultText(t testing.TB, r map[string]json.RawMessage) (string, bool) {
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

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(t testing.TB, got []byte, want string) bool {
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

// ---------------------------------------------------------------------
// The HTTP environment.

// modernEnv is an httpEnv whose checker and observer are those of
// 2026-07-28; legacy is the same endpoint checked against 2025-11-25.
type modernEnv struct {
	*httpEnv
	legacy *httpEnv
	wc26   *wirecheck.Checker
}

func newModernEnv(t testing.TB, srv *Server, opts *HTTPOptions) *modernEnv {
	t.Helper()
	legacy := newHTTPEnv(t, srv, opts)
	m := &modernEnv{legacy: legacy, wc26: wirecheck.For(t, v26)}
	c := *legacy
	c.wc = m.wc26
	c.obs = m.wc26.Observe(t)
	m.httpEnv = &c
	return m
}

// sub returns a view of m whose failures (and 2026 observer) belong to t.
func (m *modernEnv) sub(t testing.TB) *modernEnv {
	c := *m.httpEnv
	c.t = t
	c.obs = m.wc26.Observe(t)
	return &modernEnv{httpEnv: &c, legacy: m.legacy.sub(t), wc26: m.wc26}
}

// ids returns a fresh integer id and a fresh string id.
func (m *modernEnv) ids() []any {
	n := m.id()
	return []any{n, fmt.Sprintf("req-%d", n)}
}

// h26 are the headers of a 2026 request (MCP-Protocol-Version, Mcp-Method
// and, when name is set, Mcp-Name), then more.
func h26(method, name string, more ...reqOpt) []reqOpt {
	opts := []reqOpt{withHeader("MCP-Protocol-Version", v26), withHeader("Mcp-Method", method)}
	if name != "" {
		opts = append(opts, withHeader("Mcp-Name", name))
	}
	return append(opts, more...)
}

// withRawHeader sets a header under exactly the name given (not
// canonicalized), replacing the canonical one.
func withRawHeader(k, v string) reqOpt {
	return func(r *http.Request) {
		r.Header.Del(k)
		r.Header[k] = []string{v}
	}
}

// reply is an HTTP answer read whole.
type reply struct {
	status int
	ctype  string
	*wireMsg
}

// send posts body. A well-formed request is observed as sent and its
// JSON answer as its response; the answer to a malformed one is checked
// on its own.
func (m *modernEnv) send(body string, wellFormed bool, opts ...reqOpt) *reply {
	m.t.Helper()
	if wellFormed {
		m.obs(wirecheck.ClientToServer, []byte(body))
	}
	resp := m.do(http.MethodPost, "", body, opts...)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		m.t.Fatalf("reading the answer: %v", err)
	}
	r := &reply{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type")}
	if r.ctype != "application/json" {
		m.t.Fatalf("status %d, Content-Type %q, want a JSON answer: %q", r.status, r.ctype, raw)
	}
	r.wireMsg = parseWire(m.t, raw)
	if wellFormed {
		m.obs(wirecheck.ServerToClient, raw)
	} else if err := m.wc26.Check(raw); err != nil {
		m.t.Errorf("answer does not conform: %v\n%s", err, raw)
	}
	return r
}

// wantErr checks an error answer: HTTP status, code, echoed id, schema.
func (m *modernEnv) wantErr(r *reply, status int, code int64, id any) *wireError {
	m.t.Helper()
	if r.status != status {
		m.t.Errorf("HTTP status %d, want %d: %s", r.status, status, r.raw)
	}
	return checkErr(m.t, m.wc26, r.wireMsg, code, id)
}

// wantOK checks a result answer (200, resultType, serverInfo).
func (m *modernEnv) wantOK(r *reply, id any) map[string]json.RawMessage {
	m.t.Helper()
	if r.status != http.StatusOK {
		m.t.Errorf("HTTP status %d, want 200: %s", r.status, r.raw)
	}
	return checkModernResult(m.t, r.wireMsg, id, m.srv.opts.Info.Name)
}

// call sends a well-formed 2026 request with its headers and expects a
// result.
func (m *modernEnv) call(id any, method, name string, params map[string]any) map[string]json.RawMessage {
	m.t.Helper()
	return m.wantOK(m.send(req26(id, method, params), true, h26(method, name)...), id)
}

// stream posts a well-formed 2026 request whose answer is an event
// stream and returns the stream once its headers have arrived.
func (m *modernEnv) stream(body string, opts ...reqOpt) *sseStream {
	m.t.Helper()
	return m.openSSE(m.post("", body, opts...))
}

// rest reads a 2026 request's stream to its end: the messages before
// the response, then the response, after which the stream must end.
func (m *modernEnv) rest(s *sseStream, id any) (notes []*rpcMsg, resp *rpcMsg) {
	m.t.Helper()
	for {
		f, msg := s.message()
		if f.hasID || f.hasRtry {
			m.t.Errorf("2026 streams are not resumable, yet frame %v has an id or retry", f)
		}
		if msg.Method != "" {
			notes = append(notes, msg)
			continue
		}
		if string(msg.ID) != idJSON(id) {
			m.t.Fatalf("response %s answers another request than %s", msg.raw, idJSON(id))
		}
		s.end()
		return notes, msg
	}
}

// ---------------------------------------------------------------------
// 1. The envelope.

func TestModernHTTPEnvelopeErrors(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	var discover struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	res := m.call(m.id(), mcp.MethodServerDiscover, "", nil)
	if err := json.Unmarshal(res["supportedVersions"], &discover.SupportedVersions); err != nil || len(discover.SupportedVersions) == 0 {
		t.Fatalf("server/discover supportedVersions = %s", res["supportedVersions"])
	}
	echo := map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}
	withMeta := func(meta map[string]any) map[string]any {
		p := map[string]any{"_meta": meta}
		for k, v := range echo {
			p[k] = v
		}
		return p
	}
	cases := []struct {
		name    string
		params  map[string]any // tools/call params; nil: none at all
		version string         // MCP-Protocol-Version; "-" leaves it out
		code    int64
		// wellFormed: the request conforms to the schema (its header may
		// still be wrong).
		wellFormed bool
		requested  string // -32022: data.requested
	}{
		{name: "no _meta", params: echo, version: v26, code: mcp.CodeInvalidParams},
		{name: "no params at all", params: nil, version: v26, code: mcp.CodeInvalidParams},
		{name: "_meta without protocolVersion", params: withMeta(meta26(map[string]any{mcp.MetaKeyProtocolVersion: nil})), version: v26, code: mcp.CodeInvalidParams},
		{name: "_meta without clientCapabilities", params: withMeta(meta26(map[string]any{mcp.MetaKeyClientCapabilities: nil})), version: v26, code: mcp.CodeInvalidParams},
		{name: "empty _meta", params: withMeta(map[string]any{}), version: v26, code: mcp.CodeInvalidParams},
		{name: "clientCapabilities a string", params: withMeta(meta26(map[string]any{mcp.MetaKeyClientCapabilities: "all"})), version: v26, code: mcp.CodeInvalidParams},
		{name: "clientCapabilities an array", params: withMeta(meta26(map[string]any{mcp.MetaKeyClientCapabilities: []any{}})), version: v26, code: mcp.CodeInvalidParams},
		{name: "clientCapabilities null", params: withMeta(map[string]any{mcp.MetaKeyProtocolVersion: v26, mcp.MetaKeyClientCapabilities: json.RawMessage("null")}), version: v26, code: mcp.CodeInvalidParams},
		{name: "protocolVersion a number", params: withMeta(meta26(map[string]any{mcp.MetaKeyProtocolVersion: 20260728})), version: v26, code: mcp.CodeInvalidParams},
		{name: "clientInfo a string", params: withMeta(meta26(map[string]any{mcp.MetaKeyClientInfo: "me"})), version: v26, code: mcp.CodeInvalidParams},
		{name: "unknown logLevel", params: withMeta(meta26(map[string]any{mcp.MetaKeyLogLevel: "loud"})), version: v26, code: mcp.CodeInvalidParams},
		{name: "header names a legacy version", params: withMeta(meta26(nil)), version: mcp.Version20251125, code: mcp.CodeHeaderMismatch, wellFormed: true},
		{name: "header names another version", params: withMeta(meta26(nil)), version: "2026-12-31", code: mcp.CodeHeaderMismatch, wellFormed: true},
		{name: "header missing", params: withMeta(meta26(nil)), version: "-", code: mcp.CodeHeaderMismatch, wellFormed: true},
		// The suite's order: a mismatch is reported even when the body's
		// version is unsupported.
		{name: "mismatch wins over unsupported", params: withMeta(meta26(map[string]any{mcp.MetaKeyProtocolVersion: "v999.0.0"})), version: v26, code: mcp.CodeHeaderMismatch, wellFormed: true},
		{name: "header missing, body unsupported", params: withMeta(meta26(map[string]any{mcp.MetaKeyProtocolVersion: "v999.0.0"})), version: "-", code: mcp.CodeHeaderMismatch, wellFormed: true},
		{name: "unsupported version", params: withMeta(meta26(map[string]any{mcp.MetaKeyProtocolVersion: "v999.0.0"})), version: "v999.0.0", code: mcp.CodeUnsupportedProtocolVersion, wellFormed: true, requested: "v999.0.0"},
		{name: "modern-style claim of 2025-11-25", params: withMeta(meta26(map[string]any{mcp.MetaKeyProtocolVersion: mcp.Version20251125})), version: mcp.Version20251125, code: mcp.CodeUnsupportedProtocolVersion, wellFormed: true, requested: mcp.Version20251125},
		{name: "modern-style claim of 1900-01-01", params: withMeta(meta26(map[string]any{mcp.MetaKeyProtocolVersion: "1900-01-01"})), version: "1900-01-01", code: mcp.CodeUnsupportedProtocolVersion, wellFormed: true, requested: "1900-01-01"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := m.sub(t)
			for _, id := range m.ids() {
				var body string
				if tc.params == nil {
					body = rawReq(id, mcp.MethodToolsCall, nil)
				} else {
					body = rawReq(id, mcp.MethodToolsCall, tc.params)
				}
				opts := h26(mcp.MethodToolsCall, "echo")
				if tc.version == "-" {
					opts = append(opts, withHeader("MCP-Protocol-Version", ""))
				} else {
					opts = append(opts, withHeader("MCP-Protocol-Version", tc.version))
				}
				e := m.wantErr(m.send(body, tc.wellFormed, opts...), http.StatusBadRequest, tc.code, id)
				if tc.code != mcp.CodeUnsupportedProtocolVersion {
					continue
				}
				var data mcp.UnsupportedProtocolVersionData
				if err := json.Unmarshal(e.Data, &data); err != nil {
					t.Fatalf("-32022 data %s: %v", e.Data, err)
				}
				if data.Requested != tc.requested {
					t.Errorf("data.requested %q, want %q", data.Requested, tc.requested)
				}
				if len(data.Supported) == 0 {
					t.Error("data.supported is empty")
				}
				for _, v := range data.Supported {
					if !slices.Contains(discover.SupportedVersions, v) {
						t.Errorf("data.supported %v is not a subset of server/discover's supportedVersions %v", data.Supported, discover.SupportedVersions)
					}
				}
			}
		})
	}
	t.Run("clientInfo is optional", func(t *testing.T) {
		m := m.sub(t)
		for _, id := range m.ids() {
			params := withMeta(meta26(map[string]any{mcp.MetaKeyClientInfo: nil}))
			res := m.wantOK(m.send(rawReq(id, mcp.MethodToolsCall, params), true, h26(mcp.MethodToolsCall, "echo")...), id)
			if text, isErr := resultText(t, res); text != "x" || isErr {
				t.Errorf("echo answered %q (isError %v)", text, isErr)
			}
		}
	})
	t.Run("extra capabilities are accepted", func(t *testing.T) {
		m := m.sub(t)
		caps := map[string]any{"elicitation": map[string]any{"form": map[string]any{}}, "extensions": map[string]any{"com.example/x": map[string]any{}}}
		params := withMeta(meta26(map[string]any{mcp.MetaKeyClientCapabilities: caps}))
		id := m.id()
		m.wantOK(m.send(rawReq(id, mcp.MethodToolsCall, params), true, h26(mcp.MethodToolsCall, "echo")...), id)
	})
}

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
		opts   []reqOpt // after the correct headers
		ok     bool     // served; otherwise -32020/400
	}{
		{"Mcp-Method missing", mcp.MethodToolsList, nil, []reqOpt{withHeader("Mcp-Method", "")}, false},
		{"Mcp-Method other than the body", mcp.MethodToolsList, nil, []reqOpt{withHeader("Mcp-Method", mcp.MethodPromptsList)}, false},
		{"Mcp-Method uppercase", mcp.MethodToolsCall, echo, []reqOpt{withHeader("Mcp-Method", "TOOLS/CALL")}, false},
		{"Mcp-Method capitalized", mcp.MethodServerDiscover, nil, []reqOpt{withHeader("Mcp-Method", "Server/Discover")}, false},
		{"Mcp-Method empty", mcp.MethodToolsList, nil, []reqOpt{withRawHeader("Mcp-Method", "")}, false},
		{"header name lowercase", mcp.MethodToolsCall, echo, []reqOpt{withRawHeader("mcp-method", mcp.MethodToolsCall), withRawHeader("mcp-name", "echo"), withRawHeader("mcp-protocol-version", v26)}, true},
		{"header name uppercase", mcp.MethodToolsCall, echo, []reqOpt{withRawHeader("MCP-METHOD", mcp.MethodToolsCall), withRawHeader("MCP-NAME", "echo")}, true},
		{"Mcp-Name missing (tools/call)", mcp.MethodToolsCall, echo, []reqOpt{withHeader("Mcp-Name", "")}, false},
		{"Mcp-Name other (tools/call)", mcp.MethodToolsCall, echo, []reqOpt{withHeader("Mcp-Name", "greet")}, false},
		{"Mcp-Name other case (tools/call)", mcp.MethodToolsCall, echo, []reqOpt{withHeader("Mcp-Name", "Echo")}, false},
		{"Mcp-Name missing (prompts/get)", mcp.MethodPromptsGet, greet, []reqOpt{withHeader("Mcp-Name", "")}, false},
		{"Mcp-Name other (prompts/get)", mcp.MethodPromptsGet, greet, []reqOpt{withHeader("Mcp-Name", "echo")}, false},
		{"Mcp-Name missing (resources/read)", mcp.MethodResourcesRead, read, []reqOpt{withHeader("Mcp-Name", "")}, false},
		{"Mcp-Name other (resources/read)", mcp.MethodResourcesRead, read, []reqOpt{withHeader("Mcp-Name", "test://cached")}, false},
		{"Mcp-Name the name, not the uri (resources/read)", mcp.MethodResourcesRead, read, []reqOpt{withHeader("Mcp-Name", "r")}, false},
		{"Mcp-Name base64", mcp.MethodToolsCall, echo, []reqOpt{withHeader("Mcp-Name", b64("echo"))}, true},
		{"Mcp-Name base64 of a uri", mcp.MethodResourcesRead, read, []reqOpt{withHeader("Mcp-Name", b64("test://r"))}, true},
		{"Mcp-Name base64 of non-ASCII", mcp.MethodToolsCall, call("héllo wörld"), []reqOpt{withHeader("Mcp-Name", b64("héllo wörld"))}, true},
		{"Mcp-Name base64 of another name", mcp.MethodToolsCall, echo, []reqOpt{withHeader("Mcp-Name", b64("greet"))}, false},
		{"Mcp-Name base64 bad padding", mcp.MethodToolsCall, echo, []reqOpt{withHeader("Mcp-Name", "=?base64?ZWNobw?=")}, false},
		{"Mcp-Name base64 bad alphabet", mcp.MethodToolsCall, echo, []reqOpt{withHeader("Mcp-Name", "=?base64?ZW*obw==?=")}, false},
		{"Mcp-Name base64 url alphabet", mcp.MethodToolsCall, call("ÿþ"), []reqOpt{withHeader("Mcp-Name", "=?base64?"+base64.URLEncoding.EncodeToString([]byte("ÿþ"))+"?=")}, false},
		{"Mcp-Name base64 std alphabet", mcp.MethodToolsCall, call("ÿþ"), []reqOpt{withHeader("Mcp-Name", b64("ÿþ"))}, true},
		{"Mcp-Name prefix only is literal", mcp.MethodToolsCall, call("=?base64?ZWNobw=="), []reqOpt{withHeader("Mcp-Name", "=?base64?ZWNobw==")}, true},
		{"Mcp-Name suffix only is literal", mcp.MethodToolsCall, call("ZWNobw==?="), []reqOpt{withHeader("Mcp-Name", "ZWNobw==?=")}, true},
		{"Mcp-Name uppercase marker is literal", mcp.MethodToolsCall, call("=?BASE64?ZWNobw==?="), []reqOpt{withHeader("Mcp-Name", "=?BASE64?ZWNobw==?=")}, true},
		{"Mcp-Name uppercase marker is not decoded", mcp.MethodToolsCall, echo, []reqOpt{withHeader("Mcp-Name", "=?BASE64?ZWNobw==?=")}, false},
		{"Mcp-Name ignored where not defined", mcp.MethodToolsList, nil, []reqOpt{withHeader("Mcp-Name", "whatever")}, true},
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
			for _, id := range m.ids() {
				r := m.send(req26(id, tc.method, tc.params), true, h26(tc.method, name, tc.opts...)...)
				if tc.ok {
					m.wantOK(r, id)
				} else {
					m.wantErr(r, http.StatusBadRequest, mcp.CodeHeaderMismatch, id)
				}
			}
		})
	}
}

// rawPost sends a POST written byte for byte (header names and values
// exactly as given, which net/http's client would normalize) on a fresh
// connection and returns the answer.
func (m *modernEnv) rawPost(headers []string, body string) *reply {
	m.t.Helper()
	conn, err := net.Dial("tcp", m.ts.Listener.Addr().String())
	if err != nil {
		m.t.Fatal(err)
	}
	defer conn.Close()
	var b strings.Builder
	b.WriteString("POST / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n")
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	if _, err := io.WriteString(conn, b.String()); err != nil {
		m.t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(httpHangGuard))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		m.t.Fatal(err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		m.t.Fatal(err)
	}
	m.obs(wirecheck.ClientToServer, []byte(body))
	m.obs(wirecheck.ServerToClient, raw)
	return &reply{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), wireMsg: parseWire(m.t, raw)}
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
		{"lowercase names", []string{"mcp-protocol-version: " + v26, "mcp-method: tools/call", "mcp-name: echo"}, true},
		{"uppercase names", []string{"MCP-PROTOCOL-VERSION: " + v26, "MCP-METHOD: tools/call", "MCP-NAME: echo"}, true},
		{"whitespace around values", []string{"MCP-Protocol-Version: \t" + v26 + " ", "Mcp-Method:   tools/call  ", "Mcp-Name: \techo\t"}, true},
		{"whitespace around a base64 value", []string{"MCP-Protocol-Version: " + v26, "Mcp-Method: tools/call", "Mcp-Name:  " + b64("echo") + "  "}, true},
		{"uppercase value", []string{"MCP-Protocol-Version: " + v26, "Mcp-Method: Tools/Call", "Mcp-Name: echo"}, false},
		{"uppercase name value", []string{"MCP-Protocol-Version: " + v26, "Mcp-Method: tools/call", "Mcp-Name: ECHO"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := m.sub(t)
			for _, id := range m.ids() {
				r := m.rawPost(tc.headers, req26(id, mcp.MethodToolsCall, echo))
				if tc.ok {
					m.wantOK(r, id)
				} else {
					m.wantErr(r, http.StatusBadRequest, mcp.CodeHeaderMismatch, id)
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
	wc := wirecheck.For(t, v26)
	for _, id := range []any{int64(1), "one"} {
		body := req26(id, mcp.MethodToolsCall, map[string]any{"name": "xh", "arguments": map[string]any{"region": "eu", "level": 3}})
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.Host = "localhost"
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", acceptBoth)
		r.Header.Set("MCP-Protocol-Version", v26)
		r.Header["Mcp-Method"] = []string{" tools/call\t"}
		r.Header["Mcp-Name"] = []string{"\txh "}
		r.Header["Mcp-Param-Region"] = []string{"  eu "}
		r.Header["Mcp-Param-Level"] = []string{" 3 "}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		msg := parseWire(t, w.Body.Bytes())
		if w.Code != http.StatusOK || msg.Error != nil {
			t.Fatalf("status %d: %s", w.Code, w.Body.Bytes())
		}
		if err := wc.CheckResponse([]byte(body), w.Body.Bytes()); err != nil {
			t.Error(err)
		}
		checkModernResult(t, msg, id, "fixture26")
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
	hs := func(mods ...reqOpt) []reqOpt {
		return append([]reqOpt{
			withHeader("Mcp-Param-Region", "eu-west"),
			withHeader("Mcp-Param-Level", "7"),
			withHeader("Mcp-Param-Dry-Run", "true"),
			withHeader("Mcp-Param-Zone", "z1"),
		}, mods...)
	}
	cases := []struct {
		name string
		args map[string]any
		opts []reqOpt
		ok   bool // served (a result); otherwise -32020/400
	}{
		{"all match", base(), hs(), true},
		{"integer compared numerically", base(), hs(withHeader("Mcp-Param-Level", "07")), true},
		{"integer written 7.0 in the body", with(map[string]any{"level": json.RawMessage("7.0")}), hs(), true},
		{"negative integer", with(map[string]any{"level": -12}), hs(withHeader("Mcp-Param-Level", "-12")), true},
		{"string as base64", base(), hs(withHeader("Mcp-Param-Region", b64("eu-west"))), true},
		{"non-ASCII string as base64", with(map[string]any{"region": "Grüße, 世界"}), hs(withHeader("Mcp-Param-Region", b64("Grüße, 世界"))), true},
		{"string with spaces inside as base64", with(map[string]any{"region": " padded "}), hs(withHeader("Mcp-Param-Region", b64(" padded "))), true},
		{"sentinel-looking string, literal", with(map[string]any{"region": "=?base64?abc"}), hs(withHeader("Mcp-Param-Region", "=?base64?abc")), true},
		{"sentinel-looking string, encoded", with(map[string]any{"region": "=?base64?abc?="}), hs(withHeader("Mcp-Param-Region", b64("=?base64?abc?="))), true},
		{"absent value, no header", with(map[string]any{"dry": nil}), hs(withHeader("Mcp-Param-Dry-Run", "")), true},
		{"absent nested value, no header", with(map[string]any{"scope": map[string]any{}}), hs(withHeader("Mcp-Param-Zone", "")), true},
		{"header name lowercase", base(), hs(withHeader("Mcp-Param-Region", ""), withRawHeader("mcp-param-region", "eu-west")), true},
		{"header name uppercase", base(), hs(withHeader("Mcp-Param-Level", ""), withRawHeader("MCP-PARAM-LEVEL", "7")), true},
		{"unannotated argument needs no header", with(map[string]any{"note": "anything"}), hs(), true},

		{"string mismatch", base(), hs(withHeader("Mcp-Param-Region", "eu-east")), false},
		{"string case differs", base(), hs(withHeader("Mcp-Param-Region", "EU-WEST")), false},
		{"integer mismatch", base(), hs(withHeader("Mcp-Param-Level", "8")), false},
		{"integer not a number", base(), hs(withHeader("Mcp-Param-Level", "seven")), false},
		{"integer written as a float", base(), hs(withHeader("Mcp-Param-Level", "7.0")), false},
		{"boolean mismatch", base(), hs(withHeader("Mcp-Param-Dry-Run", "false")), false},
		{"boolean capitalized", base(), hs(withHeader("Mcp-Param-Dry-Run", "True")), false},
		{"boolean as 1", base(), hs(withHeader("Mcp-Param-Dry-Run", "1")), false},
		{"header missing, value in the body", base(), hs(withHeader("Mcp-Param-Region", "")), false},
		{"nested header missing", base(), hs(withHeader("Mcp-Param-Zone", "")), false},
		{"nested mismatch", base(), hs(withHeader("Mcp-Param-Zone", "z2")), false},
		{"header present, value absent", with(map[string]any{"dry": nil}), hs(), false},
		{"header present, value null", with(map[string]any{"dry": json.RawMessage("null")}), hs(), false},
		{"header present, nested value null", with(map[string]any{"scope": map[string]any{"zone": nil}}), hs(), false},
		{"base64 bad padding", base(), hs(withHeader("Mcp-Param-Region", "=?base64?ZXUtd2VzdA=?=")), false},
		{"base64 bad alphabet", base(), hs(withHeader("Mcp-Param-Region", "=?base64?ZXUt*2VzdA==?=")), false},
		{"base64 of another value", base(), hs(withHeader("Mcp-Param-Region", b64("eu-east"))), false},
		{"base64 for an integer, other value", base(), hs(withHeader("Mcp-Param-Level", b64("8"))), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := m.sub(t)
			for _, id := range m.ids() {
				r := m.send(req26(id, mcp.MethodToolsCall, map[string]any{"name": "xh", "arguments": tc.args}), true, h26(mcp.MethodToolsCall, "xh", tc.opts...)...)
				if !tc.ok {
					m.wantErr(r, http.StatusBadRequest, mcp.CodeHeaderMismatch, id)
					continue
				}
				res := m.wantOK(r, id)
				if text, isErr := resultText(t, res); text != "xh ok" || isErr {
					t.Errorf("xh answered %q (isError %v)", text, isErr)
				}
			}
		})
	}
	t.Run("null value without header reaches argument validation", func(t *testing.T) {
		// null counts as absent for the header (the client omits it); the
		// schema then rejects null for a boolean: a tool error, not -32020.
		m := m.sub(t)
		id := m.id()
		r := m.send(req26(id, mcp.MethodToolsCall, map[string]any{"name": "xh", "arguments": with(map[string]any{"dry": json.RawMessage("null")})}), true,
			h26(mcp.MethodToolsCall, "xh", hs(withHeader("Mcp-Param-Dry-Run", ""))...)...)
		if _, isErr := resultText(t, m.wantOK(r, id)); !isErr {
			t.Error("a null boolean passed the input schema")
		}
	})
	t.Run("stdio has no headers", func(t *testing.T) {
		// On stdio nothing mirrors arguments: the same call is served.
		p := newModernPeer(t, newFixture26(nil).s, true)
		var res mcp.CallToolResult
		if err := p.call(t, mcp.MethodToolsCall, map[string]any{"_meta": envelopeMeta(nil), "name": "xh", "arguments": base()}, &res); err != nil || res.IsError {
			t.Fatalf("xh over stdio: %v %+v", err, res)
		}
	})
}

func TestModernHeaderAnnotationsAtRegistration(t *testing.T) {
	for _, tc := range []struct {
		name, schema, panics string // panics: part of the message; "" registers
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
			var got any
			func() {
				defer func() { got = recover() }()
				s.AddRawTool(&mcp.Tool{Name: "t", InputSchema: jsontext.Value(tc.schema)}, func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
					return nil, nil
				})
			}()
			switch {
			case tc.panics == "" && got != nil:
				t.Fatalf("registration panicked: %v", got)
			case tc.panics != "" && got == nil:
				t.Fatal("registration of an invalid annotation did not panic")
			case tc.panics != "" && !strings.Contains(fmt.Sprint(got), tc.panics):
				t.Errorf("panic %q, want it to mention %q", got, tc.panics)
			}
			if tc.panics != "" && s.tools.len() != 0 {
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

// ---------------------------------------------------------------------
// 4. Results.

func TestModernHTTPResults(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	cacheable := func(r map[string]json.RawMessage, what string, ttl int64, scope string) {
		t.Helper()
		var got int64
		if err := json.Unmarshal(r["ttlMs"], &got); err != nil || got != ttl {
			t.Errorf("%s: ttlMs %s, want %d", what, r["ttlMs"], ttl)
		}
		if string(r["cacheScope"]) != `"`+scope+`"` {
			t.Errorf("%s: cacheScope %s, want %q", what, r["cacheScope"], scope)
		}
	}
	for _, id := range m.ids() {
		// Defaults: revalidate every time, private.
		d := m.call(id, mcp.MethodServerDiscover, "", nil)
		cacheable(d, "server/discover", 0, "private")
		for _, method := range []string{mcp.MethodToolsList, mcp.MethodPromptsList, mcp.MethodResourcesList, mcp.MethodResourcesTemplatesList} {
			cacheable(m.call(m.id(), method, "", nil), method, 0, "private")
			cacheable(m.call(fmt.Sprint("s", m.id()), method, "", nil), method, 0, "private")
		}
		cacheable(m.call(m.id(), mcp.MethodResourcesRead, "test://r", map[string]any{"uri": "test://r"}), "resources/read", 0, "private")
		cacheable(m.call(m.id(), mcp.MethodResourcesRead, "test://t/42", map[string]any{"uri": "test://t/42"}), "resources/read (template)", 0, "private")
		// The handler's own hints are kept.
		cacheable(m.call(m.id(), mcp.MethodResourcesRead, "test://cached", map[string]any{"uri": "test://cached"}), "resources/read (handler)", 5, "public")
		// Not cacheable, but stamped all the same (call checks resultType
		// and serverInfo on each).
		m.call(m.id(), mcp.MethodToolsCall, "echo", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}})
		m.call(m.id(), mcp.MethodPromptsGet, "greet", map[string]any{"name": "greet", "arguments": map[string]any{"who": "Ada"}})
		m.call(m.id(), mcp.MethodCompletionComplete, "", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greet"}, "argument": map[string]any{"name": "who", "value": "a"}})
		// A tool error is still a complete result.
		r := m.call(m.id(), mcp.MethodToolsCall, "echo", map[string]any{"name": "echo", "arguments": map[string]any{"text": 5}})
		if _, isErr := resultText(t, r); !isErr {
			t.Error("invalid arguments did not give an isError result")
		}
	}
	t.Run("server/discover", func(t *testing.T) {
		m := m.sub(t)
		id := "discover-1"
		r := m.call(id, mcp.MethodServerDiscover, "", nil)
		if !jsonEqual(t, r["supportedVersions"], `["2026-07-28"]`) {
			t.Errorf("supportedVersions %s", r["supportedVersions"])
		}
		want, _ := json.Marshal(f.s.Capabilities())
		if !jsonEqual(t, r["capabilities"], string(want)) {
			t.Errorf("capabilities %s, want %s", r["capabilities"], want)
		}
		if !jsonEqual(t, r["capabilities"], `{"logging":{},"completions":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}}`) {
			t.Errorf("capabilities %s", r["capabilities"])
		}
		if string(r["instructions"]) != `"Try the echo tool."` {
			t.Errorf("instructions %s", r["instructions"])
		}
		if _, ok := r["serverInfo"]; ok {
			t.Error("DiscoverResult has a top-level serverInfo: it moved to _meta")
		}
		if !jsonEqual(t, r["_meta"], `{"io.modelcontextprotocol/serverInfo":{"name":"fixture26","version":"1.2.3"}}`) {
			t.Errorf("_meta %s", r["_meta"])
		}
	})
	t.Run("tools/list order", func(t *testing.T) {
		s := New(&Options{Info: mcp.Implementation{Name: "order", Version: "1"}})
		names := []string{"zeta", "alpha", "mid", "Beta", "alpha2", "_x"}
		for _, n := range names {
			AddTool(s, &mcp.Tool{Name: n}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) { return "", nil })
		}
		m := newModernEnv(t, s, nil)
		var first []string
		for i := range 5 {
			var tools []struct {
				Name string `json:"name"`
			}
			r := m.call(m.id(), mcp.MethodToolsList, "", nil)
			if err := json.Unmarshal(r["tools"], &tools); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tl := range tools {
				got = append(got, tl.Name)
			}
			if i == 0 {
				first = got
				want := slices.Clone(names)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("tools/list order %v, want %v", got, want)
				}
			} else if !slices.Equal(got, first) {
				t.Errorf("tools/list order changed: %v then %v", first, got)
			}
		}
	})
	t.Run("resources/read of an unknown uri", func(t *testing.T) {
		m := m.sub(t)
		for _, id := range m.ids() {
			r := m.send(req26(id, mcp.MethodResourcesRead, map[string]any{"uri": "test://none"}), true, h26(mcp.MethodResourcesRead, "test://none")...)
			// SEP-2164: -32602 with data.uri, never empty contents. The spec
			// gives no HTTP status for this error; it is an error of the
			// method, answered 200 like other handler errors.
			e := m.wantErr(r, http.StatusOK, mcp.CodeInvalidParams, id)
			if !jsonEqual(t, e.Data, `{"uri":"test://none"}`) {
				t.Errorf("data %s, want {uri}", e.Data)
			}
		}
	})
}

func TestModernHTTPCacheHintOptions(t *testing.T) {
	f := newFixture26(&Options{Info: mcp.Implementation{Name: "cached", Version: "1"}, CacheTTL: 90 * time.Second, CacheScope: mcp.CachePublic})
	m := newModernEnv(t, f.s, nil)
	check := func(r map[string]json.RawMessage, what, ttl, scope string) {
		t.Helper()
		if string(r["ttlMs"]) != ttl || string(r["cacheScope"]) != scope {
			t.Errorf("%s: ttlMs %s cacheScope %s, want %s %s", what, r["ttlMs"], r["cacheScope"], ttl, scope)
		}
	}
	check(m.call(m.id(), mcp.MethodServerDiscover, "", nil), "server/discover", "90000", `"public"`)
	for _, method := range []string{mcp.MethodToolsList, mcp.MethodPromptsList, mcp.MethodResourcesList, mcp.MethodResourcesTemplatesList} {
		check(m.call(m.id(), method, "", nil), method, "90000", `"public"`)
	}
	check(m.call(m.id(), mcp.MethodResourcesRead, "test://r", map[string]any{"uri": "test://r"}), "resources/read", "90000", `"public"`)
	check(m.call(m.id(), mcp.MethodResourcesRead, "test://cached", map[string]any{"uri": "test://cached"}), "resources/read (handler)", "5", `"public"`)
	// No result that is not cacheable carries the hints.
	r := m.call(m.id(), mcp.MethodToolsCall, "echo", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}})
	if _, ok := r["ttlMs"]; ok {
		t.Errorf("tools/call result with ttlMs")
	}
	s := New(&Options{Info: mcp.Implementation{Name: "private", Version: "1"}, CacheTTL: time.Second, CacheScope: mcp.CachePrivate})
	s.AddResource(&mcp.Resource{URI: "test://p", Name: "p"}, func(ctx context.Context, req *ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		zero := int64(0)
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: "test://p", Text: "p"}}, TTLMs: &zero, CacheScope: mcp.CachePublic}, nil
	})
	m2 := newModernEnv(t, s, nil)
	// A handler's explicit 0 is kept, not replaced by the default.
	check(m2.call(m2.id(), mcp.MethodResourcesRead, "test://p", map[string]any{"uri": "test://p"}), "resources/read (handler 0)", "0", `"public"`)
	check(m2.call(m2.id(), mcp.MethodResourcesList, "", nil), "resources/list", "1000", `"private"`)
}

// ---------------------------------------------------------------------
// 5. -32021.

func TestModernHTTPMissingCapability(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	for _, tc := range []struct {
		name string
		caps any    // declared
		need needIn // required
		miss string // data.requiredCapabilities; "" means served
	}{
		{"sampling missing", map[string]any{}, needIn{Sampling: true}, `{"sampling":{}}`},
		{"form missing", map[string]any{}, needIn{Form: true}, `{"elicitation":{"form":{}}}`},
		{"elicitation missing", map[string]any{"roots": map[string]any{}}, needIn{Elicitation: true}, `{"elicitation":{}}`},
		{"url missing", map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}, needIn{URL: true}, `{"elicitation":{"url":{}}}`},
		{"form missing, url declared", map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}, needIn{Form: true}, `{"elicitation":{"form":{}}}`},
		{"roots missing", map[string]any{}, needIn{Roots: true}, `{"roots":{}}`},
		{"only what is missing", map[string]any{"roots": map[string]any{}, "elicitation": map[string]any{}}, needIn{Sampling: true, Roots: true, Form: true}, `{"sampling":{}}`},
		{"two missing", map[string]any{"roots": map[string]any{}}, needIn{Sampling: true, Roots: true, URL: true}, `{"sampling":{},"elicitation":{"url":{}}}`},
		{"one mode of two missing", map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}, needIn{Form: true, URL: true}, `{"elicitation":{"url":{}}}`},
		{"the other mode of two missing", map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}, needIn{Form: true, URL: true}, `{"elicitation":{"form":{}}}`},
		{"sampling declared", map[string]any{"sampling": map[string]any{}}, needIn{Sampling: true}, ""},
		{"empty elicitation means form", map[string]any{"elicitation": map[string]any{}}, needIn{Form: true}, ""},
		{"url declared", map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}, needIn{URL: true}, ""},
		{"roots declared", map[string]any{"roots": map[string]any{}}, needIn{Roots: true}, ""},
		{"all declared", map[string]any{"sampling": map[string]any{}, "roots": map[string]any{}, "elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}}}, needIn{Sampling: true, Roots: true, Form: true, URL: true}, ""},
		{"nothing needed", map[string]any{}, needIn{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := m.sub(t)
			for _, id := range m.ids() {
				params := map[string]any{"_meta": meta26(map[string]any{mcp.MetaKeyClientCapabilities: tc.caps}), "name": "needs", "arguments": tc.need}
				r := m.send(req26(id, mcp.MethodToolsCall, params), true, h26(mcp.MethodToolsCall, "needs")...)
				if tc.miss == "" {
					if text, isErr := resultText(t, m.wantOK(r, id)); text != "served" || isErr {
						t.Errorf("answered %q (isError %v)", text, isErr)
					}
					continue
				}
				e := m.wantErr(r, http.StatusBadRequest, mcp.CodeMissingRequiredClientCapability, id)
				var data struct {
					Required json.RawMessage `json:"requiredCapabilities"`
				}
				if err := json.Unmarshal(e.Data, &data); err != nil || !jsonEqual(t, data.Required, tc.miss) {
					t.Errorf("data %s, want requiredCapabilities %s", e.Data, tc.miss)
				}
			}
		})
	}
	t.Run("capabilities are not inferred from earlier requests", func(t *testing.T) {
		m := m.sub(t)
		with := map[string]any{"_meta": meta26(map[string]any{mcp.MetaKeyClientCapabilities: map[string]any{"sampling": map[string]any{}}}), "name": "needs", "arguments": needIn{Sampling: true}}
		without := map[string]any{"name": "needs", "arguments": needIn{Sampling: true}}
		id := m.id()
		m.wantOK(m.send(req26(id, mcp.MethodToolsCall, with), true, h26(mcp.MethodToolsCall, "needs")...), id)
		id = m.id()
		m.wantErr(m.send(req26(id, mcp.MethodToolsCall, without), true, h26(mcp.MethodToolsCall, "needs")...), http.StatusBadRequest, mcp.CodeMissingRequiredClientCapability, id)
	})
	t.Run("legacy session", func(t *testing.T) {
		// -32021 does not exist before 2026-07-28: a legacy session gets
		// -32603 naming the capabilities, in a 200 answer.
		m := m.sub(t)
		sid := m.legacy.initialize(`{"roots":{}}`)
		id := m.id()
		msg := m.legacy.rpc(sid, toolCall(id, "needs", `{"sampling":true,"roots":true}`, ""))
		if msg.Error == nil || msg.Error.Code != mcp.CodeInternalError || !strings.Contains(msg.Error.Message, `{"sampling":{}}`) {
			t.Errorf("legacy answer %s, want -32603 naming sampling", msg.raw)
		}
		if string(msg.ID) != idJSON(id) {
			t.Errorf("id %s, want %d", msg.ID, id)
		}
		if text, _ := toolText(t, m.legacy.rpc(sid, toolCall(m.id(), "needs", `{"roots":true}`, ""))); text != "served" {
			t.Errorf("declared at initialize, answered %q", text)
		}
	})
}

// ---------------------------------------------------------------------
// 6. Logging and progress.

func logLevelOf(t testing.TB, m *rpcMsg) string {
	t.Helper()
	var p struct {
		Level string `json:"level"`
		Data  any    `json:"data"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s:%v", p.Level, p.Data)
}

func TestModernHTTPLogging(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	call := func(id any, level string, token string) string {
		mods := map[string]any{}
		if level != "" {
			mods[mcp.MetaKeyLogLevel] = level
		}
		if token != "" {
			mods[mcp.MetaKeyProgressToken] = token
		}
		return req26(id, mcp.MethodToolsCall, map[string]any{"_meta": meta26(mods), "name": "logs", "arguments": map[string]any{}})
	}
	t.Run("no logLevel, no token: a plain JSON answer", func(t *testing.T) {
		m := m.sub(t)
		for _, id := range m.ids() {
			r := m.send(call(id, "", ""), true, h26(mcp.MethodToolsCall, "logs")...)
			if text, _ := resultText(t, m.wantOK(r, id)); text != "logged" {
				t.Errorf("answered %q", text)
			}
		}
	})
	for _, tc := range []struct {
		name, level, token string
		want               []string // the notifications before the response
	}{
		{"no logLevel: progress only", "", "tok", []string{"progress 1", "progress 2"}},
		{"warning: the error only", "warning", "", []string{"log error:error line"}},
		{"warning with progress", "warning", "tok", []string{"progress 1", "log error:error line", "progress 2"}},
		{"debug: both", "debug", "", []string{"log debug:debug line", "log error:error line"}},
		{"emergency: none", "emergency", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := m.sub(t)
			for _, id := range m.ids() {
				if tc.want == nil {
					r := m.send(call(id, tc.level, tc.token), true, h26(mcp.MethodToolsCall, "logs")...)
					m.wantOK(r, id)
					continue
				}
				s := m.stream(call(id, tc.level, tc.token), h26(mcp.MethodToolsCall, "logs")...)
				notes, resp := m.rest(s, id)
				var got []string
				for _, n := range notes {
					switch n.Method {
					case mcp.NotificationProgress:
						tok, p := progressOf(t, n)
						if tok != tc.token {
							t.Errorf("progress token %q, want %q", tok, tc.token)
						}
						got = append(got, fmt.Sprintf("progress %v", p))
					case mcp.NotificationMessage:
						got = append(got, "log "+logLevelOf(t, n))
					default:
						got = append(got, n.Method)
					}
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("stream carried %q, want %q", got, tc.want)
				}
				res := checkModernResult(t, parseWire(t, []byte(resp.raw)), id, "fixture26")
				if text, _ := resultText(t, res); text != "logged" {
					t.Errorf("answered %q", text)
				}
			}
		})
	}
}

// Progress and logs go on the stream of their own request only, before
// its response; nothing reaches another request's stream or a listen
// stream.
func TestModernHTTPNotificationsOnOwnStream(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	listenID := "watch"
	listen := m.stream(req26(listenID, mcp.MethodSubscriptionsListen, map[string]any{"notifications": map[string]any{"toolsListChanged": true}}), h26(mcp.MethodSubscriptionsListen, "")...)
	if _, ack := listen.message(); ack.Method != mcp.NotificationSubscriptionsAcknowledged {
		t.Fatalf("first listen message %s", ack.raw)
	}
	type req struct {
		id  any
		tag string
		s   *sseStream
	}
	reqs := []*req{{id: m.id(), tag: "a"}, {id: "b-" + fmt.Sprint(m.id()), tag: "b"}, {id: m.id(), tag: "c"}}
	for _, r := range reqs {
		meta := meta26(map[string]any{mcp.MetaKeyLogLevel: "info", mcp.MetaKeyProgressToken: "tok-" + r.tag})
		r.s = m.stream(req26(r.id, mcp.MethodToolsCall, map[string]any{"_meta": meta, "name": "gate", "arguments": map[string]any{"tag": r.tag}}), h26(mcp.MethodToolsCall, "gate")...)
	}
	// Every request is in flight (its first progress has arrived) before
	// any goes on.
	for _, r := range reqs {
		_, n := r.s.message()
		if tok, p := progressOf(t, n); tok != "tok-"+r.tag || p != 1 {
			t.Errorf("request %s: first message %s", r.tag, n.raw)
		}
	}
	close(f.gate)
	for _, r := range reqs {
		notes, resp := m.rest(r.s, r.id)
		if len(notes) != 2 {
			t.Fatalf("request %s: %d messages before the response, want a log and a progress", r.tag, len(notes))
		}
		if notes[0].Method != mcp.NotificationMessage || logLevelOf(t, notes[0]) != "info:log "+r.tag {
			t.Errorf("request %s: got %s, want its own log", r.tag, notes[0].raw)
		}
		if tok, p := progressOf(t, notes[1]); tok != "tok-"+r.tag || p != 2 {
			t.Errorf("request %s: got %s, want its own progress", r.tag, notes[1].raw)
		}
		res := checkModernResult(t, parseWire(t, []byte(resp.raw)), r.id, "fixture26")
		if text, _ := resultText(t, res); text != "gate "+r.tag {
			t.Errorf("request %s answered %q", r.tag, text)
		}
	}
	// The listen stream saw none of it: its next message is this change.
	m.call(m.id(), mcp.MethodToolsCall, "add_tool", map[string]any{"name": "add_tool", "arguments": map[string]any{"name": "marker"}})
	if _, n := listen.message(); n.Method != mcp.NotificationToolsListChanged {
		t.Errorf("listen stream carried %s", n.raw)
	}
	listen.close()
}

// ---------------------------------------------------------------------
// 7. Cancellation.

func TestModernHTTPCancellation(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	t.Run("closing the stream", func(t *testing.T) {
		m := m.sub(t)
		for _, id := range m.ids() {
			var addr string
			meta := meta26(map[string]any{mcp.MetaKeyProgressToken: "tok", mcp.MetaKeyLogLevel: "debug"})
			s := m.stream(req26(id, mcp.MethodToolsCall, map[string]any{"_meta": meta, "name": "block", "arguments": map[string]any{}}), h26(mcp.MethodToolsCall, "block", withConnAddr(&addr))...)
			if _, n := s.message(); n.Method != mcp.NotificationProgress {
				t.Fatalf("first message %s", n.raw)
			}
			recvT(t, f.blocked, "the handler to start")
			s.close() // the cancellation of a 2026 request over HTTP
			rep := recvT(t, f.unblocked, "the handler's context to end")
			if !errors.Is(rep.cause, context.Canceled) {
				t.Errorf("cancellation cause %v, want context.Canceled", rep.cause)
			}
			// Nothing more goes out for it: what the handler tries to send
			// is refused.
			if rep.progressErr == nil || rep.logErr == nil {
				t.Errorf("after the cancellation Progress = %v, Log = %v; want both refused", rep.progressErr, rep.logErr)
			}
			recvT(t, m.serverClosed(addr), "the POST handler to return")
		}
	})
	t.Run("before the answer began", func(t *testing.T) {
		m := m.sub(t)
		for _, id := range m.ids() {
			ctx, cancel := context.WithCancel(m.ctx)
			var addr string
			ch := m.doAsync(http.MethodPost, "", req26(id, mcp.MethodToolsCall, map[string]any{"name": "block", "arguments": map[string]any{}}),
				h26(mcp.MethodToolsCall, "block", withCtx(ctx), withConnAddr(&addr))...)
			recvT(t, f.blocked, "the handler to start")
			cancel()
			if a := recvT(t, ch, "the client to give up"); a.err == nil {
				t.Errorf("the request was answered: %d %s", a.resp.StatusCode, a.body)
			}
			rep := recvT(t, f.unblocked, "the handler's context to end")
			if !errors.Is(rep.cause, context.Canceled) {
				t.Errorf("cancellation cause %v, want context.Canceled", rep.cause)
			}
			recvT(t, m.serverClosed(addr), "the POST handler to return")
		}
	})
	// The server is still serving.
	m.call(m.id(), mcp.MethodToolsList, "", nil)
}

// A panicking handler is a -32603 error, not the end of the process.
func TestModernHTTPHandlerPanic(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	for _, id := range m.ids() {
		r := m.send(req26(id, mcp.MethodToolsCall, map[string]any{"name": "boom", "arguments": map[string]any{}}), true, h26(mcp.MethodToolsCall, "boom")...)
		m.wantErr(r, http.StatusOK, mcp.CodeInternalError, id)
	}
	m.call(m.id(), mcp.MethodToolsList, "", nil)
}

// ---------------------------------------------------------------------
// 8. subscriptions/listen over HTTP.

// openListen opens a listen stream and checks its acknowledgement: the
// first message, tagged with the listen id (type kept), carrying the
// agreed filter. addr receives the connection's local address.
func (m *modernEnv) openListen(id any, filter map[string]any, agreed string, addr *string) *sseStream {
	m.t.Helper()
	opts := h26(mcp.MethodSubscriptionsListen, "")
	if addr != nil {
		opts = append(opts, withConnAddr(addr))
	}
	s := m.stream(req26(id, mcp.MethodSubscriptionsListen, map[string]any{"notifications": filter}), opts...)
	f, ack := s.message()
	if f.hasID || f.hasRtry {
		m.t.Errorf("listen frame %v has an event id or retry", f)
	}
	if ack.Method != mcp.NotificationSubscriptionsAcknowledged {
		m.t.Fatalf("first listen message %s, want the acknowledgement", ack.raw)
	}
	var p struct {
		Meta          map[string]json.RawMessage `json:"_meta"`
		Notifications json.RawMessage            `json:"notifications"`
	}
	if err := json.Unmarshal(ack.Params, &p); err != nil {
		m.t.Fatal(err)
	}
	if got := string(p.Meta[mcp.MetaKeySubscriptionID]); got != idJSON(id) {
		m.t.Errorf("acknowledgement subscriptionId %s, want %s", got, idJSON(id))
	}
	if !jsonEqual(m.t, p.Notifications, agreed) {
		m.t.Errorf("acknowledged %s, want %s", p.Notifications, agreed)
	}
	return s
}

// expectListen reads the next listen notification: method, tag, uri.
func (m *modernEnv) expectListen(s *sseStream, id any, method, uri string) {
	m.t.Helper()
	_, n := s.message()
	if n.Method != method {
		m.t.Fatalf("listen %s: got %s, want %s", idJSON(id), n.raw, method)
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
		URI  string                     `json:"uri"`
	}
	if err := json.Unmarshal(n.Params, &p); err != nil {
		m.t.Fatal(err)
	}
	if got := string(p.Meta[mcp.MetaKeySubscriptionID]); got != idJSON(id) {
		m.t.Errorf("%s tagged %s, want %s", method, got, idJSON(id))
	}
	if p.URI != uri {
		m.t.Errorf("%s uri %q, want %q", method, p.URI, uri)
	}
}

// trigger makes a change through a tools/call (on a connection of its
// own: every listen holds one).
func (m *modernEnv) trigger(tool string, args map[string]any) {
	m.t.Helper()
	m.call(m.id(), mcp.MethodToolsCall, tool, map[string]any{"name": tool, "arguments": args})
}

func TestModernHTTPListen(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	var addr2 string
	id1, id2, id3 := m.id(), "listen-prompts", "listen-tools"
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
	l2.close()
	recvT(t, m.serverClosed(addr2), "the closed listen to end")
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
		s  *sseStream
		id any
	}{{l1, id1}, {l3, id3}} {
		_, resp := l.s.message()
		if resp.Method != "" || string(resp.ID) != idJSON(l.id) {
			t.Fatalf("want the listen result, got %s", resp.raw)
		}
		r := checkModernResult(t, parseWire(t, []byte(resp.raw)), l.id, "fixture26")
		var meta map[string]json.RawMessage
		_ = json.Unmarshal(r["_meta"], &meta)
		if got := string(meta[mcp.MetaKeySubscriptionID]); got != idJSON(l.id) {
			t.Errorf("listen result subscriptionId %s, want %s", got, idJSON(l.id))
		}
		l.s.end()
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
	l.close()
	recvT(t, m.serverClosed(addr), "the listen to end")
	if err := m.h.Close(); err != nil {
		t.Fatal(err)
	}
	_, resp := l0.message()
	if string(resp.ID) != "0" || resp.Method != "" {
		t.Errorf("listen 0 got %s, want its result", resp.raw)
	}
	l0.end()
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
		l.close()
		recvT(t, m.serverClosed(addr), "the listen to end")
	}
	if n := listenerCount(f.s); n != 0 {
		t.Errorf("%d listeners left after every stream closed", n)
	}
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

// ---------------------------------------------------------------------
// 10. Benchmark.

// benchModernRequest is benchRequest on the 2026 wire: the envelope in
// _meta, beside the progress token.
var benchModernRequest = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"_meta":{"progressToken":"tok-1",` +
	`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}},` +
	`"name":"forecast","arguments":{"city":"Lisbon","days":3,"units":"metric","tags":["coast","sunny"]}}}`)

func benchServer() *Server {
	s := New(nil)
	AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, req *CallToolRequest, in benchIn) (benchOut, error) {
		return benchOut{City: in.City, Forecast: []float64{21.5, 22, 19.25}, Summary: "mild"}, nil
	})
	return s
}

// BenchmarkHTTPModernToolsCall measures one 2026 tools/call through the
// HTTP handler over loopback with a keep-alive client: classification,
// envelope, SEP-2243 checks, dispatch, the tool, the stamped JSON answer
// (the client side of net/http is counted too).
func BenchmarkHTTPModernToolsCall(b *testing.B) {
	h := NewHTTPHandler(benchServer(), nil)
	ts := httptest.NewServer(h)
	tr := &http.Transport{MaxIdleConnsPerHost: 4}
	client := &http.Client{Transport: tr}
	defer func() {
		h.Close()
		ts.Close()
		tr.CloseIdleConnections()
	}()
	b.ReportAllocs()
	b.SetBytes(int64(len(benchModernRequest)))
	for b.Loop() {
		req, err := http.NewRequest(http.MethodPost, ts.URL, bytes.NewReader(benchModernRequest))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", acceptBoth)
		req.Header.Set("Mcp-Protocol-Version", v26)
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "forecast")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte(`"resultType":"complete"`)) {
			b.Fatalf("status %d: %s (%v)", resp.StatusCode, out, err)
		}
	}
}
