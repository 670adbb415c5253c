package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-json-experiment/json"
)

// dpopKey is a client's P-256 proof key.
type dpopKey struct {
	priv *ecdsa.PrivateKey
	jkt  string
}

func newDPoPKey(t *testing.T) *dpopKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := (&jose.JSONWebKey{Key: &k.PublicKey}).Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return &dpopKey{priv: k, jkt: base64.RawURLEncoding.EncodeToString(tp)}
}

// publicJWK is the key's public JWK as a JSON object.
func (k *dpopKey) publicJWK(t *testing.T) map[string]any {
	t.Helper()
	b, err := json.Marshal(jose.JSONWebKey{Key: &k.priv.PublicKey})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// proofSpec describes a proof; the zero value of a field means its
// honest value, for the request proofFor is given.
type proofSpec struct {
	header  map[string]any // replaces header members (nil value: removed)
	claims  map[string]any // replaces claims (nil value: removed)
	signer  *dpopKey       // signs instead of the key in the header
	hmacKey []byte         // signs with HS256 instead
	noSig   bool           // alg none: an empty signature
}

// proof builds a compact JWS by hand, so that tests can forge what a
// JOSE library would refuse to produce.
func (k *dpopKey) proof(t *testing.T, method, htu, token string, now time.Time, s proofSpec) string {
	t.Helper()
	h := map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": k.publicJWK(t)}
	c := map[string]any{"jti": rand.Text(), "htm": method, "htu": htu, "iat": now.Unix()}
	if token != "" {
		c["ath"] = tokenHash(token)
	}
	for n, v := range s.header {
		if v == nil {
			delete(h, n)
		} else {
			h[n] = v
		}
	}
	for n, v := range s.claims {
		if v == nil {
			delete(c, n)
		} else {
			c[n] = v
		}
	}
	hb, _ := json.Marshal(h)
	cb, _ := json.Marshal(c)
	input := base64.RawURLEncoding.EncodeToString(hb) + "." + base64.RawURLEncoding.EncodeToString(cb)
	var sig []byte
	switch {
	case s.noSig:
	case s.hmacKey != nil:
		m := hmac.New(sha256.New, s.hmacKey)
		m.Write([]byte(input))
		sig = m.Sum(nil)
	default:
		signer := k
		if s.signer != nil {
			signer = s.signer
		}
		sum := sha256.Sum256([]byte(input))
		r, ss, err := ecdsa.Sign(rand.Reader, signer.priv, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		sig = make([]byte, 64)
		r.FillBytes(sig[:32])
		ss.FillBytes(sig[32:])
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// dpopEnv is a handler behind Require with DPoP, its tokens kept in a
// table, and a clock of its own.
type dpopEnv struct {
	now    time.Time
	tokens map[string]*TokenInfo
	cache  *MemoryReplayCache
	ver    *DPoPVerifier
	h      http.Handler
	seen   *http.Request // the last request that reached the handler
}

func newDPoPEnv(t *testing.T, opts DPoPOptions) *dpopEnv {
	t.Helper()
	e := &dpopEnv{now: time.Unix(1_800_000_000, 0), tokens: map[string]*TokenInfo{}}
	clock := func() time.Time { return e.now }
	if opts.Replay == nil {
		e.cache = NewMemoryReplayCache(0)
		e.cache.now = clock
		opts.Replay = e.cache
	}
	opts.now = clock
	var err error
	if e.ver, err = NewDPoPVerifier(&opts); err != nil {
		t.Fatal(err)
	}
	e.h = e.instance(e.ver)
	return e
}

// instance is another Require over the same tokens, with verifier v.
func (e *dpopEnv) instance(v *DPoPVerifier) http.Handler {
	tv := VerifierFunc(func(ctx context.Context, token string) (*TokenInfo, error) {
		ti, ok := e.tokens[token]
		if !ok {
			return nil, ErrInvalidToken
		}
		c := *ti
		return &c, nil
	})
	return mustRequire(tv, &Options{Resource: testResource, DPoP: v, now: func() time.Time { return e.now }})(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			e.seen = r
			w.WriteHeader(http.StatusNoContent)
		}))
}

func (e *dpopEnv) bind(token string, k *dpopKey) {
	ti := &TokenInfo{Subject: "alice", Issuer: "https://as.example.com", Expiration: e.now.Add(time.Hour)}
	if k != nil {
		ti.JKT = k.jkt
	}
	e.tokens[token] = ti
}

// do sends a request to h with the given Authorization and DPoP headers
// (an empty one is left out) and returns the response.
func (e *dpopEnv) do(h http.Handler, method, target, authz string, proofs ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	if authz != "" {
		r.Header.Set("Authorization", authz)
	}
	for _, p := range proofs {
		if p != "" {
			r.Header.Add("DPoP", p)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// wantRefused checks a 401 whose DPoP challenge carries code, and
// returns the error description.
func wantRefused(t *testing.T, w *httptest.ResponseRecorder, code string) string {
	t.Helper()
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401 (%s)", w.Code, w.Body)
	}
	var dpop string
	for _, c := range w.Header().Values("WWW-Authenticate") {
		if strings.HasPrefix(c, "DPoP ") {
			dpop = c
		}
	}
	if !strings.Contains(dpop, `error="`+code+`"`) || !strings.Contains(dpop, `algs="ES256 ES384 PS256 RS256 EdDSA"`) {
		t.Fatalf("DPoP challenge %q, want error %s and algs", dpop, code)
	}
	var body struct {
		Error string `json:"error"`
		Desc  string `json:"error_description"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error != code {
		t.Fatalf("body %s, want error %s", w.Body, code)
	}
	return body.Desc
}

func TestDPoPAccepted(t *testing.T) {
	e := newDPoPEnv(t, DPoPOptions{})
	k := newDPoPKey(t)
	e.bind("tok", k)
	w := e.do(e.h, "POST", testResource, "DPoP tok", k.proof(t, "POST", testResource, "tok", e.now, proofSpec{}))
	if w.Code != http.StatusNoContent {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if ti := TokenInfoFrom(e.seen.Context()); ti == nil || ti.JKT != k.jkt {
		t.Fatalf("token info %+v", ti)
	}
	if e.seen.Header.Get("Authorization") != "" || e.seen.Header.Get("DPoP") != "" {
		t.Fatal("credentials passed upstream")
	}
	// The scheme is case-insensitive; htu is compared after RFC 3986
	// normalization, without query and fragment; iat may be anywhere in
	// the window, either way.
	for _, tc := range []struct {
		htu string
		iat time.Duration
	}{
		{"HTTPS://MCP.Example.COM:443/mcp?q=1#f", 0},
		{"https://mcp.example.com/./x/../%6Dcp", DefaultDPoPIATWindow},
		{"https://mcp.example.com/mcp", -DefaultDPoPIATWindow},
	} {
		w = e.do(e.h, "POST", testResource+"?x=y", "dpop tok", k.proof(t, "POST", tc.htu, "tok", e.now.Add(tc.iat), proofSpec{}))
		if w.Code != http.StatusNoContent {
			t.Fatalf("htu %s, iat %v: status %d: %s", tc.htu, tc.iat, w.Code, w.Body)
		}
	}
	// Unbound bearer tokens still pass when DPoP is optional.
	e.bind("plain", nil)
	if w := e.do(e.h, "GET", testResource, "Bearer plain"); w.Code != http.StatusNoContent {
		t.Fatalf("bearer token: status %d", w.Code)
	}
}

func TestDPoPForgedProofs(t *testing.T) {
	e := newDPoPEnv(t, DPoPOptions{})
	k, other := newDPoPKey(t), newDPoPKey(t)
	e.bind("tok", k)
	const m, u = "POST", testResource
	privJWK := k.publicJWK(t)
	d, err := k.priv.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	privJWK["d"] = base64.RawURLEncoding.EncodeToString(d)
	for _, tc := range []struct {
		name  string
		proof string
		why   string // in the error description
	}{
		{"signature by another key", k.proof(t, m, u, "tok", e.now, proofSpec{signer: other}), "signature does not verify"},
		{"key not the token's (jkt mismatch)", other.proof(t, m, u, "tok", e.now, proofSpec{}), "not the one the access token is bound to"},
		{"wrong method", k.proof(t, "GET", u, "tok", e.now, proofSpec{}), "htm"},
		{"wrong method case", k.proof(t, "post", u, "tok", e.now, proofSpec{}), "htm"},
		{"wrong URL path", k.proof(t, m, "https://mcp.example.com/other", "tok", e.now, proofSpec{}), "htu"},
		{"wrong URL host", k.proof(t, m, "https://evil.example.com/mcp", "tok", e.now, proofSpec{}), "htu"},
		{"wrong URL scheme", k.proof(t, m, "http://mcp.example.com/mcp", "tok", e.now, proofSpec{}), "htu"},
		{"stale iat", k.proof(t, m, u, "tok", e.now.Add(-DefaultDPoPIATWindow-time.Second), proofSpec{}), "iat is outside"},
		{"future iat", k.proof(t, m, u, "tok", e.now.Add(DefaultDPoPIATWindow+time.Second), proofSpec{}), "iat is outside"},
		{"iat not a number", k.proof(t, m, u, "tok", e.now, proofSpec{claims: map[string]any{"iat": "now"}}), "expected types"},
		{"missing ath", k.proof(t, m, u, "", e.now, proofSpec{}), "no ath"},
		{"wrong ath", k.proof(t, m, u, "another-token", e.now, proofSpec{}), "ath does not match"},
		{"missing jti", k.proof(t, m, u, "tok", e.now, proofSpec{claims: map[string]any{"jti": nil}}), "no jti"},
		{"jti too long", k.proof(t, m, u, "tok", e.now, proofSpec{claims: map[string]any{"jti": strings.Repeat("j", MaxDPoPJTIBytes+1)}}), "jti exceeds"},
		{"missing htu", k.proof(t, m, u, "tok", e.now, proofSpec{claims: map[string]any{"htu": nil}}), "are required"},
		{"alg none", k.proof(t, m, u, "tok", e.now, proofSpec{header: map[string]any{"alg": "none"}, noSig: true}), "accepted algorithm"},
		{"HMAC alg", k.proof(t, m, u, "tok", e.now, proofSpec{header: map[string]any{"alg": "HS256"}, hmacKey: make([]byte, 32)}), "accepted algorithm"},
		{"HMAC alg with an oct jwk", k.proof(t, m, u, "tok", e.now, proofSpec{
			header:  map[string]any{"alg": "HS256", "jwk": map[string]any{"kty": "oct", "k": base64.RawURLEncoding.EncodeToString(make([]byte, 32))}},
			hmacKey: make([]byte, 32)}), "accepted algorithm"},
		{"private key in header", k.proof(t, m, u, "tok", e.now, proofSpec{header: map[string]any{"jwk": privJWK}}), "public jwk"},
		{"no jwk", k.proof(t, m, u, "tok", e.now, proofSpec{header: map[string]any{"jwk": nil}}), "no public jwk"},
		{"wrong typ", k.proof(t, m, u, "tok", e.now, proofSpec{header: map[string]any{"typ": "JWT"}}), "typ is not"},
		{"alg and key disagree", k.proof(t, m, u, "tok", e.now, proofSpec{header: map[string]any{"alg": "RS256"}}), "signature does not verify"},
		{"too large", k.proof(t, m, u, "tok", e.now, proofSpec{claims: map[string]any{"pad": strings.Repeat("p", MaxDPoPProofBytes)}}), "exceeds 8192 bytes"},
		{"not a JWS", "not.a.jws", "not a compact JWS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.seen = nil
			if d := wantRefused(t, e.do(e.h, m, u, "DPoP tok", tc.proof), ErrCodeInvalidDPoPProof); !strings.Contains(d, tc.why) {
				t.Fatalf("refused because %q, want %q", d, tc.why)
			}
			if e.seen != nil {
				t.Fatal("the request reached the handler")
			}
		})
	}
	// None of those proofs was recorded: only valid ones fill the cache.
	if n := e.cache.Len(); n != 0 {
		t.Fatalf("%d refused proofs in the replay cache", n)
	}
}

func TestDPoPBindingRules(t *testing.T) {
	e := newDPoPEnv(t, DPoPOptions{})
	k := newDPoPKey(t)
	e.bind("tok", k)
	e.bind("plain", nil)
	p := func(tok string) string { return k.proof(t, "POST", testResource, tok, e.now, proofSpec{}) }

	t.Run("missing proof for a bound token", func(t *testing.T) {
		wantRefused(t, e.do(e.h, "POST", testResource, "DPoP tok"), ErrCodeInvalidDPoPProof)
	})
	t.Run("bearer use of a bound token", func(t *testing.T) {
		w := e.do(e.h, "POST", testResource, "Bearer tok", p("tok"))
		wantRefused(t, w, "invalid_token")
		if ch := w.Header().Values("WWW-Authenticate"); len(ch) != 2 || !strings.HasPrefix(ch[0], `Bearer error="invalid_token", resource_metadata=`) {
			t.Fatalf("challenges %q", ch)
		}
	})
	t.Run("DPoP scheme with an unbound token", func(t *testing.T) {
		wantRefused(t, e.do(e.h, "POST", testResource, "DPoP plain", p("plain")), "invalid_token")
	})
	t.Run("two DPoP headers", func(t *testing.T) {
		wantRefused(t, e.do(e.h, "POST", testResource, "DPoP tok", p("tok"), p("tok")), ErrCodeInvalidDPoPProof)
	})
	t.Run("no token", func(t *testing.T) {
		w := e.do(e.h, "POST", testResource, "")
		ch := w.Header().Values("WWW-Authenticate")
		if w.Code != http.StatusUnauthorized || len(ch) != 2 || strings.Contains(ch[1], "error=") ||
			!strings.HasPrefix(ch[1], `DPoP algs="ES256 ES384 PS256 RS256 EdDSA", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`) {
			t.Fatalf("status %d, challenges %q", w.Code, ch)
		}
	})
	t.Run("required", func(t *testing.T) {
		r := newDPoPEnv(t, DPoPOptions{Required: true})
		r.bind("plain", nil)
		w := r.do(r.h, "POST", testResource, "Bearer plain")
		wantRefused(t, w, "invalid_token")
		if ch := w.Header().Values("WWW-Authenticate"); len(ch) != 1 {
			t.Fatalf("challenges %q: want the DPoP one only", ch)
		}
	})
	t.Run("DPoP not enabled", func(t *testing.T) {
		h := mustRequire(VerifierFunc(func(ctx context.Context, token string) (*TokenInfo, error) {
			return e.tokens[token], nil
		}), &Options{Resource: testResource})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		// A bound token as a bearer token is refused: its binding cannot
		// be checked.
		if w := e.do(h, "POST", testResource, "Bearer tok", p("tok")); w.Code != http.StatusUnauthorized ||
			!strings.Contains(w.Header().Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Fatalf("status %d, challenge %q", w.Code, w.Header().Get("WWW-Authenticate"))
		}
		// The DPoP scheme is not one it knows.
		if w := e.do(h, "POST", testResource, "DPoP tok", p("tok")); w.Code != http.StatusUnauthorized ||
			strings.Contains(w.Header().Get("WWW-Authenticate"), "error=") {
			t.Fatalf("status %d, challenge %q", w.Code, w.Header().Get("WWW-Authenticate"))
		}
	})
}

func TestDPoPReplay(t *testing.T) {
	e := newDPoPEnv(t, DPoPOptions{})
	k := newDPoPKey(t)
	e.bind("tok", k)
	proof := k.proof(t, "POST", testResource, "tok", e.now, proofSpec{})
	if w := e.do(e.h, "POST", testResource, "DPoP tok", proof); w.Code != http.StatusNoContent {
		t.Fatalf("first use: %d %s", w.Code, w.Body)
	}
	wantRefused(t, e.do(e.h, "POST", testResource, "DPoP tok", proof), ErrCodeInvalidDPoPProof)

	// A second instance (its own verifier) sharing the replay cache
	// refuses the proof the first accepted, and the other way round.
	v2, err := NewDPoPVerifier(&DPoPOptions{Replay: e.cache, now: func() time.Time { return e.now }})
	if err != nil {
		t.Fatal(err)
	}
	h2 := e.instance(v2)
	wantRefused(t, e.do(h2, "POST", testResource, "DPoP tok", proof), ErrCodeInvalidDPoPProof)
	p2 := k.proof(t, "POST", testResource, "tok", e.now, proofSpec{})
	if w := e.do(h2, "POST", testResource, "DPoP tok", p2); w.Code != http.StatusNoContent {
		t.Fatalf("second instance: %d %s", w.Code, w.Body)
	}
	wantRefused(t, e.do(e.h, "POST", testResource, "DPoP tok", p2), ErrCodeInvalidDPoPProof)

	// Once the proof's iat is out of the window, this instance refuses it
	// for its iat; an instance whose clock runs a window behind still
	// takes the iat, and the entry, kept for a second window, refuses it.
	e.now = e.now.Add(DefaultDPoPIATWindow + time.Second)
	if why := wantRefused(t, e.do(e.h, "POST", testResource, "DPoP tok", proof), ErrCodeInvalidDPoPProof); !strings.Contains(why, "iat") {
		t.Errorf("a proof past its window refused for %q, want its iat", why)
	}
	lagging, err := NewDPoPVerifier(&DPoPOptions{Replay: e.cache, now: func() time.Time { return e.now.Add(-DefaultDPoPIATWindow) }})
	if err != nil {
		t.Fatal(err)
	}
	if why := wantRefused(t, e.do(e.instance(lagging), "POST", testResource, "DPoP tok", proof), ErrCodeInvalidDPoPProof); !strings.Contains(why, "replayed") {
		t.Errorf("a replay on an instance a window behind refused for %q, want the replay", why)
	}
	// Two windows after iat the entries go.
	e.now = e.now.Add(DefaultDPoPIATWindow)
	fresh := k.proof(t, "POST", testResource, "tok", e.now, proofSpec{})
	if w := e.do(e.h, "POST", testResource, "DPoP tok", fresh); w.Code != http.StatusNoContent {
		t.Fatalf("fresh proof: %d %s", w.Code, w.Body)
	}
	if n := e.cache.Len(); n != 1 {
		t.Fatalf("%d entries in the cache, want 1 (the expired ones dropped)", n)
	}
}

// failingCache is a ReplayCache that cannot be reached.
type failingCache struct{}

func (failingCache) Seen(context.Context, string, time.Time) (bool, error) {
	return false, errors.New("connection refused")
}

func TestDPoPReplayCacheFailsClosed(t *testing.T) {
	for name, c := range map[string]ReplayCache{"unreachable": failingCache{}, "full": NewMemoryReplayCache(1)} {
		t.Run(name, func(t *testing.T) {
			e := newDPoPEnv(t, DPoPOptions{Replay: c})
			if mc, ok := c.(*MemoryReplayCache); ok {
				mc.now = func() time.Time { return e.now }
				if _, err := mc.Seen(context.Background(), "filler", e.now.Add(time.Hour)); err != nil {
					t.Fatal(err)
				}
			}
			k := newDPoPKey(t)
			e.bind("tok", k)
			w := e.do(e.h, "POST", testResource, "DPoP tok", k.proof(t, "POST", testResource, "tok", e.now, proofSpec{}))
			if w.Code != http.StatusServiceUnavailable {
				t.Fatalf("status %d, want 503", w.Code)
			}
		})
	}
}

func TestDPoPNonce(t *testing.T) {
	key := make([]byte, 32)
	e := newDPoPEnv(t, DPoPOptions{NonceKey: key})
	k := newDPoPKey(t)
	e.bind("tok", k)
	send := func(h http.Handler, nonce any) *httptest.ResponseRecorder {
		return e.do(h, "POST", testResource, "DPoP tok", k.proof(t, "POST", testResource, "tok", e.now, proofSpec{claims: map[string]any{"nonce": nonce}}))
	}
	w := send(e.h, nil)
	wantRefused(t, w, ErrCodeUseDPoPNonce)
	nonce := w.Header().Get("DPoP-Nonce")
	if nonce == "" {
		t.Fatal("no DPoP-Nonce with use_dpop_nonce")
	}
	if ch := w.Header().Values("WWW-Authenticate"); strings.Contains(ch[0], "use_dpop_nonce") {
		t.Fatalf("the Bearer challenge names a DPoP error: %q", ch[0])
	}
	w = send(e.h, nonce)
	if w.Code != http.StatusNoContent || w.Header().Get("DPoP-Nonce") == "" {
		t.Fatalf("with the nonce: %d %s, next nonce %q", w.Code, w.Body, w.Header().Get("DPoP-Nonce"))
	}
	// Another instance with the same key accepts it: nonces are stateless.
	v2, _ := NewDPoPVerifier(&DPoPOptions{NonceKey: key, Replay: e.cache, now: func() time.Time { return e.now }})
	if w := send(e.instance(v2), nonce); w.Code != http.StatusNoContent {
		t.Fatalf("second instance: %d %s", w.Code, w.Body)
	}
	// One with another key does not.
	v3, _ := NewDPoPVerifier(&DPoPOptions{NonceKey: []byte(strings.Repeat("k", 32)), Replay: e.cache, now: func() time.Time { return e.now }})
	wantRefused(t, send(e.instance(v3), nonce), ErrCodeUseDPoPNonce)
	// Bad nonces: forged, tampered, malformed, not a string.
	tampered := []byte(nonce)
	tampered[len(tampered)-2] ^= 1
	for _, bad := range []any{"forged", string(tampered), base64.RawURLEncoding.EncodeToString(make([]byte, 40)), 42} {
		wantRefused(t, send(e.h, bad), map[bool]string{true: ErrCodeInvalidDPoPProof, false: ErrCodeUseDPoPNonce}[bad == 42])
	}
	// Past its lifetime the nonce is refused, and a fresh one handed out.
	e.now = e.now.Add(DefaultDPoPNonceLifetime + time.Second)
	w = send(e.h, nonce)
	wantRefused(t, w, ErrCodeUseDPoPNonce)
	if n := w.Header().Get("DPoP-Nonce"); n == "" || n == nonce {
		t.Fatalf("next nonce %q", n)
	}
	if _, err := NewDPoPVerifier(&DPoPOptions{NonceKey: make([]byte, 16)}); err == nil {
		t.Fatal("a 16-byte nonce key was accepted")
	}
}

func TestDPoPOptions(t *testing.T) {
	for _, a := range []jose.SignatureAlgorithm{jose.HS256, "none", "NONE", "HS1"} {
		if _, err := NewDPoPVerifier(&DPoPOptions{Algorithms: []jose.SignatureAlgorithm{a}}); err == nil {
			t.Errorf("algorithm %s accepted", a)
		}
	}
	// A narrower list is advertised, and enforced.
	e := newDPoPEnv(t, DPoPOptions{Algorithms: []jose.SignatureAlgorithm{jose.EdDSA}})
	k := newDPoPKey(t)
	e.bind("tok", k)
	w := e.do(e.h, "POST", testResource, "DPoP tok", k.proof(t, "POST", testResource, "tok", e.now, proofSpec{}))
	if w.Code != http.StatusUnauthorized || !strings.Contains(w.Header().Values("WWW-Authenticate")[1], `algs="EdDSA"`) {
		t.Fatalf("status %d, challenges %q", w.Code, w.Header().Values("WWW-Authenticate"))
	}
	// A narrower window.
	e = newDPoPEnv(t, DPoPOptions{IATWindow: 5 * time.Second})
	e.bind("tok", k)
	wantRefused(t, e.do(e.h, "POST", testResource, "DPoP tok", k.proof(t, "POST", testResource, "tok", e.now.Add(-6*time.Second), proofSpec{})), ErrCodeInvalidDPoPProof)
}

// TestDPoPTokenEndpoint: without an access token (a token request), ath
// is refused, and the thumbprint is returned for binding.
func TestDPoPTokenEndpoint(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	v, _ := NewDPoPVerifier(&DPoPOptions{now: func() time.Time { return now }})
	k := newDPoPKey(t)
	const u = "https://as.example.com/token"
	jkt, err := v.Verify(context.Background(), DPoPRequest{Proof: k.proof(t, "POST", u, "", now, proofSpec{}), Method: "POST", URL: u})
	if err != nil || jkt != k.jkt {
		t.Fatalf("jkt %q, err %v; want %q", jkt, err, k.jkt)
	}
	_, err = v.Verify(context.Background(), DPoPRequest{Proof: k.proof(t, "POST", u, "tok", now, proofSpec{}), Method: "POST", URL: u})
	if de := (*DPoPError)(nil); !errors.As(err, &de) || de.Code != ErrCodeInvalidDPoPProof {
		t.Fatalf("ath without a token: %v", err)
	}
}

func TestNormalizeHTU(t *testing.T) {
	for in, want := range map[string]string{
		"https://EXAMPLE.com":                  "https://example.com/",
		"https://example.com:443/a?b#c":        "https://example.com/a",
		"http://example.com:80/a/b/../c/./d":   "http://example.com/a/c/d",
		"http://example.com:8080/%7euser/%2f":  "http://example.com:8080/~user/%2F",
		"https://[::1]:8443/mcp":               "https://[::1]:8443/mcp",
		"https://[::1]/mcp":                    "https://[::1]/mcp",
		"https://example.com/a/..":             "https://example.com/",
		"HTTPS://example.com/A":                "https://example.com/A",
		"https://example.com/mcp/":             "https://example.com/mcp/",
		"https://example.com/%41%42?%zz=1#%zz": "https://example.com/AB",
	} {
		if got, err := normalizeHTU(in); err != nil || got != want {
			t.Errorf("normalizeHTU(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "/mcp", "ftp://example.com/", "https://user@example.com/", "https://example.com:x/", "https:///mcp", "https://example.com/%zz"} {
		if got, err := normalizeHTU(bad); err == nil {
			t.Errorf("normalizeHTU(%q) = %q, want an error", bad, got)
		}
	}
}

func TestMemoryReplayCache(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	c := NewMemoryReplayCache(2)
	c.now = func() time.Time { return now }
	ctx := context.Background()
	seen := func(key string, until time.Time) (bool, error) { return c.Seen(ctx, key, until) }
	if s, err := seen("a", now.Add(time.Minute)); s || err != nil {
		t.Fatal(s, err)
	}
	if s, err := seen("a", now.Add(time.Minute)); !s || err != nil {
		t.Fatal("replay not seen", s, err)
	}
	if s, err := seen("b", now.Add(2*time.Minute)); s || err != nil {
		t.Fatal(s, err)
	}
	if _, err := seen("c", now.Add(time.Minute)); !errors.Is(err, ErrReplayCacheFull) {
		t.Fatalf("full cache: %v", err)
	}
	if s, err := seen("d", now); s || err != nil || c.Len() != 2 {
		t.Fatal("an already expired entry was refused or stored", s, err, c.Len())
	}
	now = now.Add(time.Minute)
	// a expired: room again, and a is new again.
	if s, err := seen("c", now.Add(time.Minute)); s || err != nil {
		t.Fatal(s, err)
	}
	if s, err := seen("b", now.Add(time.Minute)); !s || err != nil {
		t.Fatal("b forgotten early", s, err)
	}
	if c.Len() != 2 {
		t.Fatalf("len %d", c.Len())
	}
}
