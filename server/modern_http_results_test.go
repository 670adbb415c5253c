package server

// Tests of the answers of the 2026-07-28 ("modern") era over Streamable
// HTTP: result stamping and the SEP-2549 cache hints, -32021 for a
// missing client capability, per-request logging and progress, and
// notifications on the request's own stream; and the benchmark of a 2026
// tools/call over HTTP. The fixture and the helpers are in
// modern_http_test.go.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/mcp"
)

// ---------------------------------------------------------------------
// 4. Results.

func TestModernHTTPResults(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	cacheable := func(r map[string]json.RawMessage, what string, ttl int64, scope string) {
		t.Helper()
		var got int64
		if err := json.Unmarshal(r["ttlMs"], &got); err != nil || got != ttl {
			t.Errorf("%s: ttlMs %s, want %d", what, r["ttlMs"], ttl)
		}
		if string(r["cacheScope"]) != `"`+scope+`"` {
			t.Errorf("%s: cacheScope %s, want %q", what, r["cacheScope"], scope)
		}
	}
	for _, id := range m.IDs() {
		// Defaults: revalidate every time, private.
		d := m.Call(id, mcp.MethodServerDiscover, "", nil)
		cacheable(d, "server/discover", 0, "private")
		for _, method := range []string{mcp.MethodToolsList, mcp.MethodPromptsList, mcp.MethodResourcesList, mcp.MethodResourcesTemplatesList} {
			cacheable(m.Call(m.ID(), method, "", nil), method, 0, "private")
			cacheable(m.Call(fmt.Sprint("s", m.ID()), method, "", nil), method, 0, "private")
		}
		cacheable(m.Call(m.ID(), mcp.MethodResourcesRead, "test://r", map[string]any{"uri": "test://r"}), "resources/read", 0, "private")
		cacheable(m.Call(m.ID(), mcp.MethodResourcesRead, "test://t/42", map[string]any{"uri": "test://t/42"}), "resources/read (template)", 0, "private")
		// The handler's own hints are kept.
		cacheable(m.Call(m.ID(), mcp.MethodResourcesRead, "test://cached", map[string]any{"uri": "test://cached"}), "resources/read (handler)", 5, "public")
		// Not cacheable, but stamped all the same (call checks resultType
		// and serverInfo on each).
		m.Call(m.ID(), mcp.MethodToolsCall, "echo", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}})
		m.Call(m.ID(), mcp.MethodPromptsGet, "greet", map[string]any{"name": "greet", "arguments": map[string]any{"who": "Ada"}})
		m.Call(m.ID(), mcp.MethodCompletionComplete, "", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greet"}, "argument": map[string]any{"name": "who", "value": "a"}})
		// A tool error is still a complete result.
		r := m.Call(m.ID(), mcp.MethodToolsCall, "echo", map[string]any{"name": "echo", "arguments": map[string]any{"text": 5}})
		if _, isErr := httpenv.ResultText(t, r); !isErr {
			t.Error("invalid arguments did not give an isError result")
		}
	}
	t.Run("server/discover", func(t *testing.T) {
		m := m.sub(t)
		id := "discover-1"
		r := m.Call(id, mcp.MethodServerDiscover, "", nil)
		if !httpenv.JSONEqual(t, r["supportedVersions"], `["2026-07-28"]`) {
			t.Errorf("supportedVersions %s", r["supportedVersions"])
		}
		want, _ := json.Marshal(f.s.Capabilities())
		if !httpenv.JSONEqual(t, r["capabilities"], string(want)) {
			t.Errorf("capabilities %s, want %s", r["capabilities"], want)
		}
		if !httpenv.JSONEqual(t, r["capabilities"], `{"logging":{},"completions":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}}`) {
			t.Errorf("capabilities %s", r["capabilities"])
		}
		if string(r["instructions"]) != `"Try the echo tool."` {
			t.Errorf("instructions %s", r["instructions"])
		}
		if _, ok := r["serverInfo"]; ok {
			t.Error("DiscoverResult has a top-level serverInfo: it moved to _meta")
		}
		if !httpenv.JSONEqual(t, r["_meta"], `{"io.modelcontextprotocol/serverInfo":{"name":"fixture26","version":"1.2.3"}}`) {
			t.Errorf("_meta %s", r["_meta"])
		}
	})
	t.Run("tools/list order", func(t *testing.T) {
		s := New(&Options{Info: mcp.Implementation{Name: "order", Version: "1"}})
		names := []string{"zeta", "alpha", "mid", "Beta", "alpha2", "_x"}
		for _, n := range names {
			AddTool(s, &mcp.Tool{Name: n}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) { return "", nil })
		}
		m := newModernEnv(t, s, nil)
		var first []string
		for i := range 5 {
			var tools []struct {
				Name string `json:"name"`
			}
			r := m.Call(m.ID(), mcp.MethodToolsList, "", nil)
			if err := json.Unmarshal(r["tools"], &tools); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tl := range tools {
				got = append(got, tl.Name)
			}
			if i == 0 {
				first = got
				want := slices.Clone(names)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("tools/list order %v, want %v", got, want)
				}
			} else if !slices.Equal(got, first) {
				t.Errorf("tools/list order changed: %v then %v", first, got)
			}
		}
	})
	t.Run("resources/read of an unknown uri", func(t *testing.T) {
		m := m.sub(t)
		for _, id := range m.IDs() {
			r := m.Send(httpenv.Req26(id, mcp.MethodResourcesRead, map[string]any{"uri": "test://none"}), true, httpenv.H26(mcp.MethodResourcesRead, "test://none")...)
			// SEP-2164: -32602 with data.uri, never empty contents. The spec
			// gives no HTTP status for this error; it is an error of the
			// method, answered 200 like other handler errors.
			e := m.WantErr(r, http.StatusOK, mcp.CodeInvalidParams, id)
			if !httpenv.JSONEqual(t, e.Data, `{"uri":"test://none"}`) {
				t.Errorf("data %s, want {uri}", e.Data)
			}
		}
	})
}

func TestModernHTTPCacheHintOptions(t *testing.T) {
	f := newFixture26(&Options{Info: mcp.Implementation{Name: "cached", Version: "1"}, CacheTTL: 90 * time.Second, CacheScope: mcp.CachePublic})
	m := newModernEnv(t, f.s, nil)
	check := func(r map[string]json.RawMessage, what, ttl, scope string) {
		t.Helper()
		if string(r["ttlMs"]) != ttl || string(r["cacheScope"]) != scope {
			t.Errorf("%s: ttlMs %s cacheScope %s, want %s %s", what, r["ttlMs"], r["cacheScope"], ttl, scope)
		}
	}
	check(m.Call(m.ID(), mcp.MethodServerDiscover, "", nil), "server/discover", "90000", `"public"`)
	for _, method := range []string{mcp.MethodToolsList, mcp.MethodPromptsList, mcp.MethodResourcesList, mcp.MethodResourcesTemplatesList} {
		check(m.Call(m.ID(), method, "", nil), method, "90000", `"public"`)
	}
	check(m.Call(m.ID(), mcp.MethodResourcesRead, "test://r", map[string]any{"uri": "test://r"}), "resources/read", "90000", `"public"`)
	check(m.Call(m.ID(), mcp.MethodResourcesRead, "test://cached", map[string]any{"uri": "test://cached"}), "resources/read (handler)", "5", `"public"`)
	// No result that is not cacheable carries the hints.
	r := m.Call(m.ID(), mcp.MethodToolsCall, "echo", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}})
	if _, ok := r["ttlMs"]; ok {
		t.Errorf("tools/call result with ttlMs")
	}
	s := New(&Options{Info: mcp.Implementation{Name: "private", Version: "1"}, CacheTTL: time.Second, CacheScope: mcp.CachePrivate})
	s.AddResource(&mcp.Resource{URI: "test://p", Name: "p"}, func(ctx context.Context, req *ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		zero := int64(0)
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: "test://p", Text: "p"}}, TTLMs: &zero, CacheScope: mcp.CachePublic}, nil
	})
	m2 := newModernEnv(t, s, nil)
	// A handler's explicit 0 is kept, not replaced by the default.
	check(m2.Call(m2.ID(), mcp.MethodResourcesRead, "test://p", map[string]any{"uri": "test://p"}), "resources/read (handler 0)", "0", `"public"`)
	check(m2.Call(m2.ID(), mcp.MethodResourcesList, "", nil), "resources/list", "1000", `"private"`)
}

// ---------------------------------------------------------------------
// 5. -32021.

func TestModernHTTPMissingCapability(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	for _, tc := range []struct {
		name string
		caps any    // declared
		need needIn // required
		miss string // data.requiredCapabilities; "" means served
	}{
		{"sampling missing", map[string]any{}, needIn{Sampling: true}, `{"sampling":{}}`},
		{"form missing", map[string]any{}, needIn{Form: true}, `{"elicitation":{"form":{}}}`},
		{"elicitation missing", map[string]any{"roots": map[string]any{}}, needIn{Elicitation: true}, `{"elicitation":{}}`},
		{"url missing", map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}, needIn{URL: true}, `{"elicitation":{"url":{}}}`},
		{"form missing, url declared", map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}, needIn{Form: true}, `{"elicitation":{"form":{}}}`},
		{"roots missing", map[string]any{}, needIn{Roots: true}, `{"roots":{}}`},
		{"only what is missing", map[string]any{"roots": map[string]any{}, "elicitation": map[string]any{}}, needIn{Sampling: true, Roots: true, Form: true}, `{"sampling":{}}`},
		{"two missing", map[string]any{"roots": map[string]any{}}, needIn{Sampling: true, Roots: true, URL: true}, `{"sampling":{},"elicitation":{"url":{}}}`},
		{"one mode of two missing", map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}, needIn{Form: true, URL: true}, `{"elicitation":{"url":{}}}`},
		{"the other mode of two missing", map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}, needIn{Form: true, URL: true}, `{"elicitation":{"form":{}}}`},
		{"sampling declared", map[string]any{"sampling": map[string]any{}}, needIn{Sampling: true}, ""},
		{"empty elicitation means form", map[string]any{"elicitation": map[string]any{}}, needIn{Form: true}, ""},
		{"url declared", map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}, needIn{URL: true}, ""},
		{"roots declared", map[string]any{"roots": map[string]any{}}, needIn{Roots: true}, ""},
		{"all declared", map[string]any{"sampling": map[string]any{}, "roots": map[string]any{}, "elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}}}, needIn{Sampling: true, Roots: true, Form: true, URL: true}, ""},
		{"nothing needed", map[string]any{}, needIn{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := m.sub(t)
			for _, id := range m.IDs() {
				params := map[string]any{"_meta": httpenv.Meta26(map[string]any{mcp.MetaKeyClientCapabilities: tc.caps}), "name": "needs", "arguments": tc.need}
				r := m.Send(httpenv.Req26(id, mcp.MethodToolsCall, params), true, httpenv.H26(mcp.MethodToolsCall, "needs")...)
				if tc.miss == "" {
					if text, isErr := httpenv.ResultText(t, m.WantOK(r, id)); text != "served" || isErr {
						t.Errorf("answered %q (isError %v)", text, isErr)
					}
					continue
				}
				e := m.WantErr(r, http.StatusBadRequest, mcp.CodeMissingRequiredClientCapability, id)
				var data struct {
					Required json.RawMessage `json:"requiredCapabilities"`
				}
				if err := json.Unmarshal(e.Data, &data); err != nil || !httpenv.JSONEqual(t, data.Required, tc.miss) {
					t.Errorf("data %s, want requiredCapabilities %s", e.Data, tc.miss)
				}
			}
		})
	}
	t.Run("capabilities are not inferred from earlier requests", func(t *testing.T) {
		m := m.sub(t)
		with := map[string]any{"_meta": httpenv.Meta26(map[string]any{mcp.MetaKeyClientCapabilities: map[string]any{"sampling": map[string]any{}}}), "name": "needs", "arguments": needIn{Sampling: true}}
		without := map[string]any{"name": "needs", "arguments": needIn{Sampling: true}}
		id := m.ID()
		m.WantOK(m.Send(httpenv.Req26(id, mcp.MethodToolsCall, with), true, httpenv.H26(mcp.MethodToolsCall, "needs")...), id)
		id = m.ID()
		m.WantErr(m.Send(httpenv.Req26(id, mcp.MethodToolsCall, without), true, httpenv.H26(mcp.MethodToolsCall, "needs")...), http.StatusBadRequest, mcp.CodeMissingRequiredClientCapability, id)
	})
	t.Run("legacy session", func(t *testing.T) {
		// -32021 does not exist before 2026-07-28: a legacy session gets
		// -32603 naming the capabilities, in a 200 answer.
		m := m.sub(t)
		sid := m.legacy.Initialize(`{"roots":{}}`)
		id := m.ID()
		msg := m.legacy.RPC(sid, httpenv.ToolCall(id, "needs", `{"sampling":true,"roots":true}`, ""))
		if msg.Error == nil || msg.Error.Code != mcp.CodeInternalError || !strings.Contains(msg.Error.Message, `{"sampling":{}}`) {
			t.Errorf("legacy answer %s, want -32603 naming sampling", msg.Raw)
		}
		if string(msg.ID) != httpenv.IDJSON(id) {
			t.Errorf("id %s, want %d", msg.ID, id)
		}
		if text, _ := httpenv.ToolText(t, m.legacy.RPC(sid, httpenv.ToolCall(m.ID(), "needs", `{"roots":true}`, ""))); text != "served" {
			t.Errorf("declared at initialize, answered %q", text)
		}
	})
}

// ---------------------------------------------------------------------
// 6. Logging and progress.

func TestModernHTTPLogging(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	call := func(id any, level string, token string) string {
		mods := map[string]any{}
		if level != "" {
			mods[mcp.MetaKeyLogLevel] = level
		}
		if token != "" {
			mods[mcp.MetaKeyProgressToken] = token
		}
		return httpenv.Req26(id, mcp.MethodToolsCall, map[string]any{"_meta": httpenv.Meta26(mods), "name": "logs", "arguments": map[string]any{}})
	}
	t.Run("no logLevel, no token: a plain JSON answer", func(t *testing.T) {
		m := m.sub(t)
		for _, id := range m.IDs() {
			r := m.Send(call(id, "", ""), true, httpenv.H26(mcp.MethodToolsCall, "logs")...)
			if text, _ := httpenv.ResultText(t, m.WantOK(r, id)); text != "logged" {
				t.Errorf("answered %q", text)
			}
		}
	})
	for _, tc := range []struct {
		name, level, token string
		want               []string // the notifications before the response
	}{
		{"no logLevel: progress only", "", "tok", []string{"progress 1", "progress 2"}},
		{"warning: the error only", "warning", "", []string{"log error:error line"}},
		{"warning with progress", "warning", "tok", []string{"progress 1", "log error:error line", "progress 2"}},
		{"debug: both", "debug", "", []string{"log debug:debug line", "log error:error line"}},
		{"emergency: none", "emergency", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := m.sub(t)
			for _, id := range m.IDs() {
				if tc.want == nil {
					r := m.Send(call(id, tc.level, tc.token), true, httpenv.H26(mcp.MethodToolsCall, "logs")...)
					m.WantOK(r, id)
					continue
				}
				s := m.Stream(call(id, tc.level, tc.token), httpenv.H26(mcp.MethodToolsCall, "logs")...)
				notes, resp := m.Rest(s, id)
				var got []string
				for _, n := range notes {
					switch n.Method {
					case mcp.NotificationProgress:
						tok, p := httpenv.ProgressOf(t, n)
						if tok != tc.token {
							t.Errorf("progress token %q, want %q", tok, tc.token)
						}
						got = append(got, fmt.Sprintf("progress %v", p))
					case mcp.NotificationMessage:
						got = append(got, "log "+logLevelOf(t, n))
					default:
						got = append(got, n.Method)
					}
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("stream carried %q, want %q", got, tc.want)
				}
				res := httpenv.CheckModernResult(t, httpenv.ParseWire(t, []byte(resp.Raw)), id, "fixture26")
				if text, _ := httpenv.ResultText(t, res); text != "logged" {
					t.Errorf("answered %q", text)
				}
			}
		})
	}
}

// Progress and logs go on the stream of their own request only, before
// its response; nothing reaches another request's stream or a listen
// stream.
func TestModernHTTPNotificationsOnOwnStream(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	listenID := "watch"
	listen := m.Stream(httpenv.Req26(listenID, mcp.MethodSubscriptionsListen, map[string]any{"notifications": map[string]any{"toolsListChanged": true}}), httpenv.H26(mcp.MethodSubscriptionsListen, "")...)
	if _, ack := listen.Message(); ack.Method != mcp.NotificationSubscriptionsAcknowledged {
		t.Fatalf("first listen message %s", ack.Raw)
	}
	type req struct {
		id  any
		tag string
		s   *httpenv.SSEStream
	}
	reqs := []*req{{id: m.ID(), tag: "a"}, {id: "b-" + fmt.Sprint(m.ID()), tag: "b"}, {id: m.ID(), tag: "c"}}
	for _, r := range reqs {
		meta := httpenv.Meta26(map[string]any{mcp.MetaKeyLogLevel: "info", mcp.MetaKeyProgressToken: "tok-" + r.tag})
		r.s = m.Stream(httpenv.Req26(r.id, mcp.MethodToolsCall, map[string]any{"_meta": meta, "name": "gate", "arguments": map[string]any{"tag": r.tag}}), httpenv.H26(mcp.MethodToolsCall, "gate")...)
	}
	// Every request is in flight (its first progress has arrived) before
	// any goes on.
	for _, r := range reqs {
		_, n := r.s.Message()
		if tok, p := httpenv.ProgressOf(t, n); tok != "tok-"+r.tag || p != 1 {
			t.Errorf("request %s: first message %s", r.tag, n.Raw)
		}
	}
	close(f.gate)
	for _, r := range reqs {
		notes, resp := m.Rest(r.s, r.id)
		if len(notes) != 2 {
			t.Fatalf("request %s: %d messages before the response, want a log and a progress", r.tag, len(notes))
		}
		if notes[0].Method != mcp.NotificationMessage || logLevelOf(t, notes[0]) != "info:log "+r.tag {
			t.Errorf("request %s: got %s, want its own log", r.tag, notes[0].Raw)
		}
		if tok, p := httpenv.ProgressOf(t, notes[1]); tok != "tok-"+r.tag || p != 2 {
			t.Errorf("request %s: got %s, want its own progress", r.tag, notes[1].Raw)
		}
		res := httpenv.CheckModernResult(t, httpenv.ParseWire(t, []byte(resp.Raw)), r.id, "fixture26")
		if text, _ := httpenv.ResultText(t, res); text != "gate "+r.tag {
			t.Errorf("request %s answered %q", r.tag, text)
		}
	}
	// The listen stream saw none of it: its next message is this change.
	m.Call(m.ID(), mcp.MethodToolsCall, "add_tool", map[string]any{"name": "add_tool", "arguments": map[string]any{"name": "marker"}})
	if _, n := listen.Message(); n.Method != mcp.NotificationToolsListChanged {
		t.Errorf("listen stream carried %s", n.Raw)
	}
	listen.Close()
}

// ---------------------------------------------------------------------
// 10. Benchmark.

func benchServer() *Server {
	s := New(nil)
	AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, req *CallToolRequest, in httpenv.BenchIn) (httpenv.BenchOut, error) {
		return httpenv.BenchOut{City: in.City, Forecast: []float64{21.5, 22, 19.25}, Summary: "mild"}, nil
	})
	return s
}

// BenchmarkHTTPModernToolsCall measures one 2026 tools/call through the
// HTTP handler over loopback with a keep-alive client: classification,
// envelope, SEP-2243 checks, dispatch, the tool, the stamped JSON answer
// (the client side of net/http is counted too).
func BenchmarkHTTPModernToolsCall(b *testing.B) {
	h := NewHTTPHandler(benchServer(), nil)
	ts := httptest.NewServer(h)
	tr := &http.Transport{MaxIdleConnsPerHost: 4}
	client := &http.Client{Transport: tr}
	defer func() {
		h.Close()
		ts.Close()
		tr.CloseIdleConnections()
	}()
	b.ReportAllocs()
	b.SetBytes(int64(len(httpenv.BenchModernRequest)))
	for b.Loop() {
		req, err := http.NewRequest(http.MethodPost, ts.URL, bytes.NewReader(httpenv.BenchModernRequest))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", httpenv.AcceptBoth)
		req.Header.Set("Mcp-Protocol-Version", httpenv.V26)
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "forecast")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte(`"resultType":"complete"`)) {
			b.Fatalf("status %d: %s (%v)", resp.StatusCode, out, err)
		}
	}
}
