package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// addSpecStyle registers "spec", a handler written to SEP-2322: it reads
// only this round's answers (InputResponses) and carries the earlier ones
// in its own requestState. It checks "first" before "second", so a
// server that handed "first" back in the third round would make it ask
// "second" again until the round cap.
func addSpecStyle(t *testing.T, s *Server) {
	t.Helper()
	name := func(raw jsontext.Value) string {
		var r mcp.ElicitResult
		if err := json.Unmarshal(raw, &r); err != nil {
			return "?"
		}
		v, _ := r.Content["name"].(string)
		return v
	}
	err := s.AddRawTool(&mcp.Tool{Name: "spec"}, func(_ context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
		in := req.InputResponses()
		if raw, ok := in["first"]; ok {
			return nil, NeedInput().Elicit("second", askForm("Second?")).State(name(raw))
		}
		if raw, ok := in["second"]; ok {
			return textResult(req.RequestState() + " and " + name(raw)), nil
		}
		return nil, NeedInput().Elicit("first", askForm("First?"))
	})
	if err != nil {
		t.Fatal(err)
	}
}

var specAnswers = map[string]jsontext.Value{
	"First?":  jsontext.Value(`{"action":"accept","content":{"name":"Ada"}}`),
	"Second?": jsontext.Value(`{"action":"accept","content":{"name":"Bob"}}`),
}

// TestEarlierAnswersNotHandedBackShim: on a legacy session, the shim's
// third run sees only the second round's answer, so a handler written to
// SEP-2322 that checks its keys in another order than it asked them
// completes after two questions.
func TestEarlierAnswersNotHandedBackShim(t *testing.T) {
	leakCheck(t)
	s := New(nil)
	addSpecStyle(t, s)
	p := newLegacyPeer(t, s, formCaps, func(_ context.Context, m *jsonrpc.Message) (any, error) {
		var params mcp.ElicitParams
		if err := json.Unmarshal(m.Params, &params); err != nil {
			return nil, err
		}
		return specAnswers[params.Message], nil
	}, true)
	raw, err := p.callTool("spec", "")
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := toolResultText(t, raw); text != "Ada and Bob" || isErr {
		t.Errorf("spec = %q (isError %v), want %q", text, isErr, "Ada and Bob")
	}
	if reqs := p.requests(); len(reqs) != 2 {
		t.Errorf("the client was asked %d times (%v), want 2", len(reqs), methodsOf(reqs))
	}
}

// TestEarlierAnswersNotHandedBackModern: the same on the 2026 wire: the
// retry of the second round hands the handler that round's answer only,
// not the first answer kept in the sealed state.
func TestEarlierAnswersNotHandedBackModern(t *testing.T) {
	leakCheck(t)
	s := New(nil)
	addSpecStyle(t, s)
	p := newModernPeer(t, s, true)
	call := func(answers map[string]any, state string) jsontext.Value {
		t.Helper()
		params := map[string]any{"_meta": modernMeta(formCaps), "name": "spec"}
		if answers != nil {
			params["inputResponses"], params["requestState"] = answers, state
		}
		raw, err := modernCall(t, p, mcp.MethodToolsCall, params)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	first := inputRequired(t, call(nil, ""))
	second := inputRequired(t, call(map[string]any{"first": specAnswers["First?"]}, first.RequestState))
	if _, ok := second.InputRequests["second"]; !ok || len(second.InputRequests) != 1 {
		t.Fatalf("second round asked %s", mustJSON(t, second.InputRequests))
	}
	raw := call(map[string]any{"second": specAnswers["Second?"]}, second.RequestState)
	if strings.Contains(string(raw), string(mcp.ResultInputRequired)) {
		t.Fatalf("third round asked again: %s", raw)
	}
	if text, isErr := toolResultText(t, raw); text != "Ada and Bob" || isErr {
		t.Errorf("third round: %q (isError %v), want %q", text, isErr, "Ada and Bob")
	}
}

// TestKeptAnswersStillReachAsk: the typed accessors still find an answer
// of an earlier round (what Ask and a handler asking one question after
// another need) while InputResponses shows only this round's, on both
// eras.
func TestKeptAnswersStillReachAsk(t *testing.T) {
	leakCheck(t)
	s := New(nil)
	var seen []string
	err := s.AddRawTool(&mcp.Tool{Name: "seq"}, func(_ context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
		seen = append(seen, fmt.Sprint(keysOf(req.InputResponses())))
		a, ok, err := req.ElicitResult("first")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, NeedInput().Elicit("first", askForm("First?"))
		}
		b, err := Ask[askName](req.Request, "second", "Second?")
		if err != nil {
			return nil, err
		}
		return textResult(fmt.Sprintf("%v and %s", a.Content["name"], b.Name)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p := newLegacyPeer(t, s, formCaps, func(_ context.Context, m *jsonrpc.Message) (any, error) {
		var params mcp.ElicitParams
		if err := json.Unmarshal(m.Params, &params); err != nil {
			return nil, err
		}
		return specAnswers[params.Message], nil
	}, true)
	raw, err := p.callTool("seq", "")
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := toolResultText(t, raw); text != "Ada and Bob" || isErr {
		t.Errorf("seq = %q (isError %v), want %q", text, isErr, "Ada and Bob")
	}
	if got := fmt.Sprint(seen); got != "[[] [first] [second]]" {
		t.Errorf("InputResponses per run = %s, want [[] [first] [second]]", got)
	}
}
