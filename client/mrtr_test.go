package client_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// The multi round-trip driver (SEP-2322) against a scripted modern
// server, where every byte of the wire is under the test's control.

const (
	elicitName = `{"method":"elicitation/create","params":{"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"},"plan":{"type":"string","default":"free"}},"required":["name"]}}}`
	elicitURL  = `{"method":"elicitation/create","params":{"mode":"url","message":"Sign in","url":"https://example.com/login","elicitationId":"e1"}}`
	sampleSum  = `{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"2+2?"}}],"maxTokens":10}}`
	listRoots  = `{"method":"roots/list"}`
	doneResult = `{"resultType":"complete","content":[{"type":"text","text":"done"}]}`
)

// inputRequired builds an input_required result from raw members.
func inputRequired(requests map[string]string, order []string, state string) jsontext.Value {
	var b strings.Builder
	b.WriteString(`{"resultType":"input_required"`)
	if len(order) > 0 {
		b.WriteString(`,"inputRequests":{`)
		for i, k := range order {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + k + `":` + requests[k])
		}
		b.WriteByte('}')
	}
	if state != "" {
		b.WriteString(`,"requestState":` + state)
	}
	b.WriteByte('}')
	return jsontext.Value(b.String())
}

// script answers the n-th request of method with answers[n] (the last
// one again past the end); other methods get the modern defaults.
type script struct {
	method  string
	answers []jsontext.Value
	n       atomic.Int32
}

func (s *script) handle(ctx context.Context, msg *jsonrpc.Message) (any, error) {
	if msg.Method != s.method {
		return modernServer(ctx, msg)
	}
	i := int(s.n.Add(1)) - 1
	return s.answers[min(i, len(s.answers)-1)], nil
}

// mrtrParams is what the test reads back from a request's params.
type mrtrParams struct {
	Meta           mcp.Meta                  `json:"_meta"`
	Name           string                    `json:"name"`
	URI            string                    `json:"uri"`
	Arguments      jsontext.Value            `json:"arguments"`
	InputResponses map[string]jsontext.Value `json:"inputResponses"`
	RequestState   jsontext.Value            `json:"requestState"`
}

func paramsOf(t testing.TB, m *jsonrpc.Message) (mrtrParams, map[string]jsontext.Value) {
	t.Helper()
	var p mrtrParams
	var members map[string]jsontext.Value
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("%s params %s: %v", m.Method, m.Params, err)
	}
	if err := json.Unmarshal(m.Params, &members); err != nil {
		t.Fatal(err)
	}
	return p, members
}

// callsOf returns the requests of method the fake received.
func callsOf(f *fakeServer, method string) []*jsonrpc.Message {
	var out []*jsonrpc.Message
	for _, m := range f.requests() {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// answers records the input handlers' calls, in order.
type answers struct {
	mu    sync.Mutex
	calls []string
}

func (a *answers) note(s string) {
	a.mu.Lock()
	a.calls = append(a.calls, s)
	a.mu.Unlock()
}

func (a *answers) got() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.calls)
}

func (a *answers) options() client.Options {
	return client.Options{
		ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			a.note("elicit:" + p.Message)
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
		ElicitationDefaults: true,
		CreateMessageHandler: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			a.note("sample")
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "4"}), Model: "m"}, nil
		},
		ListRootsHandler: func(ctx context.Context) (*mcp.ListRootsResult, error) {
			a.note("roots")
			return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///w"}}}, nil
		},
	}
}

// TestMRTRDriver: one round with every kind: the handlers answer in the
// server's order, and the retry is a new request with the same params
// and _meta, every answer under its key, and the requestState token
// byte for byte.
func TestMRTRDriver(t *testing.T) {
	// An escaped state: re-encoding it would change its bytes.
	const state = `"s\/1\u00e9\"x"`
	reqs := map[string]string{"who": elicitName, "sum": sampleSum, "roots": listRoots}
	s := &script{method: mcp.MethodToolsCall, answers: []jsontext.Value{
		inputRequired(reqs, []string{"who", "sum", "roots"}, state),
		jsontext.Value(doneResult),
	}}
	tr, f := startFake(t, s.handle)
	var a answers
	opts := a.options()
	opts.ProtocolVersion = mcp.Version20260728
	opts.Observe = modernWire(t)
	c := connect(t, tr, &opts)

	callerMeta := mcp.Meta{"com.example/trace": "abc"}
	p := &mcp.CallToolParams{Meta: callerMeta, Name: "t", Arguments: jsontext.Value(`{"x":1}`)}
	ctx := client.WithProgress(testCtx(t), func(*mcp.ProgressParams) {})
	res, err := c.CallTool(ctx, p)
	if err != nil || text(res) != "done" {
		t.Fatalf("CallTool = %+v, %v", res, err)
	}
	if got := a.got(); !slices.Equal(got, []string{"elicit:Name?", "sample", "roots"}) {
		t.Errorf("handlers ran %v, want the server's order", got)
	}
	if p.InputResponses != nil || p.RequestState != "" || len(p.Meta) != 1 {
		t.Errorf("the caller's params changed: %+v", p)
	}
	calls := callsOf(f, mcp.MethodToolsCall)
	if len(calls) != 2 {
		t.Fatalf("%d tools/call requests, want 2", len(calls))
	}
	first, _ := paramsOf(t, calls[0])
	retry, members := paramsOf(t, calls[1])
	if calls[0].ID == calls[1].ID {
		t.Errorf("the retry reused the id %v", calls[0].ID)
	}
	if _, ok := first.Meta.ProgressToken(); !ok {
		t.Fatal("no progress token on the first leg")
	}
	if metaRaw(first.Meta, mcp.MetaKeyProgressToken) != metaRaw(retry.Meta, mcp.MetaKeyProgressToken) || metaRaw(retry.Meta, "com.example/trace") != `"abc"` {
		t.Errorf("the retry's _meta %v lost the caller's keys (first %v)", retry.Meta, first.Meta)
	}
	if metaRaw(retry.Meta, mcp.MetaKeyProtocolVersion) != `"`+mcp.Version20260728+`"` || retry.Meta[mcp.MetaKeyClientCapabilities] == nil || retry.Meta[mcp.MetaKeyClientInfo] == nil {
		t.Errorf("the retry has no envelope: %v", retry.Meta)
	}
	if retry.Name != "t" || string(retry.Arguments) != `{"x":1}` {
		t.Errorf("the retry changed the params: %s", calls[1].Params)
	}
	if string(retry.RequestState) != state {
		t.Errorf("requestState %s, want the server's bytes %s", retry.RequestState, state)
	}
	if !strings.Contains(string(calls[1].Params), `"requestState":`+state) {
		t.Errorf("the retry's params %s do not carry the state verbatim", calls[1].Params)
	}
	var keys []string
	for k := range retry.InputResponses {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"roots", "sum", "who"}) {
		t.Errorf("inputResponses keys %v", keys)
	}
	// SEP-1034: the accepted form gets the schema's default.
	if !sameJSON(t, retry.InputResponses["who"], `{"action":"accept","content":{"name":"Ada","plan":"free"}}`) {
		t.Errorf("who = %s", retry.InputResponses["who"])
	}
	if !sameJSON(t, retry.InputResponses["roots"], `{"roots":[{"uri":"file:///w"}]}`) {
		t.Errorf("roots = %s", retry.InputResponses["roots"])
	}
	if !sameJSON(t, retry.InputResponses["sum"], `{"role":"assistant","content":{"type":"text","text":"4"},"model":"m"}`) {
		t.Errorf("sum = %s", retry.InputResponses["sum"])
	}
	for k := range members {
		if !slices.Contains([]string{"_meta", "name", "arguments", "inputResponses", "requestState"}, k) {
			t.Errorf("the retry has a member %q", k)
		}
	}

	// A later call carries nothing of that exchange.
	if _, err := c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	calls = callsOf(f, mcp.MethodToolsCall)
	if _, members := paramsOf(t, calls[2]); members["inputResponses"] != nil || members["requestState"] != nil {
		t.Errorf("an unrelated call carries MRTR members: %s", calls[2].Params)
	}
}

// TestMRTRRounds: each retry carries only its round's answers, and the
// requestState of the latest result: none when it had none, even if an
// earlier round had one.
func TestMRTRRounds(t *testing.T) {
	reqs := map[string]string{"a": elicitName, "b": sampleSum, "c": listRoots}
	s := &script{method: mcp.MethodPromptsGet, answers: []jsontext.Value{
		inputRequired(reqs, []string{"a"}, `"s1"`),
		inputRequired(reqs, []string{"b"}, ""),
		inputRequired(reqs, []string{"c"}, `"s3"`),
		jsontext.Value(`{"resultType":"complete","messages":[]}`),
	}}
	tr, f := startFake(t, s.handle)
	var a answers
	opts := a.options()
	opts.ProtocolVersion = mcp.Version20260728
	opts.Observe = modernWire(t)
	c := connect(t, tr, &opts)
	if _, err := c.GetPrompt(testCtx(t), &mcp.GetPromptParams{Name: "p", Arguments: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	calls := callsOf(f, mcp.MethodPromptsGet)
	if len(calls) != 4 {
		t.Fatalf("%d prompts/get requests, want 4", len(calls))
	}
	want := []struct {
		keys  string
		state string
	}{{"", ""}, {"a", `"s1"`}, {"b", ""}, {"c", `"s3"`}}
	ids := map[string]bool{}
	for i, m := range calls {
		p, members := paramsOf(t, m)
		var keys []string
		for k := range p.InputResponses {
			keys = append(keys, k)
		}
		if strings.Join(keys, ",") != want[i].keys || string(p.RequestState) != want[i].state {
			t.Errorf("leg %d: inputResponses %v, requestState %s; want %q, %s", i, keys, p.RequestState, want[i].keys, want[i].state)
		}
		if _, has := members["requestState"]; has != (want[i].state != "") {
			t.Errorf("leg %d: requestState member present=%v", i, has)
		}
		if _, has := members["inputResponses"]; has != (want[i].keys != "") {
			t.Errorf("leg %d: inputResponses member present=%v", i, has)
		}
		if p.Name != "p" || !sameJSON(t, members["arguments"], `{"k":"v"}`) {
			t.Errorf("leg %d changed the params: %s", i, m.Params)
		}
		ids[m.ID.String()] = true
	}
	if len(ids) != 4 {
		t.Errorf("ids %v, want 4 different", ids)
	}
}

// TestMRTRLoadShedding: a result with a requestState and no input
// requests is retried after 50 ms, then 100 ms; the wait honours the
// context.
func TestMRTRLoadShedding(t *testing.T) {
	var mu sync.Mutex
	var at []time.Time
	s := &script{method: mcp.MethodResourcesRead, answers: []jsontext.Value{
		inputRequired(nil, nil, `"busy-1"`),
		inputRequired(nil, nil, `"busy-2"`),
		jsontext.Value(`{"resultType":"complete","contents":[{"uri":"x://a","text":"a"}],"ttlMs":60000,"cacheScope":"private"}`),
	}}
	tr, f := startFake(t, func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
		if msg.Method == mcp.MethodResourcesRead {
			mu.Lock()
			at = append(at, time.Now())
			mu.Unlock()
		}
		return s.handle(ctx, msg)
	})
	c := connect(t, tr, &client.Options{
		ProtocolVersion:  mcp.Version20260728,
		Observe:          modernWire(t),
		ListRootsHandler: func(context.Context) (*mcp.ListRootsResult, error) { return &mcp.ListRootsResult{}, nil },
	})
	res, err := c.ReadResource(testCtx(t), &mcp.ReadResourceParams{URI: "x://a"})
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("ReadResource = %+v, %v", res, err)
	}
	calls := callsOf(f, mcp.MethodResourcesRead)
	if len(calls) != 3 {
		t.Fatalf("%d attempts, want 3", len(calls))
	}
	for i, want := range []string{"", `"busy-1"`, `"busy-2"`} {
		p, members := paramsOf(t, calls[i])
		if string(p.RequestState) != want || members["inputResponses"] != nil || p.URI != "x://a" {
			t.Errorf("attempt %d: %s", i, calls[i].Params)
		}
	}
	mu.Lock()
	if d := at[1].Sub(at[0]); d < 50*time.Millisecond {
		t.Errorf("first pause %v, want ≥ 50ms", d)
	}
	if d := at[2].Sub(at[1]); d < 100*time.Millisecond {
		t.Errorf("second pause %v, want ≥ 100ms", d)
	}
	mu.Unlock()
	// The answer to a retry is never cached: the next read asks again.
	if _, err := c.ReadResource(testCtx(t), &mcp.ReadResourceParams{URI: "x://a"}); err != nil {
		t.Fatal(err)
	}
	if n := len(callsOf(f, mcp.MethodResourcesRead)); n != 4 {
		t.Errorf("%d reads after the second ReadResource, want 4 (a retry's answer is not cached)", n)
	}
	// ... while a first answer is: the fourth read (complete at once, a
	// ttl of a minute) serves the fifth.
	if _, err := c.ReadResource(testCtx(t), &mcp.ReadResourceParams{URI: "x://a"}); err != nil {
		t.Fatal(err)
	}
	if n := len(callsOf(f, mcp.MethodResourcesRead)); n != 4 {
		t.Errorf("%d reads, want 4 (a complete first answer is cached)", n)
	}

	// A server that never stops shedding: the context ends the wait.
	s2 := &script{method: mcp.MethodToolsCall, answers: []jsontext.Value{inputRequired(nil, nil, `"busy"`)}}
	tr2, _ := startFake(t, s2.handle)
	c2 := connect(t, tr2, &client.Options{
		ProtocolVersion:  mcp.Version20260728,
		ListRootsHandler: func(context.Context) (*mcp.ListRootsResult, error) { return &mcp.ListRootsResult{}, nil },
	})
	ctx, cancel := context.WithTimeout(testCtx(t), 120*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := c2.CallTool(ctx, &mcp.CallToolParams{Name: "t"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want the context's deadline", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the call took %v after its context ended", d)
	}
}

// TestMRTRRoundCap: past Options.MaxInputRounds retries the call fails
// with an *InputRequiredError naming the cap; the default is 10.
func TestMRTRRoundCap(t *testing.T) {
	for _, tc := range []struct {
		max, retries int
	}{{3, 3}, {0, client.DefaultMaxInputRounds}} {
		reqs := map[string]string{"again": listRoots}
		s := &script{method: mcp.MethodToolsCall, answers: []jsontext.Value{inputRequired(reqs, []string{"again"}, `"st"`)}}
		tr, f := startFake(t, s.handle)
		var a answers
		opts := a.options()
		opts.ProtocolVersion = mcp.Version20260728
		opts.MaxInputRounds = tc.max
		c := connect(t, tr, &opts)
		_, err := c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "t"})
		var ir *client.InputRequiredError
		if !errors.As(err, &ir) || !errors.Is(err, client.ErrTooManyInputRounds) {
			t.Fatalf("max %d: err %v, want an *InputRequiredError wrapping ErrTooManyInputRounds", tc.max, err)
		}
		if ir.Rounds != tc.retries || ir.Result.RequestState != "st" || len(ir.Result.InputRequests) != 1 || ir.Raw == nil {
			t.Errorf("max %d: %+v", tc.max, ir)
		}
		if !strings.Contains(err.Error(), "MaxInputRounds") {
			t.Errorf("the error %q does not name the cap", err)
		}
		if n := len(callsOf(f, mcp.MethodToolsCall)); n != tc.retries+1 {
			t.Errorf("max %d: %d requests, want %d", tc.max, n, tc.retries+1)
		}
	}
}

// TestMRTRHandlerError: a handler's error ends the call with that error,
// before the next input request is asked and with nothing sent.
func TestMRTRHandlerError(t *testing.T) {
	reqs := map[string]string{"who": elicitName, "sum": sampleSum}
	s := &script{method: mcp.MethodToolsCall, answers: []jsontext.Value{inputRequired(reqs, []string{"who", "sum"}, `"st"`)}}
	tr, f := startFake(t, s.handle)
	boom := errors.New("the user closed the dialog")
	sampled := false
	c := connect(t, tr, &client.Options{
		ProtocolVersion: mcp.Version20260728,
		ElicitHandler:   func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) { return nil, boom },
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			sampled = true
			return nil, nil
		},
	})
	_, err := c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "t"})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want the handler's", err)
	}
	if sampled {
		t.Error("the sampling handler ran after the elicitation failed")
	}
	if n := len(callsOf(f, mcp.MethodToolsCall)); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// TestMRTRNoHandler: an input request the client cannot answer ends the
// call with an *InputRequiredError naming it; no handler runs and nothing
// is sent.
func TestMRTRNoHandler(t *testing.T) {
	for name, tc := range map[string]struct {
		reqs  map[string]string
		order []string
		key   string
	}{
		"no sampling handler": {map[string]string{"who": elicitName, "sum": sampleSum}, []string{"who", "sum"}, "sum"},
		"URL mode undeclared": {map[string]string{"who": elicitName, "login": elicitURL}, []string{"who", "login"}, "login"},
		"unknown method":      {map[string]string{"who": elicitName, "odd": `{"method":"tools/list"}`}, []string{"who", "odd"}, "odd"},
	} {
		t.Run(name, func(t *testing.T) {
			s := &script{method: mcp.MethodToolsCall, answers: []jsontext.Value{inputRequired(tc.reqs, tc.order, `"st"`)}}
			tr, f := startFake(t, s.handle)
			asked := false
			c := connect(t, tr, &client.Options{
				ProtocolVersion: mcp.Version20260728,
				ElicitHandler: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					asked = true
					return &mcp.ElicitResult{Action: mcp.ElicitActionDecline}, nil
				},
			})
			_, err := c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "t"})
			var ir *client.InputRequiredError
			if !errors.As(err, &ir) || !errors.Is(err, client.ErrNoInputHandler) {
				t.Fatalf("err %v, want an *InputRequiredError wrapping ErrNoInputHandler", err)
			}
			if ir.Key != tc.key || !strings.Contains(err.Error(), `"`+tc.key+`"`) || ir.Result.RequestState != "st" || ir.Method != mcp.MethodToolsCall {
				t.Errorf("%+v: %v", ir, err)
			}
			if asked {
				t.Error("the elicitation handler ran although the round could not be answered")
			}
			if n := len(callsOf(f, mcp.MethodToolsCall)); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

// TestMRTRManual: with ManualInput (or no handler at all) the call
// returns the *InputRequiredError; the caller's retry sends
// inputResponses and requestState as top-level params members.
func TestMRTRManual(t *testing.T) {
	for name, opts := range map[string]client.Options{
		"ManualInput": {ManualInput: true, ElicitHandler: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			t.Error("the handler ran on the manual path")
			return nil, errors.New("no")
		}},
		"no handler": {},
	} {
		t.Run(name, func(t *testing.T) {
			reqs := map[string]string{"who": elicitName}
			s := &script{method: mcp.MethodToolsCall, answers: []jsontext.Value{
				inputRequired(reqs, []string{"who"}, `"opaque"`),
				jsontext.Value(doneResult),
			}}
			tr, f := startFake(t, s.handle)
			opts.ProtocolVersion = mcp.Version20260728
			opts.Observe = modernWire(t)
			c := connect(t, tr, &opts)
			p := &mcp.CallToolParams{Name: "t", Arguments: jsontext.Value(`{}`)}
			_, err := c.CallTool(testCtx(t), p)
			var ir *client.InputRequiredError
			if !errors.As(err, &ir) || errors.Unwrap(err) != nil {
				t.Fatalf("err %v, want a bare *InputRequiredError", err)
			}
			if ir.Result.RequestState != "opaque" || ir.Result.InputRequests["who"].Method != mcp.MethodElicitationCreate || !strings.Contains(string(ir.Raw), `"opaque"`) {
				t.Errorf("%+v", ir)
			}
			var responses mcp.InputResponses
			if err := responses.Set("who", &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Bo"}}); err != nil {
				t.Fatal(err)
			}
			retry := *p
			retry.InputResponses, retry.RequestState = responses, ir.Result.RequestState
			res, err := c.CallTool(testCtx(t), &retry)
			if err != nil || text(res) != "done" {
				t.Fatalf("retry = %+v, %v", res, err)
			}
			calls := callsOf(f, mcp.MethodToolsCall)
			if len(calls) != 2 {
				t.Fatalf("%d requests, want 2", len(calls))
			}
			got, members := paramsOf(t, calls[1])
			if string(got.RequestState) != `"opaque"` || !sameJSON(t, got.InputResponses["who"], `{"action":"accept","content":{"name":"Bo"}}`) {
				t.Errorf("manual retry params %s", calls[1].Params)
			}
			if _, ok := got.Meta["inputResponses"]; ok || members["_meta"] == nil {
				t.Errorf("manual retry params %s", calls[1].Params)
			}
		})
	}
}

// TestMRTRAfterManualRetry: a caller's own retry that the server answers
// with another round is driven on; the caller's answers and state are
// not sent again.
func TestMRTRAfterManualRetry(t *testing.T) {
	reqs := map[string]string{"sum": sampleSum}
	s := &script{method: mcp.MethodToolsCall, answers: []jsontext.Value{
		inputRequired(reqs, []string{"sum"}, ""),
		jsontext.Value(doneResult),
	}}
	tr, f := startFake(t, s.handle)
	var a answers
	opts := a.options()
	opts.ProtocolVersion = mcp.Version20260728
	opts.Observe = modernWire(t)
	c := connect(t, tr, &opts)
	mine := mcp.InputResponses{"who": jsontext.Value(`{"action":"decline"}`)}
	if _, err := c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "t", InputResponses: mine, RequestState: "s0"}); err != nil {
		t.Fatal(err)
	}
	calls := callsOf(f, mcp.MethodToolsCall)
	first, _ := paramsOf(t, calls[0])
	second, members := paramsOf(t, calls[1])
	if string(first.RequestState) != `"s0"` || first.InputResponses["who"] == nil {
		t.Errorf("the caller's retry %s", calls[0].Params)
	}
	if members["requestState"] != nil || second.InputResponses["who"] != nil || second.InputResponses["sum"] == nil {
		t.Errorf("the driver's retry %s", calls[1].Params)
	}
}

// TestMRTRLegTimeout: Options.CallTimeout bounds each request, not the
// time a person takes to answer between them.
func TestMRTRLegTimeout(t *testing.T) {
	reqs := map[string]string{"who": elicitName}
	s := &script{method: mcp.MethodToolsCall, answers: []jsontext.Value{inputRequired(reqs, []string{"who"}, ""), jsontext.Value(doneResult)}}
	tr, _ := startFake(t, s.handle)
	c := connect(t, tr, &client.Options{
		ProtocolVersion: mcp.Version20260728,
		CallTimeout:     100 * time.Millisecond,
		ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			time.Sleep(250 * time.Millisecond)
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "slow"}}, ctx.Err()
		},
	})
	if _, err := c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "t"}); err != nil {
		t.Fatalf("CallTool: %v", err)
	}
}

// TestMRTRInvalid: an input_required result with neither input requests
// nor a state is an error, not a loop.
func TestMRTRInvalid(t *testing.T) {
	s := &script{method: mcp.MethodToolsCall, answers: []jsontext.Value{jsontext.Value(`{"resultType":"input_required"}`)}}
	tr, f := startFake(t, s.handle)
	var a answers
	opts := a.options()
	opts.ProtocolVersion = mcp.Version20260728
	c := connect(t, tr, &opts)
	_, err := c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "t"})
	if err == nil || !strings.Contains(err.Error(), "neither") {
		t.Errorf("err %v", err)
	}
	if n := len(callsOf(f, mcp.MethodToolsCall)); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// metaRaw returns the raw JSON of a decoded _meta member.
func metaRaw(m mcp.Meta, key string) string {
	v, _ := m[key].(jsontext.Value)
	return string(v)
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
