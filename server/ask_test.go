package server

// Tests of Ask, the typed elicitation: the form inferred from a struct,
// and the answer decoded into it, on the 2026-07-28 wire (a raw 2026
// client) and through the legacy shim (a raw 2025-11-25 client).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

type askSignup struct {
	Name  string `json:"name" jsonschema:"title=Name,description=What should we call you?"`
	Plan  string `json:"plan,omitzero" jsonschema:"enum=free|pro,default=free"`
	Seats int    `json:"seats,omitzero" jsonschema:"minimum=1,maximum=100"`
	Email string `json:"email,omitzero" jsonschema:"format=email"`
	Terms bool   `json:"terms"`
}

const askSignupForm = `{"type":"object","properties":{` +
	`"name":{"type":"string","title":"Name","description":"What should we call you?"},` +
	`"plan":{"type":"string","enum":["free","pro"],"default":"free"},` +
	`"seats":{"type":"integer","minimum":1,"maximum":100},` +
	`"email":{"type":"string","format":"email"},` +
	`"terms":{"type":"boolean"}},"required":["name","terms"]}`

type askNested struct {
	Name    string `json:"name"`
	Address struct {
		City string `json:"city"`
	} `json:"address"`
}

func TestFormFor(t *testing.T) {
	form, err := FormFor[askSignup]()
	if err != nil {
		t.Fatal(err)
	}
	if string(form) != askSignupForm {
		t.Errorf("form\n%s, want\n%s", form, askSignupForm)
	}
	if p, _ := FormFor[*askSignup](); string(p) != askSignupForm {
		t.Errorf("form of *askSignup %s", p)
	}
	bad := map[string]func() (jsontext.Value, error){
		`field "address"`: FormFor[askNested],
		`field "tags"`: FormFor[struct {
			Tags []string `json:"tags"`
		}],
		`field "m"`: FormFor[struct {
			M map[string]int `json:"m"`
		}],
		`not a struct`: FormFor[string],
		`keyword "pattern"`: FormFor[struct {
			S string `json:"s" jsonschema:"pattern=^a"`
		}],
		`keyword "enum"`: FormFor[struct {
			N int `json:"n" jsonschema:"enum=1|2"`
		}],
		`format "ipv4"`: FormFor[struct {
			S string `json:"s" jsonschema:"format=ipv4"`
		}],
		`no single type`: FormFor[struct {
			A any `json:"a"`
		}],
		`field "next"`: FormFor[askRec],
		`keyword "exclusiveMinimum"`: FormFor[struct {
			N float64 `json:"n" jsonschema:"exclusiveMinimum=0"`
		}],
		`cannot be an elicitation fo`: FormFor[struct{ C chan int }],
	}
	for want, f := range bad {
		if _, err := f(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want one containing %q", err, want)
		}
	}
}

type askRec struct {
	Name string  `json:"name"`
	Next *askRec `json:"next,omitzero"`
}

// addAsk registers "signup" (Ask[askSignup]) and "nested" (Ask[askNested]);
// signup reports a declined or canceled form as text, telling them apart
// with errors.Is.
func addAsk(s *Server) {
	s.AddRawTool(&mcp.Tool{Name: "signup"}, func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
		v, err := Ask[askSignup](req.Request, "signup", "Please sign up")
		var ee *ElicitationError
		switch {
		case errors.Is(err, ErrDeclined) && errors.As(err, &ee):
			return textResult("declined " + ee.Key), nil
		case errors.Is(err, ErrCanceled):
			return textResult("canceled"), nil
		case err != nil:
			return nil, err
		}
		return textResult(fmt.Sprintf("%+v", v)), nil
	})
	s.AddRawTool(&mcp.Tool{Name: "nested"}, func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
		if _, err := Ask[askNested](req.Request, "n", "Where?"); err != nil {
			return nil, err
		}
		return textResult("unreachable"), nil
	})
}

var askAnswers = map[string]jsontext.Value{
	"accept":  jsontext.Value(`{"action":"accept","content":{"name":"Ada","seats":3,"terms":true,"extra":"ignored"}}`),
	"decline": jsontext.Value(`{"action":"decline"}`),
	"cancel":  jsontext.Value(`{"action":"cancel"}`),
	"bad":     jsontext.Value(`{"action":"accept","content":{"name":"Ada","seats":0,"terms":true}}`),
}

const askAccepted = "{Name:Ada Plan: Seats:3 Email: Terms:true}"

func TestAskModern(t *testing.T) {
	leakCheck(t)
	s := New(nil)
	addAsk(s)
	p := newModernPeer(t, s, true)
	call := func(extra map[string]any) (jsontext.Value, error) {
		params := map[string]any{"_meta": modernMeta(formCaps), "name": "signup"}
		for k, v := range extra {
			params[k] = v
		}
		return modernCall(t, p, mcp.MethodToolsCall, params)
	}
	raw, err := call(nil)
	if err != nil {
		t.Fatal(err)
	}
	ir := inputRequired(t, raw)
	want := mcp.InputRequests{"signup": {Method: mcp.MethodElicitationCreate,
		Params: mustJSON(t, &mcp.ElicitParams{Message: "Please sign up", RequestedSchema: jsontext.Value(askSignupForm)})}}
	if !sameJSON(t, mustJSON(t, ir.InputRequests), mustJSON(t, want)) {
		t.Errorf("inputRequests %s, want %s", mustJSON(t, ir.InputRequests), mustJSON(t, want))
	}
	for answer, wantText := range map[string]string{"accept": askAccepted, "decline": "declined signup", "cancel": "canceled"} {
		raw, err := call(map[string]any{"inputResponses": map[string]any{"signup": askAnswers[answer]}, "requestState": ir.RequestState})
		if err != nil {
			t.Fatalf("%s: %v", answer, err)
		}
		if text, isErr := toolResultText(t, raw); text != wantText || isErr {
			t.Errorf("%s: %q (isError %v), want %q", answer, text, isErr, wantText)
		}
	}
	_, err = call(map[string]any{"inputResponses": map[string]any{"signup": askAnswers["bad"]}, "requestState": ir.RequestState})
	wantRPCError(t, err, mcp.CodeInvalidParams, `inputResponses["signup"].content.seats`)

	_, err = modernCall(t, p, mcp.MethodToolsCall, map[string]any{"_meta": modernMeta(formCaps), "name": "nested"})
	wantRPCError(t, err, mcp.CodeInternalError)
}

func TestAskShim(t *testing.T) {
	leakCheck(t)
	for answer, wantText := range map[string]string{"accept": askAccepted, "decline": "declined signup", "cancel": "canceled"} {
		s := New(nil)
		addAsk(s)
		p := newLegacyPeer(t, s, formCaps, func(_ context.Context, m *jsonrpc.Message) (any, error) {
			return askAnswers[answer], nil
		}, true)
		raw, err := p.callTool("signup", "")
		if err != nil {
			t.Fatalf("%s: %v", answer, err)
		}
		if text, isErr := toolResultText(t, raw); text != wantText || isErr {
			t.Errorf("%s: %q (isError %v), want %q", answer, text, isErr, wantText)
		}
		reqs := p.requests()
		if len(reqs) != 1 || reqs[0].Method != mcp.MethodElicitationCreate ||
			!sameJSON(t, reqs[0].Params, mustJSON(t, &mcp.ElicitParams{Message: "Please sign up", RequestedSchema: jsontext.Value(askSignupForm)})) {
			t.Errorf("%s: the client was asked %v", answer, methodsOf(reqs))
		}
	}

	s := New(nil)
	addAsk(s)
	p := newLegacyPeer(t, s, formCaps, func(context.Context, *jsonrpc.Message) (any, error) { return askAnswers["bad"], nil }, true)
	_, err := p.callTool("signup", "")
	wantRPCError(t, err, mcp.CodeInvalidParams, "content.seats")

	_, err = p.callTool("nested", "")
	wantRPCError(t, err, mcp.CodeInternalError, "askNested", `field "address"`)
}

// TestAskDeclinedAsToolError: a handler that returns the
// *ElicitationError as is gets a tool error naming the form.
func TestAskDeclinedAsToolError(t *testing.T) {
	err := error(&ElicitationError{Key: "signup", Action: mcp.ElicitActionCancel})
	if !errors.Is(err, ErrCanceled) || errors.Is(err, ErrDeclined) {
		t.Errorf("%v: Is(ErrCanceled) %v, Is(ErrDeclined) %v", err, errors.Is(err, ErrCanceled), errors.Is(err, ErrDeclined))
	}
	if got := err.Error(); got != `server: the user canceled the form "signup"` {
		t.Errorf("Error() = %q", got)
	}
}

// TestElicitForm: the typed schema is sent as Elicit would send its
// encoding; one that does not encode is a builder mistake, not a panic.
func TestElicitForm(t *testing.T) {
	schema := mcp.ElicitationSchema{Properties: mcp.SchemaProperties{{Name: "name", Schema: mcp.PrimitiveSchema{Type: "string"}}}, Required: []string{"name"}}
	in := NeedInput().ElicitForm("k", "Name?", schema)
	if err := in.validate(); err != nil {
		t.Fatal(err)
	}
	raw, _ := schema.Raw()
	want := mustJSON(t, &mcp.ElicitParams{Message: "Name?", RequestedSchema: raw})
	if got := in.requests["k"].Params; !sameJSON(t, got, want) {
		t.Errorf("params %s, want %s", got, want)
	}
	if string(in.forms["k"]) != string(raw) {
		t.Errorf("form %s, want %s", in.forms["k"], raw)
	}
	schema.Properties[0].Schema.Default = make(chan int)
	in = NeedInput().ElicitForm("k", "Name?", schema)
	if err := in.validate(); err == nil || !strings.Contains(err.Error(), `input request "k": requestedSchema`) {
		t.Errorf("validate = %v, want the encoding error", err)
	}
}

type askName struct {
	Name string `json:"name"`
}

type askAge struct {
	Age int `json:"age"`
}

// addTwoAsks registers a tool that asks two forms one after the other.
func addTwoAsks(t *testing.T, s *Server) {
	err := s.AddRawTool(&mcp.Tool{Name: "two"}, func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
		n, err := Ask[askName](req.Request, "name", "Your name?")
		if err != nil {
			return nil, err
		}
		a, err := Ask[askAge](req.Request, "age", "Your age?")
		if err != nil {
			return nil, err
		}
		return textResult(fmt.Sprintf("%s is %d", n.Name, a.Age)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

var twoAnswers = map[string]jsontext.Value{
	"name": jsontext.Value(`{"action":"accept","content":{"name":"Ada"}}`),
	"age":  jsontext.Value(`{"action":"accept","content":{"age":36}}`),
}

// TestAskTwiceModern: the second Ask's round keeps the first answer in
// the sealed state, so the third call completes instead of asking the
// first form again.
func TestAskTwiceModern(t *testing.T) {
	leakCheck(t)
	s := New(nil)
	addTwoAsks(t, s)
	p := newModernPeer(t, s, true)
	call := func(answers map[string]any, state string) jsontext.Value {
		t.Helper()
		params := map[string]any{"_meta": modernMeta(formCaps), "name": "two"}
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
	if _, ok := first.InputRequests["name"]; !ok || len(first.InputRequests) != 1 {
		t.Fatalf("first round asked %s", mustJSON(t, first.InputRequests))
	}
	second := inputRequired(t, call(map[string]any{"name": twoAnswers["name"]}, first.RequestState))
	if _, ok := second.InputRequests["age"]; !ok || len(second.InputRequests) != 1 {
		t.Fatalf("second round asked %s", mustJSON(t, second.InputRequests))
	}
	raw := call(map[string]any{"age": twoAnswers["age"]}, second.RequestState)
	if text, isErr := toolResultText(t, raw); text != "Ada is 36" || isErr {
		t.Errorf("third round: %q (isError %v), want %q", text, isErr, "Ada is 36")
	}
	// The kept answer travels sealed: the client cannot read it.
	if strings.Contains(second.RequestState, "Ada") {
		t.Errorf("requestState shows the kept answer: %s", second.RequestState)
	}
}

// TestAskTwiceShim: on a legacy session the shim asks each form once.
func TestAskTwiceShim(t *testing.T) {
	leakCheck(t)
	s := New(nil)
	addTwoAsks(t, s)
	p := newLegacyPeer(t, s, formCaps, func(_ context.Context, m *jsonrpc.Message) (any, error) {
		var params mcp.ElicitParams
		if err := json.Unmarshal(m.Params, &params); err != nil {
			return nil, err
		}
		if params.Message == "Your name?" {
			return twoAnswers["name"], nil
		}
		return twoAnswers["age"], nil
	}, true)
	raw, err := p.callTool("two", "")
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := toolResultText(t, raw); text != "Ada is 36" || isErr {
		t.Errorf("%q (isError %v), want %q", text, isErr, "Ada is 36")
	}
	if reqs := p.requests(); len(reqs) != 2 {
		t.Errorf("the client was asked %d times (%v), want 2", len(reqs), methodsOf(reqs))
	}
}

// TestCapabilitiesAreCopies: what a handler does to the capabilities it
// reads changes nothing the server keeps, in both eras.
func TestCapabilitiesAreCopies(t *testing.T) {
	leakCheck(t)
	const caps = `{"elicitation":{"form":{}},"extensions":{"com.example/x":{"v":1}}}`
	s := New(nil)
	err := s.AddRawTool(&mcp.Tool{Name: "meddle"}, func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
		c := req.ClientCapabilities()
		c.Extensions["com.example/y"] = jsontext.Value(`{}`)
		delete(c.Extensions, "com.example/x")
		c.Elicitation.Form = nil
		c.Elicitation.URL = &struct{}{}
		if ss := req.Session(); ss != nil {
			sc := ss.ClientCapabilities()
			sc.Extensions["com.example/z"] = nil
			sc.Elicitation.URL = &struct{}{}
		}
		_, x := req.ClientExtension("com.example/x")
		_, y := req.ClientExtension("com.example/y")
		again := req.ClientCapabilities()
		return textResult(fmt.Sprintf("x=%v y=%v form=%v url=%v", x, y, again.Elicitation.SupportsForm(), again.Elicitation.SupportsURL())), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	const want = "x=true y=false form=true url=false"
	p := newLegacyPeer(t, s, caps, nil, true)
	for range 2 {
		raw, err := p.callTool("meddle", "")
		if err != nil {
			t.Fatal(err)
		}
		if text, _ := toolResultText(t, raw); text != want {
			t.Errorf("legacy: %s, want %s", text, want)
		}
	}
	mp := newModernPeer(t, s, true)
	raw, err := modernCall(t, mp, mcp.MethodToolsCall, map[string]any{"_meta": modernMeta(caps), "name": "meddle"})
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := toolResultText(t, raw); text != want {
		t.Errorf("modern: %s, want %s", text, want)
	}
}

// TestRequestStateCap: a round whose sealed state would carry more than
// Options.MaxRequestStateBytes (here, a large kept answer) fails with
// -32603 naming the limit; within it, the same exchange completes.
func TestRequestStateCap(t *testing.T) {
	leakCheck(t)
	big := strings.Repeat("x", 4000)
	for _, c := range []struct {
		max  int
		fail bool
	}{{2000, true}, {0, false}} {
		s := New(&Options{MaxRequestStateBytes: c.max})
		addTwoAsks(t, s)
		p := newModernPeer(t, s, true)
		call := func(answers map[string]any, state string) (jsontext.Value, error) {
			params := map[string]any{"_meta": modernMeta(formCaps), "name": "two"}
			if answers != nil {
				params["inputResponses"], params["requestState"] = answers, state
			}
			return modernCall(t, p, mcp.MethodToolsCall, params)
		}
		raw, err := call(nil, "")
		if err != nil {
			t.Fatal(err)
		}
		first := inputRequired(t, raw)
		name := jsontext.Value(`{"action":"accept","content":{"name":"` + big + `"}}`)
		raw, err = call(map[string]any{"name": name}, first.RequestState)
		if c.fail {
			wantRPCError(t, err, mcp.CodeInternalError, "MaxRequestStateBytes (2000)")
			continue
		}
		if err != nil {
			t.Fatalf("max %d: %v", c.max, err)
		}
		second := inputRequired(t, raw)
		raw, err = call(map[string]any{"age": twoAnswers["age"]}, second.RequestState)
		if err != nil {
			t.Fatal(err)
		}
		if text, _ := toolResultText(t, raw); text != big+" is 36" {
			t.Errorf("default cap: %.40q…", text)
		}
	}
}
