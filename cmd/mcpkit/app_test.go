package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/apps"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/memory"
)

func TestViewPolicy(t *testing.T) {
	const host, sb = "http://127.0.0.1:1", "http://127.0.0.1:2"
	got := viewPolicy(nil, host, sb)
	want := "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
		"img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'none'; " +
		"frame-src 'none'; base-uri 'none'; object-src 'none'; form-action 'none'; " +
		"frame-ancestors http://127.0.0.1:1 http://127.0.0.1:2"
	if got != want {
		t.Errorf("default policy:\n got %s\nwant %s", got, want)
	}
	got = viewPolicy(&apps.CSP{
		ConnectDomains:  []string{"https://api.example.com", "wss://ws.example.com"},
		ResourceDomains: []string{"https://cdn.example.com"},
		FrameDomains:    []string{"https://player.example.com"},
		BaseURIDomains:  []string{"https://base.example.com"},
	}, host, sb)
	for _, part := range []string{
		"script-src 'self' 'unsafe-inline' https://cdn.example.com;",
		"style-src 'self' 'unsafe-inline' https://cdn.example.com;",
		"img-src 'self' data: blob: https://cdn.example.com;",
		"font-src 'self' data: https://cdn.example.com;",
		"connect-src https://api.example.com wss://ws.example.com;",
		"frame-src https://player.example.com;",
		"base-uri https://base.example.com;",
	} {
		if !strings.Contains(got, part) {
			t.Errorf("policy lacks %q:\n%s", part, got)
		}
	}
}

func TestAllowAttribute(t *testing.T) {
	for _, tc := range []struct {
		p    *apps.Permissions
		want string
	}{
		{nil, ""},
		{&apps.Permissions{}, ""},
		{&apps.Permissions{Camera: true}, "camera"},
		{&apps.Permissions{Microphone: true, ClipboardWrite: true}, "microphone; clipboard-write"},
		{&apps.Permissions{Camera: true, Microphone: true, Geolocation: true, ClipboardWrite: true}, "camera; microphone; geolocation; clipboard-write"},
	} {
		if got := allowAttribute(tc.p); got != tc.want {
			t.Errorf("allowAttribute(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

// appFixture is an appHost over an in-memory server with: the demo's
// roll tool and dice view, a tool visible to the model only, and a view
// whose CSP no host may apply; both origins on loopback test servers.
type appFixture struct {
	h             *appHost
	host, sandbox *httptest.Server
}

func newAppFixture(t *testing.T) *appFixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "app-test", Version: "1"}})
	if err := addDemoApp(s); err != nil {
		t.Fatal(err)
	}
	modelOnly := &mcp.Tool{Name: "secret", Description: "model only"}
	if err := apps.Link(modelOnly, diceViewURI, apps.VisibleToModel); err != nil {
		t.Fatal(err)
	}
	if err := server.AddTool(s, modelOnly, func(context.Context, *server.CallToolRequest, struct{}) (string, error) {
		return "must not run", nil
	}); err != nil {
		t.Fatal(err)
	}
	// A view whose CSP carries a keyword: AddResource would refuse it,
	// so it is registered as a plain resource, as a careless server might.
	const badURI = "ui://app-test/bad"
	badMeta := mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []string{"'unsafe-eval'"}}}}
	if err := s.AddResource(&mcp.Resource{URI: badURI, Name: "bad", MIMEType: apps.MIMEType},
		func(context.Context, *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{
				&mcp.TextResourceContents{URI: badURI, MIMEType: apps.MIMEType, Text: "<p>bad</p>", Meta: badMeta},
			}}, nil
		}); err != nil {
		t.Fatal(err)
	}
	bad := &mcp.Tool{Name: "bad", Description: "a view with a bad CSP"}
	if err := apps.Link(bad, badURI); err != nil {
		t.Fatal(err)
	}
	if err := server.AddTool(s, bad, func(context.Context, *server.CallToolRequest, struct{}) (string, error) {
		return "bad", nil
	}); err != nil {
		t.Fatal(err)
	}
	a, b := memory.NewPair()
	ss := s.Connect(b)
	t.Cleanup(func() { ss.Close() })
	opts := &client.Options{}
	apps.Declare(opts)
	c, err := client.Connect(ctx, a, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })

	f := &appFixture{}
	f.host = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.h.hostHandler().ServeHTTP(w, r) }))
	f.sandbox = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.h.sandboxHandler().ServeHTTP(w, r) }))
	t.Cleanup(f.host.Close)
	t.Cleanup(f.sandbox.Close)
	f.h = newAppHost(c, []byte("export class AppBridge {}; export class PostMessageTransport {}"), f.host.URL, f.sandbox.URL)
	return f
}

// post sends body to the host origin's path as the page would (its own
// Origin) and returns the status and the decoded answer.
func (f *appFixture) post(t *testing.T, path, body string, origin string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.host.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
	return resp.StatusCode, out
}

func errMessage(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

func TestAppHostAPI(t *testing.T) {
	f := newAppFixture(t)

	// The page: its policy frames the sandbox origin only.
	resp, err := http.Get(f.host.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-src "+f.sandbox.URL+";") || !strings.Contains(csp, "script-src 'self';") {
		t.Errorf("the page's policy: %s", csp)
	}

	// Tools with a view.
	resp, err = http.Get(f.host.URL + "/api/tools")
	if err != nil {
		t.Fatal(err)
	}
	var tools struct{ Tools []appTool }
	_ = json.NewDecoder(resp.Body).Decode(&tools)
	resp.Body.Close()
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "bad,roll,secret" {
		t.Errorf("tools with a view: %v", names)
	}

	// The view, and its sandbox URL served under its policy.
	code, view := f.post(t, "/api/view", `{"tool":"roll"}`, f.host.URL)
	if code != 200 || view["uri"] != diceViewURI || !strings.Contains(view["html"].(string), "ui/initialize") {
		t.Fatalf("/api/view: %d %v", code, view)
	}
	sandboxURL, _ := view["sandbox"].(string)
	if !strings.HasPrefix(sandboxURL, f.sandbox.URL+"/sandbox/") || view["proxySandbox"] != appProxySandbox {
		t.Fatalf("sandbox: %v", view)
	}
	resp, err = http.Get(sandboxURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got := resp.Header.Get("Content-Security-Policy"); got != viewPolicy(nil, f.host.URL, f.sandbox.URL) || got != view["policy"] {
		t.Errorf("the sandbox's policy: %q", got)
	}
	if !bytes.Contains(page, []byte(`data-host="`+f.host.URL+`"`)) || !bytes.Contains(page, []byte(`data-sandbox="`+appSandbox+`"`)) {
		t.Errorf("the sandbox page: %s", page)
	}
	if resp, err := http.Get(f.sandbox.URL + "/sandbox/0123"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown sandbox: %v %v", resp.StatusCode, err)
	}

	// A CSP no host may apply is refused, naming the field.
	code, out := f.post(t, "/api/view", `{"tool":"bad"}`, f.host.URL)
	if code != http.StatusUnprocessableEntity || !strings.Contains(errMessage(out), "ConnectDomains[0]") {
		t.Errorf("a bad CSP: %d %v", code, out)
	}
	code, out = f.post(t, "/api/view", `{"tool":"nope"}`, f.host.URL)
	if code != http.StatusNotFound {
		t.Errorf("an unknown tool's view: %d %v", code, out)
	}

	// Calls are relayed; a tool visible to the model only is refused.
	code, out = f.post(t, "/api/call", `{"name":"roll","arguments":{"dice":4}}`, f.host.URL)
	sc, _ := out["structuredContent"].(map[string]any)
	if rolls, _ := sc["rolls"].([]any); code != 200 || len(rolls) != 4 {
		t.Errorf("/api/call roll: %d %v", code, out)
	}
	code, out = f.post(t, "/api/call", `{"name":"secret"}`, f.host.URL)
	if code != http.StatusForbidden || !strings.Contains(errMessage(out), "not visible to apps") {
		t.Errorf("/api/call of a model-only tool: %d %v", code, out)
	}
	code, out = f.post(t, "/api/call", `{"name":"roll","arguments":{"dice":99}}`, f.host.URL)
	if sc, _ := out["isError"].(bool); code != 200 || !sc {
		t.Errorf("/api/call with invalid arguments: %d %v", code, out)
	}
	code, out = f.post(t, "/api/read", `{"uri":"`+diceViewURI+`"}`, f.host.URL)
	if cs, _ := out["contents"].([]any); code != 200 || len(cs) != 1 {
		t.Errorf("/api/read: %d %v", code, out)
	}
	code, out = f.post(t, "/api/read", `{"uri":"ui://nowhere"}`, f.host.URL)
	if e, _ := out["error"].(map[string]any); code != http.StatusBadGateway || e["code"] == nil {
		t.Errorf("/api/read of an unknown resource: %d %v", code, out)
	}
	code, out = f.post(t, "/api/resources", `{}`, f.host.URL)
	if rs, _ := out["resources"].([]any); code != 200 || len(rs) != 2 {
		t.Errorf("/api/resources: %d %v", code, out)
	}
	code, out = f.post(t, "/api/call", `{"name":`, f.host.URL)
	if code != http.StatusBadRequest {
		t.Errorf("a body that is not JSON: %d %v", code, out)
	}
	code, out = f.post(t, "/api/call", `{"name":"roll","arguments":{"x":"`+strings.Repeat("a", appMaxBody)+`"}}`, f.host.URL)
	if code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body beyond appMaxBody: %d %v", code, out)
	}
}

// TestAppHostGuard: another site's page cannot drive the bridge API: a
// POST from another Origin (or none) and a request for another Host name
// (DNS rebinding) are refused on both origins.
func TestAppHostGuard(t *testing.T) {
	f := newAppFixture(t)
	for _, origin := range []string{"", "http://evil.example", f.sandbox.URL} {
		code, out := f.post(t, "/api/call", `{"name":"roll"}`, origin)
		if code != http.StatusForbidden || !strings.Contains(errMessage(out), "Origin") {
			t.Errorf("POST with Origin %q: %d %v", origin, code, out)
		}
	}
	for _, base := range []string{f.host.URL + "/api/tools", f.sandbox.URL + "/sandbox.js"} {
		req, _ := http.NewRequest(http.MethodGet, base, nil)
		req.Host = "rebound.example:80"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s with Host %s: %d", base, req.Host, resp.StatusCode)
		}
	}
}

// TestAppHostViewsBounded: beyond appMaxViews sandbox URLs, the oldest
// is forgotten.
func TestAppHostViewsBounded(t *testing.T) {
	h := newAppHost(nil, nil, "http://127.0.0.1:1", "http://127.0.0.1:2")
	first := h.register(appView{policy: "p"})
	var last string
	for range appMaxViews {
		last = h.register(appView{policy: "p"})
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.views[first]; ok || len(h.views) != appMaxViews || len(h.order) != appMaxViews {
		t.Errorf("after %d views: first kept %v, %d kept", appMaxViews+1, ok, len(h.views))
	}
	if _, ok := h.views[last]; !ok {
		t.Error("the newest view is gone")
	}
}

// TestAppUsage: mcpkit app refuses, with exit code 64 and a clear line, a
// missing or wrong bundle and an address beyond loopback, before
// connecting.
func TestAppUsage(t *testing.T) {
	dir := t.TempDir()
	notBridge := filepath.Join(dir, "x.js")
	if err := os.WriteFile(notBridge, []byte("export const x = 1"), 0o644); err != nil {
		t.Fatal(err)
	}
	bridge := filepath.Join(dir, "bridge.js")
	if err := os.WriteFile(bridge, []byte("export{a as AppBridge,b as PostMessageTransport}"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(appBridgeEnv, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"app", "http://127.0.0.1:1/mcp"}, "no --bridge"},
		{[]string{"app", "--bridge", filepath.Join(dir, "none.js"), "http://127.0.0.1:1/mcp"}, "no such file"},
		{[]string{"app", "--bridge", notBridge, "http://127.0.0.1:1/mcp"}, "does not export AppBridge"},
		{[]string{"app", "--bridge", bridge, "--addr", "0.0.0.0:0", "http://127.0.0.1:1/mcp"}, "loopback IP address only"},
		{[]string{"app", "--bridge", bridge, "--addr", "localhost:0", "http://127.0.0.1:1/mcp"}, "loopback IP address only"},
		{[]string{"app", "--bridge", bridge}, "missing TARGET"},
		{[]string{"app", "--bridge", bridge, "--json", "http://127.0.0.1:1/mcp"}, "do not apply to app"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), tc.args, &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("mcpkit %s: exit %d, stderr %q (want %q)", strings.Join(tc.args, " "), code, stderr.String(), tc.want)
		}
	}
}

// appLines hands each complete line written to it to a channel.
type appLines struct {
	mu    sync.Mutex
	buf   []byte
	lines chan string
}

func (w *appLines) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		select {
		case w.lines <- string(w.buf[:i]):
		default:
		}
		w.buf = w.buf[i+1:]
	}
}

// TestAppRun: mcpkit app against a Streamable HTTP server prints its
// page's address, serves the page, the tools and the bundle there, and
// returns once its context ends (Ctrl-C). With --era modern it still sees
// that the server advertises MCP Apps (server/discover).
func TestAppRun(t *testing.T) {
	s, err := newDemoServer(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	h := streamhttp.NewHandler(s, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.Close() })
	bridge := filepath.Join(t.TempDir(), "bridge.js")
	const bundle = "export{a as AppBridge,b as PostMessageTransport}"
	if err := os.WriteFile(bridge, []byte(bundle), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stdout := &appLines{lines: make(chan string, 4)}
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"app", "--era", "modern", "--bridge", bridge, ts.URL}, stdout, &stderr)
	}()
	var page string
	select {
	case line := <-stdout.lines:
		rest, ok := strings.CutPrefix(line, "mcpkit app: open ")
		if !ok {
			t.Fatalf("first line: %q", line)
		}
		page, _, _ = strings.Cut(rest, " ")
	case c := <-code:
		t.Fatalf("mcpkit app exited %d: %s", c, stderr.String())
	}
	if !strings.HasPrefix(page, "http://127.0.0.1:") || !strings.HasSuffix(page, "/") {
		t.Errorf("page address %q", page)
	}
	for path, want := range map[string]string{
		"":          `<script type="module" src="/host.js">`,
		"host.js":   `from "/bridge.js"`,
		"bridge.js": bundle,
		"api/tools": `"name":"roll"`,
	} {
		resp, err := http.Get(page + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("GET /%s: %d %.200s", path, resp.StatusCode, b)
		}
	}
	cancel()
	if c := <-code; c != exitOK {
		t.Errorf("after Ctrl-C: exit %d: %s", c, stderr.String())
	}
	if _, err := http.Get(page); err == nil {
		t.Error("the page is still served after mcpkit app returned")
	}
	if strings.Contains(stderr.String(), "does not advertise") {
		t.Errorf("the demo server's extension was not seen: %s", stderr.String())
	}
}
