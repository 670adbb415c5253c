package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

func mustOK(t *testing.T, e *env, body string) {
	t.Helper()
	got, err := e.post(body)
	if err != nil {
		t.Fatalf("post: %v (%s)", err, got)
	}
	if got != "ok:"+body {
		t.Fatalf("answer %q, want %q", got, "ok:"+body)
	}
}

func TestParseChallenges(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Challenge
	}{
		{`Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", scope="a b"`,
			[]Challenge{{Scheme: "Bearer", Params: map[string]string{"resource_metadata": "https://x/.well-known/oauth-protected-resource", "scope": "a b"}}}},
		{`bearer Scope = "a,b" ,error=insufficient_scope`,
			[]Challenge{{Scheme: "bearer", Params: map[string]string{"scope": "a,b", "error": "insufficient_scope"}}}},
		{`Basic realm="x", Bearer realm="a \"q\" \\", scope="s"`,
			[]Challenge{
				{Scheme: "Basic", Params: map[string]string{"realm": "x"}},
				{Scheme: "Bearer", Params: map[string]string{"realm": `a "q" \`, "scope": "s"}},
			}},
		{`Negotiate abc123==, Bearer`,
			[]Challenge{{Scheme: "Negotiate", Token68: "abc123==", Params: map[string]string{}}, {Scheme: "Bearer", Params: map[string]string{}}}},
		{`Bearer`, []Challenge{{Scheme: "Bearer", Params: map[string]string{}}}},
		{`, , Bearer error="invalid_token", , scope="x"`,
			[]Challenge{{Scheme: "Bearer", Params: map[string]string{"error": "invalid_token", "scope": "x"}}}},
	} {
		got := ParseChallenges([]string{tc.in})
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseChallenges(%q)\n got %#v\nwant %#v", tc.in, got, tc.want)
		}
	}
	h := http.Header{}
	h.Add("WWW-Authenticate", `Basic realm="x"`)
	h.Add("WWW-Authenticate", `Bearer scope="s1"`)
	if p := BearerChallenge(h); p["scope"] != "s1" {
		t.Errorf("BearerChallenge over two fields = %v", p)
	}
}

func TestMetadataURLs(t *testing.T) {
	got, err := serverMetadataURLs("https://as.example.com")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://as.example.com/.well-known/oauth-authorization-server", "https://as.example.com/.well-known/openid-configuration"}
	if !slices.Equal(got, want) {
		t.Errorf("no path: %v", got)
	}
	got, _ = serverMetadataURLs("https://as.example.com/tenant1")
	want = []string{
		"https://as.example.com/.well-known/oauth-authorization-server/tenant1",
		"https://as.example.com/.well-known/openid-configuration/tenant1",
		"https://as.example.com/tenant1/.well-known/openid-configuration",
	}
	if !slices.Equal(got, want) {
		t.Errorf("path: %v", got)
	}
	for _, bad := range []string{"ftp://x", "https://x/?q=1", "https://x/#f", "relative"} {
		if _, err := serverMetadataURLs(bad); err == nil {
			t.Errorf("issuer %q accepted", bad)
		}
	}
	u, _ := url.Parse("https://mcp.example.com/a/mcp")
	if got := resourceMetadataURLs(u); !slices.Equal(got, []string{
		"https://mcp.example.com/.well-known/oauth-protected-resource/a/mcp",
		"https://mcp.example.com/.well-known/oauth-protected-resource",
	}) {
		t.Errorf("PRM URLs %v", got)
	}
}

func TestResourceMatches(t *testing.T) {
	for _, tc := range []struct {
		resource, server string
		ok               bool
	}{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp", true},
		{"https://MCP.example.com:443/mcp/", "https://mcp.example.com/mcp", true},
		{"https://mcp.example.com", "https://mcp.example.com/mcp", true},
		{"https://mcp.example.com/", "https://mcp.example.com/mcp", true},
		{"https://mcp.example.com/a", "https://mcp.example.com/a/mcp", true},
		{"https://mcp.example.com/mc", "https://mcp.example.com/mcp", false},
		{"https://mcp.example.com/other", "https://mcp.example.com/mcp", false},
		{"https://evil.example.com/mcp", "https://mcp.example.com/mcp", false},
		{"http://mcp.example.com/mcp", "https://mcp.example.com/mcp", false},
		{"https://mcp.example.com:8443/mcp", "https://mcp.example.com/mcp", false},
		{"https://mcp.example.com/mcp#f", "https://mcp.example.com/mcp", false},
		{"", "https://mcp.example.com/mcp", false},
	} {
		u, _ := url.Parse(tc.server)
		if got := resourceMatches(tc.resource, u); got != tc.ok {
			t.Errorf("resourceMatches(%q, %q) = %v", tc.resource, tc.server, got)
		}
	}
	if r, _ := CanonicalResource("HTTPS://Mcp.Example.com:443/mcp/"); r != "https://mcp.example.com/mcp" {
		t.Errorf("CanonicalResource = %q", r)
	}
}

// TestFullFlow checks the default flow end to end over the fakes: PRM
// from the challenge, RFC 8414 metadata, DCR, PKCE, resource, state, and
// the replayed request body.
func TestFullFlow(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	mustOK(t, e, `{"n":1}`)
	mustOK(t, e, `{"n":2}`)
	if n := e.as.authorizations(); n != 1 {
		t.Fatalf("%d authorizations, want 1", n)
	}
	q := e.as.authQueries[0]
	for k, want := range map[string]string{
		"response_type": "code", "client_id": "dcr-client", "code_challenge_method": "S256",
		"redirect_uri": "http://localhost:3000/callback", "resource": e.rs.URL(),
	} {
		if q.Get(k) != want {
			t.Errorf("authorization %s = %q, want %q", k, q.Get(k), want)
		}
	}
	if q.Get("state") == "" || q.Get("code_challenge") == "" || q.Has("scope") {
		t.Errorf("authorization query %v", q)
	}
	f := e.as.tokenForms[0]
	if f.Get("resource") != e.rs.URL() || f.Get("code_verifier") == "" || f.Get("grant_type") != "authorization_code" {
		t.Errorf("token form %v", f)
	}
	reg := e.as.registrations[0]
	if reg["application_type"] != "native" || !reflect.DeepEqual(reg["redirect_uris"], []any{"http://localhost:3000/callback"}) ||
		!slices.Contains(reg["grant_types"].([]any), any("refresh_token")) {
		t.Errorf("registration %v", reg)
	}
	// PRM came from the challenge: no root PRM request.
	if slices.Contains(e.rs.requests(), "GET /.well-known/oauth-protected-resource") {
		t.Errorf("root PRM fetched: %v", e.rs.requests())
	}
	if e.tr.Token(e.rs.URL()) == nil {
		t.Error("Token() = nil after the flow")
	}
}

func TestDiscoveryPaths(t *testing.T) {
	t.Run("path-based PRM without header", func(t *testing.T) {
		e := newEnv(t, nil, func(s *fakeRS) { s.inHeader = false }, nil)
		mustOK(t, e, "x")
		if got := e.rs.requests(); !slices.Contains(got, "GET /.well-known/oauth-protected-resource/mcp") || slices.Contains(got, "GET /.well-known/oauth-protected-resource") {
			t.Errorf("RS requests %v", got)
		}
	})
	t.Run("root PRM", func(t *testing.T) {
		e := newEnv(t, nil, func(s *fakeRS) { s.inHeader = false; s.prmPath = "/.well-known/oauth-protected-resource" }, nil)
		mustOK(t, e, "x")
		got := e.rs.requests()
		if i, j := slices.Index(got, "GET /.well-known/oauth-protected-resource/mcp"), slices.Index(got, "GET /.well-known/oauth-protected-resource"); i < 0 || j < i {
			t.Errorf("RS requests %v", got)
		}
		if r := e.as.authQueries[0].Get("resource"); r != e.rs.srv.URL {
			t.Errorf("resource %q, want the PRM's %q", r, e.rs.srv.URL)
		}
	})
	t.Run("custom PRM location from header", func(t *testing.T) {
		e := newEnv(t, nil, func(s *fakeRS) { s.prmPath = "/custom/metadata.json" }, nil)
		mustOK(t, e, "x")
		if got := e.rs.requests(); slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "well-known") }) {
			t.Errorf("well-known fetched: %v", got)
		}
	})
	t.Run("header URL broken, well-known used", func(t *testing.T) {
		e := newEnv(t, nil, nil, nil)
		e.rs.prmURL = e.rs.srv.URL + "/nowhere"
		mustOK(t, e, "x")
		got := e.rs.requests()
		if i, j := slices.Index(got, "GET /nowhere"), slices.Index(got, "GET /.well-known/oauth-protected-resource/mcp"); i < 0 || j < i {
			t.Errorf("RS requests %v", got)
		}
	})
	t.Run("OIDC without path", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) { a.metadataPath = "/.well-known/openid-configuration" }, nil, nil)
		mustOK(t, e, "x")
		want := []string{"GET /.well-known/oauth-authorization-server", "GET /.well-known/openid-configuration"}
		if got := e.as.requests(); !slices.Equal(got[:2], want) {
			t.Errorf("AS requests %v", got)
		}
	})
	t.Run("RFC 8414 with path", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) { a.prefix = "/tenant1" }, nil, nil)
		mustOK(t, e, "x")
		if got := e.as.requests(); got[0] != "GET /.well-known/oauth-authorization-server/tenant1" {
			t.Errorf("AS requests %v", got)
		}
	})
	t.Run("OIDC path-insertion", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) {
			a.prefix = "/tenant1"
			a.metadataPath = "/.well-known/openid-configuration/tenant1"
		}, nil, nil)
		mustOK(t, e, "x")
	})
	t.Run("OIDC path-appended", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) {
			a.prefix = "/tenant1"
			a.metadataPath = "/tenant1/.well-known/openid-configuration"
		}, nil, nil)
		mustOK(t, e, "x")
		want := []string{
			"GET /.well-known/oauth-authorization-server/tenant1",
			"GET /.well-known/openid-configuration/tenant1",
			"GET /tenant1/.well-known/openid-configuration",
		}
		if got := e.as.requests(); !slices.Equal(got[:3], want) {
			t.Errorf("AS requests %v", got)
		}
		if slices.Contains(e.as.requests(), "GET /.well-known/oauth-authorization-server") {
			t.Error("root metadata fetched for an issuer with a path")
		}
	})
}

// legacyServer is a 2025-03-26 server: no PRM, the AS at its own origin.
func legacyServer(t *testing.T, withMetadata bool) (*env, *fakeAS) {
	e := &env{}
	a := &fakeAS{t: t, codes: map[string]string{}, issued: map[string]string{}, clientID: "legacy-client", methods: []string{"none"}}
	rs := &fakeRS{as: func() *fakeAS { return a }, prmPath: "-"}
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" {
			rs.serve(w, r)
			return
		}
		if !withMetadata && strings.HasPrefix(r.URL.Path, "/.well-known/") {
			http.NotFound(w, r)
			return
		}
		a.serve(w, r)
	})
	rs.srv = newServer(t, mux)
	a.srv = rs.srv
	e.as, e.rs = a, rs
	e.tr = &Transport{Authorize: Headless(nil), RedirectURL: "http://localhost:3000/callback"}
	e.hc = &http.Client{Transport: e.tr}
	return e, a
}

func TestLegacy20250326(t *testing.T) {
	t.Run("metadata at the server root", func(t *testing.T) {
		e, a := legacyServer(t, true)
		mustOK(t, e, "x")
		if got := a.requests(); !slices.Contains(got, "GET /.well-known/oauth-authorization-server") {
			t.Errorf("requests %v", got)
		}
		if r := a.authQueries[0].Get("resource"); r != e.rs.URL() {
			t.Errorf("resource %q", r)
		}
	})
	t.Run("endpoint fallback", func(t *testing.T) {
		e, a := legacyServer(t, false)
		mustOK(t, e, "x")
		got := a.requests()
		for _, want := range []string{"POST /register", "GET /authorize", "POST /token"} {
			if !slices.Contains(got, want) {
				t.Errorf("no %s in %v", want, got)
			}
		}
	})
}

func TestRejections(t *testing.T) {
	t.Run("resource mismatch", func(t *testing.T) {
		e := newEnv(t, nil, func(s *fakeRS) { s.resource = "https://evil.example.com/mcp" }, nil)
		_, err := e.post("x")
		var re *ResourceMismatchError
		if !errors.As(err, &re) {
			t.Fatalf("err = %v, want ResourceMismatchError", err)
		}
		if got := e.as.requests(); len(got) != 0 {
			t.Errorf("AS contacted: %v", got)
		}
	})
	t.Run("metadata issuer mismatch", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) { a.issuer = "https://attacker.example.com" }, nil, nil)
		_, err := e.post("x")
		var ie *IssuerMismatchError
		if !errors.As(err, &ie) || ie.Got != "https://attacker.example.com" {
			t.Fatalf("err = %v, want IssuerMismatchError", err)
		}
		if got := e.as.requests(); len(got) != 1 {
			t.Errorf("AS requests after the mismatch: %v", got)
		}
	})
	t.Run("metadata issuer with trailing slash", func(t *testing.T) {
		e := newEnv(t, nil, nil, nil)
		e.as.issuer = e.as.Issuer() + "/"
		_, err := e.post("x")
		var ie *IssuerMismatchError
		if !errors.As(err, &ie) {
			t.Fatalf("err = %v, want IssuerMismatchError", err)
		}
	})
	t.Run("no PKCE advertised", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) { a.noPKCE = true }, nil, nil)
		_, err := e.post("x")
		var de *DiscoveryError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "S256") {
			t.Fatalf("err = %v", err)
		}
		if e.as.authorizations() != 0 {
			t.Error("authorization requested")
		}
	})
	t.Run("plain PKCE only", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) { a.pkce = []string{"plain"} }, nil, nil)
		if _, err := e.post("x"); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("no AS metadata with PRM", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) { a.metadataPath = "/nowhere" }, nil, nil)
		_, err := e.post("x")
		var de *DiscoveryError
		if !errors.As(err, &de) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no registration possible", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) { a.noDCR = true }, nil, nil)
		_, err := e.post("x")
		var re *RegistrationError
		if !errors.As(err, &re) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no authorizer", func(t *testing.T) {
		e := newEnv(t, nil, nil, func(tr *Transport) { tr.Authorize = nil })
		if _, err := e.post("x"); !errors.Is(err, ErrNoAuthorizer) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("state mismatch", func(t *testing.T) {
		e := newEnv(t, nil, nil, func(tr *Transport) {
			h := Headless(nil)
			tr.Authorize = func(ctx context.Context, u string) (url.Values, error) {
				q, err := h(ctx, u)
				if err == nil {
					q.Set("state", "forged")
				}
				return q, err
			}
		})
		_, err := e.post("x")
		var ae *AuthorizationError
		if !errors.As(err, &ae) || e.as.tokenRequests() != 0 {
			t.Fatalf("err = %v, token requests %d", err, e.as.tokenRequests())
		}
	})
	t.Run("authorization error response", func(t *testing.T) {
		e := newEnv(t, nil, nil, func(tr *Transport) {
			tr.Authorize = func(ctx context.Context, u string) (url.Values, error) {
				au, _ := url.Parse(u)
				return url.Values{"error": {"access_denied"}, "state": {au.Query().Get("state")}}, nil
			}
		})
		_, err := e.post("x")
		var ae *AuthorizationError
		if !errors.As(err, &ae) || ae.Code != "access_denied" {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestIssParameter(t *testing.T) {
	for _, tc := range []struct {
		name       string
		advertised bool
		mode       string
		ok         bool
	}{
		{"supported", true, "correct", true},
		{"not advertised, absent", false, "omit", true},
		{"not advertised, correct", false, "correct", true},
		{"advertised but missing", true, "omit", false},
		{"wrong issuer", true, "wrong", false},
		{"unexpected and wrong", false, "wrong", false},
		{"normalized", true, "normalized", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(a *fakeAS) { a.issSupported = tc.advertised; a.issMode = tc.mode }, nil, nil)
			_, err := e.post("x")
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ie *IssuerMismatchError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want IssuerMismatchError", err)
			}
			if n := e.as.tokenRequests(); n != 0 {
				t.Errorf("%d token requests after a rejected iss", n)
			}
		})
	}
}

func TestRegistration(t *testing.T) {
	t.Run("pre-registered", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) { a.noDCR = true; a.methods = []string{"client_secret_basic"} }, nil, func(tr *Transport) {
			tr.Client = &ClientInfo{ClientID: "pre", ClientSecret: "s3cret"}
		})
		mustOK(t, e, "x")
		if u, p, ok := (&http.Request{Header: http.Header{"Authorization": {e.as.tokenAuth[0]}}}).BasicAuth(); !ok || u != "pre" || p != "s3cret" {
			t.Errorf("token auth %q", e.as.tokenAuth[0])
		}
	})
	t.Run("pre-registered for another issuer", func(t *testing.T) {
		e := newEnv(t, nil, nil, func(tr *Transport) {
			tr.Client = &ClientInfo{Issuer: "https://other.example.com", ClientID: "pre", ClientSecret: "s"}
		})
		mustOK(t, e, "x")
		if e.as.authQueries[0].Get("client_id") != "dcr-client" {
			t.Errorf("client_id %q", e.as.authQueries[0].Get("client_id"))
		}
	})
	t.Run("CIMD", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) { a.cimd = true }, nil, func(tr *Transport) {
			tr.ClientIDMetadataURL = "https://app.example.com/client.json"
		})
		mustOK(t, e, "x")
		if len(e.as.registrations) != 0 || e.as.authQueries[0].Get("client_id") != "https://app.example.com/client.json" {
			t.Errorf("registrations %v, client_id %q", e.as.registrations, e.as.authQueries[0].Get("client_id"))
		}
		if e.as.tokenForms[0].Get("client_id") != "https://app.example.com/client.json" || e.as.tokenAuth[0] != "" {
			t.Errorf("token request %v %q", e.as.tokenForms[0], e.as.tokenAuth[0])
		}
	})
	t.Run("CIMD not advertised", func(t *testing.T) {
		e := newEnv(t, nil, nil, func(tr *Transport) { tr.ClientIDMetadataURL = "https://app.example.com/client.json" })
		mustOK(t, e, "x")
		if len(e.as.registrations) != 1 {
			t.Error("no DCR")
		}
	})
	t.Run("web application type", func(t *testing.T) {
		e := newEnv(t, nil, nil, func(tr *Transport) { tr.RedirectURL = "https://app.example.com/cb" })
		mustOK(t, e, "x")
		if e.as.registrations[0]["application_type"] != "web" {
			t.Errorf("application_type %v", e.as.registrations[0]["application_type"])
		}
	})
}

func TestTokenEndpointAuth(t *testing.T) {
	for _, m := range []string{"client_secret_basic", "client_secret_post", "none"} {
		t.Run(m, func(t *testing.T) {
			e := newEnv(t, func(a *fakeAS) {
				a.methods = []string{m}
				a.regMethod = m
				if m != "none" {
					a.regSecret = "sec"
				}
			}, nil, nil)
			mustOK(t, e, "x")
			if got := e.as.registrations[0]["token_endpoint_auth_method"]; got != m {
				t.Errorf("registered with %v", got)
			}
			f, h := e.as.tokenForms[0], e.as.tokenAuth[0]
			switch m {
			case "client_secret_basic":
				if !strings.HasPrefix(h, "Basic ") || f.Has("client_secret") {
					t.Errorf("form %v header %q", f, h)
				}
			case "client_secret_post":
				if h != "" || f.Get("client_secret") != "sec" || f.Get("client_id") != "dcr-client" {
					t.Errorf("form %v header %q", f, h)
				}
			case "none":
				if h != "" || f.Has("client_secret") || f.Get("client_id") != "dcr-client" {
					t.Errorf("form %v header %q", f, h)
				}
			}
		})
	}
	t.Run("secret without method in the answer", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) { a.methods = []string{"client_secret_post"}; a.regSecret = "sec" }, nil, nil)
		mustOK(t, e, "x")
		if e.as.tokenForms[0].Get("client_secret") != "sec" {
			t.Errorf("form %v", e.as.tokenForms[0])
		}
	})
}

func TestScopes(t *testing.T) {
	t.Run("from challenge", func(t *testing.T) {
		e := newEnv(t, nil, func(s *fakeRS) { s.chalScope = "mcp:basic mcp:read"; s.prmScopes = []string{"other"} }, nil)
		mustOK(t, e, "x")
		if s := e.as.authQueries[0].Get("scope"); s != "mcp:basic mcp:read" {
			t.Errorf("scope %q", s)
		}
	})
	t.Run("from scopes_supported", func(t *testing.T) {
		e := newEnv(t, nil, func(s *fakeRS) { s.prmScopes = []string{"a", "b"} }, nil)
		mustOK(t, e, "x")
		if s := e.as.authQueries[0].Get("scope"); s != "a b" {
			t.Errorf("scope %q", s)
		}
	})
	t.Run("omitted", func(t *testing.T) {
		e := newEnv(t, nil, nil, nil)
		mustOK(t, e, "x")
		if e.as.authQueries[0].Has("scope") {
			t.Errorf("scope sent: %v", e.as.authQueries[0])
		}
	})
	t.Run("offline_access listed", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) { a.scopes = []string{"mcp:basic", "offline_access"} },
			func(s *fakeRS) { s.prmScopes = []string{"mcp:basic"} }, func(tr *Transport) { tr.OfflineAccess = true })
		mustOK(t, e, "x")
		if s := e.as.authQueries[0].Get("scope"); s != "mcp:basic offline_access" {
			t.Errorf("scope %q", s)
		}
	})
	t.Run("offline_access not listed", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) { a.scopes = []string{"mcp:basic"} },
			func(s *fakeRS) { s.chalScope = "mcp:basic offline_access" }, func(tr *Transport) { tr.OfflineAccess = true })
		mustOK(t, e, "x")
		if s := e.as.authQueries[0].Get("scope"); s != "mcp:basic" {
			t.Errorf("scope %q", s)
		}
	})
	t.Run("step-up union", func(t *testing.T) {
		e := newEnv(t, nil, func(s *fakeRS) {
			s.chalScope = "mcp:basic"
			s.prmScopes = []string{"mcp:profile"}
			s.required = func(r *http.Request) string {
				if r.Header.Get("X-Call") != "" {
					return "mcp:write"
				}
				return "mcp:basic"
			}
		}, nil)
		mustOK(t, e, "list")
		req, _ := http.NewRequest(http.MethodPost, e.rs.URL(), strings.NewReader("call"))
		req.Header.Set("X-Call", "1")
		resp, err := e.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if n := e.as.authorizations(); n != 2 {
			t.Fatalf("%d authorizations", n)
		}
		if s := e.as.authQueries[1].Get("scope"); s != "mcp:basic mcp:write" {
			t.Errorf("step-up scope %q", s)
		}
	})
	t.Run("retry limit", func(t *testing.T) {
		e := newEnv(t, nil, func(s *fakeRS) { s.chalScope = "mcp:admin"; s.denyForever = true }, nil)
		_, err := e.post("x")
		var te *TooManyAuthorizationsError
		if !errors.As(err, &te) || te.StatusCode != http.StatusForbidden {
			t.Fatalf("err = %v", err)
		}
		if n := e.as.authorizations(); n != DefaultMaxAuthorizations {
			t.Errorf("%d authorizations, want %d", n, DefaultMaxAuthorizations)
		}
	})
}

func TestRejectedForever(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	e.rs.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="`+e.rs.srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		e.rs.serve(w, r)
	})
	_, err := e.post("x")
	var te *TooManyAuthorizationsError
	if !errors.As(err, &te) || te.StatusCode != http.StatusUnauthorized {
		t.Fatalf("err = %v", err)
	}
	if n := e.as.authorizations(); n != DefaultMaxAuthorizations {
		t.Errorf("%d authorizations", n)
	}
}

func TestRefreshAndMigration(t *testing.T) {
	t.Run("refresh on 401", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) { a.refresh = true }, nil, nil)
		mustOK(t, e, "1")
		old := e.tr.Token(e.rs.URL()).AccessToken
		e.as.mu.Lock()
		delete(e.as.issued, old)
		e.as.mu.Unlock()
		mustOK(t, e, "2")
		if n := e.as.authorizations(); n != 1 {
			t.Errorf("%d authorizations, want 1 (refresh)", n)
		}
		last := e.as.tokenForms[len(e.as.tokenForms)-1]
		if last.Get("grant_type") != "refresh_token" || last.Get("resource") != e.rs.URL() {
			t.Errorf("last token form %v", last)
		}
	})
	t.Run("refresh refused", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) { a.refresh = true }, nil, nil)
		mustOK(t, e, "1")
		st := e.tr.state(serverKey(mustURL(e.rs.URL())))
		_ = e.tr.store.SetToken(context.Background(), st.issuer, st.resource, &Token{AccessToken: st.token.AccessToken, RefreshToken: "bogus"})
		e.as.revokeAll()
		mustOK(t, e, "2")
		if n := e.as.authorizations(); n != 2 {
			t.Errorf("%d authorizations, want 2", n)
		}
	})
	t.Run("AS migration", func(t *testing.T) {
		var cur *fakeAS
		as1 := newFakeAS(t, func(a *fakeAS) { a.clientID = "as1-client" })
		as2 := newFakeAS(t, func(a *fakeAS) { a.clientID = "as2-client" })
		cur = as1
		rs := newFakeRS(t, func() *fakeAS { return cur }, nil)
		tr := &Transport{Authorize: Headless(nil), RedirectURL: "http://localhost:3000/callback"}
		e := &env{as: as1, rs: rs, tr: tr, hc: &http.Client{Transport: tr}}
		mustOK(t, e, "1")
		cur = as2
		mustOK(t, e, "2")
		if len(as2.registrations) != 1 {
			t.Errorf("no registration at the new AS")
		}
		for _, q := range as2.authQueries {
			if q.Get("client_id") == "as1-client" {
				t.Error("AS1 client_id presented to AS2")
			}
		}
		for _, f := range as2.tokenForms {
			if f.Get("client_id") == "as1-client" {
				t.Error("AS1 client_id presented to AS2's token endpoint")
			}
		}
		c, _ := tr.store.Client(context.Background(), as1.Issuer())
		if c == nil || c.ClientID != "as1-client" {
			t.Errorf("AS1 registration lost: %v", c)
		}
		// An unbound pre-registration stays with the first AS.
		cur = as1
		tr2 := &Transport{Authorize: Headless(nil), Client: &ClientInfo{ClientID: "pre"}}
		e2 := &env{rs: rs, tr: tr2, hc: &http.Client{Transport: tr2}}
		mustOK(t, e2, "3")
		cur = as2
		mustOK(t, e2, "4")
		if q := as2.authQueries[len(as2.authQueries)-1]; q.Get("client_id") == "pre" {
			t.Error("pre-registered client bound to AS1 presented to AS2")
		}
	})
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// TestConcurrent runs parallel requests: one flow, every request served.
func TestConcurrent(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"i":%d}`, i)
			got, err := e.post(body)
			if err == nil && got != "ok:"+body {
				err = fmt.Errorf("answer %q", got)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := e.as.authorizations(); n != 1 {
		t.Errorf("%d authorizations, want 1", n)
	}
}

// TestOtherScheme: a 401 challenging only for another scheme is returned
// as is, without a flow.
func TestOtherScheme(t *testing.T) {
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	called := false
	tr := &Transport{Authorize: func(context.Context, string) (url.Values, error) { called = true; return nil, errors.New("no") }}
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || called {
		t.Fatalf("status %d, authorize called %v", resp.StatusCode, called)
	}
}

// TestUnreplayableBody: a body without GetBody is buffered and replayed.
func TestUnreplayableBody(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	req, _ := http.NewRequest(http.MethodPost, e.rs.URL(), struct{ *strings.Reader }{strings.NewReader("payload")})
	req.GetBody = nil
	resp, err := e.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || e.rs.bodies[0] != "payload" {
		t.Fatalf("status %d bodies %q", resp.StatusCode, e.rs.bodies)
	}
}

func TestLoopback(t *testing.T) {
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	lb := &Loopback{Addr: addr}
	lb.Open = func(u string) error {
		// The "browser": follow the authorization URL to the redirect.
		go func() {
			resp, err := http.Get(u)
			if err == nil {
				resp.Body.Close()
			}
		}()
		return nil
	}
	e := newEnv(t, nil, nil, func(tr *Transport) { tr.RedirectURL = lb.RedirectURL(); tr.Authorize = lb.Authorize })
	mustOK(t, e, "x")
	if e.as.registrations[0]["application_type"] != "native" {
		t.Errorf("application_type %v", e.as.registrations[0]["application_type"])
	}
	if _, err := (&Loopback{Addr: "192.0.2.1:80"}).Authorize(context.Background(), "http://x"); err == nil {
		t.Error("non-loopback address accepted")
	}
}
