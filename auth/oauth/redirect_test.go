package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// sink is a second loopback server (another port: another origin) that
// answers like an authorization server would, with its own token, and
// records everything that reaches it.
type sink struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string // method, path, Authorization and body of each request
}

func newSink(t *testing.T) *sink {
	k := &sink{}
	k.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		k.mu.Lock()
		k.seen = append(k.seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")+" "+string(b))
		k.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/token"):
			_, _ = io.WriteString(w, `{"access_token":"sink-token","token_type":"Bearer","expires_in":3600}`)
		case strings.HasSuffix(r.URL.Path, "/register"):
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"client_id":"sink-client","client_secret":"sink-secret"}`)
		default:
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": k.srv.URL, "resource": k.srv.URL + "/mcp",
				"authorization_servers": []string{k.srv.URL}, "authorization_endpoint": k.srv.URL + "/authorize",
				"token_endpoint": k.srv.URL + "/token", "code_challenge_methods_supported": []string{"S256"}})
		}
	}))
	t.Cleanup(k.srv.Close)
	return k
}

func (k *sink) requests() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.seen...)
}

// TestRedirectsRefused: no request of the OAuth client follows a
// redirect to another origin; token and registration requests, which
// carry credentials, follow none at all. The target never receives
// anything, the flow fails with a *RedirectError naming the endpoint and
// the target, and no token of the target is used.
func TestRedirectsRefused(t *testing.T) {
	for _, tc := range []struct {
		name     string
		endpoint string // in the error
		as       func(a *fakeAS, target string)
		rs       func(s *fakeRS, target string)
		tr       func(tr *Transport)
		path     string // of the target
		sameOrig bool   // the target is on the authorization server itself
	}{
		{name: "token endpoint, client_secret_post", endpoint: "token endpoint", path: "/token",
			as: func(a *fakeAS, to string) { a.redirects = map[string]string{"/token": to} },
			tr: func(tr *Transport) {
				tr.Client = &ClientInfo{ClientID: "pre", ClientSecret: "s3cret", AuthMethod: "client_secret_post"}
			}},
		{name: "token endpoint, client_secret_basic", endpoint: "token endpoint", path: "/token",
			as: func(a *fakeAS, to string) { a.redirects = map[string]string{"/token": to} },
			tr: func(tr *Transport) {
				tr.Client = &ClientInfo{ClientID: "pre", ClientSecret: "s3cret", AuthMethod: "client_secret_basic"}
			}},
		{name: "token endpoint, same origin", endpoint: "token endpoint", path: "/token2", sameOrig: true,
			as: func(a *fakeAS, to string) { a.redirects = map[string]string{"/token": to} },
			tr: func(tr *Transport) {
				tr.Client = &ClientInfo{ClientID: "pre", ClientSecret: "s3cret", AuthMethod: "client_secret_post"}
			}},
		{name: "client credentials", endpoint: "token endpoint", path: "/token",
			as: func(a *fakeAS, to string) { a.redirects = map[string]string{"/token": to} },
			tr: func(tr *Transport) {
				tr.Client = &ClientInfo{ClientID: "pre", ClientSecret: "s3cret"}
				tr.Grant = ClientCredentials{}
			}},
		{name: "registration endpoint", endpoint: "registration endpoint", path: "/register",
			as: func(a *fakeAS, to string) { a.redirects = map[string]string{"/register": to} }},
		{name: "registration endpoint, same origin", endpoint: "registration endpoint", path: "/register2", sameOrig: true,
			as: func(a *fakeAS, to string) { a.redirects = map[string]string{"/register": to} }},
		{name: "authorization server metadata", endpoint: "authorization server metadata", path: "/.well-known/oauth-authorization-server",
			as: func(a *fakeAS, to string) {
				a.redirects = map[string]string{"/.well-known/oauth-authorization-server": to}
			}},
		{name: "protected resource metadata", endpoint: "protected resource metadata", path: "/.well-known/oauth-protected-resource/mcp",
			rs: func(s *fakeRS, to string) {
				s.redirects = map[string]string{"/.well-known/oauth-protected-resource/mcp": to}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newSink(t)
			var e *env
			target := func() string {
				if tc.sameOrig {
					return e.as.srv.URL + tc.path
				}
				return k.srv.URL + tc.path
			}
			e = newEnv(t, nil, nil, tc.tr)
			if tc.as != nil {
				tc.as(e.as, target())
			}
			if tc.rs != nil {
				tc.rs(e.rs, target())
			}
			_, err := e.post("x")
			var re *RedirectError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a *RedirectError", err)
			}
			if re.Location != target() || !strings.Contains(re.Endpoint, tc.endpoint) ||
				!strings.Contains(err.Error(), target()) || !strings.Contains(err.Error(), tc.endpoint) {
				t.Errorf("error %q (endpoint %q, location %q) does not name %q and %q", err, re.Endpoint, re.Location, tc.endpoint, target())
			}
			if got := k.requests(); len(got) != 0 {
				t.Errorf("the redirect target received %q", got)
			}
			for _, r := range e.as.requests() {
				if strings.Contains(r, tc.path) && tc.sameOrig {
					t.Errorf("the same-origin target received %q", r)
				}
			}
			if tok := e.tr.Token(e.rs.URL()); tok != nil {
				t.Errorf("a token is held: %+v", tok)
			}
		})
	}
}

// TestMetadataSameOriginRedirect: a metadata GET follows a redirect on
// its own origin (a moved document), and the flow completes.
func TestMetadataSameOriginRedirect(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	e.as.metadataPath = "/moved/metadata"
	e.as.redirects = map[string]string{"/.well-known/oauth-authorization-server": e.as.srv.URL + "/moved/metadata"}
	e.rs.prmPath = "/prm"
	e.rs.redirects = map[string]string{"/.well-known/oauth-protected-resource/mcp": "/prm"}
	e.rs.inHeader = false
	mustOK(t, e, "x")
}

// TestIDJAGExchangeRedirect: the token exchange at the identity provider
// (it carries the user's ID token and the client's secret) follows no
// redirect.
func TestIDJAGExchangeRedirect(t *testing.T) {
	k := newSink(t)
	idp := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		redirect(w, r, k.srv.URL+"/token")
	}))
	x := &IDJAGExchange{TokenEndpoint: idp.URL + "/token", ClientID: "c", ClientSecret: "s", IDToken: "id-token"}
	_, err := x.Assertion(context.Background(), &GrantRequest{Issuer: "https://as.example.com", Resource: "https://mcp.example.com/mcp", HTTPClient: http.DefaultClient})
	var re *RedirectError
	if !errors.As(err, &re) || re.Location != k.srv.URL+"/token" {
		t.Fatalf("err = %v, want a *RedirectError", err)
	}
	if got := k.requests(); len(got) != 0 {
		t.Errorf("the redirect target received %q", got)
	}
}

// TestMetadataRedirectLoop: same-origin redirects are followed a few
// times at most.
func TestMetadataRedirectLoop(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	const p = "/.well-known/oauth-authorization-server"
	e.as.redirects = map[string]string{p: p}
	_, err := e.post("x")
	var re *RedirectError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "too many") {
		t.Fatalf("err = %v, want a *RedirectError for too many redirects", err)
	}
	n := 0
	for _, r := range e.as.requests() {
		if r == "GET "+p {
			n++
		}
	}
	if n != maxMetadataRedirects+1 {
		t.Errorf("%d metadata requests, want %d", n, maxMetadataRedirects+1)
	}
}
