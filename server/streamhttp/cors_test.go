package streamhttp

// Tests of CORS (Options.CORS): preflights as browsers send them, and
// the headers of real cross-origin requests in both eras.

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/httpenv"
)

const (
	appOrigin  = "https://app.example.com"
	evilOrigin = "https://evil.example.com"
)

// preflight builds an OPTIONS request as a browser sends it before a
// cross-origin request, as if accepted on a loopback listener.
func preflight(t *testing.T, origins []string, method, headers string) *http.Request {
	t.Helper()
	addr, err := net.ResolveTCPAddr("tcp", "127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodOptions, "/mcp", nil)
	r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, addr))
	r.Host = "127.0.0.1:8080"
	for _, o := range origins {
		r.Header.Add("Origin", o)
	}
	if method != "" {
		r.Header.Set("Access-Control-Request-Method", method)
	}
	if headers != "" {
		r.Header.Set("Access-Control-Request-Headers", headers)
	}
	r.Header.Set("Sec-Fetch-Mode", "cors")
	return r
}

// headerList splits a comma-separated header value into lower-case names.
func headerList(v string) []string {
	var out []string
	for part := range strings.SplitSeq(v, ",") {
		if part = strings.ToLower(strings.TrimSpace(part)); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// wantNoCORS fails when a response carries any Access-Control-* header.
func wantNoCORS(t *testing.T, hdr http.Header) {
	t.Helper()
	for k := range hdr {
		if strings.HasPrefix(k, "Access-Control-") {
			t.Errorf("refused answer carries %s: %q", k, hdr.Values(k))
		}
	}
}

func TestCORSPreflight(t *testing.T) {
	// What Chromium asks before the POST of a 2026-07-28 tools/call with
	// a bearer token and an x-mcp-header argument.
	const modernHeaders = "authorization,content-type,mcp-method,mcp-name,mcp-param-region,mcp-protocol-version"
	cases := []struct {
		name        string
		opts        CORSOptions
		stateless   bool
		origins     []string
		method      string
		headers     string
		status      int
		allowOrigin string // "" with status 204: not checked
		credentials bool
		params      []string // Mcp-Param-* headers that must be allowed
	}{
		{name: "allowed origin, modern call", opts: CORSOptions{AllowedOrigins: []string{appOrigin}},
			origins: []string{appOrigin}, method: "POST", headers: modernHeaders,
			status: 204, allowOrigin: appOrigin, params: []string{"mcp-param-region"}},
		{name: "allowed origin, legacy session request", opts: CORSOptions{AllowedOrigins: []string{appOrigin}},
			origins: []string{appOrigin}, method: "POST", headers: "content-type,mcp-protocol-version,mcp-session-id",
			status: 204, allowOrigin: appOrigin},
		{name: "allowed origin, resumption GET", opts: CORSOptions{AllowedOrigins: []string{appOrigin}},
			origins: []string{appOrigin}, method: "GET", headers: "last-event-id,mcp-protocol-version,mcp-session-id",
			status: 204, allowOrigin: appOrigin},
		{name: "allowed origin, DELETE", opts: CORSOptions{AllowedOrigins: []string{appOrigin}},
			origins: []string{appOrigin}, method: "DELETE", headers: "mcp-session-id",
			status: 204, allowOrigin: appOrigin},
		{name: "origin listed in other case with a slash", opts: CORSOptions{AllowedOrigins: []string{"HTTPS://App.Example.com/"}},
			origins: []string{appOrigin}, method: "POST", headers: "content-type",
			status: 204, allowOrigin: appOrigin},
		{name: "extra allowed header", opts: CORSOptions{AllowedOrigins: []string{appOrigin}, AllowedHeaders: []string{"Traceparent", "bad name\r\n"}},
			origins: []string{appOrigin}, method: "POST", headers: "content-type,traceparent",
			status: 204, allowOrigin: appOrigin},
		{name: "credentials to a listed origin", opts: CORSOptions{AllowedOrigins: []string{appOrigin}, AllowCredentials: true},
			origins: []string{appOrigin}, method: "POST", headers: "content-type",
			status: 204, allowOrigin: appOrigin, credentials: true},
		{name: "wildcard", opts: CORSOptions{AllowedOrigins: []string{"*"}},
			origins: []string{appOrigin}, method: "POST", headers: modernHeaders,
			status: 204, allowOrigin: "*", params: []string{"mcp-param-region"}},
		{name: "wildcard never with credentials", opts: CORSOptions{AllowedOrigins: []string{"*"}, AllowCredentials: true},
			origins: []string{appOrigin}, method: "POST", headers: "content-type",
			status: 204, allowOrigin: "*"},
		{name: "wildcard and a listed origin with credentials", opts: CORSOptions{AllowedOrigins: []string{"*", appOrigin}, AllowCredentials: true},
			origins: []string{appOrigin}, method: "POST", headers: "content-type",
			status: 204, allowOrigin: appOrigin, credentials: true},

		// Refusals: 403, no CORS header.
		{name: "origin not allowed", opts: CORSOptions{AllowedOrigins: []string{appOrigin}},
			origins: []string{evilOrigin}, method: "POST", headers: "content-type", status: 403},
		{name: "loopback origin accepted by the Origin check but not listed", opts: CORSOptions{AllowedOrigins: []string{appOrigin}},
			origins: []string{"http://localhost:3000"}, method: "POST", headers: "content-type", status: 403},
		{name: "empty allow-list", opts: CORSOptions{},
			origins: []string{appOrigin}, method: "POST", headers: "content-type", status: 403},
		{name: "duplicate Origin headers", opts: CORSOptions{AllowedOrigins: []string{appOrigin, evilOrigin}},
			origins: []string{appOrigin, evilOrigin}, method: "POST", headers: "content-type", status: 403},
		{name: "same Origin twice", opts: CORSOptions{AllowedOrigins: []string{appOrigin}},
			origins: []string{appOrigin, appOrigin}, method: "POST", headers: "content-type", status: 403},
		{name: "null origin, even listed", opts: CORSOptions{AllowedOrigins: []string{"null"}},
			origins: []string{"null"}, method: "POST", headers: "content-type", status: 403},
		{name: "null origin under wildcard", opts: CORSOptions{AllowedOrigins: []string{"*"}},
			origins: []string{"null"}, method: "POST", headers: "content-type", status: 403},
		{name: "wildcard refuses a non-web scheme", opts: CORSOptions{AllowedOrigins: []string{"*"}},
			origins: []string{"chrome-extension://abcdef"}, method: "POST", headers: "content-type", status: 403},
		{name: "method not served", opts: CORSOptions{AllowedOrigins: []string{appOrigin}},
			origins: []string{appOrigin}, method: "PUT", headers: "content-type", status: 403},
		{name: "GET on a stateless handler", opts: CORSOptions{AllowedOrigins: []string{appOrigin}}, stateless: true,
			origins: []string{appOrigin}, method: "GET", headers: "mcp-session-id", status: 403},
		{name: "header not allowed", opts: CORSOptions{AllowedOrigins: []string{appOrigin}, AllowedHeaders: []string{"x secret"}},
			origins: []string{appOrigin}, method: "POST", headers: "content-type,x-secret", status: 403},
		{name: "bare Mcp-Param- prefix", opts: CORSOptions{AllowedOrigins: []string{appOrigin}},
			origins: []string{appOrigin}, method: "POST", headers: "mcp-param-", status: 403},
		{name: "header name not a token", opts: CORSOptions{AllowedOrigins: []string{appOrigin}},
			origins: []string{appOrigin}, method: "POST", headers: "mcp-param-a b", status: 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			h := NewHandler(echoServer(), &Options{CORS: &opts, Stateless: tc.stateless})
			defer h.Close()
			w := httptest.NewRecorder()
			h.ServeHTTP(w, preflight(t, tc.origins, tc.method, tc.headers))
			res := w.Result()
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, tc.status, w.Body.Bytes())
			}
			if !slices.Contains(headerList(strings.Join(res.Header.Values("Vary"), ",")), "origin") {
				t.Errorf("Vary %q lacks Origin", res.Header.Values("Vary"))
			}
			if tc.status != http.StatusNoContent {
				wantNoCORS(t, res.Header)
				if m := httpenv.ParseMsg(t, w.Body.Bytes()); m.Error == nil || m.Error.Code != mcp.CodeInvalidRequest {
					t.Errorf("403 body %s, want a -32600 error", w.Body.Bytes())
				}
				return
			}
			if got := res.Header.Get("Access-Control-Allow-Origin"); got != tc.allowOrigin {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, tc.allowOrigin)
			}
			if got := res.Header.Get("Access-Control-Allow-Credentials"); (got == "true") != tc.credentials {
				t.Errorf("Access-Control-Allow-Credentials %q, want credentials=%v", got, tc.credentials)
			}
			methods := headerList(res.Header.Get("Access-Control-Allow-Methods"))
			if !slices.Contains(methods, strings.ToLower(tc.method)) {
				t.Errorf("Access-Control-Allow-Methods %q lacks %s", methods, tc.method)
			}
			allowed := headerList(res.Header.Get("Access-Control-Allow-Headers"))
			for _, want := range headerList(tc.headers) {
				if !slices.Contains(allowed, want) {
					t.Errorf("Access-Control-Allow-Headers %q lacks requested %s", allowed, want)
				}
			}
			for _, want := range []string{"authorization", "content-type", "last-event-id", "mcp-method", "mcp-name", "mcp-protocol-version", "mcp-session-id"} {
				if !slices.Contains(allowed, want) {
					t.Errorf("Access-Control-Allow-Headers %q lacks %s", allowed, want)
				}
			}
			if slices.Contains(allowed, "*") {
				t.Errorf("Access-Control-Allow-Headers %q has a wildcard (which never covers Authorization)", allowed)
			}
			if got := res.Header.Get("Access-Control-Max-Age"); got != "600" {
				t.Errorf("Access-Control-Max-Age %q, want the default 600", got)
			}
		})
	}
}

func TestCORSPreflightMethodsAndMaxAge(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stateless bool
		maxAge    time.Duration
		methods   string
		header    string
	}{
		{"sessions", false, 0, "POST, GET, DELETE, OPTIONS", "600"},
		{"stateless", true, 0, "POST, OPTIONS", "600"},
		{"max age set", false, 90 * time.Second, "POST, GET, DELETE, OPTIONS", "90"},
		{"no max age", false, -1, "POST, GET, DELETE, OPTIONS", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHandler(echoServer(), &Options{Stateless: tc.stateless, CORS: &CORSOptions{AllowedOrigins: []string{appOrigin}, MaxAge: tc.maxAge}})
			defer h.Close()
			w := httptest.NewRecorder()
			h.ServeHTTP(w, preflight(t, []string{appOrigin}, "POST", ""))
			if w.Code != http.StatusNoContent {
				t.Fatalf("status %d: %s", w.Code, w.Body.Bytes())
			}
			if got := w.Header().Get("Access-Control-Allow-Methods"); got != tc.methods {
				t.Errorf("Access-Control-Allow-Methods %q, want %q", got, tc.methods)
			}
			if got, ok := w.Header()["Access-Control-Max-Age"]; strings.Join(got, "") != tc.header || (tc.header == "") == ok {
				t.Errorf("Access-Control-Max-Age %q, want %q", got, tc.header)
			}
		})
	}
}

// TestCORSPrivateNetwork: the Private Network Access preflight of a
// public page calling a loopback server is allowed for a listed origin,
// not through "*".
func TestCORSPrivateNetwork(t *testing.T) {
	for _, tc := range []struct {
		origins []string
		want    string
	}{{[]string{appOrigin}, "true"}, {[]string{"*"}, ""}} {
		h := NewHandler(echoServer(), &Options{CORS: &CORSOptions{AllowedOrigins: tc.origins}})
		r := preflight(t, []string{appOrigin}, "POST", "content-type")
		r.Header.Set("Access-Control-Request-Private-Network", "true")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if got := w.Header().Get("Access-Control-Allow-Private-Network"); w.Code != http.StatusNoContent || got != tc.want {
			t.Errorf("allowed %q: status %d, Access-Control-Allow-Private-Network %q, want %q", tc.origins, w.Code, got, tc.want)
		}
		h.Close()
	}
}

// TestCORSExtraHeaders: ExposedHeaders and AllowedHeaders add to the
// MCP ones; names that are not header tokens are dropped.
func TestCORSExtraHeaders(t *testing.T) {
	h := NewHandler(echoServer(), &Options{CORS: &CORSOptions{AllowedOrigins: []string{appOrigin},
		ExposedHeaders: []string{"X-Trace-Id", "bad\r\nname"}, AllowedHeaders: []string{"Traceparent", "a b"}}})
	defer h.Close()
	r := preflight(t, []string{appOrigin}, "", "")
	r.Method = http.MethodGet
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if got := w.Header().Get("Access-Control-Expose-Headers"); got != "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After, X-Trace-Id" {
		t.Errorf("Access-Control-Expose-Headers %q", got)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, preflight(t, []string{appOrigin}, "POST", "traceparent"))
	if allowed := headerList(w.Header().Get("Access-Control-Allow-Headers")); w.Code != http.StatusNoContent || !slices.Contains(allowed, "traceparent") || slices.Contains(allowed, "a b") {
		t.Errorf("status %d, Access-Control-Allow-Headers %q", w.Code, allowed)
	}
}

// TestCORSOff: without Options.CORS a preflight is refused as before
// (405 with no CORS header) and answers carry no CORS header.
func TestCORSOff(t *testing.T) {
	h := NewHandler(echoServer(), nil)
	defer h.Close()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, preflight(t, []string{"http://localhost:3000"}, "POST", "content-type"))
	if w.Code != http.StatusMethodNotAllowed {
		t.Fatalf("status %d, want 405", w.Code)
	}
	wantNoCORS(t, w.Header())
	w = httptest.NewRecorder()
	h.ServeHTTP(w, preflight(t, []string{appOrigin}, "POST", "content-type"))
	if w.Code != http.StatusForbidden {
		t.Fatalf("status %d, want 403 (Origin not allowed)", w.Code)
	}
	wantNoCORS(t, w.Header())
}

// TestCORSHostCheckStays: an allowed CORS origin does not make a Host
// acceptable; a rebinding page is still refused.
func TestCORSHostCheckStays(t *testing.T) {
	h := NewHandler(echoServer(), &Options{CORS: &CORSOptions{AllowedOrigins: []string{"*"}}})
	defer h.Close()
	r := preflight(t, []string{"http://evil.example.com:8080"}, "POST", "content-type")
	r.Host = "evil.example.com:8080"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden {
		t.Fatalf("status %d, want 403 (Host not allowed)", w.Code)
	}
	wantNoCORS(t, w.Header())
}

// wantCORSAnswer checks the headers of an answer to an allowed
// cross-origin request.
func wantCORSAnswer(t *testing.T, resp *http.Response, origin string) {
	t.Helper()
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != origin {
		t.Errorf("Access-Control-Allow-Origin %q, want %q", got, origin)
	}
	exposed := headerList(resp.Header.Get("Access-Control-Expose-Headers"))
	for _, want := range []string{"mcp-session-id", "mcp-protocol-version", "www-authenticate", "retry-after"} {
		if !slices.Contains(exposed, want) {
			t.Errorf("Access-Control-Expose-Headers %q lacks %s", exposed, want)
		}
	}
	if !slices.Contains(headerList(strings.Join(resp.Header.Values("Vary"), ",")), "origin") {
		t.Errorf("Vary %q lacks Origin", resp.Header.Values("Vary"))
	}
}

// TestCORSRequests: real requests from an allowed origin over loopback,
// a legacy session (initialize, then a call with the Mcp-Session-Id the
// page reads) and a 2026-07-28 tools/call, get the CORS headers; one from
// an origin not allowed keeps the Origin check's 403.
func TestCORSRequests(t *testing.T) {
	e := newModernEnv(t, echoServer(), &Options{CORS: &CORSOptions{AllowedOrigins: []string{appOrigin}}})
	origin := httpenv.WithHeader("Origin", appOrigin)

	resp := e.legacy.Post("", httpenv.InitBody(e.legacy.ID(), "{}"), origin)
	wantCORSAnswer(t, resp, appOrigin)
	sid := resp.Header.Get("Mcp-Session-Id")
	if msg := e.legacy.ReadJSON(resp); msg.Error != nil || sid == "" {
		t.Fatalf("initialize from %s: session %q, %s", appOrigin, sid, msg.Raw)
	}
	resp = e.legacy.Post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, origin)
	wantCORSAnswer(t, resp, appOrigin)
	e.legacy.Expect202(resp)
	resp = e.legacy.Post(sid, `{"jsonrpc":"2.0","id":7,"method":"ping"}`, origin)
	wantCORSAnswer(t, resp, appOrigin)
	if msg := e.legacy.ReadJSON(resp); msg.Error != nil {
		t.Fatalf("ping in the session: %s", msg.Raw)
	}

	body := httpenv.Req26(e.ID(), "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}})
	e.Obs(wirecheck.ClientToServer, []byte(body))
	resp = e.Do(http.MethodPost, "", body, append(httpenv.H26("tools/call", "echo"), origin)...)
	wantCORSAnswer(t, resp, appOrigin)
	msg := e.ReadJSON(resp)
	e.Obs(wirecheck.ServerToClient, []byte(msg.Raw))
	if msg.Error != nil || !strings.Contains(string(msg.Raw), `hi`) {
		t.Fatalf("2026 tools/call from %s: %s", appOrigin, msg.Raw)
	}

	resp = e.legacy.Post("", httpenv.InitBody(e.legacy.ID(), "{}"), httpenv.WithHeader("Origin", evilOrigin))
	e.legacy.ExpectStatus(resp, http.StatusForbidden)
	wantNoCORS(t, resp.Header)
}

// TestCORSWrapsAuth: Handler.CORS in front of authorization middleware
// answers the preflight (which carries no token) before it, and puts the
// CORS headers on the middleware's 401 so the page can read its
// WWW-Authenticate; an origin not allowed is refused before it too.
func TestCORSWrapsAuth(t *testing.T) {
	h := NewHandler(echoServer(), &Options{CORS: &CORSOptions{AllowedOrigins: []string{appOrigin}}})
	defer h.Close()
	var reached int
	requireToken := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	wrapped := h.CORS(requireToken)

	w := httptest.NewRecorder()
	wrapped.ServeHTTP(w, preflight(t, []string{appOrigin}, "POST", "authorization,content-type"))
	if w.Code != http.StatusNoContent || reached != 0 {
		t.Fatalf("preflight: status %d, middleware reached %d times; want 204 before it", w.Code, reached)
	}

	r := preflight(t, []string{appOrigin}, "", "")
	r.Method = http.MethodPost
	w = httptest.NewRecorder()
	wrapped.ServeHTTP(w, r)
	if w.Code != http.StatusUnauthorized || reached != 1 {
		t.Fatalf("POST without token: status %d, middleware reached %d times", w.Code, reached)
	}
	wantCORSAnswer(t, w.Result(), appOrigin)

	r = preflight(t, []string{evilOrigin}, "", "")
	r.Method = http.MethodPost
	w = httptest.NewRecorder()
	wrapped.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden || reached != 1 {
		t.Fatalf("POST from %s: status %d, middleware reached %d times; want 403 before it", evilOrigin, w.Code, reached)
	}
	wantNoCORS(t, w.Header())

	if got := NewHandler(echoServer(), nil); got.CORS(requireToken) == nil {
		t.Fatal("CORS without Options.CORS returned nil")
	}
}

// TestCORSLegacySSE: the 2024-11-05 transport (Options.LegacySSE) gets
// the same treatment: its GET stream and its POSTs carry the CORS
// headers for an allowed origin.
func TestCORSLegacySSE(t *testing.T) {
	e := newHTTPEnv(t, sseServer(), &Options{LegacySSE: true, CORS: &CORSOptions{AllowedOrigins: []string{appOrigin}}})
	c, resp := openSSE(t, e, http.Header{"Origin": {appOrigin}})
	if c == nil {
		t.Fatalf("GET from %s: status %d", appOrigin, resp.StatusCode)
	}
	wantCORSAnswer(t, resp, appOrigin)
	req, err := http.NewRequestWithContext(e.Ctx, http.MethodPost, e.TS.URL+c.endpoint, strings.NewReader(initBody(1, "2024-11-05", "{}")))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", appOrigin)
	post, err := e.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	post.Body.Close()
	if post.StatusCode != http.StatusAccepted {
		t.Fatalf("POST to %s: status %d, want 202", c.endpoint, post.StatusCode)
	}
	wantCORSAnswer(t, post, appOrigin)
	if m := c.next(); m.Error != nil {
		t.Fatalf("initialize over the stream: %s", m.Raw)
	}
}
