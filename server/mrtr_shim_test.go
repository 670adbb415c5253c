package server

// Tests of the legacy shim of Multi Round-Trip Requests (SEP-2322): the
// cases of docs/design/mrtr.md over a memory transport with a raw
// 2025-11-25 client that replay a request after the client's answers:
// tools, prompts and resources, several rounds, the legs of one round in
// order, and the cap on rounds. The helpers are in mrtr_test.go; the
// shim's edges are in mrtr_shim_edges_test.go.

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// ---- A. The legacy shim ----

// TestShimReplay: seed cases 1–3 in process. The shim sends the
// elicitation as a real request, re-runs the handler with exactly the
// collected answer (raw) and its raw state, and answers in the legacy
// shape. Sealing is configured (and active on the 2026 wire of the same
// server), but the in-process state is never sealed.
func TestShimReplay(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(&Options{RequestStateKeys: []RequestStateKey{stateKey}})
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
		ans, ok, err := req.ElicitResult("ctx")
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
		roots, ok, err := req.ListRootsResult("roots")
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
			first, ok, err := req.ElicitResult("first")
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
		t.Errorf("per-run answer keys %v, want [[] [first] [second]] (InputResponses: this round's only)", keys)
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
		e, _, err1 := req.ElicitResult("zeta")
		m, _, err2 := req.CreateMessageResult("alpha")
		r, _, err3 := req.ListRootsResult("mid")
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
