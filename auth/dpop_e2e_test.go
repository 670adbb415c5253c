package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/streamhttp"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/auth/oauth"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// dpopAS is an authorization server for the end-to-end tests: metadata,
// registration, an authorization endpoint that approves at once, and a
// token endpoint that checks the DPoP proof of each token request (with
// a DPoPVerifier, as a real one would) and binds what it issues to the
// proof's key: a JWT with cnf.jkt, or an opaque token it answers
// introspection calls about.
type dpopAS struct {
	srv    *httptest.Server
	key    *testKey
	opaque bool
	proofs *DPoPVerifier

	mu      sync.Mutex
	codes   map[string]string // code -> PKCE challenge
	tokens  map[string]string // opaque token -> jkt
	bound   []string          // the jkt of each token issued
	intros  atomic.Int32      // introspection calls
	refused []string          // proof errors at the token endpoint
}

func newDPoPAS(t *testing.T, opaque bool) *dpopAS {
	t.Helper()
	a := &dpopAS{key: newECKey(t, "as1"), opaque: opaque, codes: map[string]string{}, tokens: map[string]string{}}
	var err error
	if a.proofs, err = NewDPoPVerifier(&DPoPOptions{}); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	writeJSON := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.MarshalWrite(w, v)
	}
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		iss := a.srv.URL
		writeJSON(w, 200, map[string]any{
			"issuer": iss, "authorization_endpoint": iss + "/authorize", "token_endpoint": iss + "/token",
			"registration_endpoint": iss + "/register", "jwks_uri": iss + "/jwks", "introspection_endpoint": iss + "/introspect",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"}, "dpop_signing_alg_values_supported": []string{"ES256"},
		})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 201, map[string]any{"client_id": "c-" + rand.Text(), "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		code := rand.Text()
		a.mu.Lock()
		a.codes[code] = q.Get("code_challenge")
		a.mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+q.Get("state")+"&iss="+a.srv.URL, http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		jkt, err := a.proofs.Verify(r.Context(), DPoPRequest{Proof: r.Header.Get("DPoP"), Method: r.Method, URL: a.srv.URL + "/token"})
		a.mu.Lock()
		defer a.mu.Unlock()
		if err != nil {
			a.refused = append(a.refused, err.Error())
			writeJSON(w, 400, map[string]any{"error": "invalid_dpop_proof"})
			return
		}
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		ch, ok := a.codes[r.PostForm.Get("code")]
		delete(a.codes, r.PostForm.Get("code"))
		if !ok || ch != base64.RawURLEncoding.EncodeToString(sum[:]) {
			writeJSON(w, 400, map[string]any{"error": "invalid_grant"})
			return
		}
		a.bound = append(a.bound, jkt)
		var tok string
		if a.opaque {
			tok = rand.Text()
			a.tokens[tok] = jkt
		} else {
			now := time.Now()
			tok = a.key.sign(t, map[string]any{"iss": a.srv.URL, "sub": "dana", "aud": r.PostForm.Get("resource"),
				"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "scope": "mcp:read", "cnf": map[string]any{"jkt": jkt}})
		}
		writeJSON(w, 200, map[string]any{"access_token": tok, "token_type": "DPoP", "expires_in": 3600, "scope": "mcp:read"})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"keys": []any{a.key.jwk()}})
	})
	mux.HandleFunc("POST /introspect", func(w http.ResponseWriter, r *http.Request) {
		a.intros.Add(1)
		if id, secret, ok := r.BasicAuth(); !ok || id != "rs" || secret != "rs-secret" {
			writeJSON(w, 401, map[string]any{"error": "invalid_client"})
			return
		}
		_ = r.ParseForm()
		a.mu.Lock()
		jkt, ok := a.tokens[r.PostForm.Get("token")]
		a.mu.Unlock()
		if !ok {
			writeJSON(w, 200, map[string]any{"active": false})
			return
		}
		writeJSON(w, 200, map[string]any{"active": true, "sub": "dana", "iss": a.srv.URL, "aud": r.Header.Get("X-Resource"),
			"scope": "mcp:read", "exp": time.Now().Add(time.Hour).Unix(), "token_type": "DPoP", "cnf": map[string]any{"jkt": jkt}})
	})
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	return a
}

// recorder keeps the Authorization and DPoP headers of the requests it
// passes on.
type recorder struct {
	mu   sync.Mutex
	last http.Header
	nonc int // 401 use_dpop_nonce answers seen
}

func (rt *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if strings.HasSuffix(r.URL.Path, "/mcp") && r.Header.Get("DPoP") != "" {
		rt.last = r.Header.Clone()
	}
	if err == nil && resp.StatusCode == http.StatusUnauthorized && strings.Contains(strings.Join(resp.Header.Values("WWW-Authenticate"), ","), "use_dpop_nonce") {
		rt.nonc++
	}
	return resp, err
}

// TestEndToEndDPoP: mcpkit's OAuth client with a DPoP key against an MCP
// server behind two Require instances (round robin) that require
// DPoP-bound tokens and server nonces and share one replay cache; tokens
// are JWTs or opaque (introspection); both protocol eras.
func TestEndToEndDPoP(t *testing.T) {
	for _, opaque := range []bool{false, true} {
		for _, version := range []string{mcp.LatestLegacy, mcp.Version20260728} {
			t.Run(map[bool]string{false: "jwt", true: "introspection"}[opaque]+"/"+version, func(t *testing.T) {
				testEndToEndDPoP(t, opaque, version)
			})
		}
	}
}

func testEndToEndDPoP(t *testing.T, opaque bool, version string) {
	as := newDPoPAS(t, opaque)
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "protected", Version: "1"}})
	var seenJKT atomic.Value
	server.AddTool(s, &mcp.Tool{Name: "add"}, func(ctx context.Context, req *server.CallToolRequest, in struct{ A, B int }) (int, error) {
		if ti := TokenInfoFrom(ctx); ti != nil {
			seenJKT.Store(ti.JKT)
		}
		return in.A + in.B, nil
	})
	h := streamhttp.NewHandler(s, nil)
	t.Cleanup(func() { _ = h.Close() })

	mux := http.NewServeMux()
	rs := httptest.NewServer(mux)
	t.Cleanup(rs.Close)
	resource := rs.URL + "/mcp"
	var v Verifier
	var err error
	if opaque {
		iv, ierr := NewIntrospectionVerifier(&IntrospectionOptions{Endpoint: as.srv.URL + "/introspect", Audience: resource,
			Issuer: as.srv.URL, ClientID: "rs", ClientSecret: "rs-secret",
			HTTPClient: &http.Client{Transport: headerRT{"X-Resource", resource}}})
		v, err = iv, ierr
	} else {
		v, err = NewJWTVerifier(&JWTOptions{Issuer: as.srv.URL, Audience: resource, JWKSURL: as.srv.URL + "/jwks", Algorithms: []jose.SignatureAlgorithm{jose.ES256}})
	}
	if err != nil {
		t.Fatal(err)
	}
	replay := NewMemoryReplayCache(0)
	nonceKey := make([]byte, 32)
	_, _ = rand.Read(nonceKey)
	var instances [2]http.Handler
	for i := range instances {
		dv, err := NewDPoPVerifier(&DPoPOptions{Required: true, Replay: replay, NonceKey: nonceKey})
		if err != nil {
			t.Fatal(err)
		}
		instances[i] = mustRequire(v, &Options{Resource: resource, Scopes: []string{"mcp:read"}, DPoP: dv})(h)
	}
	var next atomic.Int32
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		instances[int(next.Add(1))%2].ServeHTTP(w, r)
	})
	if err := MountProtectedResource(mux, ProtectedResourceMetadata{
		Resource: resource, AuthorizationServers: []string{as.srv.URL}, ScopesSupported: []string{"mcp:read"},
		DPoPSigningAlgValuesSupported: []string{"ES256"}, DPoPBoundAccessTokensRequired: true,
	}); err != nil {
		t.Fatal(err)
	}

	key, err := oauth.NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	tr := &oauth.Transport{Authorize: oauth.Headless(nil), RedirectURL: "http://127.0.0.1:9/callback", DPoP: key, Base: rec}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, streamable.New(resource, &streamable.Options{HTTPClient: &http.Client{Transport: tr}}),
		&client.Options{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("Connect: %v (token endpoint refusals %v)", err, as.refused)
	}
	defer c.Close()
	for i := range 3 {
		res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: []byte(`{"A":2,"B":3}`)})
		if err != nil || res.IsError {
			t.Fatalf("CallTool %d: %v %+v", i, err, res)
		}
	}
	tok := tr.Token(resource)
	if tok == nil || tok.TokenType != "DPoP" {
		t.Fatalf("token %+v, want a DPoP token", tok)
	}
	as.mu.Lock()
	bound := as.bound
	as.mu.Unlock()
	if len(bound) != 1 || bound[0] != key.Thumbprint() {
		t.Fatalf("tokens bound to %v, want one bound to %s", bound, key.Thumbprint())
	}
	if got, _ := seenJKT.Load().(string); got != key.Thumbprint() {
		t.Fatalf("the handler saw jkt %q", got)
	}
	rec.mu.Lock()
	last, nonces := rec.last, rec.nonc
	rec.mu.Unlock()
	if nonces == 0 {
		t.Error("the server never asked for a nonce")
	}
	if opaque && as.intros.Load() == 0 {
		t.Error("no introspection call")
	}
	// The last proof, replayed as is to either instance, is refused.
	for range 2 {
		req, _ := http.NewRequest(http.MethodPost, resource, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"ping"}`))
		req.Header = last.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(strings.Join(resp.Header.Values("WWW-Authenticate"), ","), `error="invalid_dpop_proof"`) {
			t.Fatalf("replayed proof: %s %q", resp.Status, resp.Header.Values("WWW-Authenticate"))
		}
	}
	// The token alone, as a bearer token, is refused.
	req, _ := http.NewRequest(http.MethodPost, resource, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("bearer use: %s", resp.Status)
	}
}

// headerRT adds one header to each request: the test's introspection
// endpoint learns the resource from it.
type headerRT [2]string

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h[0], h[1])
	return http.DefaultTransport.RoundTrip(r)
}
