package server

// Tests of Multi Round-Trip Requests (SEP-2322) on the server: the legacy
// shim (the cases of docs/design/mrtr.md) over a memory transport with a raw 2025-11-25 client, the 2026
// wire (input-required results, the capability gate, answer checks) with
// a raw 2026 client, and the sealed requestState (tampering, expiry,
// binding, key rotation). The Streamable HTTP side is in mrtr_http_test.go.
//
// This file has the helpers, among them those shared with
// mrtr_http_test.go and mrtr_answers_test.go; the shim's tests are in
// mrtr_shim_test.go and mrtr_shim_edges_test.go, the 2026 wire's in
// mrtr_modern_test.go, the requestState's in mrtr_state_test.go.

import (
	"bytes"
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// mrtrHang bounds every wait of these tests. It is never a
// synchronisation: a test that reaches it has failed.
const mrtrHang = 20 * time.Second

// leakCheck verifies, when the test ends (after every other cleanup),
// that the test left no goroutine behind.
func leakCheck(t *testing.T) {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
}

// The answers the raw clients give, as raw JSON: the shim must hand them
// to the handler byte for byte.
var (
	answerElicit   = jsontext.Value(`{"action":"accept","content":{"name":"Ada"}}`)
	answerSampling = jsontext.Value(`{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m-1","stopReason":"endTurn"}`)
	answerRoots    = jsontext.Value(`{"roots":[{"uri":"file:///work","name":"work"}]}`)
)

var nameSchema = jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)

func askForm(msg string) *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: msg, RequestedSchema: nameSchema}
}

func askSampling(text string) *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{
		Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewSamplingContent(&mcp.TextContent{Text: text})}},
		MaxTokens: 20,
	}
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: s}}}
}

// mrtrRun is what one run of a handler saw.
type mrtrRun struct {
	inputs mcp.InputResponses
	state  string
}

// mrtrProbe records every run of the handlers that use it.
type mrtrProbe struct {
	mu   sync.Mutex
	runs []mrtrRun
}

// see records a run and returns its number (1 for the first).
func (p *mrtrProbe) see(req *Request) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var in mcp.InputResponses
	if got := req.InputResponses(); got != nil {
		in = make(mcp.InputResponses, len(got))
		for k, v := range got {
			in[k] = v.Clone()
		}
	}
	p.runs = append(p.runs, mrtrRun{inputs: in, state: req.RequestState()})
	return len(p.runs)
}

func (p *mrtrProbe) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.runs)
}

func (p *mrtrProbe) all() []mrtrRun {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.runs)
}

func keysOf(in mcp.InputResponses) []string {
	if in == nil {
		return nil
	}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ---- A raw 2025-11-25 client over a memory pair ----

// answerFunc answers one server→client request.
type answerFunc func(ctx context.Context, m *jsonrpc.Message) (any, error)

// answerAll answers every kind with the fixed answers above (a URL-mode
// elicitation with a bare accept: its answer has no content).
func answerAll(_ context.Context, m *jsonrpc.Message) (any, error) {
	switch m.Method {
	case mcp.MethodElicitationCreate:
		if bytes.Contains(m.Params, []byte(`"mode":"url"`)) {
			return jsontext.Value(`{"action":"accept"}`), nil
		}
		return answerElicit, nil
	case mcp.MethodSamplingCreateMessage:
		return answerSampling, nil
	case mcp.MethodRootsList:
		return answerRoots, nil
	}
	return nil, jsonrpc.ErrMethodNotFound
}

// legacyPeer is a raw legacy client: it records every server→client
// request and every message it reads, and answers with its answerFunc.
type legacyPeer struct {
	t      *testing.T
	conn   *jsonrpc.Conn
	ss     *Session
	answer answerFunc

	mu      sync.Mutex
	asked   []*jsonrpc.Message // server→client requests, in arrival order
	read    [][]byte           // every message read
	written [][]byte           // every message written
}

func (p *legacyPeer) HandleRequest(ctx context.Context, m *jsonrpc.Message) (any, error) {
	p.mu.Lock()
	p.asked = append(p.asked, &jsonrpc.Message{ID: m.ID, Method: m.Method, Params: m.Params.Clone()})
	p.mu.Unlock()
	if p.answer == nil {
		return nil, jsonrpc.ErrMethodNotFound
	}
	return p.answer(ctx, m)
}

func (p *legacyPeer) HandleNotification(context.Context, *jsonrpc.Message) {}

// newLegacyPeer connects a raw legacy client declaring caps (raw JSON) to
// s over memory and initializes the session. With checked, every message
// both ways is validated against the 2025-11-25 schema.
func newLegacyPeer(t *testing.T, s *Server, caps string, answer answerFunc, checked bool) *legacyPeer {
	t.Helper()
	p := &legacyPeer{t: t, answer: answer}
	var obs func(string, []byte)
	if checked {
		obs = wirecheck.For(t, mcp.Version20251125).Observe(t)
	}
	a, b := memory.NewPair()
	p.ss = s.Connect(a)
	p.conn = jsonrpc.NewConn(b, &jsonrpc.ConnOptions{Handler: p, Observe: func(in bool, msg []byte) {
		p.mu.Lock()
		if in {
			p.read = append(p.read, bytes.Clone(msg))
		} else {
			p.written = append(p.written, bytes.Clone(msg))
		}
		p.mu.Unlock()
		if obs != nil {
			if in {
				obs(wirecheck.ServerToClient, msg)
			} else {
				obs(wirecheck.ClientToServer, msg)
			}
		}
	}})
	p.conn.Start()
	t.Cleanup(func() { p.conn.Close(); p.ss.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), mrtrHang)
	defer cancel()
	err := p.conn.Call(ctx, mcp.MethodInitialize, map[string]any{
		"protocolVersion": mcp.Version20251125,
		"capabilities":    jsontext.Value(caps),
		"clientInfo":      map[string]any{"name": "legacy-peer", "version": "1"},
	}, nil)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if err := p.conn.Notify(ctx, mcp.NotificationInitialized, nil); err != nil {
		t.Fatal(err)
	}
	return p
}

// call sends a request and returns its raw result.
func (p *legacyPeer) call(method string, params any) (jsontext.Value, error) {
	ctx, cancel := context.WithTimeout(context.Background(), mrtrHang)
	defer cancel()
	var raw jsontext.Value
	err := p.conn.Call(ctx, method, params, &raw)
	return raw, err
}

// callTool calls a tool with raw JSON arguments ("" for none).
func (p *legacyPeer) callTool(name, args string) (jsontext.Value, error) {
	params := map[string]any{"name": name}
	if args != "" {
		params["arguments"] = jsontext.Value(args)
	}
	return p.call(mcp.MethodToolsCall, params)
}

// requests returns the server→client requests received so far.
func (p *legacyPeer) requests() []*jsonrpc.Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.asked)
}

func (p *legacyPeer) readMessages() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.read)
}

func (p *legacyPeer) writtenMessages() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.written)
}

// wantNoContact checks that the client was sent no request at all.
func (p *legacyPeer) wantNoContact(t *testing.T) {
	t.Helper()
	if got := p.requests(); len(got) != 0 {
		t.Errorf("the client was sent %d request(s), first %s %s; want none", len(got), got[0].Method, got[0].Params)
	}
}

// toolText decodes a tools/call result and joins its text.
func toolResultText(t *testing.T, raw jsontext.Value) (string, bool) {
	t.Helper()
	var r mcp.CallToolResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("not a tools/call result: %v: %s", err, raw)
	}
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), r.IsError
}

// wantRPCError checks err is a JSON-RPC error with code whose message
// contains every part.
func wantRPCError(t *testing.T, err error, code int64, parts ...string) *jsonrpc.Error {
	t.Helper()
	e, ok := jsonrpc.AsError(err)
	if !ok {
		t.Fatalf("err = %v, want JSON-RPC error %d", err, code)
	}
	if e.Code != code {
		t.Fatalf("JSON-RPC error %d %q, want code %d", e.Code, e.Message, code)
	}
	for _, part := range parts {
		if !strings.Contains(e.Message, part) {
			t.Errorf("error message %q does not contain %q", e.Message, part)
		}
	}
	return e
}

// sameJSON reports whether a and b are the same JSON value (RFC 8785).
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	ca, cb := jsontext.Value(bytes.Clone(a)), jsontext.Value(bytes.Clone(b))
	if err := ca.Canonicalize(); err != nil {
		t.Fatalf("canonicalizing %s: %v", a, err)
	}
	if err := cb.Canonicalize(); err != nil {
		t.Fatalf("canonicalizing %s: %v", b, err)
	}
	return bytes.Equal(ca, cb)
}

func mustJSON(t *testing.T, v any) jsontext.Value {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// plainState is a handler's state: on the legacy shim the handler gets it
// back as it wrote it, never sealed.
const plainState = `{"step":1,"note":"in process"}`

// stateKey is a fixed requestState key, so that sealing is explicitly
// configured in the tests that say so.
var stateKey = RequestStateKey(bytes.Repeat([]byte{7}, RequestStateKeySize))

// addGreet registers the "greet" tool: it asks for a name (with
// plainState), then greets.
func addGreet(s *Server, probe *mrtrProbe) {
	s.AddRawTool(&mcp.Tool{Name: "greet"}, func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
		probe.see(req.Request)
		ans, ok, err := req.ElicitResult("name")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, NeedInput().Elicit("name", askForm("Your name?")).State(plainState)
		}
		name, _ := ans.Content["name"].(string)
		return textResult(ans.Action + " " + name), nil
	})
}

const formCaps = `{"elicitation":{"form":{}}}`
const allCaps = `{"elicitation":{"form":{},"url":{}},"sampling":{"tools":{}},"roots":{"listChanged":true}}`

// ---- Helpers of more than one file ----

func methodsOf(ms []*jsonrpc.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Method
	}
	return out
}

// askKinds builds an Input from a comma-separated list of kinds.
func askKinds(kinds string) *Input {
	in := NeedInput()
	for _, k := range strings.Split(kinds, ",") {
		switch k {
		case "form":
			in.Elicit("form", askForm("Name?"))
		case "url":
			in.Elicit("url", &mcp.ElicitParams{Mode: mcp.ElicitModeURL, Message: "Sign in", URL: "https://example.com/auth"})
		case "sampling":
			in.CreateMessage("sampling", askSampling("Hi"))
		case "tools":
			p := askSampling("Use a tool")
			p.Tools = []mcp.Tool{{Name: "calc", InputSchema: jsontext.Value(`{"type":"object"}`)}}
			in.CreateMessage("tools", p)
		case "toolChoice":
			p := askSampling("Choose")
			p.ToolChoice = &mcp.ToolChoice{Mode: "auto"}
			in.CreateMessage("toolChoice", p)
		case "context":
			p := askSampling("With context")
			p.IncludeContext = "thisServer"
			in.CreateMessage("context", p)
		case "roots":
			in.ListRoots("roots")
		}
	}
	return in
}

type kindsIn struct {
	Kinds string `json:"kinds"`
	Then  string `json:"then,omitzero"` // asked in round 2
}

// addAskKinds registers "kinds": it asks for the kinds of its arguments,
// then (when Then is set) for those, then answers with the keys it got.
func addAskKinds(s *Server, probe *mrtrProbe) {
	AddTool(s, &mcp.Tool{Name: "kinds"}, func(ctx context.Context, req *CallToolRequest, in kindsIn) (string, error) {
		probe.see(req.Request)
		got := req.InputResponses()
		switch {
		case got == nil:
			return "", askKinds(in.Kinds).State("1")
		case in.Then != "" && req.RequestState() == "1":
			return "", askKinds(in.Then).State("2")
		}
		return strings.Join(keysOf(got), ","), nil
	})
}

// modernMeta is a 2026 envelope declaring caps (raw JSON).
func modernMeta(caps string) map[string]any {
	return httpenv.EnvelopeMeta(map[string]any{mcp.MetaKeyClientCapabilities: jsontext.Value(caps)})
}

// modernCall sends a 2026 request and returns the raw result.
func modernCall(t *testing.T, p *modernPeer, method string, params map[string]any) (jsontext.Value, error) {
	t.Helper()
	var raw jsontext.Value
	err := p.call(t, method, params, &raw)
	return raw, err
}

// inputRequired decodes raw as an input-required result and checks the
// parts every one must have.
func inputRequired(t *testing.T, raw jsontext.Value) *mcp.InputRequiredResult {
	t.Helper()
	var members map[string]jsontext.Value
	if err := json.Unmarshal(raw, &members); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ttlMs", "cacheScope", "content", "contents", "messages"} {
		if _, ok := members[k]; ok {
			t.Errorf("input-required result with %q: %s", k, raw)
		}
	}
	var ir mcp.InputRequiredResult
	if err := json.Unmarshal(raw, &ir); err != nil {
		t.Fatal(err)
	}
	if ir.ResultType != mcp.ResultInputRequired {
		t.Fatalf("resultType %q, want input_required: %s", ir.ResultType, raw)
	}
	if err := ir.Validate(); err != nil {
		t.Error(err)
	}
	if !strings.HasPrefix(ir.RequestState, sealedPrefix) {
		t.Errorf("requestState %q is not sealed", ir.RequestState)
	}
	if info, err := ir.Meta.ServerInfo(); err != nil || info == nil {
		t.Errorf("no serverInfo in _meta: %s", raw)
	}
	return &ir
}

// askedTool registers "q": it asks for one answer of the kind its
// argument names (elicitation, sampling or roots), then reports what it
// got by key.
func addQ(s *Server, probe *mrtrProbe) {
	type qIn struct {
		Kind string `json:"kind"`
	}
	AddTool(s, &mcp.Tool{Name: "q"}, func(ctx context.Context, req *CallToolRequest, in qIn) (string, error) {
		probe.see(req.Request)
		var ok bool
		var err error
		switch in.Kind {
		case "elicitation":
			_, ok, err = req.ElicitResult("a")
		case "sampling":
			_, ok, err = req.CreateMessageResult("a")
		case "roots":
			_, ok, err = req.ListRootsResult("a")
		}
		if err != nil {
			return "", err
		}
		if !ok {
			return "", askKindsKey(in.Kind)
		}
		return strings.Join(keysOf(req.InputResponses()), ","), nil
	})
}

func askKindsKey(kind string) *Input {
	switch kind {
	case "sampling":
		return NeedInput().CreateMessage("a", askSampling("?"))
	case "roots":
		return NeedInput().ListRoots("a")
	}
	return NeedInput().Elicit("a", askForm("?"))
}

// stateTool registers tools "a" and "b", prompts "a" and "p2", and
// resources test://one and test://two with the same handler: ask once
// with a state, then answer "ok <state>". Every run is counted.
func addStateTargets(s *Server, probe *mrtrProbe) {
	type cityIn struct {
		City string `json:"city,omitzero"`
		Days int    `json:"days,omitzero"`
	}
	for _, name := range []string{"a", "b"} {
		AddTool(s, &mcp.Tool{Name: name}, func(ctx context.Context, req *CallToolRequest, in cityIn) (string, error) {
			probe.see(req.Request)
			if st := req.RequestState(); st != "" {
				return "ok " + st, nil
			}
			return "", NeedInput().State("secret-" + name)
		})
	}
	prompt := func(ctx context.Context, req *GetPromptRequest) (*mcp.GetPromptResult, error) {
		probe.see(req.Request)
		if st := req.RequestState(); st != "" {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "ok " + st}}}}, nil
		}
		return nil, NeedInput().State("prompt-" + req.Params.Name)
	}
	s.AddPrompt(&mcp.Prompt{Name: "a", Arguments: []mcp.PromptArgument{{Name: "x"}}}, prompt)
	s.AddPrompt(&mcp.Prompt{Name: "p2", Arguments: []mcp.PromptArgument{{Name: "x"}}}, prompt)
	res := func(ctx context.Context, req *ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		probe.see(req.Request)
		if st := req.RequestState(); st != "" {
			return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: "ok " + st}}}, nil
		}
		return nil, NeedInput().State("res-" + req.Params.URI)
	}
	s.AddResource(&mcp.Resource{URI: "test://one", Name: "one"}, res)
	s.AddResource(&mcp.Resource{URI: "test://two", Name: "two"}, res)
}

// flipMiddle changes one base64 character in the middle of a token.
func flipMiddle(tok string) string {
	b := []byte(tok)
	i := len(sealedPrefix) + (len(b)-len(sealedPrefix))/2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}
