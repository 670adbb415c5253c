package e2e

// Multi Round-Trip Requests (SEP-2322) end to end: one handler, written
// once with server.NeedInput, completes an elicitation round trip for a
// legacy client over Streamable HTTP (the server's legacy shim asks on the
// request's stream), a legacy client over stdio (newline-delimited JSON
// over pipes), and a modern (2026-07-28) request over HTTP retried by
// hand; then the client's driver (C1–C6) against the real server in
// memory, over a stdio child and over Streamable HTTP: one and several
// kinds per round, several rounds, load shedding, the round cap, handler
// errors, undeclared kinds, the manual path, and one Elicitation handler
// serving both eras.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/streamhttp"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/command"
	"github.com/mcpkit/mcpkit/transport/stdio"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

type mrtrGreetIn struct {
	Greeting string `json:"greeting"`
}

// mrtrServer serves "mrtr_greet": it asks who is there (keeping the
// greeting in its requestState), then greets them. runs counts its runs.
func mrtrServer(runs *atomic.Int32) *server.Server {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "mrtr", Version: "1.0.0"}})
	server.AddTool(s, &mcp.Tool{Name: "mrtr_greet", Description: "Greets whoever is there"}, func(ctx context.Context, req *server.CallToolRequest, in mrtrGreetIn) (string, error) {
		runs.Add(1)
		who, ok, err := req.ElicitResult("who")
		if err != nil {
			return "", err
		}
		if !ok {
			return "", server.NeedInput().
				Elicit("who", &mcp.ElicitParams{Message: "Who is there?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}).
				State("greeting=" + in.Greeting)
		}
		if who.Action != mcp.ElicitActionAccept {
			return "nobody", nil
		}
		return fmt.Sprintf("%s, %v! [%s]", in.Greeting, who.Content["name"], req.RequestState()), nil
	})
	addMRTRTools(s)
	return s
}

// The input requests of the driver tests.
var (
	askName = &mcp.ElicitParams{Message: "Your name?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"},"plan":{"type":"string","default":"free"}},"required":["name"]}`)}
	askSum  = &mcp.CreateMessageParams{
		Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "2+2?"})}},
		MaxTokens: 10,
	}
)

// addMRTRTools adds what the driver tests call:
//
//   - mrtr_multi: an elicitation, a sampling and a roots request in one
//     round;
//   - mrtr_rounds: one question per round for two rounds, the first
//     answer kept in the requestState;
//   - mrtr_shed: a requestState and no question, twice (load shedding);
//   - mrtr_forever: asks again every time (the round cap);
//   - mrtr_fail: asks a question the client's handler refuses to answer;
//   - mrtr_plain: asks nothing;
//   - prompt mrtr_prompt and resource mrtr://secret: one question each.
func addMRTRTools(s *server.Server) {
	server.AddTool(s, &mcp.Tool{Name: "mrtr_multi"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
		who, ok1, err := req.ElicitResult("who")
		if err != nil {
			return "", err
		}
		sum, ok2, err := req.CreateMessageResult("sum")
		if err != nil {
			return "", err
		}
		roots, ok3, err := req.ListRootsResult("roots")
		if err != nil {
			return "", err
		}
		if !ok1 || !ok2 || !ok3 {
			return "", server.NeedInput().Elicit("who", askName).CreateMessage("sum", askSum).ListRoots("roots")
		}
		return fmt.Sprintf("%v (%v) / %s / %s", who.Content["name"], who.Content["plan"], sampled(sum), rootURIs(roots)), nil
	})
	server.AddTool(s, &mcp.Tool{Name: "mrtr_rounds"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
		// Earlier answers are kept: the last question is checked first.
		if second, ok, err := req.ElicitResult("second"); err != nil {
			return "", err
		} else if ok {
			return fmt.Sprintf("%s then %v", req.RequestState(), second.Content["name"]), nil
		}
		if first, ok, err := req.ElicitResult("first"); err != nil {
			return "", err
		} else if ok {
			return "", server.NeedInput().Elicit("second", &mcp.ElicitParams{Message: "Second name?", RequestedSchema: askName.RequestedSchema}).
				State(fmt.Sprint(first.Content["name"]))
		}
		return "", server.NeedInput().Elicit("first", &mcp.ElicitParams{Message: "First name?", RequestedSchema: askName.RequestedSchema})
	})
	server.AddTool(s, &mcp.Tool{Name: "mrtr_shed"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
		switch req.RequestState() {
		case "":
			return "", server.NeedInput().State("busy 1")
		case "busy 1":
			return "", server.NeedInput().State("busy 2")
		}
		return "served after " + req.RequestState(), nil
	})
	server.AddTool(s, &mcp.Tool{Name: "mrtr_forever"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
		return "", server.NeedInput().ListRoots("again")
	})
	server.AddTool(s, &mcp.Tool{Name: "mrtr_fail"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
		if _, ok, err := req.ElicitResult("refused"); err != nil || ok {
			return "answered", err
		}
		return "", server.NeedInput().Elicit("refused", &mcp.ElicitParams{Message: "refuse me", RequestedSchema: askName.RequestedSchema})
	})
	server.AddTool(s, &mcp.Tool{Name: "mrtr_plain"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
		return "plain", nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "mrtr_prompt"}, func(ctx context.Context, req *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
		who, ok, err := req.ElicitResult("who")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, server.NeedInput().Elicit("who", askName)
		}
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: fmt.Sprintf("for %v", who.Content["name"])}}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "mrtr://secret", Name: "secret"}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		sum, ok, err := req.CreateMessageResult("sum")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, server.NeedInput().CreateMessage("sum", askSum)
		}
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: "secret " + sampled(sum)}}}, nil
	})
}

func sampled(r *mcp.CreateMessageResult) string {
	for _, b := range r.Content.Blocks {
		if tc, ok := b.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

func rootURIs(r *mcp.ListRootsResult) string {
	uris := make([]string, len(r.Roots))
	for i, root := range r.Roots {
		uris[i] = root.URI
	}
	return strings.Join(uris, ",")
}

const mrtrWant = "Hello, Ada! [greeting=Hello]"

// mrtrAnswer is the client's elicitation handler, the same in every era;
// it reports each question on asked.
func mrtrAnswer(asked chan<- *mcp.ElicitParams) client.ElicitHandler {
	return func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		select {
		case asked <- p:
		default:
		}
		return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
	}
}

func mrtrCall(t *testing.T, c *client.Client) {
	t.Helper()
	res, err := c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "mrtr_greet", Arguments: jsontext.Value(`{"greeting":"Hello"}`)})
	if err != nil {
		t.Fatalf("tools/call mrtr_greet: %v", err)
	}
	if res.IsError || text(res) != mrtrWant {
		t.Errorf("mrtr_greet = %q (isError %v), want %q", text(res), res.IsError, mrtrWant)
	}
}

func wantAsked(t *testing.T, asked <-chan *mcp.ElicitParams) {
	t.Helper()
	p := recv(t, asked, "the elicitation")
	if p.Message != "Who is there?" || p.EffectiveMode() != mcp.ElicitModeForm {
		t.Errorf("the client was asked %+v", p)
	}
	select {
	case p := <-asked:
		t.Errorf("the client was asked twice (%+v)", p)
	default:
	}
}

// serveHTTP serves s over a loopback Streamable HTTP endpoint until the
// test ends.
func serveHTTP(t *testing.T, s *server.Server) string {
	t.Helper()
	h := streamhttp.NewHandler(s, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Handler.Close: %v", err)
		}
		ts.Close()
	})
	return ts.URL
}

func TestMRTRSameHandler(t *testing.T) {
	t.Parallel()

	t.Run("legacy client over Streamable HTTP", func(t *testing.T) {
		t.Parallel()
		var runs atomic.Int32
		url := serveHTTP(t, mrtrServer(&runs))
		asked := make(chan *mcp.ElicitParams, 2)
		w := newWire(t, mcp.LatestLegacy)
		c, err := client.Connect(testCtx(t), streamable.New(url, nil), &client.Options{
			ProtocolVersion: mcp.LatestLegacy,
			Observe:         w.clientSide,
			ElicitHandler:   mrtrAnswer(asked),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		mrtrCall(t, c)
		wantAsked(t, asked)
		if n := runs.Load(); n != 2 {
			t.Errorf("the handler ran %d times, want 2", n)
		}
		// Nothing of the 2026 wire reached the legacy client.
		for _, m := range w.messages(wirecheck.ServerToClient) {
			if strings.Contains(string(m), "input_required") || strings.Contains(string(m), "requestState") {
				t.Errorf("the legacy client read %s", m)
			}
		}
	})

	t.Run("legacy client over stdio", func(t *testing.T) {
		t.Parallel()
		var runs atomic.Int32
		s := mrtrServer(&runs)
		toServer, fromClient, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		toClient, fromServer, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		ss := s.Connect(stdio.NewConn(toServer, fromServer, nil))
		t.Cleanup(func() { ss.Close() })
		asked := make(chan *mcp.ElicitParams, 2)
		w := newWire(t, mcp.LatestLegacy)
		c, err := client.Connect(testCtx(t), stdio.NewConn(toClient, fromClient, nil), &client.Options{
			ProtocolVersion: mcp.LatestLegacy,
			Observe:         w.clientSide,
			ElicitHandler:   mrtrAnswer(asked),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		mrtrCall(t, c)
		wantAsked(t, asked)
		if n := runs.Load(); n != 2 {
			t.Errorf("the handler ran %d times, want 2", n)
		}
	})

	t.Run("modern request over HTTP, retried by the client", func(t *testing.T) {
		t.Parallel()
		var runs atomic.Int32
		url := serveHTTP(t, mrtrServer(&runs))
		wc := wirecheck.For(t, mcp.Version20260728)
		asked := make(chan *mcp.ElicitParams, 2)
		answer := mrtrAnswer(asked)
		params := map[string]any{
			"_meta": map[string]any{
				mcp.MetaKeyProtocolVersion:    mcp.Version20260728,
				mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
				mcp.MetaKeyClientInfo:         map[string]any{"name": "raw-modern", "version": "1"},
			},
			"name":      "mrtr_greet",
			"arguments": map[string]any{"greeting": "Hello"},
		}
		var id atomic.Int64
		hc := &http.Client{Transport: &http.Transport{}}
		defer hc.CloseIdleConnections()
		post := func(params map[string]any) jsontext.Value {
			t.Helper()
			body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id.Add(1), "method": mcp.MethodToolsCall, "params": params})
			if err != nil {
				t.Fatal(err)
			}
			if err := wc.Check(body); err != nil {
				t.Errorf("request does not conform: %v\n%s", err, body)
			}
			req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, url, strings.NewReader(string(body)))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", mcp.Version20260728)
			req.Header.Set("Mcp-Method", mcp.MethodToolsCall)
			req.Header.Set("Mcp-Name", "mrtr_greet")
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d, %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), data)
			}
			if err := wc.CheckResult(mcp.MethodToolsCall, data); err != nil {
				t.Errorf("answer does not conform: %v\n%s", err, data)
			}
			var m struct {
				Result jsontext.Value `json:"result"`
				Error  jsontext.Value `json:"error"`
			}
			if err := json.Unmarshal(data, &m); err != nil || m.Error != nil {
				t.Fatalf("answer %s (%v)", data, err)
			}
			return m.Result
		}

		// Round 1: input required, nothing asked of the client yet.
		raw := post(params)
		var ir mcp.InputRequiredResult
		if err := json.Unmarshal(raw, &ir); err != nil || ir.ResultType != mcp.ResultInputRequired || ir.RequestState == "" {
			t.Fatalf("round 1 = %s (%v), want input_required with a requestState", raw, err)
		}
		if strings.Contains(ir.RequestState, "greeting") {
			t.Errorf("the requestState %q shows the handler's state: it must be sealed", ir.RequestState)
		}
		// The client answers with the same handler as on a legacy session.
		responses := mcp.InputResponses{}
		for key, r := range ir.InputRequests {
			if r.Method != mcp.MethodElicitationCreate {
				t.Fatalf("input request %q: %s", key, r.Method)
			}
			var p mcp.ElicitParams
			if err := r.DecodeParams(&p); err != nil {
				t.Fatal(err)
			}
			res, err := answer(testCtx(t), &p)
			if err != nil {
				t.Fatal(err)
			}
			if err := responses.Set(key, res); err != nil {
				t.Fatal(err)
			}
		}
		// Round 2: a new id, the same params, the answers and the state
		// byte for byte.
		params["inputResponses"] = responses
		params["requestState"] = ir.RequestState
		raw = post(params)
		var res mcp.CallToolResult
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatal(err)
		}
		if res.ResultType != mcp.ResultComplete || res.IsError || text(&res) != mrtrWant {
			t.Errorf("round 2 = %s, want %q", raw, mrtrWant)
		}
		wantAsked(t, asked)
		if n := runs.Load(); n != 2 {
			t.Errorf("the handler ran %d times, want 2", n)
		}
	})
}

// mrtrCarriers are the carriers of the driver tests; the stdio child
// serves mrtrServer.
func mrtrCarriers() []carrier {
	out := slices.Clone(carriers)
	for i := range out {
		if out[i].child {
			out[i].dial = func(t testing.TB, _ *server.Server) transport.Conn {
				return startChildWith(t, command.Options{}, childMRTREnv+"=1")
			}
		}
	}
	return out
}

// wireLeg is one request the client sent and the server's answer.
type wireLeg struct {
	id     string
	params map[string]jsontext.Value
	result map[string]jsontext.Value // nil: an error
}

// legsOf returns, in order, the requests of method for target (the name
// or URI in the params) that w saw, each with its answer.
func legsOf(t testing.TB, w *wire, method, target string) []wireLeg {
	t.Helper()
	type envelope struct {
		ID     jsontext.Value            `json:"id"`
		Method string                    `json:"method"`
		Params map[string]jsontext.Value `json:"params"`
		Result map[string]jsontext.Value `json:"result"`
	}
	results := map[string]map[string]jsontext.Value{}
	for _, m := range w.messages(wirecheck.ServerToClient) {
		var e envelope
		if json.Unmarshal(m, &e) == nil && e.Method == "" && e.ID != nil {
			results[string(e.ID)] = e.Result
		}
	}
	var out []wireLeg
	for _, m := range w.messages(wirecheck.ClientToServer) {
		var e envelope
		if err := json.Unmarshal(m, &e); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if e.Method != method {
			continue
		}
		var name string
		for _, k := range []string{"name", "uri"} {
			if v, ok := e.Params[k]; ok {
				_ = json.Unmarshal(v, &name)
			}
		}
		if name == target {
			out = append(out, wireLeg{id: string(e.ID), params: e.Params, result: results[string(e.ID)]})
		}
	}
	return out
}

// checkLegs checks a driven exchange of n legs on the wire: a new id
// each time, the original params unchanged, no MRTR member on the first
// leg, and on each retry the keys of the previous round's inputRequests
// (none for a round without) and its requestState byte for byte.
func checkLegs(t testing.TB, legs []wireLeg, n int) {
	t.Helper()
	if len(legs) != n {
		t.Fatalf("%d legs on the wire, want %d", len(legs), n)
	}
	ids := map[string]bool{}
	for i, l := range legs {
		if ids[l.id] {
			t.Errorf("leg %d reuses the id %s", i, l.id)
		}
		ids[l.id] = true
		for _, k := range []string{"name", "uri", "arguments"} {
			if string(l.params[k]) != string(legs[0].params[k]) {
				t.Errorf("leg %d: %s %s, first leg %s", i, k, l.params[k], legs[0].params[k])
			}
		}
		if i == 0 {
			if l.params["inputResponses"] != nil || l.params["requestState"] != nil {
				t.Errorf("the first leg carries MRTR members: %v", l.params)
			}
			continue
		}
		prev := legs[i-1].result
		if string(l.params["requestState"]) != string(prev["requestState"]) {
			t.Errorf("leg %d: requestState %s, the server sent %s", i, l.params["requestState"], prev["requestState"])
		}
		var asked, answered map[string]jsontext.Value
		_ = json.Unmarshal(prev["inputRequests"], &asked)
		_ = json.Unmarshal(l.params["inputResponses"], &answered)
		if len(asked) == 0 && l.params["inputResponses"] != nil {
			t.Errorf("leg %d: inputResponses %s answer no question", i, l.params["inputResponses"])
		}
		if !slices.Equal(sortedKeys(asked), sortedKeys(answered)) {
			t.Errorf("leg %d answers %v, the server asked %v", i, sortedKeys(answered), sortedKeys(asked))
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// driverAnswers is the input handlers of the driver tests: each records
// the question it answers.
type driverAnswers struct {
	mu    sync.Mutex
	asked []string
}

var errRefused = errors.New("the user closed the dialog")

func (a *driverAnswers) note(s string) {
	a.mu.Lock()
	a.asked = append(a.asked, s)
	a.mu.Unlock()
}

func (a *driverAnswers) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asked)
}

func (a *driverAnswers) options() *client.Options {
	return &client.Options{
		ElicitationDefaults: true,
		ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			a.note(p.Message)
			switch p.Message {
			case "refuse me":
				return nil, errRefused
			case "Second name?":
				return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Bo"}}, nil
			}
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
		CreateMessageHandler: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			a.note("sampling")
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "4"}), Model: "test-model"}, nil
		},
		ListRootsHandler: func(ctx context.Context) (*mcp.ListRootsResult, error) {
			a.note("roots")
			return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///work"}}}, nil
		},
	}
}

// TestMRTRDriver: the client's driver completes every kind of multi
// round-trip exchange with the real server's NeedInput handlers, in
// memory, over a stdio child and over Streamable HTTP; the wire (checked
// against the 2026-07-28 schema throughout) shows a new id per leg, the
// params unchanged, each round's answers only and the requestState byte
// for byte.
func TestMRTRDriver(t *testing.T) {
	for _, cr := range mrtrCarriers() {
		t.Run(cr.name, func(t *testing.T) {
			t.Parallel()
			var a driverAnswers
			opts := a.options()
			opts.MaxInputRounds = 3
			c, w := connectModern(t, cr, mrtrServer(new(atomic.Int32)), opts)
			ctx := testCtx(t)
			call := func(name, args string) (*mcp.CallToolResult, error) {
				return c.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: jsontext.Value(args)})
			}
			want := func(name, args, wantText string, legs int) {
				t.Helper()
				res, err := call(name, args)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if got := text(res); res.IsError || got != wantText {
					t.Errorf("%s = %q (isError %v), want %q", name, got, res.IsError, wantText)
				}
				checkLegs(t, legsOf(t, w, mcp.MethodToolsCall, name), legs)
			}

			// One question, a state.
			want("mrtr_greet", `{"greeting":"Hello"}`, mrtrWant, 2)
			// Three kinds in one round; the form's default filled in
			// (SEP-1034).
			want("mrtr_multi", `{}`, "Ada (free) / 4 / file:///work", 2)
			// Two rounds: the second retry answers only the second
			// question.
			want("mrtr_rounds", `{}`, "Ada then Bo", 3)

			// Load shedding: two state-only rounds, retried after 50 ms
			// and 100 ms.
			start := time.Now()
			want("mrtr_shed", `{}`, "served after busy 2", 3)
			if d := time.Since(start); d < 150*time.Millisecond {
				t.Errorf("mrtr_shed took %v, want the 50 ms and 100 ms pauses", d)
			}

			// The round cap (MaxInputRounds 3): 1 + 3 requests.
			_, err := call("mrtr_forever", `{}`)
			var ire *client.InputRequiredError
			if !errors.As(err, &ire) || !errors.Is(err, client.ErrTooManyInputRounds) || ire.Rounds != 3 {
				t.Errorf("mrtr_forever: %v, want the round cap", err)
			} else if !strings.Contains(err.Error(), "3 rounds") {
				t.Errorf("the error %q does not name the cap", err)
			}
			checkLegs(t, legsOf(t, w, mcp.MethodToolsCall, "mrtr_forever"), 4)

			// A handler's error ends the call: nothing is sent.
			if _, err := call("mrtr_fail", `{}`); !errors.Is(err, errRefused) {
				t.Errorf("mrtr_fail: %v, want the handler's error", err)
			}
			checkLegs(t, legsOf(t, w, mcp.MethodToolsCall, "mrtr_fail"), 1)

			// prompts/get and resources/read.
			pr, err := c.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mrtr_prompt"})
			if err != nil || len(pr.Messages) != 1 || pr.Messages[0].Content.(*mcp.TextContent).Text != "for Ada" {
				t.Errorf("mrtr_prompt: %+v, %v", pr, err)
			}
			checkLegs(t, legsOf(t, w, mcp.MethodPromptsGet, "mrtr_prompt"), 2)
			for range 2 { // the answer to a retry is not cached: both reads ask
				rr, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mrtr://secret"})
				if err != nil || len(rr.Contents) != 1 || rr.Contents[0].(*mcp.TextResourceContents).Text != "secret 4" {
					t.Errorf("mrtr://secret: %+v, %v", rr, err)
				}
			}
			reads := legsOf(t, w, mcp.MethodResourcesRead, "mrtr://secret")
			checkLegs(t, reads[:2], 2)
			checkLegs(t, reads[2:], 2)

			// An unrelated call carries nothing of the exchanges before.
			want("mrtr_plain", `{}`, "plain", 1)

			// Every request had its own id.
			ids := map[string]bool{}
			for _, m := range w.messages(wirecheck.ClientToServer) {
				var e struct {
					ID jsontext.Value `json:"id"`
				}
				if json.Unmarshal(m, &e) == nil && e.ID != nil {
					if ids[string(e.ID)] {
						t.Errorf("the id %s was used twice", e.ID)
					}
					ids[string(e.ID)] = true
				}
			}
			// greet 1, multi 3, rounds 2, forever 3, fail 1, prompt 1,
			// secret 2.
			if n := a.count(); n != 13 {
				t.Errorf("the handlers answered %d questions, want 13", n)
			}
		})
	}
}

// TestMRTRManualPath: with ManualInput the call returns the
// *InputRequiredError; the caller answers and retries with
// InputResponses and RequestState, sent as top-level params. A kind the
// client did not declare is never embedded: the server answers -32021
// and nobody is asked.
func TestMRTRManualPath(t *testing.T) {
	for _, cr := range mrtrCarriers() {
		t.Run(cr.name, func(t *testing.T) {
			t.Parallel()
			asked := make(chan *mcp.ElicitParams, 4)
			answer := mrtrAnswer(asked)
			c, w := connectModern(t, cr, mrtrServer(new(atomic.Int32)), &client.Options{ManualInput: true, ElicitHandler: answer})
			ctx := testCtx(t)
			params := &mcp.CallToolParams{Name: "mrtr_greet", Arguments: jsontext.Value(`{"greeting":"Hello"}`)}
			_, err := c.CallTool(ctx, params)
			var ire *client.InputRequiredError
			if !errors.As(err, &ire) || errors.Unwrap(err) != nil {
				t.Fatalf("tools/call: %v, want the manual path's *InputRequiredError", err)
			}
			select {
			case p := <-asked:
				t.Fatalf("the handler was asked %+v on the manual path", p)
			default:
			}
			if ire.Result.RequestState == "" || len(ire.Result.InputRequests) != 1 || !strings.Contains(string(ire.Raw), ire.Result.RequestState) {
				t.Fatalf("%+v", ire)
			}
			responses := mcp.InputResponses{}
			for key, r := range ire.Result.InputRequests {
				var p mcp.ElicitParams
				if err := r.DecodeParams(&p); err != nil {
					t.Fatal(err)
				}
				a, err := answer(ctx, &p)
				if err != nil {
					t.Fatal(err)
				}
				if err := responses.Set(key, a); err != nil {
					t.Fatal(err)
				}
			}
			retry := *params
			retry.InputResponses, retry.RequestState = responses, ire.Result.RequestState
			res, err := c.CallTool(ctx, &retry)
			if err != nil || text(res) != mrtrWant {
				t.Fatalf("retry: %+v, %v", res, err)
			}
			wantAsked(t, asked)
			checkLegs(t, legsOf(t, w, mcp.MethodToolsCall, "mrtr_greet"), 2)

			// mrtr_multi needs sampling and roots, which this client did
			// not declare.
			_, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "mrtr_multi", Arguments: jsontext.Value(`{}`)})
			wantCode(t, err, mcp.CodeMissingRequiredClientCapability)
			select {
			case p := <-asked:
				t.Errorf("the handler was asked %+v", p)
			default:
			}
		})
	}
}

// TestMRTROneHandlerBothEras: one Elicitation handler answers a legacy
// server's elicitation/create request (through the server's shim) and a
// modern server's embedded input request (through the client's driver).
func TestMRTROneHandlerBothEras(t *testing.T) {
	url := serveHTTP(t, mrtrServer(new(atomic.Int32)))
	var calls atomic.Int32
	handler := func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		calls.Add(1)
		return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
	}
	for _, version := range []string{mcp.LatestLegacy, ""} {
		revision := mcp.Version20260728
		if version != "" {
			revision = version
		}
		w := newWire(t, revision)
		c, err := client.Connect(testCtx(t), streamable.New(url, nil), &client.Options{ProtocolVersion: version, Observe: w.clientSide, ElicitHandler: handler})
		if err != nil {
			t.Fatal(err)
		}
		mrtrCall(t, c)
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		var server, embedded bool
		for _, m := range w.messages(wirecheck.ServerToClient) {
			server = server || strings.Contains(string(m), `"method":"elicitation/create","params"`) && strings.Contains(string(m), `"id"`) && !strings.Contains(string(m), "inputRequests")
			embedded = embedded || strings.Contains(string(m), `"inputRequests"`)
		}
		if version != "" && (c.Era() != client.EraLegacy || !server || embedded) {
			t.Errorf("legacy: era %v, server request %v, embedded %v", c.Era(), server, embedded)
		}
		if version == "" && (c.Era() != client.EraModern || !embedded) {
			t.Errorf("modern: era %v, embedded %v", c.Era(), embedded)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the handler ran %d times, want 2 (once per era)", n)
	}
}
