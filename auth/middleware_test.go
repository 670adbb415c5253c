package auth

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

const testMetaURL = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"

// seen is what the wrapped handler observed.
type seen struct {
	calls   int
	info    *TokenInfo
	authz   string
	body    string
	hasAuth bool
}

func echoHandler(s *seen) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls++
		s.info = TokenInfoFrom(r.Context())
		s.authz = r.Header.Get("Authorization")
		_, s.hasAuth = r.Header["Authorization"]
		b, _ := io.ReadAll(r.Body)
		s.body = string(b)
		w.WriteHeader(http.StatusOK)
	})
}

// staticVerifier accepts the tokens it knows.
type staticVerifier map[string]*TokenInfo

func (sv staticVerifier) Verify(ctx context.Context, token string) (*TokenInfo, error) {
	switch token {
	case "unavailable":
		return nil, ErrUnavailable
	case "nil":
		return nil, nil
	}
	if ti, ok := sv[token]; ok {
		return ti, nil
	}
	return nil, ErrInvalidToken
}

func callBody(method, name string) string {
	if name == "" {
		return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{}}`
	}
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"name":"` + name + `","arguments":{}}}`
}

type reqSpec struct {
	method string
	target string
	authz  []string
	body   string
	hdr    map[string]string
}

func do(t *testing.T, h http.Handler, rs reqSpec) *httptest.ResponseRecorder {
	t.Helper()
	if rs.method == "" {
		rs.method = http.MethodPost
	}
	if rs.target == "" {
		rs.target = "/mcp"
	}
	var body io.Reader
	if rs.body != "" {
		body = strings.NewReader(rs.body)
	}
	r := httptest.NewRequest(rs.method, rs.target, body)
	for _, a := range rs.authz {
		r.Header.Add("Authorization", a)
	}
	for k, v := range rs.hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestRequireChallenges: the status codes and exact WWW-Authenticate
// headers of MCP authorization / RFC 6750 §3.
func TestRequireChallenges(t *testing.T) {
	sv := staticVerifier{
		"good":    {Subject: "alice", Issuer: "https://as", Scopes: []string{"mcp", "tools"}},
		"base":    {Subject: "bob", Issuer: "https://as", Scopes: []string{"mcp"}},
		"expired": {Subject: "carol", Scopes: []string{"mcp", "tools"}, Expiration: time.Now().Add(-2 * DefaultLeeway)},
		"leeway":  {Subject: "erin", Scopes: []string{"mcp", "tools"}, Expiration: time.Now().Add(-DefaultLeeway / 2)},
		"future":  {Subject: "dave", Scopes: []string{"mcp", "tools", "admin"}, Expiration: time.Now().Add(time.Hour)},
	}
	s := &seen{}
	h := mustRequire(sv, &Options{
		Resource:     testResource,
		Scopes:       []string{"mcp", "offline_access"},
		MethodScopes: map[string][]string{"tools/call": {"tools"}},
		ToolScopes:   map[string][]string{"delete": {"admin", "tools", "offline_access"}},
	})(echoHandler(s))

	const (
		plain   = `Bearer resource_metadata="` + testMetaURL + `", scope="mcp"`
		invalid = `Bearer error="invalid_token", resource_metadata="` + testMetaURL + `", scope="mcp"`
		badReq  = `Bearer error="invalid_request", resource_metadata="` + testMetaURL + `"`
	)
	for _, tc := range []struct {
		name   string
		rs     reqSpec
		status int
		www    string
		oauth  string // the error member of the body
	}{
		{"no token", reqSpec{body: callBody("tools/list", "")}, 401, plain, "invalid_token"},
		{"no token GET", reqSpec{method: http.MethodGet}, 401, plain, "invalid_token"},
		{"other scheme", reqSpec{authz: []string{"Basic YWxhZGRpbjpvcGVuc2VzYW1l"}}, 401, plain, "invalid_token"},
		{"unknown token", reqSpec{authz: []string{"Bearer nope"}, body: callBody("tools/list", "")}, 401, invalid, "invalid_token"},
		{"verifier returns nil", reqSpec{authz: []string{"Bearer nil"}}, 401, invalid, "invalid_token"},
		{"expired token info", reqSpec{authz: []string{"Bearer expired"}}, 401, invalid, "invalid_token"},
		{"two headers", reqSpec{authz: []string{"Bearer good", "Bearer good"}}, 400, badReq, "invalid_request"},
		{"scheme alone", reqSpec{authz: []string{"Bearer"}}, 400, badReq, "invalid_request"},
		{"scheme and space", reqSpec{authz: []string{"Bearer "}}, 400, badReq, "invalid_request"},
		{"two tokens", reqSpec{authz: []string{"Bearer good other"}}, 400, badReq, "invalid_request"},
		{"bad characters", reqSpec{authz: []string{"Bearer go\"od"}}, 400, badReq, "invalid_request"},
		{"only padding", reqSpec{authz: []string{"Bearer =="}}, 400, badReq, "invalid_request"},
		{"empty header", reqSpec{authz: []string{""}}, 400, badReq, "invalid_request"},
		{"query token", reqSpec{target: "/mcp?access_token=good"}, 400, badReq, "invalid_request"},
		{"query token with header", reqSpec{target: "/mcp?access_token=good", authz: []string{"Bearer good"}}, 400, badReq, "invalid_request"},
		{"expired within the leeway", reqSpec{authz: []string{"Bearer leeway"}}, 200, "", ""},
		{"expiration in the future", reqSpec{authz: []string{"Bearer future"}}, 200, "", ""},
		{"method scope missing", reqSpec{authz: []string{"Bearer base"}, body: callBody("tools/call", "echo")}, 403,
			`Bearer error="insufficient_scope", resource_metadata="` + testMetaURL + `", scope="mcp tools"`, "insufficient_scope"},
		{"tool scope missing", reqSpec{authz: []string{"Bearer good"}, body: callBody("tools/call", "delete")}, 403,
			`Bearer error="insufficient_scope", resource_metadata="` + testMetaURL + `", scope="mcp tools admin"`, "insufficient_scope"},
		// Before the token is verified the body is not read: the 401
		// names the base scopes, plus those the SEP-2243 headers hint at.
		{"no token, body not read for the 401", reqSpec{body: callBody("tools/call", "delete")}, 401, plain, "invalid_token"},
		{"invalid token, body not read for the 401", reqSpec{authz: []string{"Bearer nope"}, body: callBody("tools/call", "delete")}, 401, invalid, "invalid_token"},
		{"no token, tool scopes from the headers", reqSpec{body: callBody("tools/call", "delete"), hdr: map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "delete"}}, 401,
			`Bearer resource_metadata="` + testMetaURL + `", scope="mcp tools admin"`, "invalid_token"},
		{"invalid token, base64 tool name header", reqSpec{authz: []string{"Bearer nope"}, hdr: map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "=?base64?ZGVsZXRl?="}}, 401,
			`Bearer error="invalid_token", resource_metadata="` + testMetaURL + `", scope="mcp tools admin"`, "invalid_token"},
		{"no token, method scopes from the header", reqSpec{hdr: map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "=?base64?!!?="}}, 401,
			`Bearer resource_metadata="` + testMetaURL + `", scope="mcp tools"`, "invalid_token"},
		{"headers do not grant", reqSpec{authz: []string{"Bearer good"}, body: callBody("tools/call", "delete"), hdr: map[string]string{"Mcp-Method": "tools/list"}}, 403,
			`Bearer error="insufficient_scope", resource_metadata="` + testMetaURL + `", scope="mcp tools admin"`, "insufficient_scope"},
		{"no token, unreadable body", reqSpec{body: `{"jsonrpc":`}, 401, plain, "invalid_token"},
		{"granted", reqSpec{authz: []string{"Bearer good"}, body: callBody("tools/call", "echo")}, 200, "", ""},
		{"scheme case-insensitive", reqSpec{authz: []string{"bEARER good"}, body: callBody("tools/list", "")}, 200, "", ""},
		{"extra spaces", reqSpec{authz: []string{"Bearer   good  "}}, 200, "", ""},
		{"unavailable", reqSpec{authz: []string{"Bearer unavailable"}}, 503, "", "temporarily_unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.calls
			w := do(t, h, tc.rs)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d (%s)", w.Code, tc.status, w.Body)
			}
			if got := w.Header().Get("WWW-Authenticate"); got != tc.www {
				t.Errorf("WWW-Authenticate\n got %s\nwant %s", got, tc.www)
			}
			if tc.status == 200 {
				if s.calls != before+1 {
					t.Error("the handler did not run")
				}
				return
			}
			if s.calls != before {
				t.Error("the handler ran")
			}
			var body struct {
				Error string `json:"error"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error != tc.oauth {
				t.Errorf("body %s, want error %q", w.Body, tc.oauth)
			}
			if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q", cc)
			}
		})
	}
}

// TestRequireBaseScope: a token without the scopes every request needs
// gets 403 on any method, GET included.
func TestRequireBaseScope(t *testing.T) {
	sv := staticVerifier{"t": {Subject: "a", Scopes: []string{"other"}}}
	h := mustRequire(sv, &Options{Resource: testResource, Scopes: []string{"mcp:read", "mcp:write"}})(echoHandler(&seen{}))
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		w := do(t, h, reqSpec{method: m, authz: []string{"Bearer t"}})
		want := `Bearer error="insufficient_scope", resource_metadata="` + testMetaURL + `", scope="mcp:read mcp:write"`
		if w.Code != http.StatusForbidden || w.Header().Get("WWW-Authenticate") != want {
			t.Errorf("%s: %d %q", m, w.Code, w.Header().Get("WWW-Authenticate"))
		}
	}
	// No scopes configured: the challenge has no scope parameter.
	h = mustRequire(sv, &Options{ResourceMetadataURL: "https://x/prm"})(echoHandler(&seen{}))
	w := do(t, h, reqSpec{})
	if got := w.Header().Get("WWW-Authenticate"); got != `Bearer resource_metadata="https://x/prm"` {
		t.Errorf("no scopes: %q", got)
	}
}

// TestRequireContext: the handler sees the token info, the principal,
// the body intact, and no Authorization header.
func TestRequireContext(t *testing.T) {
	ti := &TokenInfo{Subject: "alice", Issuer: "https://as", Scopes: []string{"mcp", "tools"}}
	s := &seen{}
	h := mustRequire(staticVerifier{"tok": ti}, &Options{Resource: testResource, MethodScopes: map[string][]string{"tools/call": {"tools"}}})(echoHandler(s))
	body := callBody("tools/call", "echo")
	w := do(t, h, reqSpec{authz: []string{"Bearer tok"}, body: body})
	if w.Code != 200 {
		t.Fatalf("status %d", w.Code)
	}
	if s.info != ti {
		t.Errorf("TokenInfoFrom = %+v", s.info)
	}
	if s.hasAuth {
		t.Errorf("the Authorization header reached the handler: %q", s.authz)
	}
	if s.body != body {
		t.Errorf("body %q, want %q", s.body, body)
	}
	if TokenInfoFrom(context.Background()) != nil || HasScopes(context.Background(), "mcp") {
		t.Error("an unauthenticated context has token info")
	}
	ctx := WithTokenInfo(context.Background(), ti)
	if !HasScopes(ctx, "mcp", "tools") || HasScopes(ctx, "admin") {
		t.Error("HasScopes")
	}
	if ti.Principal() != "https://as alice" || (&TokenInfo{Subject: "x"}).Principal() != "x" {
		t.Error("Principal")
	}
}

// TestRequirePeek: bodies the server's strict decoder refuses are
// refused before any scope decision (fail closed), oversized bodies get
// 413, and responses to server requests need only the base scopes.
func TestRequirePeek(t *testing.T) {
	sv := staticVerifier{
		"all":  {Subject: "a", Scopes: []string{"mcp", "tools", "admin"}},
		"base": {Subject: "b", Scopes: []string{"mcp"}},
	}
	s := &seen{}
	h := mustRequire(sv, &Options{
		Resource:     testResource,
		Scopes:       []string{"mcp"},
		ToolScopes:   map[string][]string{"admin": {"admin"}},
		MaxBodyBytes: 256,
	})(echoHandler(s))
	for _, tc := range []struct {
		name, token, body string
		status            int
	}{
		{"duplicate name", "base", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"admin"}}`, 400},
		{"duplicate method", "base", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"admin"}}`, 400},
		{"case-folded name is another member", "base", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"admin"}}`, 200},
		{"name not a string", "base", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":["admin"]}}`, 400},
		{"batch", "base", `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"admin"}}]`, 400},
		{"not JSON", "base", `{"jsonrpc":`, 400},
		{"too big", "all", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"admin","arguments":{"x":"` + strings.Repeat("x", 300) + `"}}}`, 413},
		{"escaped name", "base", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\u0061dmin"}}`, 403},
		{"response", "base", `{"jsonrpc":"2.0","id":7,"result":{}}`, 200},
		{"notification", "base", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 200},
		{"admin granted", "all", callBody("tools/call", "admin"), 200},
		{"admin refused", "base", callBody("tools/call", "admin"), 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := do(t, h, reqSpec{authz: []string{"Bearer " + tc.token}, body: tc.body})
			if w.Code != tc.status {
				t.Errorf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if w.Code == 200 && s.body != tc.body {
				t.Errorf("body not restored: %q", s.body)
			}
		})
	}
}

// TestRequireImplies: a scope hierarchy satisfies needed scopes.
func TestRequireImplies(t *testing.T) {
	sv := staticVerifier{"w": {Subject: "a", Scopes: []string{"files:write"}}}
	implies := func(g, n string) bool { return g == n || (g == "files:write" && n == "files:read") }
	h := mustRequire(sv, &Options{Resource: testResource, Scopes: []string{"files:read"}, Implies: implies})(echoHandler(&seen{}))
	if w := do(t, h, reqSpec{authz: []string{"Bearer w"}}); w.Code != 200 {
		t.Errorf("files:write for files:read: %d", w.Code)
	}
}

// TestRequireNeverLogsTokens: rejection reasons are logged, tokens not.
func TestRequireNeverLogsTokens(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	const secret = "eyJsecret-token-value"
	sv := VerifierFunc(func(ctx context.Context, token string) (*TokenInfo, error) {
		if token == secret+"ok" {
			return &TokenInfo{Subject: "a"}, nil
		}
		return nil, errors.Join(ErrInvalidToken, errors.New("bad signature"))
	})
	h := mustRequire(sv, &Options{Resource: testResource, Scopes: []string{"x"}, Logger: log})(echoHandler(&seen{}))
	for _, a := range []string{"Bearer " + secret, "Bearer " + secret + "ok", "Bearer " + secret + " x", "Basic " + secret} {
		do(t, h, reqSpec{authz: []string{a}})
	}
	do(t, h, reqSpec{target: "/mcp?access_token=" + secret})
	if buf.Len() == 0 {
		t.Fatal("nothing logged")
	}
	if strings.Contains(buf.String(), "secret-token") {
		t.Errorf("a token was logged:\n%s", buf.String())
	}
}

// TestRequireErrors: misconfiguration is an error at construction, never
// a panic and never a middleware.
func TestRequireErrors(t *testing.T) {
	for name, c := range map[string]struct {
		v    Verifier
		opts *Options
		want string
	}{
		"nil verifier": {nil, &Options{Resource: testResource}, "needs a Verifier"},
		"no resource":  {staticVerifier{}, nil, "needs Options.Resource or Options.ResourceMetadataURL"},
		"relative URI": {staticVerifier{}, &Options{Resource: "/mcp"}, "auth: "},
		"fragment":     {staticVerifier{}, &Options{Resource: testResource + "#x"}, "auth: "},
	} {
		mw, err := Require(c.v, c.opts)
		if err == nil || mw != nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "auth: ") {
			t.Errorf("%s: Require = (%v, %v), want no middleware and an error containing %q", name, mw != nil, err, c.want)
		}
	}
}

// endlessBody is a request body that never ends and counts the bytes
// read from it.
type endlessBody struct {
	mu   sync.Mutex
	read int64
}

func (b *endlessBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range p {
		p[i] = ' '
	}
	b.read += int64(len(p))
	return len(p), nil
}

func (b *endlessBody) Close() error { return nil }

func (b *endlessBody) n() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.read
}

// TestRequireVerifiesBeforeReading: the bearer token is checked before
// the body is read, so an unauthenticated client cannot make the server
// read its body (up to MaxBodyBytes) by sending one; an authenticated
// request that needs per-method scopes is read, bounded as before.
func TestRequireVerifiesBeforeReading(t *testing.T) {
	sv := staticVerifier{"good": {Subject: "a", Scopes: []string{"mcp"}}}
	s := &seen{}
	h := mustRequire(sv, &Options{
		Resource:     testResource,
		Scopes:       []string{"mcp"},
		MethodScopes: map[string][]string{"tools/call": {"tools"}},
		ToolScopes:   map[string][]string{"delete": {"admin"}},
		MaxBodyBytes: 1024,
	})(echoHandler(s))
	for _, tc := range []struct {
		name   string
		authz  []string
		status int
		maxLen int64 // most bytes that may be read
	}{
		{"no token", nil, http.StatusUnauthorized, 0},
		{"invalid token", []string{"Bearer nope"}, http.StatusUnauthorized, 0},
		{"malformed header", []string{"Bearer a b"}, http.StatusBadRequest, 0},
		{"unavailable", []string{"Bearer unavailable"}, http.StatusServiceUnavailable, 0},
		{"authenticated", []string{"Bearer good"}, http.StatusRequestEntityTooLarge, 1025},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := &endlessBody{}
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			r.Body = body
			r.ContentLength = -1
			for _, a := range tc.authz {
				r.Header.Add("Authorization", a)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.status {
				t.Errorf("status %d, want %d", w.Code, tc.status)
			}
			if n := body.n(); n > tc.maxLen {
				t.Errorf("%d bytes of the body read, want at most %d", n, tc.maxLen)
			}
			if tc.maxLen > 0 && body.n() == 0 {
				t.Error("the authenticated request's body was not read")
			}
		})
	}
	if s.calls != 0 {
		t.Errorf("the handler ran %d times", s.calls)
	}
}
