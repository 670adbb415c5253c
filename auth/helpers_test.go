package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

const testResource = "https://mcp.example.com/mcp"

// testKey is a signing key with its kid and algorithm.
type testKey struct {
	kid  string
	alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

var (
	rsaOnce sync.Once
	rsaKeys []*rsa.PrivateKey
)

// rsaKey returns one of a few RSA keys generated once per test binary.
func rsaKey(t *testing.T, i int) *rsa.PrivateKey {
	t.Helper()
	rsaOnce.Do(func() {
		for range 3 {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			rsaKeys = append(rsaKeys, k)
		}
	})
	return rsaKeys[i]
}

func newRSAKey(t *testing.T, kid string, i int) *testKey {
	return &testKey{kid: kid, alg: jose.RS256, priv: rsaKey(t, i)}
}

func newECKey(t *testing.T, kid string) *testKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &testKey{kid: kid, alg: jose.ES256, priv: k}
}

func newEdKey(t *testing.T, kid string) *testKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &testKey{kid: kid, alg: jose.EdDSA, priv: k}
}

func (k *testKey) jwk() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"}
}

// sign returns a compact JWT of claims signed by k.
func (k *testKey) sign(t *testing.T, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("at+jwt")
	if k.kid != "" {
		opts = opts.WithHeader(jose.HeaderKey("kid"), k.kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: k.priv}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// testAS is an authorization server on loopback: its metadata and its
// JWK Set, whose keys a test can rotate, and a count of JWKS fetches.
type testAS struct {
	srv     *httptest.Server
	mu      sync.Mutex
	keys    []jose.JSONWebKey
	extra   []jsontext.Value // raw entries appended to the set
	down    bool
	issuer  string // the issuer its metadata names; default its URL
	jwksURI string // the jwks_uri its metadata names; default its /jwks
	fetches atomic.Int32
	metas   atomic.Int32
}

func newTestAS(t *testing.T, keys ...*testKey) *testAS {
	t.Helper()
	as := &testAS{}
	as.setKeys(keys...)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		as.fetches.Add(1)
		as.mu.Lock()
		defer as.mu.Unlock()
		if as.down {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		keys := make([]any, 0, len(as.keys)+len(as.extra))
		for _, k := range as.keys {
			keys = append(keys, k)
		}
		for _, e := range as.extra {
			keys = append(keys, e)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.MarshalWrite(w, map[string]any{"keys": keys})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		as.metas.Add(1)
		as.mu.Lock()
		iss, jwks := as.issuer, as.jwksURI
		as.mu.Unlock()
		if iss == "" {
			iss = as.srv.URL
		}
		if jwks == "" {
			jwks = as.srv.URL + "/jwks"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.MarshalWrite(w, map[string]any{"issuer": iss, "jwks_uri": jwks})
	})
	as.srv = httptest.NewServer(mux)
	t.Cleanup(as.srv.Close)
	return as
}

func (as *testAS) setKeys(keys ...*testKey) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.keys = nil
	for _, k := range keys {
		as.keys = append(as.keys, k.jwk())
	}
}

func (as *testAS) setDown(down bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.down = down
}

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Unix(1_800_000_000, 0)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// claims returns valid claims for as at c's time, with overrides
// (a nil value deletes the claim).
func (as *testAS) claims(c *clock, over map[string]any) map[string]any {
	now := c.now()
	m := map[string]any{
		"iss":       as.srv.URL,
		"sub":       "alice",
		"aud":       testResource,
		"exp":       now.Add(time.Hour).Unix(),
		"iat":       now.Unix(),
		"nbf":       now.Unix(),
		"scope":     "mcp:read mcp:write",
		"client_id": "client-1",
	}
	for k, v := range over {
		if v == nil {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	return m
}

// verifier returns a JWTVerifier for as on clock c.
func (as *testAS) verifier(t *testing.T, c *clock, mod func(*JWTOptions)) *JWTVerifier {
	t.Helper()
	o := JWTOptions{Issuer: as.srv.URL, Audience: testResource, JWKSURL: as.srv.URL + "/jwks", HTTPClient: as.srv.Client(), now: c.now}
	if mod != nil {
		mod(&o)
	}
	v, err := NewJWTVerifier(&o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// signWith signs claims with a raw key (HMAC tests).
func (k *testKey) signWith(t *testing.T, key any, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func jsonMarshal(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// mustRequire is Require for tests whose options are known to be valid.
func mustRequire(v Verifier, opts *Options) func(http.Handler) http.Handler {
	mw, err := Require(v, opts)
	if err != nil {
		panic(err)
	}
	return mw
}
