package auth

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// TestJWTVerify: real signed tokens (RSA, EC, Ed25519) against a JWKS on
// loopback, and every claim rule.
func TestJWTVerify(t *testing.T) {
	rsaK, ecK, edK := newRSAKey(t, "rsa-1", 0), newECKey(t, "ec-1"), newEdKey(t, "ed-1")
	other := newRSAKey(t, "rsa-1", 1) // same kid, key not in the set
	as := newTestAS(t, rsaK, ecK, edK)
	c := newClock()
	v := as.verifier(t, c, nil)
	ctx := context.Background()
	now := c.now()

	for _, tc := range []struct {
		name string
		key  *testKey
		over map[string]any
		err  string // substring of the error; "" = valid
	}{
		{name: "valid RS256", key: rsaK},
		{name: "valid ES256", key: ecK},
		{name: "valid EdDSA", key: edK},
		{name: "audience list", key: rsaK, over: map[string]any{"aud": []string{"https://other.example", testResource}}},
		{name: "expired", key: rsaK, over: map[string]any{"exp": now.Add(-2 * time.Minute).Unix()}, err: "expired"},
		{name: "expired within leeway", key: rsaK, over: map[string]any{"exp": now.Add(-30 * time.Second).Unix()}},
		{name: "not yet valid", key: rsaK, over: map[string]any{"nbf": now.Add(5 * time.Minute).Unix()}, err: "not valid yet"},
		{name: "nbf within leeway", key: rsaK, over: map[string]any{"nbf": now.Add(30 * time.Second).Unix()}},
		{name: "issued in the future", key: rsaK, over: map[string]any{"iat": now.Add(5 * time.Minute).Unix()}, err: "issued in the future"},
		{name: "wrong audience", key: rsaK, over: map[string]any{"aud": "https://other.example/mcp"}, err: "audience"},
		{name: "audience with trailing slash", key: rsaK, over: map[string]any{"aud": testResource + "/"}, err: "audience"},
		{name: "no audience", key: rsaK, over: map[string]any{"aud": nil}, err: "audience"},
		{name: "wrong issuer", key: rsaK, over: map[string]any{"iss": "https://evil.example"}, err: "issuer"},
		{name: "issuer with trailing slash", key: rsaK, over: map[string]any{"iss": as.srv.URL + "/"}, err: "issuer"},
		{name: "no issuer", key: rsaK, over: map[string]any{"iss": nil}, err: "issuer"},
		{name: "no exp", key: rsaK, over: map[string]any{"exp": nil}, err: "no exp"},
		{name: "no sub", key: rsaK, over: map[string]any{"sub": nil}, err: "no sub"},
		{name: "signed by another key", key: other, err: "signature"},
		{name: "scope not a string", key: rsaK, over: map[string]any{"scope": []string{"a"}}, err: "scope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ti, err := v.Verify(ctx, tc.key.sign(t, as.claims(c, tc.over)))
			if tc.err == "" {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if ti.Subject != "alice" || ti.Issuer != as.srv.URL || !slices.Contains(ti.Audience, testResource) ||
					!slices.Equal(ti.Scopes, []string{"mcp:read", "mcp:write"}) || ti.Extra["client_id"] != "client-1" {
					t.Errorf("token info %+v", ti)
				}
				if _, ok := ti.Extra["exp"]; ok {
					t.Error("registered claims in Extra")
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Verify = %v, want ErrInvalidToken mentioning %q", err, tc.err)
			}
		})
	}
}

// TestJWTScopes: scope (space-separated) wins over scp (list or string).
func TestJWTScopes(t *testing.T) {
	k := newECKey(t, "k")
	as := newTestAS(t, k)
	c := newClock()
	v := as.verifier(t, c, nil)
	for _, tc := range []struct {
		over map[string]any
		want []string
	}{
		{map[string]any{"scope": "a  b c"}, []string{"a", "b", "c"}},
		{map[string]any{"scope": nil, "scp": []string{"x", "y"}}, []string{"x", "y"}},
		{map[string]any{"scope": nil, "scp": "x y"}, []string{"x", "y"}},
		{map[string]any{"scope": "a", "scp": []string{"x"}}, []string{"a"}},
		{map[string]any{"scope": nil}, nil},
	} {
		ti, err := v.Verify(context.Background(), k.sign(t, as.claims(c, tc.over)))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ti.Scopes, tc.want) {
			t.Errorf("%v: scopes %q, want %q", tc.over, ti.Scopes, tc.want)
		}
	}
}

// TestJWTAlgorithms: alg none and HS* are refused by default; HS256 is
// accepted only with a configured key, and an HS256 token keyed with the
// RSA public key (algorithm confusion) is refused.
func TestJWTAlgorithms(t *testing.T) {
	k := newRSAKey(t, "rsa-1", 0)
	as := newTestAS(t, k)
	c := newClock()
	v := as.verifier(t, c, nil)
	ctx := context.Background()
	claims := as.claims(c, nil)

	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	payload, _ := jsonMarshal(claims)
	for _, hdr := range []string{`{"alg":"none"}`, `{"alg":"none","kid":"rsa-1"}`, `{"alg":"None","typ":"JWT"}`} {
		none := b64(hdr) + "." + b64(payload) + "."
		if _, err := v.Verify(ctx, none); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("alg none %s: %v, want ErrInvalidToken", hdr, err)
		}
	}
	if _, err := NewJWTVerifier(&JWTOptions{Issuer: "https://as", Audience: testResource, Algorithms: []jose.SignatureAlgorithm{"none"}}); err == nil {
		t.Error("a verifier accepting none was built")
	}

	secret := []byte("0123456789abcdef0123456789abcdef")
	hsTok := signHMAC(t, secret, claims)
	if _, err := v.Verify(ctx, hsTok); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("HS256 by default: %v, want ErrInvalidToken", err)
	}
	pub, _ := x509.MarshalPKIXPublicKey(k.priv.Public())
	confused := signHMAC(t, pub, claims)
	hv := as.verifier(t, c, func(o *JWTOptions) {
		o.Algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.HS256}
		o.HMACKey = secret
	})
	if _, err := hv.Verify(ctx, hsTok); err != nil {
		t.Errorf("HS256 with its key configured: %v", err)
	}
	if _, err := hv.Verify(ctx, confused); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("HS256 keyed with the RSA public key: %v, want ErrInvalidToken", err)
	}
	if _, err := hv.Verify(ctx, k.sign(t, claims)); err != nil {
		t.Errorf("RS256 next to HS256: %v", err)
	}
	for _, o := range []JWTOptions{
		{Issuer: "https://as", Audience: testResource, Algorithms: []jose.SignatureAlgorithm{jose.HS256}, HMACKey: []byte("short")},
		{Issuer: "https://as", Audience: testResource, HMACKey: secret},
		{Issuer: "", Audience: testResource},
		{Issuer: "https://as", Audience: "not-absolute"},
		{Issuer: "https://as", Audience: testResource + "#frag"},
	} {
		if _, err := NewJWTVerifier(&o); err == nil {
			t.Errorf("NewJWTVerifier(%+v) accepted", o)
		}
	}
	// An ES256 token presented against a verifier limited to RS256.
	ec := newECKey(t, "ec")
	as.setKeys(k, ec)
	rsOnly := as.verifier(t, c, func(o *JWTOptions) { o.Algorithms = []jose.SignatureAlgorithm{jose.RS256} })
	if _, err := rsOnly.Verify(ctx, ec.sign(t, claims)); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("ES256 on an RS256-only verifier: %v", err)
	}
}

func signHMAC(t *testing.T, key []byte, claims map[string]any) string {
	t.Helper()
	return (&testKey{alg: jose.HS256, priv: nil}).signWith(t, key, claims)
}

// TestJWTRotation: a token with a new kid makes the verifier refetch the
// JWK Set once; the old key is gone afterwards.
func TestJWTRotation(t *testing.T) {
	k1, k2 := newRSAKey(t, "k1", 0), newRSAKey(t, "k2", 1)
	as := newTestAS(t, k1)
	c := newClock()
	v := as.verifier(t, c, nil)
	ctx := context.Background()
	if _, err := v.Verify(ctx, k1.sign(t, as.claims(c, nil))); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, k1.sign(t, as.claims(c, nil))); err != nil {
		t.Fatal(err)
	}
	if n := as.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches for two tokens of one key, want 1", n)
	}
	as.setKeys(k2) // rotation
	c.advance(DefaultJWKSRefreshInterval)
	if _, err := v.Verify(ctx, k2.sign(t, as.claims(c, nil))); err != nil {
		t.Fatalf("token of the new key: %v", err)
	}
	if n := as.fetches.Load(); n != 2 {
		t.Errorf("%d fetches after rotation, want 2", n)
	}
	// The old kid is unknown now (refetching is rate-limited: no fetch).
	if _, err := v.Verify(ctx, k1.sign(t, as.claims(c, nil))); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("token of the retired key: %v, want ErrInvalidToken", err)
	}
	if n := as.fetches.Load(); n != 2 {
		t.Errorf("%d fetches, want 2", n)
	}
}

// TestJWTUnknownKidRateLimit: forged kids cause at most one fetch per
// RefreshInterval, even when they arrive concurrently.
func TestJWTUnknownKidRateLimit(t *testing.T) {
	k := newRSAKey(t, "k1", 0)
	as := newTestAS(t, k)
	c := newClock()
	v := as.verifier(t, c, nil)
	ctx := context.Background()
	if _, err := v.Verify(ctx, k.sign(t, as.claims(c, nil))); err != nil {
		t.Fatal(err)
	}
	c.advance(DefaultJWKSRefreshInterval)
	var wg sync.WaitGroup
	for i := range 20 {
		forged := &testKey{kid: "forged-" + string(rune('a'+i)), alg: jose.RS256, priv: k.priv}
		tok := forged.sign(t, as.claims(c, nil))
		wg.Go(func() {
			if _, err := v.Verify(ctx, tok); !errors.Is(err, ErrInvalidToken) {
				t.Errorf("forged kid: %v, want ErrInvalidToken", err)
			}
		})
	}
	wg.Wait()
	if n := as.fetches.Load(); n != 2 {
		t.Errorf("%d fetches after 20 unknown kids, want 2 (one refetch)", n)
	}
	forged := &testKey{kid: "later", alg: jose.RS256, priv: k.priv}
	c.advance(DefaultJWKSRefreshInterval / 2)
	_, _ = v.Verify(ctx, forged.sign(t, as.claims(c, nil)))
	if n := as.fetches.Load(); n != 2 {
		t.Errorf("%d fetches within the interval, want 2", n)
	}
	c.advance(DefaultJWKSRefreshInterval / 2)
	_, _ = v.Verify(ctx, forged.sign(t, as.claims(c, nil)))
	if n := as.fetches.Load(); n != 3 {
		t.Errorf("%d fetches after the interval, want 3", n)
	}
	// The known key still verifies without a fetch.
	if _, err := v.Verify(ctx, k.sign(t, as.claims(c, nil))); err != nil || as.fetches.Load() != 3 {
		t.Errorf("known key: %v, %d fetches", err, as.fetches.Load())
	}
}

// TestJWTCacheTTL: the set is refetched after CacheTTL; when the
// refetch fails, the old keys stay in use; when no set was ever fetched,
// the error is ErrUnavailable, not ErrInvalidToken.
func TestJWTCacheTTL(t *testing.T) {
	k := newECKey(t, "k")
	as := newTestAS(t, k)
	c := newClock()
	v := as.verifier(t, c, nil)
	ctx := context.Background()
	verify := func() error {
		_, err := v.Verify(ctx, k.sign(t, as.claims(c, nil)))
		return err
	}
	if err := verify(); err != nil {
		t.Fatal(err)
	}
	c.advance(DefaultJWKSCacheTTL)
	if err := verify(); err != nil || as.fetches.Load() != 2 {
		t.Fatalf("after the TTL: %v, %d fetches, want 2", err, as.fetches.Load())
	}
	as.setDown(true)
	c.advance(DefaultJWKSCacheTTL)
	if err := verify(); err != nil {
		t.Errorf("JWKS down, stale keys: %v", err)
	}
	if err := verify(); err != nil || as.fetches.Load() != 3 {
		t.Errorf("JWKS down, second token: %v, %d fetches, want 3 (rate-limited)", err, as.fetches.Load())
	}

	cold := as.verifier(t, c, nil)
	_, err := cold.Verify(ctx, k.sign(t, as.claims(c, nil)))
	if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrInvalidToken) {
		t.Errorf("JWKS never reachable: %v, want ErrUnavailable", err)
	}
}

// TestJWTDiscovery: without JWKSURL the jwks_uri comes from the issuer's
// RFC 8414 metadata, whose issuer must match exactly.
func TestJWTDiscovery(t *testing.T) {
	k := newRSAKey(t, "k", 0)
	as := newTestAS(t, k)
	c := newClock()
	v := as.verifier(t, c, func(o *JWTOptions) { o.JWKSURL = "" })
	ctx := context.Background()
	if _, err := v.Verify(ctx, k.sign(t, as.claims(c, nil))); err != nil {
		t.Fatal(err)
	}
	if as.metas.Load() != 1 || as.fetches.Load() != 1 {
		t.Errorf("%d metadata and %d JWKS fetches, want 1 and 1", as.metas.Load(), as.fetches.Load())
	}
	as.mu.Lock()
	as.issuer = "https://impostor.example"
	as.mu.Unlock()
	v2 := as.verifier(t, c, func(o *JWTOptions) { o.JWKSURL = "" })
	if _, err := v2.Verify(ctx, k.sign(t, as.claims(c, nil))); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "impostor") {
		t.Errorf("metadata of another issuer: %v", err)
	}
}

// TestJWKSSkipsBadKeys: symmetric and broken entries of the set are
// ignored; the usable keys still work.
func TestJWKSSkipsBadKeys(t *testing.T) {
	k := newEdKey(t, "ed")
	as := newTestAS(t, k)
	as.extra = []jsontext.Value{
		jsontext.Value(`{"kty":"oct","kid":"ed","k":"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY"}`),
		jsontext.Value(`{"kty":"RSA","kid":"broken","n":"AQAB"}`),
		jsontext.Value(`{"kty":"weird"}`),
	}
	c := newClock()
	v := as.verifier(t, c, nil)
	if _, err := v.Verify(context.Background(), k.sign(t, as.claims(c, nil))); err != nil {
		t.Fatal(err)
	}
	v.mu.Lock()
	n := len(v.keys)
	v.mu.Unlock()
	if n != 1 {
		t.Errorf("%d keys kept, want 1", n)
	}
}

// TestJWTDiscoveryIssuerPath: an issuer with a path is looked up at the
// path-inserted RFC 8414 URI, then the OIDC ones; the first that answers
// wins.
func TestJWTDiscoveryIssuerPath(t *testing.T) {
	k := newECKey(t, "k")
	as := newTestAS(t, k)
	var tried []string
	var mu sync.Mutex
	mux := http.NewServeMux()
	var meta *httptest.Server
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tried = append(tried, r.URL.Path)
		mu.Unlock()
		if r.URL.Path != "/tenant/.well-known/openid-configuration" {
			http.NotFound(w, r)
			return
		}
		_ = json.MarshalWrite(w, map[string]any{"issuer": meta.URL + "/tenant", "jwks_uri": as.srv.URL + "/jwks"})
	})
	meta = httptest.NewServer(mux)
	defer meta.Close()
	c := newClock()
	v := as.verifier(t, c, func(o *JWTOptions) { o.JWKSURL, o.Issuer = "", meta.URL+"/tenant" })
	tok := k.sign(t, as.claims(c, map[string]any{"iss": meta.URL + "/tenant"}))
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	want := []string{"/.well-known/oauth-authorization-server/tenant", "/.well-known/openid-configuration/tenant", "/tenant/.well-known/openid-configuration"}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(tried, want) {
		t.Errorf("tried %q, want %q", tried, want)
	}
}

// TestJWTRedirects: the metadata and JWK Set fetches follow redirects
// within their origin only; a redirect to another origin (another port
// on loopback) is refused before anything is sent there, and the
// verifier reports the keys unavailable.
func TestJWTRedirects(t *testing.T) {
	k := newRSAKey(t, "k", 0)
	as := newTestAS(t, k)
	var other atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.Add(1)
		http.Error(w, "should not be reached", http.StatusTeapot)
	}))
	defer elsewhere.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /same/jwks", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/jwks", http.StatusFound)
	})
	mux.HandleFunc("GET /cross/jwks", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/jwks", http.StatusFound)
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server/cross", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/.well-known/oauth-authorization-server", http.StatusFound)
	})
	mux.Handle("/", as.srv.Config.Handler)
	front := httptest.NewServer(mux)
	defer front.Close()
	c := newClock()
	ctx := context.Background()

	v := as.verifier(t, c, func(o *JWTOptions) { o.JWKSURL = front.URL + "/same/jwks"; o.HTTPClient = nil })
	if _, err := v.Verify(ctx, k.sign(t, as.claims(c, nil))); err != nil {
		t.Errorf("same-origin redirect of the JWK Set: %v", err)
	}
	for name, mod := range map[string]func(*JWTOptions){
		"jwks":     func(o *JWTOptions) { o.JWKSURL = front.URL + "/cross/jwks" },
		"metadata": func(o *JWTOptions) { o.JWKSURL, o.Issuer = "", front.URL+"/cross" },
	} {
		v := as.verifier(t, c, func(o *JWTOptions) { mod(o); o.HTTPClient = nil })
		iss := v.o.Issuer
		_, err := v.Verify(ctx, k.sign(t, as.claims(c, map[string]any{"iss": iss})))
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), elsewhere.URL) || !strings.Contains(err.Error(), "redirect") {
			t.Errorf("%s: cross-origin redirect: %v", name, err)
		}
	}
	if n := other.Load(); n != 0 {
		t.Errorf("the other origin received %d requests", n)
	}
}

// TestJWTRequiresHTTPS: the JWK Set and the metadata it is found with are
// fetched over https, or http on a loopback host only; anything else is
// refused at construction (configured URLs) or at the fetch (a jwks_uri
// of the metadata), before any request to it.
func TestJWTRequiresHTTPS(t *testing.T) {
	for _, tc := range []struct {
		issuer, jwks string
		ok           bool
	}{
		{"https://as.example.com", "", true},
		{"https://as.example.com", "https://keys.example.com/jwks", true},
		{"http://127.0.0.1:8080", "", true},
		{"http://localhost:8080", "http://[::1]:9/jwks", true},
		{"not a URL but a name", "https://keys.example.com/jwks", true}, // the issuer is only compared
		{"http://as.example.com", "", false},
		{"https://as.example.com", "http://keys.example.com/jwks", false},
		{"https://as.example.com", "ftp://keys.example.com/jwks", false},
		{"https://as.example.com", "/jwks", false},
	} {
		_, err := NewJWTVerifier(&JWTOptions{Issuer: tc.issuer, Audience: testResource, JWKSURL: tc.jwks})
		if (err == nil) != tc.ok {
			t.Errorf("issuer %q, jwks %q: err = %v, want ok %v", tc.issuer, tc.jwks, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "https") {
			t.Errorf("issuer %q, jwks %q: error %q does not say https", tc.issuer, tc.jwks, err)
		}
	}
	k := newRSAKey(t, "k", 0)
	as := newTestAS(t, k)
	as.jwksURI = "http://keys.example.test/jwks"
	var asked atomic.Int32
	c := newClock()
	v := as.verifier(t, c, func(o *JWTOptions) {
		o.JWKSURL = ""
		o.HTTPClient = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Hostname() != "127.0.0.1" {
				asked.Add(1)
				return nil, errors.New("left the machine")
			}
			return http.DefaultTransport.RoundTrip(r)
		})}
	})
	_, err := v.Verify(context.Background(), k.sign(t, as.claims(c, nil)))
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "https") {
		t.Errorf("an http jwks_uri: %v", err)
	}
	if asked.Load() != 0 {
		t.Error("the http jwks_uri was fetched")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
