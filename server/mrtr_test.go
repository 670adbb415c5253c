package server

// Tests of Multi Round-Trip Requests (SEP-2322) on the server: the legacy
// shim (the cases of docs/design/mrtr.md) over a memory transport with a raw 2025-11-25 client, the 2026
// wire (input-required results, the capability gate, answer checks) with
// a raw 2026 client, and the sealed requestState (tampering, expiry,
// binding, key rotation). The Streamable HTTP side is in mrtr_http_test.go.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	p.conn = jsonrpc.NewConn(b, jsonrpc.ConnOptions{Handler: p, Observe: func(in bool, msg []byte) {
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
var stateKey = bytes.Repeat([]byte{7}, RequestStateKeySize)

// addGreet registers the "greet" tool: it asks for a name (with
// plainState), then greets.
func addGreet(s *Server, probe *mrtrProbe) {
	s.AddRawTool(&mcp.Tool{Name: "greet"}, func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
		probe.see(req.Request)
		ans, ok, err := req.Elicitation("name")
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

// ---- A. The legacy shim ----

// TestShimReplay: seed cases 1–3 in process. The shim sends the
// elicitation as a real request, re-runs the handler with exactly the
// collected answer (raw) and its raw state, and answers in the legacy
// shape. Sealing is configured (and active on the 2026 wire of the same
// server), but the in-process state is never sealed.
func TestShimReplay(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(&Options{RequestStateKeys: [][]byte{stateKey}})
	addGreet(s, probe)
	p := newLegacyPeer(t, s, formCaps, answerAll, true)

	raw, err := p.callTool("greet", "")
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := toolResultText(t, raw); text != "accept Ada" || isErr {
		t.Errorf("greet = %q (isError %v), want %q", text, isErr, "accept Ada")
	}
	if bytes.Contains(raw, []byte("resultType")) {
		t.Errorf("a legacy answer carries resultType: %s", raw)
	}
	reqs := p.requests()
	if len(reqs) != 1 || reqs[0].Method != mcp.MethodElicitationCreate {
		t.Fatalf("the client was sent %d requests, want one elicitation/create", len(reqs))
	}
	if want := mustJSON(t, askForm("Your name?")); !sameJSON(t, reqs[0].Params, want) {
		t.Errorf("leg params %s, want the handler's params verbatim %s", reqs[0].Params, want)
	}
	runs := probe.all()
	if len(runs) != 2 {
		t.Fatalf("the handler ran %d times, want 2", len(runs))
	}
	if runs[0].inputs != nil || runs[0].state != "" {
		t.Errorf("first run saw inputs %v, state %q; want none", runs[0].inputs, runs[0].state)
	}
	if len(runs[1].inputs) != 1 || !bytes.Equal(runs[1].inputs["name"], answerElicit) {
		t.Errorf("re-run saw inputs %v, want exactly {name: %s}", runs[1].inputs, answerElicit)
	}
	if runs[1].state != plainState {
		t.Errorf("re-run saw state %q, want the raw %q (sealing does not apply in process)", runs[1].state, plainState)
	}
	// Nothing of MRTR reached the legacy wire.
	for _, m := range p.readMessages() {
		for _, word := range []string{"inputRequests", "requestState", "input_required", sealedPrefix} {
			if bytes.Contains(m, []byte(word)) {
				t.Errorf("the legacy client read %q in %s", word, m)
			}
		}
	}

	// The same server seals on the 2026 wire: sealing is on.
	mp := newModernPeer(t, s, true)
	var ir mcp.InputRequiredResult
	if err := mp.call(t, mcp.MethodToolsCall, map[string]any{"_meta": modernMeta(formCaps), "name": "greet"}, &ir); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ir.RequestState, sealedPrefix) || strings.Contains(ir.RequestState, "in process") {
		t.Errorf("the 2026 requestState %q is not sealed", ir.RequestState)
	}
}

// TestShimPromptAndResource: seed case 4.
func TestShimPromptAndResource(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(nil)
	s.AddPrompt(&mcp.Prompt{Name: "brief", Arguments: []mcp.PromptArgument{{Name: "topic", Required: true}}}, func(ctx context.Context, req *GetPromptRequest) (*mcp.GetPromptResult, error) {
		probe.see(req.Request)
		ans, ok, err := req.Elicitation("ctx")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, NeedInput().Elicit("ctx", askForm("Context?")).State("prompt-state")
		}
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: req.Params.Arguments["topic"] + " for " + ans.Content["name"].(string) + " " + req.RequestState()}}}}, nil
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://doc/{id}", Name: "doc"}, func(ctx context.Context, req *ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		probe.see(req.Request)
		roots, ok, err := req.Roots("roots")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, NeedInput().ListRoots("roots")
		}
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: req.Vars["id"] + " in " + roots.Roots[0].URI}}}, nil
	})
	p := newLegacyPeer(t, s, allCaps, answerAll, true)

	raw, err := p.call(mcp.MethodPromptsGet, map[string]any{"name": "brief", "arguments": map[string]string{"topic": "weather"}})
	if err != nil {
		t.Fatal(err)
	}
	var pr mcp.GetPromptResult
	if err := json.Unmarshal(raw, &pr); err != nil || len(pr.Messages) != 1 {
		t.Fatalf("prompts/get = %s (%v)", raw, err)
	}
	if got := pr.Messages[0].Content.(*mcp.TextContent).Text; got != "weather for Ada prompt-state" {
		t.Errorf("prompt text %q", got)
	}
	if bytes.Contains(raw, []byte("resultType")) {
		t.Errorf("legacy prompts/get carries resultType: %s", raw)
	}

	raw, err = p.call(mcp.MethodResourcesRead, map[string]any{"uri": "test://doc/7"})
	if err != nil {
		t.Fatal(err)
	}
	var rr mcp.ReadResourceResult
	if err := json.Unmarshal(raw, &rr); err != nil || len(rr.Contents) != 1 {
		t.Fatalf("resources/read = %s (%v)", raw, err)
	}
	if got := rr.Contents[0].(*mcp.TextResourceContents).Text; got != "7 in file:///work" {
		t.Errorf("resource text %q", got)
	}
	if bytes.Contains(raw, []byte("resultType")) || bytes.Contains(raw, []byte("ttlMs")) {
		t.Errorf("legacy resources/read carries 2026 members: %s", raw)
	}
	reqs := p.requests()
	if len(reqs) != 2 || reqs[0].Method != mcp.MethodElicitationCreate || reqs[1].Method != mcp.MethodRootsList {
		t.Fatalf("the client was sent %v, want elicitation/create then roots/list", methodsOf(reqs))
	}
	if reqs[1].Params != nil && !sameJSON(t, reqs[1].Params, []byte(`{}`)) {
		t.Errorf("roots/list leg params %s, want none", reqs[1].Params)
	}
	if n := probe.count(); n != 4 {
		t.Errorf("handlers ran %d times, want 4 (two each)", n)
	}
}

func methodsOf(ms []*jsonrpc.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Method
	}
	return out
}

// TestShimMultiRound: seed case 5. Each re-run sees only its own round's
// answers ([nil, [first], [second]]) and the state of the round before;
// a state is never carried past a round that set none.
func TestShimMultiRound(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(nil)
	s.AddRawTool(&mcp.Tool{Name: "two"}, func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
		probe.see(req.Request)
		switch st := req.RequestState(); {
		case st == "":
			if _, ok := req.InputResponses()["second"]; ok {
				return textResult("done without state"), nil
			}
			return nil, NeedInput().Elicit("first", askForm("First?")).State("s1")
		case st == "s1":
			first, ok, err := req.Elicitation("first")
			if err != nil || !ok {
				return nil, fmt.Errorf("round 2 without its answer (%v)", err)
			}
			// No State: round 3 must see none.
			return nil, NeedInput().Elicit("second", askForm("Second? (after "+first.Content["name"].(string)+")"))
		}
		return nil, fmt.Errorf("unexpected state %q", req.RequestState())
	})
	var n atomic.Int32
	p := newLegacyPeer(t, s, formCaps, func(ctx context.Context, m *jsonrpc.Message) (any, error) {
		return jsontext.Value(fmt.Sprintf(`{"action":"accept","content":{"name":"answer-%d"}}`, n.Add(1))), nil
	}, true)
	raw, err := p.callTool("two", "")
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := toolResultText(t, raw); text != "done without state" || isErr {
		t.Errorf("two = %q (isError %v)", text, isErr)
	}
	runs := probe.all()
	var keys [][]string
	var states []string
	for _, r := range runs {
		keys = append(keys, keysOf(r.inputs))
		states = append(states, r.state)
	}
	if fmt.Sprint(keys) != fmt.Sprint([][]string{nil, {"first"}, {"second"}}) {
		t.Errorf("per-run answer keys %v, want [[] [first] [second]]", keys)
	}
	if fmt.Sprint(states) != fmt.Sprint([]string{"", "s1", ""}) {
		t.Errorf("per-run states %q, want [\"\" \"s1\" \"\"]", states)
	}
	if len(runs) == 3 && !sameJSON(t, runs[2].inputs["second"], []byte(`{"action":"accept","content":{"name":"answer-2"}}`)) {
		t.Errorf("round 3 saw %s", runs[2].inputs["second"])
	}
	reqs := p.requests()
	if len(reqs) != 2 {
		t.Fatalf("the client was sent %d requests, want 2", len(reqs))
	}
	var second mcp.ElicitParams
	if err := json.Unmarshal(reqs[1].Params, &second); err != nil || second.Message != "Second? (after answer-1)" {
		t.Errorf("second leg %s", reqs[1].Params)
	}
}

// TestShimLegsInOrder: one round with all three kinds is fulfilled one
// leg at a time, in the order the handler added them (not key order).
func TestShimLegsInOrder(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(nil)
	s.AddRawTool(&mcp.Tool{Name: "three"}, func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
		if probe.see(req.Request) == 1 {
			return nil, NeedInput().
				Elicit("zeta", askForm("Name?")).
				CreateMessage("alpha", askSampling("Capital of France?")).
				ListRoots("mid")
		}
		e, _, err1 := req.Elicitation("zeta")
		m, _, err2 := req.Sampling("alpha")
		r, _, err3 := req.Roots("mid")
		if err1 != nil || err2 != nil || err3 != nil || e == nil || m == nil || r == nil {
			return nil, fmt.Errorf("answers missing: %v %v %v", err1, err2, err3)
		}
		return textResult(fmt.Sprintf("%s %s %s %d", e.Content["name"], m.Model, m.Content.Blocks[0].(*mcp.TextContent).Text, len(r.Roots))), nil
	})
	var p *legacyPeer
	var outOfOrder atomic.Bool
	var answered atomic.Int32
	p = newLegacyPeer(t, s, allCaps, func(ctx context.Context, m *jsonrpc.Message) (any, error) {
		if n := len(p.requests()); n != int(answered.Add(1)) {
			outOfOrder.Store(true) // a leg arrived before the previous one was answered
		}
		return answerAll(ctx, m)
	}, true)
	raw, err := p.callTool("three", "")
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := toolResultText(t, raw); text != "Ada m-1 Paris 1" {
		t.Errorf("three = %q", text)
	}
	if got := methodsOf(p.requests()); !slices.Equal(got, []string{mcp.MethodElicitationCreate, mcp.MethodSamplingCreateMessage, mcp.MethodRootsList}) {
		t.Errorf("legs in order %v, want the handler's order", got)
	}
	if outOfOrder.Load() {
		t.Error("legs overlapped: a leg was sent before the previous one was answered")
	}
	if runs := probe.all(); len(runs) != 2 || !slices.Equal(keysOf(runs[1].inputs), []string{"alpha", "mid", "zeta"}) {
		t.Errorf("runs %v", runs)
	}
}

// TestShimRoundCap: seed case 9. A handler that always asks gets exactly
// ShimRounds rounds of legs (9 runs by default), then -32603.
func TestShimRoundCap(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opt, want int
		stateOnly bool
	}{
		{"default", 0, DefaultShimRounds, false},
		{"option", 3, 3, false},
		{"state only", 0, DefaultShimRounds, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			probe := &mrtrProbe{}
			s := New(&Options{ShimRounds: tc.opt})
			s.AddRawTool(&mcp.Tool{Name: "forever"}, func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
				n := probe.see(req.Request)
				in := NeedInput().State(fmt.Sprint(n))
				if !tc.stateOnly {
					in.Elicit("again", askForm(fmt.Sprintf("Round %d?", n)))
				}
				return nil, in
			})
			p := newLegacyPeer(t, s, formCaps, answerAll, true)
			_, err := p.callTool("forever", "")
			want := fmt.Sprintf("Internal error: the handler still returned input_required after %d legacy shim rounds (SEP-2322)", tc.want)
			if e := wantRPCError(t, err, mcp.CodeInternalError); e.Message != want {
				t.Errorf("message %q, want %q", e.Message, want)
			}
			legs := 0
			if !tc.stateOnly {
				legs = tc.want
			}
			if got := len(p.requests()); got != legs {
				t.Errorf("the client was sent %d legs, want %d", got, legs)
			}
			runs := probe.all()
			if len(runs) != tc.want+1 {
				t.Errorf("the handler ran %d times, want %d", len(runs), tc.want+1)
			}
			for i, r := range runs[1:] {
				if r.state != fmt.Sprint(i+1) {
					t.Errorf("run %d saw state %q, want %q", i+2, r.state, fmt.Sprint(i+1))
				}
			}
		})
	}
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

// TestShimCapabilityGate: seed case 10. What the session did not declare
// at initialize fails the request with -32603 naming exactly the missing
// capabilities, before any leg of that round.
func TestShimCapabilityGate(t *testing.T) {
	for _, tc := range []struct {
		name, caps, kinds, then string
		missing                 string // "" : served
		legs                    int
	}{
		{"nothing declared", `{}`, "form", "", `{"elicitation":{"form":{}}}`, 0},
		{"sampling only", `{"sampling":{}}`, "sampling,form", "", `{"elicitation":{"form":{}}}`, 0},
		{"url not declared", formCaps, "url", "", `{"elicitation":{"url":{}}}`, 0},
		{"form not declared", `{"elicitation":{"url":{}}}`, "form", "", `{"elicitation":{"form":{}}}`, 0},
		{"sampling tools", `{"sampling":{}}`, "tools", "", `{"sampling":{"tools":{}}}`, 0},
		{"sampling toolChoice", `{"sampling":{}}`, "toolChoice", "", `{"sampling":{"tools":{}}}`, 0},
		{"roots", `{"elicitation":{}}`, "roots", "", `{"roots":{}}`, 0},
		{"second round", formCaps, "form", "roots", `{"roots":{}}`, 1},
		{"empty elicitation is form", `{"elicitation":{}}`, "form", "", "", 1},
		{"everything declared", allCaps, "form,url,tools,roots", "", "", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			probe := &mrtrProbe{}
			s := New(nil)
			addAskKinds(s, probe)
			p := newLegacyPeer(t, s, tc.caps, answerAll, true)
			raw, err := p.callTool("kinds", string(mustJSON(t, kindsIn{Kinds: tc.kinds, Then: tc.then})))
			if got := len(p.requests()); got != tc.legs {
				t.Errorf("the client was sent %d legs, want %d", got, tc.legs)
			}
			if tc.missing == "" {
				if err != nil {
					t.Fatal(err)
				}
				if text, isErr := toolResultText(t, raw); isErr || text == "" {
					t.Errorf("kinds = %q (isError %v)", text, isErr)
				}
				return
			}
			e := wantRPCError(t, err, mcp.CodeInternalError, "did not declare")
			i := strings.IndexByte(e.Message, '{')
			if i < 0 || !sameJSON(t, []byte(e.Message[i:]), []byte(tc.missing)) {
				t.Errorf("message %q does not name exactly %s", e.Message, tc.missing)
			}
			wantRuns := 1
			if tc.then != "" {
				wantRuns = 2
			}
			if n := probe.count(); n != wantRuns {
				t.Errorf("the handler ran %d times, want %d", n, wantRuns)
			}
		})
	}
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestShimURLElicitationID: seed cases 6 and 7.
func TestShimURLElicitationID(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(nil)
	urlAsk := func(id string) *mcp.ElicitParams {
		return &mcp.ElicitParams{Mode: mcp.ElicitModeURL, Message: "Connect your account", URL: "https://example.com/connect?x=1&y=%20", ElicitationID: id}
	}
	type linkIn struct {
		ID string `json:"id,omitzero"`
	}
	AddTool(s, &mcp.Tool{Name: "link"}, func(ctx context.Context, req *CallToolRequest, in linkIn) (string, error) {
		n := probe.see(req.Request)
		if n%3 != 0 { // two rounds of the URL question, then done
			return "", NeedInput().Elicit("link", urlAsk(in.ID))
		}
		ans, _, err := req.Elicitation("link")
		if err != nil {
			return "", err
		}
		return ans.Action, nil
	})
	p := newLegacyPeer(t, s, allCaps, func(ctx context.Context, m *jsonrpc.Message) (any, error) {
		return jsontext.Value(`{"action":"accept"}`), nil
	}, true)

	// Without an id: each round gets a fresh UUID v4, the rest verbatim.
	raw, err := p.callTool("link", "")
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := toolResultText(t, raw); text != "accept" {
		t.Errorf("link = %q", text)
	}
	reqs := p.requests()
	if len(reqs) != 2 {
		t.Fatalf("the client was sent %d legs, want 2", len(reqs))
	}
	var ids []string
	for _, r := range reqs {
		var got map[string]jsontext.Value
		if err := json.Unmarshal(r.Params, &got); err != nil {
			t.Fatal(err)
		}
		var id string
		if err := json.Unmarshal(got["elicitationId"], &id); err != nil || !uuidV4.MatchString(id) {
			t.Errorf("elicitationId %s is not a lowercase UUID v4", got["elicitationId"])
		}
		ids = append(ids, id)
		delete(got, "elicitationId")
		if !sameJSON(t, mustJSON(t, got), mustJSON(t, urlAsk(""))) {
			t.Errorf("leg params %s, want the handler's plus elicitationId", r.Params)
		}
	}
	if len(ids) == 2 && ids[0] == ids[1] {
		t.Errorf("both rounds used elicitationId %q; want a fresh one per round", ids[0])
	}

	// A handler-supplied id rides unchanged: the params are verbatim.
	raw, err = p.callTool("link", `{"id":"handler-id-7"}`)
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := toolResultText(t, raw); text != "accept" {
		t.Errorf("link = %q", text)
	}
	reqs = p.requests()[2:]
	for _, r := range reqs {
		if want := mustJSON(t, urlAsk("handler-id-7")); !sameJSON(t, r.Params, want) {
			t.Errorf("leg params %s, want %s unchanged", r.Params, want)
		}
	}
}

// TestShimClientError: seed case 8. A client that answers a leg with an
// error fails the original request with -32603 and stops the round; a
// decline is an answer and is collected.
func TestShimClientError(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(nil)
	addAskKinds(s, probe)
	p := newLegacyPeer(t, s, allCaps, func(ctx context.Context, m *jsonrpc.Message) (any, error) {
		switch m.Method {
		case mcp.MethodSamplingCreateMessage:
			return nil, jsonrpc.NewError(-1, "User rejected sampling request")
		case mcp.MethodElicitationCreate:
			return jsontext.Value(`{"action":"decline"}`), nil
		}
		return answerAll(ctx, m)
	}, true)

	_, err := p.callTool("kinds", `{"kinds":"sampling,roots"}`)
	e := wantRPCError(t, err, mcp.CodeInternalError)
	if e.Code == -1 {
		t.Errorf("the client's code was relayed")
	}
	if got := methodsOf(p.requests()); !slices.Equal(got, []string{mcp.MethodSamplingCreateMessage}) {
		t.Errorf("legs %v; want the round to stop at the failed sampling leg", got)
	}
	if n := probe.count(); n != 1 {
		t.Errorf("the handler ran %d times after a failed leg, want 1", n)
	}

	raw, err := p.callTool("kinds", `{"kinds":"form"}`)
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := toolResultText(t, raw); text != "form" {
		t.Errorf("declined elicitation: kinds = %q, want the decline collected under %q", text, "form")
	}
	if runs := probe.all(); len(runs) != 3 || !sameJSON(t, runs[2].inputs["form"], []byte(`{"action":"decline"}`)) {
		t.Errorf("the re-run saw %v", runs)
	}
}

// TestShimDisabled: seed case 11, for the three methods.
func TestShimDisabled(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(&Options{DisableLegacyShim: true})
	addGreet(s, probe)
	s.AddPrompt(&mcp.Prompt{Name: "p"}, func(ctx context.Context, req *GetPromptRequest) (*mcp.GetPromptResult, error) {
		probe.see(req.Request)
		return nil, NeedInput().Elicit("x", askForm("?"))
	})
	s.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		probe.see(req.Request)
		return nil, NeedInput().State("s")
	})
	p := newLegacyPeer(t, s, allCaps, answerAll, true)
	const want = "require the 2026-07-28 stateless lifecycle (SEP-2322)"
	_, err := p.callTool("greet", "")
	wantRPCError(t, err, mcp.CodeInternalError, want)
	_, err = p.call(mcp.MethodPromptsGet, map[string]any{"name": "p"})
	wantRPCError(t, err, mcp.CodeInternalError, want)
	_, err = p.call(mcp.MethodResourcesRead, map[string]any{"uri": "test://r"})
	wantRPCError(t, err, mcp.CodeInternalError, want)
	p.wantNoContact(t)
	if n := probe.count(); n != 3 {
		t.Errorf("handlers ran %d times, want 3 (once each)", n)
	}
	// The 2026 wire is not affected by the option.
	mp := newModernPeer(t, s, true)
	var ir mcp.InputRequiredResult
	if err := mp.call(t, mcp.MethodToolsCall, map[string]any{"_meta": modernMeta(formCaps), "name": "greet"}, &ir); err != nil || ir.ResultType != mcp.ResultInputRequired {
		t.Errorf("2026 tools/call with the shim disabled: %+v, %v", ir, err)
	}
}

// TestShimModernUntouched: seed case 13. A 2026 request on a connection
// whose legacy session declared every capability is answered with an
// input-required result; the client is never asked.
func TestShimModernUntouched(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(nil)
	addGreet(s, probe)
	p := newLegacyPeer(t, s, allCaps, answerAll, false) // both eras on one connection
	raw, err := p.call(mcp.MethodToolsCall, map[string]any{"_meta": modernMeta(formCaps), "name": "greet"})
	if err != nil {
		t.Fatal(err)
	}
	var ir mcp.InputRequiredResult
	if err := json.Unmarshal(raw, &ir); err != nil || ir.ResultType != mcp.ResultInputRequired || len(ir.InputRequests) != 1 || ir.RequestState == "" {
		t.Fatalf("modern tools/call on a legacy connection = %s", raw)
	}
	if err := wirecheck.For(t, mcp.Version20260728).CheckDefinition("InputRequiredResult", raw); err != nil {
		t.Errorf("input-required result does not conform: %v", err)
	}
	p.wantNoContact(t)
	raw, err = p.call(mcp.MethodToolsCall, map[string]any{"_meta": modernMeta(formCaps), "name": "greet",
		"inputResponses": map[string]any{"name": answerElicit}, "requestState": ir.RequestState})
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := toolResultText(t, raw); text != "accept Ada" {
		t.Errorf("retry = %q", text)
	}
	p.wantNoContact(t)
}

// TestShimCancel: seed-adjacent A4 2.3. Cancelling the original request
// while a leg waits cancels the leg and answers nothing; a leg that times
// out fails the original with -32001 and is cancelled too.
func TestShimCancel(t *testing.T) {
	leg := func(t *testing.T, s *Server) (p *legacyPeer, legs <-chan mcp.ID, legEnded <-chan struct{}) {
		legCh := make(chan mcp.ID, 1)
		ended := make(chan struct{})
		p = newLegacyPeer(t, s, formCaps, func(ctx context.Context, m *jsonrpc.Message) (any, error) {
			legCh <- m.ID
			<-ctx.Done() // only the server's notifications/cancelled (or the end) frees the leg
			close(ended)
			return nil, ctx.Err()
		}, true)
		return p, legCh, ended
	}
	// cancelledLeg checks that the client read notifications/cancelled for id.
	cancelledLeg := func(t *testing.T, p *legacyPeer, id mcp.ID) {
		t.Helper()
		for _, m := range p.readMessages() {
			var n struct {
				Method string `json:"method"`
				Params struct {
					RequestID jsontext.Value `json:"requestId"`
				} `json:"params"`
			}
			if json.Unmarshal(m, &n) == nil && n.Method == jsonrpc.MethodCancelled && string(n.Params.RequestID) == id.String() {
				return
			}
		}
		t.Errorf("the client never read notifications/cancelled for the leg %s", id)
	}

	t.Run("original cancelled", func(t *testing.T) {
		leakCheck(t)
		probe := &mrtrProbe{}
		s := New(nil)
		addGreet(s, probe)
		p, legs, legEnded := leg(t, s)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.conn.Call(ctx, mcp.MethodToolsCall, map[string]any{"name": "greet"}, nil) }()
		legID := recvT(t, legs, "the leg")
		cancel() // the client sends notifications/cancelled for the original
		if err := recvT(t, done, "the cancelled call"); err != context.Canceled {
			t.Errorf("call = %v", err)
		}
		recvT(t, legEnded, "the leg to be cancelled by the server")
		cancelledLeg(t, p, legID)
		// Close the server side: its handlers have returned and written
		// what they would write; then nothing may answer the original.
		p.ss.Close()
		recvT(t, p.conn.Done(), "the client connection to end")
		var origID jsontext.Value
		for _, m := range p.writtenMessages() {
			var r struct {
				ID     jsontext.Value `json:"id"`
				Method string         `json:"method"`
			}
			if json.Unmarshal(m, &r) == nil && r.Method == mcp.MethodToolsCall {
				origID = r.ID
			}
		}
		for _, m := range p.readMessages() {
			var r struct {
				ID     jsontext.Value `json:"id"`
				Method string         `json:"method"`
			}
			if json.Unmarshal(m, &r) == nil && r.Method == "" && bytes.Equal(r.ID, origID) {
				t.Errorf("the cancelled request was answered: %s", m)
			}
		}
		if n := probe.count(); n != 1 {
			t.Errorf("the handler ran %d times, want 1", n)
		}
	})

	t.Run("leg timeout", func(t *testing.T) {
		leakCheck(t)
		probe := &mrtrProbe{}
		s := New(&Options{CallTimeout: 50 * time.Millisecond})
		addGreet(s, probe)
		p, legs, legEnded := leg(t, s)
		_, err := p.callTool("greet", "")
		wantRPCError(t, err, -32001)
		legID := recvT(t, legs, "the leg")
		recvT(t, legEnded, "the timed-out leg to be cancelled")
		cancelledLeg(t, p, legID)
		if n := probe.count(); n != 1 {
			t.Errorf("the handler ran %d times, want 1", n)
		}
	})
}

// TestInputRejectedBeforeContact: an *Input from completion/complete, and
// an invalid Input (A1), fail with -32603 before the client is asked, on
// both eras.
func TestInputRejectedBeforeContact(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(nil)
	type badIn struct {
		Kind string `json:"kind"`
	}
	AddTool(s, &mcp.Tool{Name: "bad"}, func(ctx context.Context, req *CallToolRequest, in badIn) (string, error) {
		probe.see(req.Request)
		switch in.Kind {
		case "empty":
			return "", NeedInput()
		case "zero":
			return "", &Input{}
		case "dup":
			return "", NeedInput().Elicit("k", askForm("a")).ListRoots("k")
		case "emptykey":
			return "", NeedInput().Elicit("", askForm("a"))
		case "nilparams":
			return "", NeedInput().Elicit("k", nil)
		case "round2":
			if req.InputResponses() == nil {
				return "", NeedInput().Elicit("k", askForm("a"))
			}
			return "", NeedInput().Elicit("k", askForm("a")).Elicit("k", askForm("b"))
		}
		return "", fmt.Errorf("unknown kind %q", in.Kind)
	})
	s.AddPrompt(&mcp.Prompt{Name: "p"}, func(ctx context.Context, req *GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	s.SetCompletionHandler(func(ctx context.Context, req *CompleteRequest) (*mcp.CompleteResult, error) {
		probe.see(req.Request)
		return nil, NeedInput().Elicit("k", askForm("complete?"))
	})
	p := newLegacyPeer(t, s, allCaps, answerAll, true)
	mp := newModernPeer(t, s, true)
	completeParams := map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "p"}, "argument": map[string]any{"name": "a", "value": "x"}}
	_, err := p.call(mcp.MethodCompletionComplete, completeParams)
	wantRPCError(t, err, mcp.CodeInternalError, "completion/complete")
	completeParams["_meta"] = modernMeta(allCaps)
	wantRPCError(t, mp.call(t, mcp.MethodCompletionComplete, completeParams, nil), mcp.CodeInternalError, "completion/complete")
	for _, kind := range []string{"empty", "zero", "dup", "emptykey", "nilparams"} {
		t.Run(kind, func(t *testing.T) {
			_, err := p.callTool("bad", fmt.Sprintf(`{"kind":%q}`, kind))
			wantRPCError(t, err, mcp.CodeInternalError)
			p.wantNoContact(t)
			err = mp.call(t, mcp.MethodToolsCall, map[string]any{"_meta": modernMeta(allCaps), "name": "bad", "arguments": map[string]any{"kind": kind}}, nil)
			wantRPCError(t, err, mcp.CodeInternalError)
		})
	}
	// An invalid Input in a later round fails before that round's legs.
	_, err = p.callTool("bad", `{"kind":"round2"}`)
	wantRPCError(t, err, mcp.CodeInternalError, "used twice")
	if n := len(p.requests()); n != 1 {
		t.Errorf("the client was sent %d legs, want only round 1's", n)
	}
}

// TestShimIgnoresClientMRTRParams: a legacy client's own inputResponses
// and requestState — even a genuine sealed state of the same call — never
// reach the handler; only the shim supplies answers on the legacy wire.
func TestShimIgnoresClientMRTRParams(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(nil)
	addGreet(s, probe)
	mp := newModernPeer(t, s, true)
	var ir mcp.InputRequiredResult
	if err := mp.call(t, mcp.MethodToolsCall, map[string]any{"_meta": modernMeta(formCaps), "name": "greet"}, &ir); err != nil {
		t.Fatal(err)
	}
	p := newLegacyPeer(t, s, formCaps, answerAll, false)
	for _, state := range []string{ir.RequestState, "forged"} {
		before := probe.count()
		raw, err := p.call(mcp.MethodToolsCall, map[string]any{"name": "greet",
			"inputResponses": map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Mallory"}}},
			"requestState":   state})
		if err != nil {
			t.Fatal(err)
		}
		if text, _ := toolResultText(t, raw); text != "accept Ada" {
			t.Errorf("greet = %q, want the shim's answer", text)
		}
		runs := probe.all()[before:]
		if len(runs) != 2 || runs[0].inputs != nil || runs[0].state != "" || runs[1].state != plainState || !bytes.Equal(runs[1].inputs["name"], answerElicit) {
			t.Errorf("runs %+v: the client's own inputResponses/requestState reached the handler", runs)
		}
	}
	if n := len(p.requests()); n != 2 {
		t.Errorf("the client was asked %d times, want 2 (once per call)", n)
	}
}

// ---- B. The 2026-07-28 wire ----

// modernMeta is a 2026 envelope declaring caps (raw JSON).
func modernMeta(caps string) map[string]any {
	return envelopeMeta(map[string]any{mcp.MetaKeyClientCapabilities: jsontext.Value(caps)})
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

// TestModernInputRequired: the 2026 wire for the three methods: keyed
// requests and a sealed state, no cache hints; the retry with answers
// completes, and the handler sees its plain state and the raw answers.
func TestModernInputRequired(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(&Options{CacheTTL: time.Minute, CacheScope: mcp.CachePublic})
	addGreet(s, probe)
	s.AddPrompt(&mcp.Prompt{Name: "brief"}, func(ctx context.Context, req *GetPromptRequest) (*mcp.GetPromptResult, error) {
		probe.see(req.Request)
		m, ok, err := req.Sampling("s")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, NeedInput().CreateMessage("s", askSampling("Capital?"))
		}
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: m.Model}}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		probe.see(req.Request)
		r, ok, err := req.Roots("roots")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, NeedInput().ListRoots("roots").State("res")
		}
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: r.Roots[0].Name + " " + req.RequestState()}}}, nil
	})
	p := newModernPeer(t, s, true)

	// tools/call
	raw, err := modernCall(t, p, mcp.MethodToolsCall, map[string]any{"_meta": modernMeta(formCaps), "name": "greet"})
	if err != nil {
		t.Fatal(err)
	}
	ir := inputRequired(t, raw)
	want := mcp.InputRequests{"name": {Method: mcp.MethodElicitationCreate, Params: mustJSON(t, askForm("Your name?"))}}
	if !sameJSON(t, mustJSON(t, ir.InputRequests), mustJSON(t, want)) {
		t.Errorf("inputRequests %s, want %s", mustJSON(t, ir.InputRequests), mustJSON(t, want))
	}
	raw, err = modernCall(t, p, mcp.MethodToolsCall, map[string]any{"_meta": modernMeta(formCaps), "name": "greet",
		"inputResponses": map[string]any{"name": answerElicit}, "requestState": ir.RequestState})
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := toolResultText(t, raw); text != "accept Ada" {
		t.Errorf("retry = %q", text)
	}
	if rt, _ := mcp.PeekResultType(raw); rt != mcp.ResultComplete {
		t.Errorf("retry resultType %q", rt)
	}
	runs := probe.all()
	if len(runs) != 2 || runs[1].state != plainState || !bytes.Equal(runs[1].inputs["name"], answerElicit) {
		t.Errorf("runs %+v", runs)
	}

	// prompts/get
	raw, err = modernCall(t, p, mcp.MethodPromptsGet, map[string]any{"_meta": modernMeta(`{"sampling":{}}`), "name": "brief"})
	if err != nil {
		t.Fatal(err)
	}
	ir = inputRequired(t, raw)
	if ir.InputRequests["s"].Method != mcp.MethodSamplingCreateMessage {
		t.Errorf("prompt inputRequests %v", ir.InputRequests)
	}
	raw, err = modernCall(t, p, mcp.MethodPromptsGet, map[string]any{"_meta": modernMeta(`{"sampling":{}}`), "name": "brief",
		"inputResponses": map[string]any{"s": answerSampling}, "requestState": ir.RequestState})
	if err != nil || !bytes.Contains(raw, []byte(`"text":"m-1"`)) {
		t.Errorf("prompt retry = %s, %v", raw, err)
	}

	// resources/read: its complete answers carry cache hints, input-required never.
	raw, err = modernCall(t, p, mcp.MethodResourcesRead, map[string]any{"_meta": modernMeta(`{"roots":{}}`), "uri": "test://r"})
	if err != nil {
		t.Fatal(err)
	}
	ir = inputRequired(t, raw)
	if r, ok := ir.InputRequests["roots"]; !ok || r.Method != mcp.MethodRootsList {
		t.Errorf("resource inputRequests %v", ir.InputRequests)
	}
	raw, err = modernCall(t, p, mcp.MethodResourcesRead, map[string]any{"_meta": modernMeta(`{"roots":{}}`), "uri": "test://r",
		"inputResponses": map[string]any{"roots": answerRoots}, "requestState": ir.RequestState})
	if err != nil || !bytes.Contains(raw, []byte(`"text":"work res"`)) {
		t.Errorf("resource retry = %s, %v", raw, err)
	}

	// List methods never answer input_required.
	for _, m := range []string{mcp.MethodToolsList, mcp.MethodPromptsList, mcp.MethodResourcesList} {
		raw, err := modernCall(t, p, m, map[string]any{"_meta": modernMeta(allCaps)})
		if err != nil {
			t.Fatal(err)
		}
		if rt, _ := mcp.PeekResultType(raw); rt != mcp.ResultComplete {
			t.Errorf("%s resultType %q", m, rt)
		}
	}
}

// TestModernCapabilityGate: the gate runs against this request's
// clientCapabilities: -32021 with data.requiredCapabilities naming exactly
// what is missing; never an input request of an undeclared kind.
func TestModernCapabilityGate(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(nil)
	addAskKinds(s, probe)
	p := newModernPeer(t, s, true)
	for _, tc := range []struct {
		caps, kinds, missing string
	}{
		{`{}`, "form", `{"elicitation":{"form":{}}}`},
		{`{"roots":{}}`, "url", `{"elicitation":{"url":{}}}`},
		{formCaps, "url", `{"elicitation":{"url":{}}}`},
		{formCaps, "form,url", `{"elicitation":{"url":{}}}`},
		{`{"elicitation":{"url":{}}}`, "form,url", `{"elicitation":{"form":{}}}`},
		{`{}`, "form,url", `{"elicitation":{"form":{},"url":{}}}`},
		{`{}`, "sampling", `{"sampling":{}}`},
		{`{"sampling":{}}`, "tools", `{"sampling":{"tools":{}}}`},
		{`{"sampling":{}}`, "toolChoice", `{"sampling":{"tools":{}}}`},
		{`{"sampling":{}}`, "sampling,form", `{"elicitation":{"form":{}}}`},
		{`{"elicitation":{}}`, "roots", `{"roots":{}}`},
		{`{}`, "form,sampling,roots", `{"elicitation":{"form":{}},"sampling":{},"roots":{}}`},
		// Declared: served.
		{`{"elicitation":{}}`, "form", ""},
		{`{"elicitation":{"url":{}}}`, "url", ""},
		{`{"sampling":{"tools":{}}}`, "tools,sampling", ""},
		{`{"roots":{}}`, "roots", ""},
		{allCaps, "form,url,sampling,tools,toolChoice,roots", ""},
	} {
		t.Run(tc.caps+" "+tc.kinds, func(t *testing.T) {
			raw, err := modernCall(t, p, mcp.MethodToolsCall, map[string]any{"_meta": modernMeta(tc.caps), "name": "kinds", "arguments": map[string]any{"kinds": tc.kinds}})
			if tc.missing == "" {
				if err != nil {
					t.Fatal(err)
				}
				ir := inputRequired(t, raw)
				if got, want := len(ir.InputRequests), len(strings.Split(tc.kinds, ",")); got != want {
					t.Errorf("%d input requests, want %d", got, want)
				}
				return
			}
			e := wantRPCError(t, err, mcp.CodeMissingRequiredClientCapability)
			var data mcp.MissingCapabilityData
			if json.Unmarshal(e.Data, &data) != nil {
				t.Fatalf("data %s", e.Data)
			}
			var members map[string]jsontext.Value
			_ = json.Unmarshal(e.Data, &members)
			if !sameJSON(t, members["requiredCapabilities"], []byte(tc.missing)) {
				t.Errorf("requiredCapabilities %s, want exactly %s", members["requiredCapabilities"], tc.missing)
			}
		})
	}
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
			_, ok, err = req.Elicitation("a")
		case "sampling":
			_, ok, err = req.Sampling("a")
		case "roots":
			_, ok, err = req.Roots("a")
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

// TestModernAnswers: malformed answers are -32602 (the handler does not
// run); a missing answer is asked again; unknown keys are dropped.
func TestModernAnswers(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(nil)
	addQ(s, probe)
	p := newModernPeer(t, s, false)
	first := func(t *testing.T, kind string) string {
		t.Helper()
		raw, err := modernCall(t, p, mcp.MethodToolsCall, map[string]any{"_meta": modernMeta(allCaps), "name": "q", "arguments": map[string]any{"kind": kind}})
		if err != nil {
			t.Fatal(err)
		}
		return inputRequired(t, raw).RequestState
	}
	retry := func(t *testing.T, kind, state string, responses any) (jsontext.Value, error) {
		t.Helper()
		params := map[string]any{"_meta": modernMeta(allCaps), "name": "q", "arguments": map[string]any{"kind": kind}, "requestState": state}
		if responses != nil {
			params["inputResponses"] = responses
		}
		return modernCall(t, p, mcp.MethodToolsCall, params)
	}
	for _, tc := range []struct{ kind, answer string }{
		{"elicitation", `{"action":"maybe"}`},
		{"elicitation", `{"content":{"name":"x"}}`},
		{"elicitation", `{"action":7}`},
		{"elicitation", `"accept"`},
		{"elicitation", `null`},
		{"sampling", `{"role":"assistant","content":{"type":"text","text":"x"}}`},
		{"sampling", `{"content":{"type":"text","text":"x"},"model":"m"}`},
		{"sampling", `{"role":"assistant","content":{"type":"text","text":"x"},"model":""}`},
		{"roots", `{}`},
		{"roots", `{"roots":"file:///"}`},
		{"roots", `[]`},
	} {
		t.Run("malformed "+tc.kind+" "+tc.answer, func(t *testing.T) {
			state := first(t, tc.kind)
			before := probe.count()
			_, err := retry(t, tc.kind, state, map[string]any{"a": jsontext.Value(tc.answer)})
			wantRPCError(t, err, mcp.CodeInvalidParams, "inputResponses")
			if n := probe.count(); n != before {
				t.Errorf("the handler ran with a malformed answer")
			}
		})
	}
	t.Run("missing answer asks again", func(t *testing.T) {
		state := first(t, "elicitation")
		for _, responses := range []any{nil, map[string]any{}, map[string]any{"other": answerElicit}} {
			raw, err := retry(t, "elicitation", state, responses)
			if err != nil {
				t.Fatal(err)
			}
			ir := inputRequired(t, raw)
			if _, ok := ir.InputRequests["a"]; !ok || ir.RequestState == state {
				t.Errorf("re-ask %s: want the question again with a new state", raw)
			}
		}
	})
	t.Run("unknown keys ignored", func(t *testing.T) {
		state := first(t, "roots")
		before := probe.count()
		raw, err := retry(t, "roots", state, map[string]any{"a": answerRoots, "extra": answerElicit, "more": answerSampling})
		if err != nil {
			t.Fatal(err)
		}
		if text, _ := toolResultText(t, raw); text != "a" {
			t.Errorf("the handler saw keys %q, want only %q", text, "a")
		}
		if runs := probe.all()[before:]; len(runs) != 1 || len(runs[0].inputs) != 1 {
			t.Errorf("runs %+v", runs)
		}
	})
	t.Run("answer of the wrong kind", func(t *testing.T) {
		state := first(t, "sampling")
		_, err := retry(t, "sampling", state, map[string]any{"a": answerElicit})
		wantRPCError(t, err, mcp.CodeInvalidParams)
	})
}

// ---- C. requestState security ----

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

// target is one MRTR request of the state tests.
type target struct {
	method string
	params map[string]any
}

func (tg target) with(state string) map[string]any {
	out := map[string]any{"_meta": modernMeta(`{}`), "requestState": state}
	for k, v := range tg.params {
		out[k] = v
	}
	return out
}

func toolTarget(name, args string) target {
	return target{mcp.MethodToolsCall, map[string]any{"name": name, "arguments": jsontext.Value(args)}}
}

// stateOf runs tg's first round on p and returns its sealed state.
func stateOf(t *testing.T, p *modernPeer, tg target) string {
	t.Helper()
	params := tg.with("")
	delete(params, "requestState")
	raw, err := modernCall(t, p, tg.method, params)
	if err != nil {
		t.Fatal(err)
	}
	return inputRequired(t, raw).RequestState
}

// wantRejected retries tg with state and checks -32602 without a run.
func wantRejected(t *testing.T, p *modernPeer, probe *mrtrProbe, tg target, state string) {
	t.Helper()
	before := probe.count()
	_, err := modernCall(t, p, tg.method, tg.with(state))
	wantRPCError(t, err, mcp.CodeInvalidParams, "requestState")
	if n := probe.count(); n != before {
		t.Errorf("the handler ran %d time(s) with a rejected state", n-before)
	}
}

// wantAccepted retries tg with state and checks the handler got want.
func wantAccepted(t *testing.T, p *modernPeer, probe *mrtrProbe, tg target, state, want string) {
	t.Helper()
	before := probe.count()
	raw, err := modernCall(t, p, tg.method, tg.with(state))
	if err != nil {
		t.Fatalf("retry with a good state: %v", err)
	}
	if !bytes.Contains(raw, []byte(`"ok `+want+`"`)) {
		t.Errorf("retry = %s, want the handler's %q", raw, want)
	}
	if runs := probe.all()[before:]; len(runs) != 1 || runs[0].state != want {
		t.Errorf("runs %+v, want one with state %q", runs, want)
	}
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

// TestRequestStateTampering: every damaged state is -32602 and the
// handler never runs.
func TestRequestStateTampering(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(nil)
	addStateTargets(s, probe)
	p := newModernPeer(t, s, false)
	tg := toolTarget("a", `{"city":"Paris","days":2}`)
	good := stateOf(t, p, tg)
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(good, sealedPrefix))
	reseal := func(b []byte) string { return sealedPrefix + base64.RawURLEncoding.EncodeToString(b) }
	flipped := bytes.Clone(raw)
	flipped[len(flipped)-1] ^= 1 // the last byte of the GCM tag
	keyIDFlipped := bytes.Clone(raw)
	keyIDFlipped[0] ^= 0x80
	nonceFlipped := bytes.Clone(raw)
	nonceFlipped[6] ^= 1
	for name, bad := range map[string]string{
		"byte flipped in the middle": flipMiddle(good),
		"tag bit flipped":            reseal(flipped),
		"key id altered":             reseal(keyIDFlipped),
		"nonce altered":              reseal(nonceFlipped),
		"text appended":              good + "x",
		"block appended":             good + "AAAA",
		"truncated by one":           good[:len(good)-1],
		"truncated by half":          good[:len(good)/2],
		"truncated to the key id":    reseal(raw[:4]),
		"truncated before the tag":   reseal(raw[:4+12+8]),
		"empty after the prefix":     sealedPrefix,
		"prefix only with padding":   sealedPrefix + "====",
		"no prefix":                  strings.TrimPrefix(good, sealedPrefix),
		"other prefix":               "mk2." + strings.TrimPrefix(good, sealedPrefix),
		"garbage":                    "hello, world",
		"invalid base64":             sealedPrefix + "!!!!****",
		"the handler's plain state":  "secret-a",
		"json":                       `{"s":"secret-a"}`,
	} {
		t.Run(name, func(t *testing.T) { wantRejected(t, p, probe, tg, bad) })
	}
	// Standard base64 (with padding, + and /) is not the token's alphabet;
	// skip it in the rare case it spells the same text.
	if std := sealedPrefix + base64.StdEncoding.EncodeToString(raw); std != good {
		wantRejected(t, p, probe, tg, std)
	}
	// The good state still works (the rejections above changed nothing).
	wantAccepted(t, p, probe, tg, good, "secret-a")
}

// TestRequestStateExpiry drives the sealer's clock: a state is accepted
// up to its TTL (default and configured) and rejected after.
func TestRequestStateExpiry(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  time.Duration
		ttl  time.Duration
	}{
		{"default", 0, DefaultRequestStateTTL},
		{"configured", 30 * time.Second, 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			probe := &mrtrProbe{}
			s := New(&Options{RequestStateTTL: tc.opt})
			var clock atomic.Int64
			start := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
			clock.Store(start.UnixNano())
			s.sealer.now = func() time.Time { return time.Unix(0, clock.Load()) }
			addStateTargets(s, probe)
			p := newModernPeer(t, s, false)
			tg := toolTarget("a", `{}`)
			state := stateOf(t, p, tg)
			clock.Store(start.Add(tc.ttl - time.Second).UnixNano())
			wantAccepted(t, p, probe, tg, state, "secret-a")
			clock.Store(start.Add(tc.ttl + time.Second).UnixNano())
			wantRejected(t, p, probe, tg, state)
			clock.Store(start.Add(24 * time.Hour).UnixNano())
			wantRejected(t, p, probe, tg, state)
		})
	}
}

// TestRequestStateBinding: a state opens only for the method, target and
// arguments it was issued for.
func TestRequestStateBinding(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(nil)
	addStateTargets(s, probe)
	p := newModernPeer(t, s, false)
	toolA := toolTarget("a", `{"city":"Paris","days":2}`)
	promptA := target{mcp.MethodPromptsGet, map[string]any{"name": "a", "arguments": map[string]string{"x": "1"}}}
	resOne := target{mcp.MethodResourcesRead, map[string]any{"uri": "test://one"}}
	stTool, stPrompt, stRes := stateOf(t, p, toolA), stateOf(t, p, promptA), stateOf(t, p, resOne)
	// Same target name and the same (empty) arguments: only the method
	// tells these two apart.
	bareTool := toolTarget("a", `{}`)
	barePrompt := target{mcp.MethodPromptsGet, map[string]any{"name": "a"}}
	stBareTool, stBarePrompt := stateOf(t, p, bareTool), stateOf(t, p, barePrompt)
	for _, tc := range []struct {
		name  string
		tg    target
		state string
	}{
		{"tool a → tool b", toolTarget("b", `{"city":"Paris","days":2}`), stTool},
		{"tool a → other city", toolTarget("a", `{"city":"Lyon","days":2}`), stTool},
		{"tool a → other days", toolTarget("a", `{"city":"Paris","days":3}`), stTool},
		{"tool a → fewer arguments", toolTarget("a", `{"city":"Paris"}`), stTool},
		{"tool a → no arguments", toolTarget("a", `{}`), stTool},
		{"tool a → prompt a (same name)", promptA, stTool},
		{"prompt a → prompt p2", target{mcp.MethodPromptsGet, map[string]any{"name": "p2", "arguments": map[string]string{"x": "1"}}}, stPrompt},
		{"prompt a → other argument", target{mcp.MethodPromptsGet, map[string]any{"name": "a", "arguments": map[string]string{"x": "2"}}}, stPrompt},
		{"prompt a → tool a", toolA, stPrompt},
		{"resource one → two", target{mcp.MethodResourcesRead, map[string]any{"uri": "test://two"}}, stRes},
		{"resource → tool", toolA, stRes},
		{"tool a → prompt a, both without arguments", barePrompt, stBareTool},
		{"prompt a → tool a, both without arguments", bareTool, stBarePrompt},
	} {
		t.Run(tc.name, func(t *testing.T) { wantRejected(t, p, probe, tc.tg, tc.state) })
	}
	wantAccepted(t, p, probe, toolA, stTool, "secret-a")
	wantAccepted(t, p, probe, promptA, stPrompt, "prompt-a")
	wantAccepted(t, p, probe, resOne, stRes, "res-test://one")
	wantAccepted(t, p, probe, bareTool, stBareTool, "secret-a")
	wantAccepted(t, p, probe, barePrompt, stBarePrompt, "prompt-a")
	// RFC 8785: the same arguments re-encoded (member order, whitespace,
	// number and string spelling) still match.
	wantAccepted(t, p, probe, toolTarget("a", `{ "days" : 2 , "city" : "Pa\u0072is" }`), stTool, "secret-a")
}

// keyID is the id a sealed token names its key with.
func keyID(t *testing.T, token string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(token, sealedPrefix))
	if err != nil || len(b) < 4 {
		t.Fatalf("token %q: %v", token, err)
	}
	return b[:4]
}

// TestRequestStateKeys: rotated-away and foreign keys are rejected; a
// key that is still in the ring opens the states it sealed, while new
// states are sealed with the first key.
func TestRequestStateKeys(t *testing.T) {
	leakCheck(t)
	k1, k2 := bytes.Repeat([]byte{1}, RequestStateKeySize), bytes.Repeat([]byte{2}, RequestStateKeySize)
	id1, id2 := sha256.Sum256(k1), sha256.Sum256(k2)
	tg := toolTarget("a", `{"city":"Paris"}`)
	peer := func(t *testing.T, keys ...[]byte) (*modernPeer, *mrtrProbe) {
		probe := &mrtrProbe{}
		s := New(&Options{RequestStateKeys: keys})
		addStateTargets(s, probe)
		return newModernPeer(t, s, false), probe
	}
	old, oldProbe := peer(t, k1)
	st1 := stateOf(t, old, tg)
	if !bytes.Equal(keyID(t, st1), id1[:4]) {
		t.Fatalf("state sealed with key id %x, want %x", keyID(t, st1), id1[:4])
	}

	t.Run("rotated away", func(t *testing.T) {
		p, probe := peer(t, k2)
		wantRejected(t, p, probe, tg, st1)
	})
	t.Run("foreign random key", func(t *testing.T) {
		p, probe := peer(t)
		other, _ := peer(t)
		wantRejected(t, p, probe, tg, stateOf(t, other, tg))
		wantRejected(t, p, probe, tg, st1)
	})
	t.Run("still in the ring", func(t *testing.T) {
		p, probe := peer(t, k2, k1)
		wantAccepted(t, p, probe, tg, st1, "secret-a")
		st2 := stateOf(t, p, tg)
		if got := keyID(t, st2); !bytes.Equal(got, id2[:4]) || bytes.Equal(got, id1[:4]) {
			t.Errorf("new state sealed with key id %x, want the new key's %x", got, id2[:4])
		}
		wantAccepted(t, p, probe, tg, st2, "secret-a")
		// The old server, which never had k2, cannot open it.
		wantRejected(t, old, oldProbe, tg, st2)
	})
	t.Run("same key, other instance", func(t *testing.T) {
		p, probe := peer(t, k1)
		wantAccepted(t, p, probe, tg, st1, "secret-a")
	})
}

// TestRequestStateKeyConfig: a key of the wrong size is a configuration
// error New reports by panicking.
func TestRequestStateKeyConfig(t *testing.T) {
	for _, n := range []int{0, 16, 31, 33, 64} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New accepted a %d-byte request state key", n)
				}
			}()
			New(&Options{RequestStateKeys: [][]byte{make([]byte, n)}})
		}()
	}
}

// TestArgsDigest: the digest is over the RFC 8785 form of the arguments.
func TestArgsDigest(t *testing.T) {
	same := [][]string{
		{`{"b":2,"a":"x"}`, ` { "a" : "x" , "b" : 2.0 } `, `{"a":"\u0078","b":2e0}`},
		{``, `{}`, ` {} `},
		{`{"n":{"z":[1,2],"y":null}}`, `{"n":{"y":null,"z":[1.0,2]}}`},
	}
	for _, group := range same {
		for _, v := range group[1:] {
			if !bytes.Equal(argsDigest(jsontext.Value(group[0])), argsDigest(jsontext.Value(v))) {
				t.Errorf("argsDigest(%s) != argsDigest(%s)", group[0], v)
			}
		}
	}
	differ := []string{`{"a":"x","b":2}`, `{"a":"x","b":3}`, `{"a":"X","b":2}`, `{"a":"x"}`, `{"a":"x","b":2,"c":null}`, `{"a":["x"],"b":2}`}
	seen := map[string]string{}
	for _, v := range differ {
		d := string(argsDigest(jsontext.Value(v)))
		if prev, dup := seen[d]; dup {
			t.Errorf("argsDigest(%s) == argsDigest(%s)", v, prev)
		}
		seen[d] = v
	}
}

// ---- E. Benchmark ----

// BenchmarkMRTRModernTwoRounds measures a two-round 2026 exchange in
// process, like BenchmarkToolsCall: round 1 decodes the request, runs the
// handler, gates it against the envelope and seals a requestState into
// an input-required result (encoded); round 2 decodes the retry, opens
// and verifies the state, checks the answer and completes.
func BenchmarkMRTRModernTwoRounds(b *testing.B) {
	s := New(nil)
	AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, req *CallToolRequest, in benchIn) (string, error) {
		ans, ok, err := req.Elicitation("units")
		if err != nil {
			return "", err
		}
		if !ok {
			return "", NeedInput().Elicit("units", &mcp.ElicitParams{Message: "Metric or imperial?",
				RequestedSchema: jsontext.Value(`{"type":"object","properties":{"units":{"type":"string","enum":["metric","imperial"]}},"required":["units"]}`)}).
				State("city=" + in.City)
		}
		return fmt.Sprintf("%s in %v (%s)", in.City, ans.Content["units"], req.RequestState()), nil
	})
	ss := newSession(s)
	const head = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}},` +
		`"name":"forecast","arguments":{"city":"Lisbon","days":3,"units":"metric","tags":["coast","sunny"]}`
	round1 := []byte(fmt.Sprintf(head, 1) + `}}`)
	retryHead := []byte(fmt.Sprintf(head, 2) + `,"inputResponses":{"units":{"action":"accept","content":{"units":"metric"}}},"requestState":"`)
	ctx := context.Background()
	var retry []byte
	exchange := func() *mcp.CallToolResult {
		msg, derr := jsonrpc.Decode(round1, jsonrpc.Limits{})
		if derr != nil {
			b.Fatal(derr)
		}
		res, err := ss.HandleRequest(ctx, msg)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := jsonrpc.EncodeResult(msg.ID, res); err != nil {
			b.Fatal(err)
		}
		ir, ok := res.(*mcp.InputRequiredResult)
		if !ok {
			b.Fatalf("round 1 answered %T", res)
		}
		retry = append(append(append(retry[:0], retryHead...), ir.RequestState...), `"}}`...)
		msg, derr = jsonrpc.Decode(retry, jsonrpc.Limits{})
		if derr != nil {
			b.Fatal(derr)
		}
		res, err = ss.HandleRequest(ctx, msg)
		if err != nil {
			b.Fatal(err)
		}
		out, err := jsonrpc.EncodeResult(msg.ID, res)
		if err != nil {
			b.Fatal(err)
		}
		done, ok := res.(*mcp.CallToolResult)
		if !ok {
			b.Fatalf("round 2 answered %s", out)
		}
		return done
	}
	if res := exchange(); res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "Lisbon in metric (city=Lisbon)" {
		b.Fatalf("the exchange ended with %+v", res)
	}
	b.ReportAllocs()
	for b.Loop() {
		exchange()
	}
}
