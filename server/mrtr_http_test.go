package server

// Multi Round-Trip Requests over Streamable HTTP: the legacy shim's legs
// ride the original POST's stream (SEP-2260), the session-less legacy
// mode refuses input-required, and the 2026 wire (status codes, the
// principal binding of requestState, RFC 8785 arguments on raw bodies).

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
)

// mrtrHTTPServer has "greet" (asks a name once), "two" (asks twice, one
// round each, state carried), and a resource to subscribe to.
func mrtrHTTPServer(opts *Options, probe *mrtrProbe) *Server {
	s := New(opts)
	addGreet(s, probe)
	s.AddRawTool(&mcp.Tool{Name: "two"}, func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
		probe.see(req.Request)
		switch req.RequestState() {
		case "":
			return nil, NeedInput().Elicit("first", askForm("First?")).State("s1")
		case "s1":
			a, ok, err := req.ElicitResult("first")
			if err != nil || !ok {
				return nil, fmt.Errorf("no first answer (%v)", err)
			}
			return nil, NeedInput().Elicit("second", askForm("Second?")).State("s2:" + a.Content["name"].(string))
		}
		b, ok, err := req.ElicitResult("second")
		if err != nil || !ok {
			return nil, fmt.Errorf("no second answer (%v)", err)
		}
		return textResult(req.RequestState() + "+" + b.Content["name"].(string)), nil
	})
	s.AddResource(&mcp.Resource{URI: "file:///marker", Name: "marker"}, func(ctx context.Context, req *ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	return s
}

// TestShimHTTPPOSTStream: seed case 1 over Streamable HTTP. Every leg is
// a request on the original POST's SSE stream, never on the GET stream
// (SEP-2260); the tool result is the stream's last event; the re-runs see
// the answers exactly as the client POSTed them.
func TestShimHTTPPOSTStream(t *testing.T) {
	probe := &mrtrProbe{}
	e := newHTTPEnv(t, mrtrHTTPServer(&Options{RequestStateKeys: []RequestStateKey{stateKey}}, probe), nil)
	sid := e.Initialize(httpenv.ElicitCaps)
	e.Subscribe(sid, "file:///marker")
	get := e.OpenSSE(e.Do(http.MethodGet, sid, ""))
	defer get.Close()
	get.Prime(0)

	for _, tc := range []struct {
		tool    string
		answers []string
		want    string
	}{
		{"greet", []string{`{"action":"accept","content":{"name":"Ada"}}`}, "accept Ada"},
		{"two", []string{`{"action":"accept","content":{"name":"Ada"}}`, `{ "action" : "accept", "content" : {"name":"Lovelace"} }`}, "s2:Ada+Lovelace"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			e := e.sub(t)
			before := probe.count()
			id := e.ID()
			post := e.OpenSSE(e.Post(sid, httpenv.ToolCall(id, tc.tool, "", "")))
			stream := post.Prime(0)
			for i, answer := range tc.answers {
				f, req := post.Message()
				if req.Method != mcp.MethodElicitationCreate || len(req.ID) == 0 {
					t.Fatalf("leg %d: want an elicitation/create request on the POST stream, got %s", i+1, req.Raw)
				}
				if got, seq := httpenv.SplitEventID(t, f.ID); got != stream || seq != uint64(i+1) {
					t.Errorf("leg %d event id %q, want %s_%d", i+1, f.ID, stream, i+1)
				}
				e.Expect202(e.Post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, answer)))
			}
			f, res := post.Message()
			if string(res.ID) != strconv.FormatInt(id, 10) {
				t.Fatalf("after the legs the stream carried %s, want the response to %d", res.Raw, id)
			}
			if _, seq := httpenv.SplitEventID(t, f.ID); seq != uint64(len(tc.answers)+1) {
				t.Errorf("response event id %q", f.ID)
			}
			if text, isErr := httpenv.ToolText(t, res); text != tc.want || isErr {
				t.Errorf("%s = %q (isError %v), want %q", tc.tool, text, isErr, tc.want)
			}
			if bytes.Contains([]byte(res.Raw), []byte("resultType")) {
				t.Errorf("legacy result with resultType: %s", res.Raw)
			}
			post.End() // nothing after the result
			runs := probe.all()[before:]
			if len(runs) != len(tc.answers)+1 {
				t.Fatalf("the handler ran %d times, want %d", len(runs), len(tc.answers)+1)
			}
			for i, answer := range tc.answers {
				// Each re-run sees only its round's answer (InputResponses),
				// exactly as the client POSTed it.
				in := runs[i+1].inputs
				if len(in) != 1 {
					t.Errorf("run %d saw %d answers, want only its round's", i+2, len(in))
				}
				for _, raw := range in {
					if string(raw) != answer {
						t.Errorf("run %d saw %s, want the POSTed %s byte for byte", i+2, raw, answer)
					}
				}
			}
			if runs[1].state == "" || strings.HasPrefix(runs[1].state, sealedPrefix) {
				t.Errorf("re-run saw state %q, want the handler's raw state", runs[1].state)
			}
		})
	}
	// SEP-2260: the GET stream carried none of it; the marker comes first.
	e.srv.ResourceUpdated("file:///marker")
	httpenv.ExpectNext(t, get, mcp.NotificationResourcesUpdated)
}

// TestShimHTTPLegEnds: over HTTP a leg that times out fails the request
// with -32001 on its POST stream, and a cancelled original stops the
// handler; in both cases the client hears notifications/cancelled for
// the leg on the original POST's stream, where the leg itself went
// (the cancellation keeps the route of the call it cancels).
func TestShimHTTPLegEnds(t *testing.T) {
	cancelFor := func(t *testing.T, stream *httpenv.SSEStream, legID string) {
		t.Helper()
		_, m := stream.Message()
		var p struct {
			RequestID jsontext.Value `json:"requestId"`
		}
		if m.Method != "notifications/cancelled" || json.Unmarshal(m.Params, &p) != nil || string(p.RequestID) != legID {
			t.Errorf("the POST stream carried %s, want notifications/cancelled for the leg %s", m.Raw, legID)
		}
	}
	t.Run("timeout", func(t *testing.T) {
		probe := &mrtrProbe{}
		e := newHTTPEnv(t, mrtrHTTPServer(&Options{CallTimeout: 50 * time.Millisecond}, probe), nil)
		sid := e.Initialize(httpenv.ElicitCaps)
		get := e.OpenSSE(e.Do(http.MethodGet, sid, ""))
		defer get.Close()
		get.Prime(0)
		id := e.ID()
		post := e.OpenSSE(e.Post(sid, httpenv.ToolCall(id, "greet", "", "")))
		post.Prime(0)
		_, leg := post.Message()
		if leg.Method != mcp.MethodElicitationCreate {
			t.Fatalf("want the leg, got %s", leg.Raw)
		}
		cancelFor(t, post, string(leg.ID)) // the client never answers
		_, res := post.Message()
		if res.Error == nil || res.Error.Code != -32001 || string(res.ID) != strconv.FormatInt(id, 10) {
			t.Errorf("want -32001 for %d, got %s", id, res.Raw)
		}
		post.End()
		if n := probe.count(); n != 1 {
			t.Errorf("the handler ran %d times, want 1", n)
		}
	})
	t.Run("original cancelled", func(t *testing.T) {
		probe := &mrtrProbe{}
		e := newHTTPEnv(t, mrtrHTTPServer(nil, probe), nil)
		sid := e.Initialize(httpenv.ElicitCaps)
		get := e.OpenSSE(e.Do(http.MethodGet, sid, ""))
		defer get.Close()
		get.Prime(0)
		id := e.ID()
		post := e.OpenSSE(e.Post(sid, httpenv.ToolCall(id, "greet", "", "")))
		defer post.Close()
		post.Prime(0)
		_, leg := post.Message()
		e.Expect202(e.Post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"user"}}`, id)))
		cancelFor(t, post, string(leg.ID))
		// A late answer to the cancelled leg is accepted and ignored.
		e.Expect202(e.Post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"late"}}}`, leg.ID)))
		if n := probe.count(); n != 1 {
			t.Errorf("the handler ran %d times, want 1", n)
		}
	})
}

// TestShimHTTPStateless: seed case 12. The session-less legacy mode has
// no way to ask the client: -32603 before any contact, for the three
// methods; the 2026 wire of the same handler still works.
func TestShimHTTPStateless(t *testing.T) {
	probe := &mrtrProbe{}
	s := mrtrHTTPServer(nil, probe)
	s.AddPrompt(&mcp.Prompt{Name: "p"}, func(ctx context.Context, req *GetPromptRequest) (*mcp.GetPromptResult, error) {
		probe.see(req.Request)
		return nil, NeedInput().Elicit("x", askForm("?"))
	})
	s.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		probe.see(req.Request)
		return nil, NeedInput().ListRoots("roots")
	})
	e := newHTTPEnv(t, s, &HTTPOptions{Stateless: true})
	for _, body := range []string{
		httpenv.ToolCall(e.ID(), "greet", "", ""),
		fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"prompts/get","params":{"name":"p"}}`, e.ID()),
		fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"test://r"}}`, e.ID()),
	} {
		m := e.RPC("", body, httpenv.WithHeader("MCP-Protocol-Version", mcp.Version20251125))
		if m.Error == nil || m.Error.Code != mcp.CodeInternalError || !strings.Contains(m.Error.Message, "require the 2026-07-28 stateless lifecycle") {
			t.Errorf("%s answered %s, want -32603 naming the 2026-07-28 lifecycle", body, m.Raw)
		}
	}
	if n := probe.count(); n != 3 {
		t.Errorf("handlers ran %d times, want 3", n)
	}
	wc := wirecheck.For(t, mcp.Version20260728)
	status, msg := modernHTTP(t, wc, e.Client, e.TS.URL, nil, mcp.MethodToolsCall, "greet", map[string]any{"_meta": modernMeta(formCaps), "name": "greet"})
	if status != http.StatusOK || msg.Error != nil {
		t.Fatalf("2026 tools/call on a session-less server: %d %s", status, msg.raw)
	}
	inputRequired(t, msg.Result)
}

// ---- The 2026 wire over HTTP ----

// modernMsg is a decoded 2026 answer.
type modernMsg struct {
	ID     jsontext.Value `json:"id"`
	Result jsontext.Value `json:"result"`
	Error  *struct {
		Code    int64          `json:"code"`
		Message string         `json:"message"`
		Data    jsontext.Value `json:"data"`
	} `json:"error"`
	raw []byte
}

var modernIDs atomic.Int64

// modernHTTP POSTs a 2026 request (params is a map or raw JSON) with the
// SEP-2243 headers and returns the status and the answer (a JSON body or
// the response event of a stream), checked as the answer to method.
func modernHTTP(t *testing.T, wc *wirecheck.Checker, client *http.Client, url string, header http.Header, method, name string, params any) (int, *modernMsg) {
	t.Helper()
	var rawParams jsontext.Value
	switch p := params.(type) {
	case string:
		rawParams = jsontext.Value(p)
	default:
		rawParams = mustJSON(t, p)
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, modernIDs.Add(1), method, rawParams)
	ctx, cancel := context.WithTimeout(context.Background(), httpenv.HangGuard)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", httpenv.AcceptBoth)
	req.Header.Set("MCP-Protocol-Version", mcp.Version20260728)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var last []byte
		for _, ev := range strings.Split(string(data), "\n\n") {
			for _, line := range strings.Split(ev, "\n") {
				if d, ok := strings.CutPrefix(line, "data:"); ok && strings.TrimSpace(d) != "" {
					last = []byte(strings.TrimPrefix(d, " "))
				}
			}
		}
		data = last
	}
	if err := wc.CheckResult(method, data); err != nil {
		t.Errorf("answer does not conform: %v\n%s", err, data)
	}
	var m modernMsg
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("not a JSON-RPC answer (status %d): %q", resp.StatusCode, data)
	}
	m.raw = data
	return resp.StatusCode, &m
}

// TestModernHTTP: the 2026 wire over HTTP: input-required (200), the
// capability gate (-32021, HTTP 400, exact requiredCapabilities), the
// retry, and a tampered state (-32602) that never reaches the handler.
func TestModernHTTP(t *testing.T) {
	probe := &mrtrProbe{}
	e := newHTTPEnv(t, mrtrHTTPServer(nil, probe), nil)
	wc := wirecheck.For(t, mcp.Version20260728)
	post := func(caps string, extra map[string]any) (int, *modernMsg) {
		t.Helper()
		params := map[string]any{"_meta": modernMeta(caps), "name": "greet"}
		for k, v := range extra {
			params[k] = v
		}
		return modernHTTP(t, wc, e.Client, e.TS.URL, nil, mcp.MethodToolsCall, "greet", params)
	}
	status, m := post(formCaps, nil)
	if status != http.StatusOK || m.Error != nil {
		t.Fatalf("round 1: %d %s", status, m.raw)
	}
	ir := inputRequired(t, m.Result)

	for _, caps := range []string{`{}`, `{"sampling":{}}`, `{"elicitation":{"url":{}}}`} {
		status, m = post(caps, nil)
		if status != http.StatusBadRequest || m.Error == nil || m.Error.Code != mcp.CodeMissingRequiredClientCapability {
			t.Fatalf("caps %s: %d %s, want 400 with -32021", caps, status, m.raw)
		}
		var data struct {
			Required jsontext.Value `json:"requiredCapabilities"`
		}
		if json.Unmarshal(m.Error.Data, &data) != nil || !sameJSON(t, data.Required, []byte(`{"elicitation":{"form":{}}}`)) {
			t.Errorf("caps %s: data %s", caps, m.Error.Data)
		}
	}

	before := probe.count()
	status, m = post(formCaps, map[string]any{"requestState": flipMiddle(ir.RequestState), "inputResponses": map[string]any{"name": answerElicit}})
	if m.Error == nil || m.Error.Code != mcp.CodeInvalidParams {
		t.Errorf("tampered state: %d %s, want -32602", status, m.raw)
	}
	if probe.count() != before {
		t.Error("the handler ran with a tampered state")
	}

	status, m = post(formCaps, map[string]any{"requestState": ir.RequestState, "inputResponses": map[string]any{"name": answerElicit}})
	if status != http.StatusOK || m.Error != nil {
		t.Fatalf("retry: %d %s", status, m.raw)
	}
	if text, _ := toolResultText(t, m.Result); text != "accept Ada" {
		t.Errorf("retry = %q", text)
	}
}

// TestModernHTTPBinding: over HTTP with an authentication middleware that
// sets the principal (WithPrincipal): state issued to one principal is
// refused to another and to none; arguments re-encoded in a raw body
// (member order, whitespace, escapes) still match.
func TestModernHTTPBinding(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(nil)
	addStateTargets(s, probe)
	h := NewHTTPHandler(s, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u := r.Header.Get("X-Test-User"); u != "" {
			r = r.WithContext(WithPrincipal(r.Context(), u))
		}
		h.ServeHTTP(w, r)
	}))
	tr := &http.Transport{}
	client := &http.Client{Transport: tr}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Error(err)
		}
		ts.Close()
		tr.CloseIdleConnections()
	})
	wc := wirecheck.For(t, mcp.Version20260728)
	as := func(user string) http.Header {
		if user == "" {
			return nil
		}
		return http.Header{"X-Test-User": {user}}
	}
	meta := string(mustJSON(t, modernMeta(`{}`)))
	call := func(user, args, state string) *modernMsg {
		t.Helper()
		params := fmt.Sprintf(`{"_meta":%s,"name":"a","arguments":%s`, meta, args)
		if state != "" {
			params += fmt.Sprintf(`,"requestState":%q`, state)
		}
		_, m := modernHTTP(t, wc, client, ts.URL, as(user), mcp.MethodToolsCall, "a", params+"}")
		return m
	}
	const args = `{"city":"Paris","days":2}`
	issued := map[string]string{}
	for _, user := range []string{"alice", "bob", ""} {
		m := call(user, args, "")
		if m.Error != nil {
			t.Fatalf("round 1 as %q: %s", user, m.raw)
		}
		issued[user] = inputRequired(t, m.Result).RequestState
	}
	for owner, state := range issued {
		for _, user := range []string{"alice", "bob", ""} {
			before := probe.count()
			m := call(user, args, state)
			if user == owner {
				if m.Error != nil || !bytes.Contains(m.Result, []byte(`"ok secret-a"`)) {
					t.Errorf("owner %q replaying its own state: %s", owner, m.raw)
				}
				continue
			}
			if m.Error == nil || m.Error.Code != mcp.CodeInvalidParams {
				t.Errorf("state of %q replayed by %q: %s, want -32602", owner, user, m.raw)
			}
			if probe.count() != before {
				t.Errorf("state of %q replayed by %q reached the handler", owner, user)
			}
		}
	}
	// RFC 8785: the same arguments, spelled differently on the wire.
	for _, respelled := range []string{
		`{"days":2,"city":"Paris"}`,
		"{\n  \"city\" : \"Paris\" ,\n  \"days\" : 2\n}",
		`{"city":"\u0050aris","days":2}`,
		`{"days":2,"city":"Pa\u0072is"}`,
	} {
		if m := call("alice", respelled, issued["alice"]); m.Error != nil || !bytes.Contains(m.Result, []byte(`"ok secret-a"`)) {
			t.Errorf("arguments %s: %s, want the state accepted", respelled, m.raw)
		}
	}
	if m := call("alice", `{"city":"Paris","days":3}`, issued["alice"]); m.Error == nil || m.Error.Code != mcp.CodeInvalidParams {
		t.Errorf("other arguments: %s, want -32602", m.raw)
	}
}
