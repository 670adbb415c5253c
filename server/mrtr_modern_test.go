package server

// Tests of Multi Round-Trip Requests (SEP-2322) on the 2026-07-28 wire
// with a raw 2026 client: input-required results for the three methods,
// the capability gate against each request's declared capabilities, the
// checks of the answers, and the benchmark of a two-round 2026 exchange.
// The helpers are in mrtr_test.go.

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// ---- B. The 2026-07-28 wire ----

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
		m, ok, err := req.CreateMessageResult("s")
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
		r, ok, err := req.ListRootsResult("roots")
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
	if rt, _ := peekResultType(raw); rt != mcp.ResultComplete {
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
		if rt, _ := peekResultType(raw); rt != mcp.ResultComplete {
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
		{`{"sampling":{"tools":{}}}`, "context", `{"sampling":{"context":{}}}`},
		{`{"sampling":{}}`, "sampling,form", `{"elicitation":{"form":{}}}`},
		{`{"elicitation":{}}`, "roots", `{"roots":{}}`},
		{`{}`, "form,sampling,roots", `{"elicitation":{"form":{}},"sampling":{},"roots":{}}`},
		// Declared: served.
		{`{"elicitation":{}}`, "form", ""},
		{`{"elicitation":{"url":{}}}`, "url", ""},
		{`{"sampling":{"tools":{}}}`, "tools,sampling", ""},
		{`{"roots":{}}`, "roots", ""},
		{`{"sampling":{"context":{}}}`, "context", ""},
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

// ---- E. Benchmark ----

// BenchmarkMRTRModernTwoRounds measures a two-round 2026 exchange in
// process, like BenchmarkToolsCall: round 1 decodes the request, runs the
// handler, gates it against the envelope and seals a requestState into
// an input-required result (encoded); round 2 decodes the retry, opens
// and verifies the state, checks the answer and completes.
func BenchmarkMRTRModernTwoRounds(b *testing.B) {
	s := New(nil)
	AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, req *CallToolRequest, in httpenv.BenchIn) (string, error) {
		ans, ok, err := req.ElicitResult("units")
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
		msg, derr := wire.Decode(round1, jsonrpc.Limits{})
		if derr != nil {
			b.Fatal(derr)
		}
		res, err := ss.handleRequest(ctx, msg)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := wire.EncodeResult(msg.ID, res); err != nil {
			b.Fatal(err)
		}
		ir, ok := res.(*mcp.InputRequiredResult)
		if !ok {
			b.Fatalf("round 1 answered %T", res)
		}
		retry = append(append(append(retry[:0], retryHead...), ir.RequestState...), `"}}`...)
		msg, derr = wire.Decode(retry, jsonrpc.Limits{})
		if derr != nil {
			b.Fatal(derr)
		}
		res, err = ss.handleRequest(ctx, msg)
		if err != nil {
			b.Fatal(err)
		}
		out, err := wire.EncodeResult(msg.ID, res)
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

// peekResultType returns the resultType member of a raw result.
func peekResultType(raw jsontext.Value) (mcp.ResultType, error) {
	var w struct {
		ResultType mcp.ResultType `json:"resultType"`
	}
	err := json.Unmarshal(raw, &w)
	return w.ResultType, err
}
