package server

// Tests of the checks of input responses (hardening, unchecked answers):
// the shape of every answer on the 2026 wire, with and without a
// requestState, over stdio and Streamable HTTP; elicitation content
// against the requestedSchema the server asked with, on the 2026 wire,
// on the legacy shim and on a legacy handler's own Request.Elicit; and
// forms that cannot be checked, which are never asked.

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// profileSchema is a form with every kind of field the restricted
// requestedSchema allows.
var profileSchema = jsontext.Value(`{"type":"object","properties":{` +
	`"name":{"type":"string","minLength":2,"maxLength":20},` +
	`"email":{"type":"string","format":"email"},` +
	`"age":{"type":"integer","minimum":0,"maximum":150},` +
	`"score":{"type":"number","minimum":0.5},` +
	`"color":{"type":"string","enum":["red","blue"]},` +
	`"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]},` +
	`"tags":{"type":"array","items":{"type":"string","enum":["a","b"]},"maxItems":2},` +
	`"ok":{"type":"boolean"}},` +
	`"required":["name","age"]}`)

// badContents are accepted answers whose content does not match
// profileSchema, and the field and message the error must name.
var badContents = []struct{ name, answer, field, msg string }{
	{"wrong type", `{"action":"accept","content":{"name":5,"age":3}}`, "content.name", "must be string"},
	{"missing required", `{"action":"accept","content":{"name":"Ada"}}`, "content", `missing required property "age"`},
	{"accept without content", `{"action":"accept"}`, "content", "missing required properties"},
	{"below minimum", `{"action":"accept","content":{"name":"Ada","age":-1}}`, "content.age", "must be >= 0"},
	{"above maximum", `{"action":"accept","content":{"name":"Ada","age":151}}`, "content.age", "must be <= 150"},
	{"not an integer", `{"action":"accept","content":{"name":"Ada","age":1.5}}`, "content.age", "must be integer"},
	{"number below minimum", `{"action":"accept","content":{"name":"Ada","age":1,"score":0.25}}`, "content.score", "must be >= 0.5"},
	{"too short", `{"action":"accept","content":{"name":"A","age":1}}`, "content.name", "at least 2 characters"},
	{"not in enum", `{"action":"accept","content":{"name":"Ada","age":1,"color":"green"}}`, "content.color", `must be one of "red", "blue"`},
	{"not a titled option", `{"action":"accept","content":{"name":"Ada","age":1,"size":"m"}}`, "content.size", "oneOf"},
	{"multi-select item not in enum", `{"action":"accept","content":{"name":"Ada","age":1,"tags":["a","c"]}}`, "content.tags[1]", "must be one of"},
	{"too many selected", `{"action":"accept","content":{"name":"Ada","age":1,"tags":["a","b","a"]}}`, "content.tags", "at most 2 items"},
	{"boolean as string", `{"action":"accept","content":{"name":"Ada","age":1,"ok":"yes"}}`, "content.ok", "must be boolean"},
	{"nested object", `{"action":"accept","content":{"name":"Ada","age":1,"extra":{"x":1}}}`, "content.extra", "string, number, boolean or array of strings"},
	{"null value", `{"action":"accept","content":{"name":null,"age":1}}`, "content.name", "string, number, boolean or array of strings"},
	{"array of numbers", `{"action":"accept","content":{"name":"Ada","age":1,"tags":[1]}}`, "content.tags", "string, number, boolean or array of strings"},
	{"content not an object", `{"action":"accept","content":["Ada"]}`, "content", "must be an object"},
	{"content with decline", `{"action":"decline","content":{"name":"Ada","age":1}}`, "content", `only allowed when action is "accept"`},
	{"unknown action", `{"action":"yolo"}`, "action", `not "yolo"`},
	{"no action", `{"content":{"name":"Ada","age":1}}`, "action", "missing"},
	{"not an object", `"accept"`, "", "must be an object"},
}

// goodContents match profileSchema; the handler gets them.
var goodContents = []string{
	`{"action":"accept","content":{"name":"Ada","age":36}}`,
	`{"action":"accept","content":{"name":"Ada","age":36,"email":"ada@example.com","score":1,"color":"red","size":"l","tags":["a","b"],"ok":true}}`,
	`{"action":"accept","content":{"name":"Ada","age":36.0}}`,
	`{"action":"accept","content":{"name":"Ada","age":36},"_meta":{"x":1}}`,
	`{"action":"decline"}`,
	`{"action":"cancel"}`,
}

// addProfile registers "profile": it asks for profileSchema (URL mode
// when its argument says so) and echoes the raw answer.
func addProfile(s *Server, runs *atomic.Int32) {
	type profileIn struct {
		URL bool `json:"url,omitzero"`
	}
	AddTool(s, &mcp.Tool{Name: "profile"}, func(ctx context.Context, req *CallToolRequest, in profileIn) (string, error) {
		runs.Add(1)
		if _, ok, err := req.ElicitResult("p"); err != nil || ok {
			return string(req.InputResponses()["p"]), err
		}
		if in.URL {
			return "", NeedInput().Elicit("p", &mcp.ElicitParams{Mode: mcp.ElicitModeURL, Message: "Sign in", URL: "https://example.com/x"})
		}
		return "", NeedInput().Elicit("p", &mcp.ElicitParams{Message: "Your profile?", RequestedSchema: profileSchema})
	})
}

// wantAnswerError checks err is -32602 naming where and containing msg.
func wantAnswerError(t *testing.T, err error, where, msg string) {
	t.Helper()
	e := wantRPCError(t, err, mcp.CodeInvalidParams, msg)
	if !strings.Contains(e.Message, where+": ") {
		t.Errorf("error message %q does not name %s", e.Message, where)
	}
}

// TestModernAnswersWithoutState: on the 2026 wire every answer is
// checked, with or without a requestState: a malformed one is -32602
// naming its field and the handler does not run. Answers sent without a
// state (up front) reach the handler only once it has asked for them,
// checked against its questions as a sealed state would have them.
func TestModernAnswersWithoutState(t *testing.T) {
	leakCheck(t)
	var runs atomic.Int32
	s := New(nil)
	addProfile(s, &runs)
	p := newModernPeer(t, s, false)
	call := func(t *testing.T, state string, responses map[string]any) (jsontext.Value, error) {
		t.Helper()
		params := map[string]any{"_meta": modernMeta(allCaps), "name": "profile", "inputResponses": responses}
		if state != "" {
			params["requestState"] = state
		}
		return modernCall(t, p, mcp.MethodToolsCall, params)
	}
	for _, tc := range []struct{ name, answer, field, msg string }{
		{"yolo", `{"action":"yolo"}`, `inputResponses["p"].action`, `must be "accept", "decline" or "cancel", not "yolo"`},
		{"escaped action", `{"action":"acc\u0065pt!"}`, `inputResponses["p"].action`, "must be"},
		{"action not a string", `{"action":true}`, `inputResponses["p"].action`, "must be"},
		{"content with cancel", `{"action":"cancel","content":{}}`, `inputResponses["p"].content`, "only allowed"},
		{"nested content", `{"action":"accept","content":{"a":{"b":1}}}`, `inputResponses["p"].content.a`, "array of strings"},
		{"string", `"accept"`, `inputResponses["p"]`, "must be an object"},
		{"null", `null`, `inputResponses["p"]`, "must be an object"},
		{"empty object", `{}`, `inputResponses["p"]`, "must be an elicitation, sampling or roots result"},
		{"sampling without model", `{"role":"assistant","content":{"type":"text","text":"x"}}`, `inputResponses["p"].model`, "non-empty string"},
		{"sampling bad role", `{"role":"robot","content":{"type":"text","text":"x"},"model":"m"}`, `inputResponses["p"].role`, "must be"},
		{"sampling bad content", `{"role":"assistant","content":{"type":"nope"},"model":"m"}`, `inputResponses["p"].content`, "sampling content"},
		{"roots not an array", `{"roots":"file:///"}`, `inputResponses["p"].roots`, "must be an array"},
		{"root without uri", `{"roots":[{"name":"w"}]}`, `inputResponses["p"].roots[0].uri`, "non-empty string"},
		{"_meta not an object", `{"action":"decline","_meta":1}`, `inputResponses["p"]._meta`, "must be an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := runs.Load()
			_, err := call(t, "", map[string]any{"p": jsontext.Value(tc.answer)})
			wantAnswerError(t, err, tc.field, tc.msg)
			if runs.Load() != before {
				t.Error("the handler ran with a malformed answer")
			}
		})
	}
	t.Run("answers up front are checked against the questions", func(t *testing.T) {
		// The handler runs without them, asks; the answer to its
		// question is checked against the form, then it runs with it.
		before := runs.Load()
		answer := `{"action":"accept","content":{"name":"Ada","age":36}}`
		raw, err := call(t, "", map[string]any{"p": jsontext.Value(answer), "s": answerSampling, "r": answerRoots})
		if err != nil {
			t.Fatal(err)
		}
		if text, isErr := toolResultText(t, raw); isErr || !sameJSON(t, []byte(text), []byte(answer)) {
			t.Errorf("the handler saw %s, want %s", text, answer)
		}
		if n := runs.Load() - before; n != 2 {
			t.Errorf("the handler ran %d times, want 2 (asking, then with the answer)", n)
		}

		before = runs.Load()
		_, err = call(t, "", map[string]any{"p": jsontext.Value(`{"action":"accept","content":{"name":"Mallory","age":-5}}`)})
		wantAnswerError(t, err, `inputResponses["p"].content.age`, "must be >= 0")
		if n := runs.Load() - before; n != 1 {
			t.Errorf("the handler ran %d times, want 1 (asking, never with the answer)", n)
		}

		before = runs.Load()
		raw, err = call(t, "", map[string]any{"other": answerElicit, "s": answerSampling})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := inputRequired(t, raw).InputRequests["p"]; !ok {
			t.Errorf("answers to nothing asked: want the question, got %s", raw)
		}
		if n := runs.Load() - before; n != 1 {
			t.Errorf("the handler ran %d times, want 1", n)
		}
	})
	t.Run("malformed answer to a key not asked", func(t *testing.T) {
		raw, err := call(t, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		state := inputRequired(t, raw).RequestState
		before := runs.Load()
		_, err = call(t, state, map[string]any{"p": jsontext.Value(goodContents[0]), "junk": jsontext.Value(`"not even an object"`)})
		wantAnswerError(t, err, `inputResponses["junk"]`, "must be an object")
		_, err = call(t, state, map[string]any{"p": jsontext.Value(goodContents[0]), "other": jsontext.Value(`{"action":"yolo"}`)})
		wantAnswerError(t, err, `inputResponses["other"].action`, "yolo")
		if runs.Load() != before {
			t.Error("the handler ran")
		}
	})
}

// TestModernHTTPAnswerWithoutState: "action":"yolo" without a
// requestState over Streamable HTTP is -32602 (HTTP 200, a method
// error) and the handler does not run.
func TestModernHTTPAnswerWithoutState(t *testing.T) {
	var runs atomic.Int32
	s := New(nil)
	addProfile(s, &runs)
	e := newHTTPEnv(t, s, nil)
	wc := wirecheck.For(t, mcp.Version20260728)
	params := `{"_meta":` + string(mustJSON(t, modernMeta(formCaps))) + `,"name":"profile","inputResponses":{"p":{"action":"yolo"}}}`
	status, m := modernHTTP(t, wc, e.Client, e.TS.URL, nil, mcp.MethodToolsCall, "profile", params)
	if status != http.StatusOK || m.Error == nil || m.Error.Code != mcp.CodeInvalidParams ||
		!strings.Contains(m.Error.Message, `inputResponses["p"].action`) {
		t.Errorf("%d %s, want 200 with -32602 naming inputResponses[\"p\"].action", status, m.raw)
	}
	if n := runs.Load(); n != 0 {
		t.Errorf("the handler ran %d times", n)
	}
}

// TestModernElicitContent: on the 2026 wire an accepted elicitation's
// content is checked against the requestedSchema the server asked with,
// known from the sealed requestState.
func TestModernElicitContent(t *testing.T) {
	leakCheck(t)
	var runs atomic.Int32
	s := New(nil)
	addProfile(s, &runs)
	p := newModernPeer(t, s, false)
	call := func(t *testing.T, url bool, state string, answer string) (jsontext.Value, error) {
		t.Helper()
		params := map[string]any{"_meta": modernMeta(allCaps), "name": "profile", "arguments": map[string]any{"url": url}}
		if state != "" {
			params["requestState"] = state
			params["inputResponses"] = map[string]any{"p": jsontext.Value(answer)}
		}
		return modernCall(t, p, mcp.MethodToolsCall, params)
	}
	ask := func(t *testing.T, url bool) string {
		t.Helper()
		raw, err := call(t, url, "", "")
		if err != nil {
			t.Fatal(err)
		}
		return inputRequired(t, raw).RequestState
	}
	state := ask(t, false)
	for _, tc := range badContents {
		t.Run(tc.name, func(t *testing.T) {
			before := runs.Load()
			_, err := call(t, false, state, tc.answer)
			where := `inputResponses["p"]`
			if tc.field != "" {
				where += "." + tc.field
			}
			wantAnswerError(t, err, where, tc.msg)
			if runs.Load() != before {
				t.Error("the handler ran with content that does not match the form")
			}
		})
	}
	for _, answer := range goodContents {
		raw, err := call(t, false, state, answer)
		if err != nil {
			t.Fatalf("%s: %v", answer, err)
		}
		if text, isErr := toolResultText(t, raw); isErr || !sameJSON(t, []byte(text), []byte(answer)) {
			t.Errorf("the handler saw %s, want %s", text, answer)
		}
	}
	t.Run("URL mode", func(t *testing.T) {
		state := ask(t, true)
		_, err := call(t, true, state, `{"action":"accept","content":{"name":"Ada","age":1}}`)
		wantAnswerError(t, err, `inputResponses["p"].content`, "URL mode")
		raw, err := call(t, true, state, `{"action":"accept"}`)
		if err != nil {
			t.Fatal(err)
		}
		if text, _ := toolResultText(t, raw); text != `{"action":"accept"}` {
			t.Errorf("the handler saw %s", text)
		}
	})
}

// TestSealedStateWithoutForms: a state sealed without forms (as by an
// earlier version of the server, during a rolling upgrade) still opens;
// its answers get the shape check, and no content check.
func TestSealedStateWithoutForms(t *testing.T) {
	var runs atomic.Int32
	s := New(nil)
	addProfile(s, &runs)
	p := newModernPeer(t, s, false)
	token, err := s.sealer.seal(&sealedState{Method: mcp.MethodToolsCall, Target: "profile", Digest: argsDigest(nil),
		Asked: map[string]string{"p": mcp.MethodElicitationCreate}})
	if err != nil {
		t.Fatal(err)
	}
	call := func(answer string) (jsontext.Value, error) {
		return modernCall(t, p, mcp.MethodToolsCall, map[string]any{"_meta": modernMeta(formCaps), "name": "profile",
			"requestState": token, "inputResponses": map[string]any{"p": jsontext.Value(answer)}})
	}
	_, err = call(`{"action":"yolo"}`)
	wantAnswerError(t, err, `inputResponses["p"].action`, "yolo")
	raw, err := call(`{"action":"accept","content":{"anything":"goes"}}`)
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := toolResultText(t, raw); !strings.Contains(text, "anything") {
		t.Errorf("the handler saw %s", text)
	}
}

// answerWith answers every elicitation/create with answer.
func answerWith(answer string) answerFunc {
	return func(ctx context.Context, m *jsonrpc.Message) (any, error) {
		if m.Method == mcp.MethodElicitationCreate {
			return jsontext.Value(answer), nil
		}
		return answerAll(ctx, m)
	}
}

// TestShimElicitContent: on a legacy session the shim checks the
// client's elicitation/create result against the form it sent: a bad
// answer fails the original tools/call with -32602 naming the field, and
// the handler does not run again.
func TestShimElicitContent(t *testing.T) {
	leakCheck(t)
	for _, tc := range badContents {
		t.Run(tc.name, func(t *testing.T) {
			var runs atomic.Int32
			s := New(nil)
			addProfile(s, &runs)
			p := newLegacyPeer(t, s, formCaps, answerWith(tc.answer), false)
			_, err := p.callTool("profile", "")
			where := "the client's elicitation/create result"
			if tc.field != "" {
				where += ": " + tc.field
			}
			wantAnswerError(t, err, where, tc.msg)
			if n := runs.Load(); n != 1 {
				t.Errorf("the handler ran %d times, want 1 (never with the bad answer)", n)
			}
			if got := len(p.requests()); got != 1 {
				t.Errorf("the client was sent %d requests, want 1", got)
			}
		})
	}
	for _, answer := range goodContents {
		var runs atomic.Int32
		s := New(nil)
		addProfile(s, &runs)
		p := newLegacyPeer(t, s, formCaps, answerWith(answer), true)
		raw, err := p.callTool("profile", "")
		if err != nil {
			t.Fatalf("%s: %v", answer, err)
		}
		if text, isErr := toolResultText(t, raw); isErr || !sameJSON(t, []byte(text), []byte(answer)) {
			t.Errorf("the handler saw %s, want %s", text, answer)
		}
	}
	t.Run("URL mode", func(t *testing.T) {
		var runs atomic.Int32
		s := New(nil)
		addProfile(s, &runs)
		p := newLegacyPeer(t, s, allCaps, answerWith(`{"action":"accept","content":{"x":"y"}}`), false)
		_, err := p.callTool("profile", `{"url":true}`)
		wantAnswerError(t, err, "the client's elicitation/create result: content", "URL mode")
	})
}

// TestShimOtherAnswers: the shim checks sampling and roots results too.
func TestShimOtherAnswers(t *testing.T) {
	for _, tc := range []struct{ kind, method, answer, where, msg string }{
		{"sampling", mcp.MethodSamplingCreateMessage, `{"role":"assistant","content":{"type":"text","text":"x"}}`, "model", "non-empty string"},
		{"roots", mcp.MethodRootsList, `{"roots":[{"uri":""}]}`, "roots[0].uri", "non-empty string"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			probe := &mrtrProbe{}
			s := New(nil)
			addQ(s, probe)
			p := newLegacyPeer(t, s, allCaps, func(ctx context.Context, m *jsonrpc.Message) (any, error) {
				return jsontext.Value(tc.answer), nil
			}, false)
			_, err := p.callTool("q", `{"kind":"`+tc.kind+`"}`)
			wantAnswerError(t, err, "the client's "+tc.method+" result: "+tc.where, tc.msg)
			if n := probe.count(); n != 1 {
				t.Errorf("the handler ran %d times, want 1", n)
			}
		})
	}
}

// TestRequestElicitContent: a legacy handler's own Request.Elicit
// checks the client's answer the same way: the handler gets a -32602
// *jsonrpc.Error instead of the content, and passing it on fails the
// request with it.
func TestRequestElicitContent(t *testing.T) {
	leakCheck(t)
	var got atomic.Value
	s := New(nil)
	AddTool(s, &mcp.Tool{Name: "direct"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Your profile?", RequestedSchema: profileSchema})
		if err != nil {
			got.Store(err)
			return "", err
		}
		return res.Action, nil
	})
	p := newLegacyPeer(t, s, formCaps, answerWith(`{"action":"accept","content":{"name":"Ada","age":-1}}`), false)
	_, err := p.callTool("direct", "")
	wantAnswerError(t, err, "the client's elicitation/create result: content.age", "must be >= 0")
	if e, ok := got.Load().(error); !ok {
		t.Error("the handler got no error")
	} else if _, isRPC := jsonrpc.AsError(e); !isRPC {
		t.Errorf("the handler got %T, want a *jsonrpc.Error", e)
	}
	p = newLegacyPeer(t, s, formCaps, answerWith(`{"action":"accept","content":{"name":"Ada","age":1}}`), true)
	raw, err := p.callTool("direct", "")
	if text, _ := toolResultText(t, raw); err != nil || text != "accept" {
		t.Errorf("direct = %s, %v", raw, err)
	}
}

// TestUncheckableFormNotAsked: a requestedSchema that does not compile
// fails the request with -32603 before the client is asked, in both eras
// and on a handler's own Request.Elicit.
func TestUncheckableFormNotAsked(t *testing.T) {
	leakCheck(t)
	bad := jsontext.Value(`{"type":"object","properties":{"x":{"$ref":"https://example.com/s.json"}}}`)
	s := New(nil)
	AddTool(s, &mcp.Tool{Name: "bad"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		if _, ok, err := req.ElicitResult("x"); err != nil || ok {
			return "answered", err
		}
		return "", NeedInput().Elicit("x", &mcp.ElicitParams{Message: "?", RequestedSchema: bad})
	})
	AddTool(s, &mcp.Tool{Name: "direct"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		_, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "?", RequestedSchema: bad})
		return "", err
	})
	p := newLegacyPeer(t, s, formCaps, answerAll, false)
	_, err := p.callTool("bad", "")
	wantRPCError(t, err, mcp.CodeInternalError, `input request "x"`, "external reference")
	raw, err := p.callTool("direct", "")
	if text, isErr := toolResultText(t, raw); err != nil || !isErr || !strings.Contains(text, "external reference") {
		t.Errorf("direct = %s, %v; want an isError result naming the schema's fault", raw, err)
	}
	p.wantNoContact(t)
	m := newModernPeer(t, s, false)
	_, err = modernCall(t, m, mcp.MethodToolsCall, map[string]any{"_meta": modernMeta(formCaps), "name": "bad"})
	wantRPCError(t, err, mcp.CodeInternalError, `input request "x"`)
}

// TestPointerPath: JSON pointers in the notation of the messages.
func TestPointerPath(t *testing.T) {
	for ptr, want := range map[string]string{
		"":          "",
		"/age":      ".age",
		"/tags/1":   ".tags[1]",
		"/a b":      `["a b"]`,
		"/a~1b/0":   `["a/b"][0]`,
		"/0":        `["0"]`,
		"/first-nm": ".first-nm",
	} {
		if got := pointerPath(ptr); got != want {
			t.Errorf("pointerPath(%q) = %q, want %q", ptr, got, want)
		}
	}
}
