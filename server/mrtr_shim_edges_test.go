package server

// Tests of the edges of the legacy shim of Multi Round-Trip Requests
// (SEP-2322), with a raw 2025-11-25 client over a memory transport: the
// capability gate, URL elicitation ids, a client's error answer, the shim
// switched off, 2026 requests left to the 2026 wire, cancellation, an
// *Input from completion/complete or an invalid one failing before the
// client is asked, and a legacy client's own MRTR params ignored. The
// helpers are in mrtr_test.go.

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

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
		ans, _, err := req.ElicitResult("link")
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
		legID := httpenv.RecvT(t, legs, "the leg")
		cancel() // the client sends notifications/cancelled for the original
		if err := httpenv.RecvT(t, done, "the cancelled call"); err != context.Canceled {
			t.Errorf("call = %v", err)
		}
		httpenv.RecvT(t, legEnded, "the leg to be cancelled by the server")
		cancelledLeg(t, p, legID)
		// Close the server side: its handlers have returned and written
		// what they would write; then nothing may answer the original.
		p.ss.Close()
		httpenv.RecvT(t, p.conn.Done(), "the client connection to end")
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
		legID := httpenv.RecvT(t, legs, "the leg")
		httpenv.RecvT(t, legEnded, "the timed-out leg to be cancelled")
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
