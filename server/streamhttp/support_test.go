package streamhttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// Test support copied from the server package's own tests (fixtures,
// 2026-07-28 request builders and checks, a manual clock), which an
// external package cannot reach.

const v26 = mcp.Version20260728

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
	if err := json.Unmarshal(meta[mcp.MetaKeyServerInfo], &info); err != nil || info.Name == "" || (server != "" && info.Name != server) || info.Version == "" {
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

// modernEnv is an httpEnv whose checker and observer are those of
// 2026-07-28; legacy is the same endpoint checked against 2025-11-25.
type modernEnv struct {
	*httpEnv
	legacy *httpEnv
	wc26   *wirecheck.Checker
}

func newModernEnv(t testing.TB, srv *server.Server, opts *Options) *modernEnv {
	t.Helper()
	legacy := newHTTPEnv(t, srv, opts)
	m := &modernEnv{legacy: legacy, wc26: wirecheck.For(t, v26)}
	c := *legacy
	c.WC = m.wc26
	c.Obs = m.wc26.Observe(t)
	m.httpEnv = &c
	return m
}

// sub returns a view of m whose failures (and 2026 observer) belong to t.
func (m *modernEnv) sub(t testing.TB) *modernEnv {
	c := *m.httpEnv
	c.T = t
	c.Obs = m.wc26.Observe(t)
	return &modernEnv{httpEnv: &c, legacy: m.legacy.sub(t), wc26: m.wc26}
}

// ids returns a fresh integer id and a fresh string id.
func (m *modernEnv) ids() []any {
	n := m.ID()
	return []any{n, fmt.Sprintf("req-%d", n)}
}

// h26 are the headers of a 2026 request (MCP-Protocol-Version, Mcp-Method
// and, when name is set, Mcp-Name), then more.
func h26(method, name string, more ...httpenv.ReqOpt) []httpenv.ReqOpt {
	opts := []httpenv.ReqOpt{httpenv.WithHeader("MCP-Protocol-Version", v26), httpenv.WithHeader("Mcp-Method", method)}
	if name != "" {
		opts = append(opts, httpenv.WithHeader("Mcp-Name", name))
	}
	return append(opts, more...)
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
func (m *modernEnv) send(body string, wellFormed bool, opts ...httpenv.ReqOpt) *reply {
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
	r := &reply{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type")}
	if r.ctype != "application/json" {
		m.T.Fatalf("status %d, Content-Type %q, want a JSON answer: %q", r.status, r.ctype, raw)
	}
	r.wireMsg = parseWire(m.T, raw)
	if wellFormed {
		m.Obs(wirecheck.ServerToClient, raw)
	} else if err := m.wc26.Check(raw); err != nil {
		m.T.Errorf("answer does not conform: %v\n%s", err, raw)
	}
	return r
}

// wantErr checks an error answer: HTTP status, code, echoed id, schema.
func (m *modernEnv) wantErr(r *reply, status int, code int64, id any) *wireError {
	m.T.Helper()
	if r.status != status {
		m.T.Errorf("HTTP status %d, want %d: %s", r.status, status, r.raw)
	}
	return checkErr(m.T, m.wc26, r.wireMsg, code, id)
}

// wantOK checks a result answer (200, resultType, serverInfo).
func (m *modernEnv) wantOK(r *reply, id any) map[string]json.RawMessage {
	m.T.Helper()
	if r.status != http.StatusOK {
		m.T.Errorf("HTTP status %d, want 200: %s", r.status, r.raw)
	}
	return checkModernResult(m.T, r.wireMsg, id, "")
}

// call sends a well-formed 2026 request with its headers and expects a
// result.
func (m *modernEnv) call(id any, method, name string, params map[string]any) map[string]json.RawMessage {
	m.T.Helper()
	return m.wantOK(m.send(req26(id, method, params), true, h26(method, name)...), id)
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

func benchServer() *server.Server {
	s := server.New(nil)
	server.AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, req *server.CallToolRequest, in benchIn) (benchOut, error) {
		return benchOut{City: in.City, Forecast: []float64{21.5, 22, 19.25}, Summary: "mild"}, nil
	})
	return s
}

// benchModernRequest is benchRequest on the 2026 wire: the envelope in
// _meta, beside the progress token.
var benchModernRequest = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"_meta":{"progressToken":"tok-1",` +
	`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}},` +
	`"name":"forecast","arguments":{"city":"Lisbon","days":3,"units":"metric","tags":["coast","sunny"]}}}`)

// fixture26 is the server of the modern tests, with what its handlers saw.
type fixture26 struct {
	s                      *server.Server
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

func newFixture26(opts *server.Options) *fixture26 {
	if opts == nil {
		opts = &server.Options{Info: mcp.Implementation{Name: "fixture26", Version: "1.2.3"}, Instructions: "Try the echo tool.", Logging: true}
	}
	s := server.New(opts)
	f := &fixture26{s: s, gate: make(chan struct{}), blocked: make(chan struct{}, 8), unblocked: make(chan blockReport, 8)}
	server.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text"}, func(ctx context.Context, req *server.CallToolRequest, in textIn) (string, error) {
		if mcp.IsModern(req.ProtocolVersion()) {
			f.modernEcho.Add(1)
		} else {
			f.legacyEcho.Add(1)
		}
		return in.Text, nil
	})
	server.AddTool(s, &mcp.Tool{Name: "logs", Description: "Logs at debug and error, with progress"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
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
	server.AddTool(s, &mcp.Tool{Name: "gate", Description: "Reports progress, waits for the gate, logs, answers"}, func(ctx context.Context, req *server.CallToolRequest, in tagIn) (string, error) {
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
	server.AddTool(s, &mcp.Tool{Name: "block", Description: "Blocks until cancelled"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		_ = req.Progress(ctx, 1, 0, "started") // with a token, the answer becomes a stream
		f.blocked <- struct{}{}
		<-ctx.Done()
		rep := blockReport{cause: context.Cause(ctx)}
		rep.progressErr = req.Progress(ctx, 2, 0, "after the cancellation")
		rep.logErr = req.Log(ctx, mcp.LevelError, "fixture", "after the cancellation")
		f.unblocked <- rep
		return "too late", nil
	})
	server.AddTool(s, &mcp.Tool{Name: "needs", Description: "Requires client capabilities"}, func(ctx context.Context, req *server.CallToolRequest, in needIn) (string, error) {
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
	server.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks the user (legacy sessions only)"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return "", err
		}
		return "answered " + res.Action, nil
	})
	server.AddTool(s, &mcp.Tool{Name: "boom", Description: "Panics"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		panic("boom")
	})
	server.AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Registers a tool"}, func(ctx context.Context, req *server.CallToolRequest, in nameIn) (string, error) {
		server.AddTool(s, &mcp.Tool{Name: in.Name, Description: "Added at run time"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
			return "dynamic", nil
		})
		return "added", nil
	})
	server.AddTool(s, &mcp.Tool{Name: "add_prompt", Description: "Registers a prompt"}, func(ctx context.Context, req *server.CallToolRequest, in nameIn) (string, error) {
		s.AddPrompt(&mcp.Prompt{Name: in.Name}, func(ctx context.Context, req *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "dynamic"}}}}, nil
		})
		return "added", nil
	})
	server.AddTool(s, &mcp.Tool{Name: "add_resource", Description: "Registers a resource"}, func(ctx context.Context, req *server.CallToolRequest, in uriIn) (string, error) {
		s.AddResource(&mcp.Resource{URI: in.URI, Name: "dynamic"}, textResource("dynamic"))
		return "added", nil
	})
	server.AddTool(s, &mcp.Tool{Name: "touch", Description: "Reports a resource update"}, func(ctx context.Context, req *server.CallToolRequest, in uriIn) (string, error) {
		s.ResourceUpdated(in.URI)
		return "touched", nil
	})
	s.AddRawTool(&mcp.Tool{Name: "xh", Description: "Mirrors arguments into Mcp-Param-* headers", InputSchema: jsontext.Value(xhSchema)},
		func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "xh ok"}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []mcp.PromptArgument{{Name: "who", Required: true}}}, func(ctx context.Context, req *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["who"]}}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, textResource("r"))
	s.AddResource(&mcp.Resource{URI: "test://cached", Name: "cached"}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		ttl := int64(5)
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: "c"}}, TTLMs: &ttl, CacheScope: mcp.CachePublic}, nil
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://t/{id}", Name: "t"}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: "t " + req.Vars["id"]}}}, nil
	})
	s.SetCompletionHandler(func(ctx context.Context, req *server.CompleteRequest) (*mcp.CompleteResult, error) {
		return &mcp.CompleteResult{Completion: mcp.Completion{Values: []string{"ada", "alan"}}}, nil
	})
	return f
}

func textResource(text string) server.ResourceHandler {
	return func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: text}}}, nil
	}
}

// manualClock is a clock for tests that moves only when Advance is called.
// Its AfterFunc timers fire, each in its own goroutine, when Advance
// reaches their time.
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

func newManualClock() *manualClock {
	return &manualClock{now: time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)}
}

// Now returns the clock's time.
func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc registers f to run once the clock has advanced by d.
func (c *manualClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	tm := &manualTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, tm)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !tm.stopped
		tm.stopped = true
		return was
	}
}

// Advance moves the clock forward by d and fires the timers now due.
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	kept := c.timers[:0]
	for _, tm := range c.timers {
		switch {
		case tm.stopped:
		case !tm.at.After(c.now):
			tm.stopped = true
			due = append(due, tm.f)
		default:
			kept = append(kept, tm)
		}
	}
	c.timers = kept
	c.mu.Unlock()
	for _, f := range due {
		go f()
	}
}

// principalMiddleware names the principal from a test header, as
// authentication middleware would from a token.
func principalMiddleware(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if pr := r.Header.Get("X-Test-Principal"); pr != "" {
			r = r.WithContext(server.WithPrincipal(r.Context(), pr))
		}
		h.ServeHTTP(w, r)
	})
}

type benchIn struct {
	City  string   `json:"city"`
	Days  int      `json:"days" jsonschema:"minimum=1,maximum=14"`
	Units string   `json:"units,omitzero" jsonschema:"enum=metric|imperial"`
	Tags  []string `json:"tags,omitempty"`
}

type benchOut struct {
	City     string    `json:"city"`
	Forecast []float64 `json:"forecast"`
	Summary  string    `json:"summary"`
}

var benchRequest = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"_meta":{"progressToken":"tok-1"},` +
	`"name":"forecast","arguments":{"city":"Lisbon","days":3,"units":"metric","tags":["coast","sunny"]}}}`)

// envelope returns the 2026 request _meta, with extra members merged in.
func envelopeMeta(extra map[string]any) map[string]any {
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

// xhSchema annotates string, integer and boolean arguments, one of them
// nested, with x-mcp-header (SEP-2243).
const xhSchema = `{"type":"object","properties":{` +
	`"region":{"type":"string","x-mcp-header":"Region"},` +
	`"level":{"type":"integer","x-mcp-header":"Level"},` +
	`"dry":{"type":"boolean","x-mcp-header":"Dry-Run"},` +
	`"scope":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},` +
	`"note":{"type":"string"}}}`

type manualTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

// stream posts a well-formed 2026 request whose answer is an event
// stream and returns the stream once its headers have arrived.
func (m *modernEnv) stream(body string, opts ...httpenv.ReqOpt) *httpenv.SSEStream {
	m.T.Helper()
	return m.OpenSSE(m.Post("", body, opts...))
}

// rest reads a 2026 request's stream to its end: the messages before
// the response, then the response, after which the stream must end.
func (m *modernEnv) rest(s *httpenv.SSEStream, id any) (notes []*httpenv.RPCMsg, resp *httpenv.RPCMsg) {
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
		if string(msg.ID) != idJSON(id) {
			m.T.Fatalf("response %s answers another request than %s", msg.Raw, idJSON(id))
		}
		s.End()
		return notes, msg
	}
}
