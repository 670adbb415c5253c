package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/go-json-experiment/json/jsontext"
)

// Defaults of JWTOptions.
const (
	// DefaultLeeway is the clock skew allowed on exp, nbf and iat.
	DefaultLeeway = time.Minute
	// DefaultJWKSCacheTTL is how long a fetched JWK Set is used before it
	// is fetched again.
	DefaultJWKSCacheTTL = 15 * time.Minute
	// DefaultJWKSRefreshInterval is the least time between two fetches of
	// the JWK Set, whatever causes them (an unknown kid, a failure).
	DefaultJWKSRefreshInterval = 30 * time.Second
	// maxMetadataBytes caps a JWK Set or metadata document.
	maxMetadataBytes = 1 << 20
	// fetchTimeout bounds one fetch when HTTPClient has no timeout.
	fetchTimeout = 10 * time.Second
	// minHMACKeyBytes is the shortest HMAC key accepted (RFC 7518 §3.2).
	minHMACKeyBytes = 32
)

// DefaultAlgorithms are the signature algorithms a JWTVerifier accepts
// by default.
var DefaultAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.EdDSA}

// JWTOptions configures a JWTVerifier.
type JWTOptions struct {
	// Issuer is the authorization server's issuer identifier; a token's
	// iss must equal it exactly (no normalization). Required.
	Issuer string
	// Audience is this resource's canonical URI (RFC 8707); a token's
	// aud must contain it exactly, so tokens for other resources are
	// refused (MCP authorization). Required.
	Audience string
	// JWKSURL is the JWK Set holding the issuer's signing keys. Empty:
	// the jwks_uri of the issuer's authorization server metadata
	// (RFC 8414, then OpenID Connect discovery), whose issuer must equal
	// Issuer. Whichever it is, and the Issuer when its metadata is
	// fetched, must be https (http only on loopback hosts); fetches
	// follow redirects within their origin only.
	JWKSURL string
	// Algorithms lists the accepted signature algorithms. Default
	// DefaultAlgorithms. "none" is never accepted. HS256/HS384/HS512 are
	// accepted only when listed here and HMACKey is set; HMAC tokens are
	// checked with HMACKey only, never with keys of the JWK Set.
	Algorithms []jose.SignatureAlgorithm
	// HMACKey is the shared key of HS* tokens (at least 32 bytes).
	HMACKey []byte
	// Leeway is the clock skew allowed on exp, nbf and iat. Default
	// DefaultLeeway; negative means none. Behind Require, more than
	// DefaultLeeway on exp is cut back by the middleware's own check.
	Leeway time.Duration
	// CacheTTL is how long a fetched JWK Set is trusted. Default
	// DefaultJWKSCacheTTL. When a refetch fails the old set stays in use.
	CacheTTL time.Duration
	// RefreshInterval is the least time between two fetches of the JWK
	// Set: a token with an unknown kid causes one refetch at most this
	// often (key rotation), so that forged kids cannot make the verifier
	// hammer the authorization server. Default DefaultJWKSRefreshInterval.
	RefreshInterval time.Duration
	// HTTPClient fetches the JWK Set and metadata. Default: a client
	// with a 10-second timeout.
	HTTPClient *http.Client

	now func() time.Time // tests
}

// JWTVerifier verifies JWT access tokens (RFC 9068 profile) signed by one
// authorization server: signature with a key of its JWK Set (fetched,
// cached and refetched on rotation), iss, aud, exp (required), nbf, iat
// and sub (required). Scopes come from scope (space-separated) or scp (a
// list or a string). It is safe for concurrent use.
type JWTVerifier struct {
	o       JWTOptions
	algs    []jose.SignatureAlgorithm
	hmacOK  bool
	jwksOK  bool
	client  *http.Client
	now     func() time.Time
	ttl     time.Duration
	every   time.Duration
	leeway  time.Duration
	fetchMu chan struct{} // one fetch at a time

	mu        sync.Mutex
	jwksURL   string
	keys      []jose.JSONWebKey // nil until a fetch succeeded
	fetchedAt time.Time         // last successful fetch
	triedAt   time.Time         // last attempt
	gen       uint64            // attempts so far
	lastErr   error
}

// NewJWTVerifier checks o and returns a verifier. Nothing is fetched
// before the first token arrives.
func NewJWTVerifier(opts *JWTOptions) (*JWTVerifier, error) {
	if opts == nil {
		return nil, errors.New("auth: NewJWTVerifier needs options (Issuer, Audience)")
	}
	o := *opts
	if o.Issuer == "" {
		return nil, errors.New("auth: JWTOptions.Issuer is required")
	}
	if _, err := canonicalResource(o.Audience); err != nil {
		return nil, fmt.Errorf("auth: JWTOptions.Audience: %w", err)
	}
	v := &JWTVerifier{o: o, fetchMu: make(chan struct{}, 1), jwksURL: o.JWKSURL}
	v.algs = o.Algorithms
	if len(v.algs) == 0 {
		v.algs = DefaultAlgorithms
	}
	v.algs = slices.Clone(v.algs)
	for _, a := range v.algs {
		switch {
		case strings.EqualFold(string(a), "none"):
			return nil, errors.New(`auth: the "none" algorithm is never accepted`)
		case isHMAC(a):
			v.hmacOK = true
		default:
			v.jwksOK = true
		}
	}
	if v.hmacOK && len(o.HMACKey) < minHMACKeyBytes {
		return nil, fmt.Errorf("auth: HS* algorithms need an HMACKey of at least %d bytes", minHMACKeyBytes)
	}
	if !v.hmacOK && len(o.HMACKey) > 0 {
		return nil, errors.New("auth: HMACKey is set but no HS* algorithm is listed in Algorithms")
	}
	if o.JWKSURL != "" {
		if err := checkFetchURL("JWTOptions.JWKSURL", o.JWKSURL); err != nil {
			return nil, err
		}
	} else if v.jwksOK {
		// The issuer's metadata is fetched to find its jwks_uri.
		if err := checkFetchURL("JWTOptions.Issuer (no JWKSURL is set, so its metadata is fetched)", o.Issuer); err != nil {
			return nil, err
		}
	}
	v.client = o.HTTPClient
	if v.client == nil {
		v.client = &http.Client{Timeout: fetchTimeout}
	}
	v.now = o.now
	if v.now == nil {
		v.now = time.Now
	}
	v.ttl = cmpDefault(o.CacheTTL, DefaultJWKSCacheTTL)
	v.every = cmpDefault(o.RefreshInterval, DefaultJWKSRefreshInterval)
	v.leeway = cmpDefault(o.Leeway, DefaultLeeway)
	if o.Leeway < 0 {
		v.leeway = 0
	}
	return v, nil
}

func cmpDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func isHMAC(a jose.SignatureAlgorithm) bool {
	return a == jose.HS256 || a == jose.HS384 || a == jose.HS512
}

// registered are the claims TokenInfo carries in its own fields.
var registered = []string{"iss", "sub", "aud", "exp", "nbf", "iat", "scope", "scp"}

// Verify implements Verifier.
func (v *JWTVerifier) Verify(ctx context.Context, token string) (*TokenInfo, error) {
	tok, err := jwt.ParseSigned(token, v.algs)
	if err != nil {
		return nil, fmt.Errorf("%w: not a JWS-signed JWT with an accepted algorithm", ErrInvalidToken)
	}
	if len(tok.Headers) != 1 {
		return nil, fmt.Errorf("%w: one signature expected", ErrInvalidToken)
	}
	h := tok.Headers[0]
	alg := jose.SignatureAlgorithm(h.Algorithm)
	var std jwt.Claims
	var raw map[string]any
	verified := false
	if isHMAC(alg) {
		verified = tok.Claims(v.o.HMACKey, &std, &raw) == nil
	} else {
		keys, err := v.keysFor(ctx, h.KeyID, string(alg))
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if tok.Claims(k.Key, &std, &raw) == nil {
				verified = true
				break
			}
			std, raw = jwt.Claims{}, nil
		}
	}
	if !verified {
		return nil, fmt.Errorf("%w: signature verification failed", ErrInvalidToken)
	}
	if std.Expiry == nil {
		return nil, fmt.Errorf("%w: no exp claim", ErrInvalidToken)
	}
	if std.Subject == "" {
		return nil, fmt.Errorf("%w: no sub claim", ErrInvalidToken)
	}
	exp := jwt.Expected{Issuer: v.o.Issuer, AnyAudience: jwt.Audience{v.o.Audience}, Time: v.now()}
	if std.Issuer != v.o.Issuer { // Expected ignores an empty issuer; be explicit
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, jwt.ErrInvalidIssuer)
	}
	if err := std.ValidateWithLeeway(exp, v.leeway); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	ti := &TokenInfo{
		Subject:    std.Subject,
		Issuer:     std.Issuer,
		Audience:   []string(std.Audience),
		Expiration: std.Expiry.Time(),
	}
	ti.Scopes, err = scopesOf(raw)
	if err != nil {
		return nil, err
	}
	if ti.JKT, err = confirmationJKT(raw["cnf"]); err != nil {
		return nil, err
	}
	for k, val := range raw {
		if slices.Contains(registered, k) {
			continue
		}
		if ti.Extra == nil {
			ti.Extra = make(map[string]any)
		}
		ti.Extra[k] = val
	}
	return ti, nil
}

// scopesOf reads scope (a space-separated string, RFC 9068 §2.2.3) or,
// failing that, scp (a list of strings, or a string).
func scopesOf(raw map[string]any) ([]string, error) {
	if s, ok := raw["scope"]; ok {
		str, ok := s.(string)
		if !ok {
			return nil, fmt.Errorf("%w: scope claim is not a string", ErrInvalidToken)
		}
		return strings.Fields(str), nil
	}
	switch s := raw["scp"].(type) {
	case nil:
		return nil, nil
	case string:
		return strings.Fields(s), nil
	case []any:
		out := make([]string, 0, len(s))
		for _, e := range s {
			str, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%w: scp claim holds a non-string", ErrInvalidToken)
			}
			out = append(out, str)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: scp claim is neither a string nor a list", ErrInvalidToken)
}

// keysFor returns the keys of the JWK Set that may have signed a token
// with this kid and alg, fetching the set when it is absent or stale, or
// when the kid is unknown (rotation) — at most once per RefreshInterval.
func (v *JWTVerifier) keysFor(ctx context.Context, kid, alg string) ([]jose.JSONWebKey, error) {
	v.mu.Lock()
	now := v.now()
	c := candidates(v.keys, kid, alg)
	fresh := v.keys != nil && now.Sub(v.fetchedAt) < v.ttl
	mayFetch := v.gen == 0 || now.Sub(v.triedAt) >= v.every
	gen, have, lastErr := v.gen, v.keys != nil, v.lastErr
	v.mu.Unlock()
	switch {
	case len(c) > 0 && (fresh || !mayFetch):
		return c, nil // stale keys are used while refetching is rate-limited
	case !mayFetch && have:
		return nil, fmt.Errorf("%w: unknown signing key", ErrInvalidToken)
	case !mayFetch:
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, lastErr)
	}
	ferr := v.refresh(ctx, gen)
	v.mu.Lock()
	c = candidates(v.keys, kid, alg)
	have, lastErr = v.keys != nil, v.lastErr
	v.mu.Unlock()
	switch {
	case len(c) > 0:
		return c, nil
	case ferr != nil && errors.Is(ferr, ctx.Err()):
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, ferr)
	case !have && lastErr != nil:
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, lastErr)
	}
	return nil, fmt.Errorf("%w: unknown signing key", ErrInvalidToken)
}

// candidates are the signing keys of set matching kid (any key when the
// token names none) and alg (when the key names one).
func candidates(set []jose.JSONWebKey, kid, alg string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range set {
		if (kid != "" && k.KeyID != kid) || (k.Use != "" && k.Use != "sig") || (k.Algorithm != "" && k.Algorithm != alg) {
			continue
		}
		out = append(out, k)
	}
	return out
}

// refresh fetches the JWK Set unless another attempt was made since the
// caller looked (generation gen): concurrent callers share one fetch.
func (v *JWTVerifier) refresh(ctx context.Context, gen uint64) error {
	select {
	case v.fetchMu <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-v.fetchMu }()
	v.mu.Lock()
	if v.gen != gen {
		v.mu.Unlock()
		return nil
	}
	v.mu.Unlock()
	// The fetch outlives a cancelled request: its result serves others.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	keys, jwksURL, err := v.fetch(fctx)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.gen++
	v.triedAt = v.now()
	v.lastErr = err
	if err != nil {
		return err
	}
	v.keys, v.fetchedAt, v.jwksURL = keys, v.triedAt, jwksURL
	return nil
}

// fetch reads the JWK Set, discovering its URL first when needed.
func (v *JWTVerifier) fetch(ctx context.Context) ([]jose.JSONWebKey, string, error) {
	v.mu.Lock()
	jwksURL := v.jwksURL
	v.mu.Unlock()
	if jwksURL == "" {
		var err error
		if jwksURL, err = v.discover(ctx); err != nil {
			return nil, "", err
		}
	}
	var set struct {
		Keys []jsontext.Value `json:"keys"`
	}
	if err := v.getJSON(ctx, jwksURL, &set); err != nil {
		return nil, "", err
	}
	keys := make([]jose.JSONWebKey, 0, len(set.Keys))
	for _, raw := range set.Keys {
		var k jose.JSONWebKey
		if k.UnmarshalJSON(raw) != nil || !k.Valid() {
			continue // unsupported or broken keys are skipped, not fatal
		}
		pub := k.Public() // never keep private or symmetric material
		if pub.Key == nil || !pub.IsPublic() {
			continue
		}
		keys = append(keys, pub)
	}
	if len(keys) == 0 {
		return nil, "", fmt.Errorf("the JWK Set at %s holds no usable public key", jwksURL)
	}
	return keys, jwksURL, nil
}

// discover finds jwks_uri in the issuer's authorization server metadata,
// trying the RFC 8414 and OpenID Connect well-known URIs in the order
// MCP clients use (MCP authorization); the document's issuer must equal Issuer.
func (v *JWTVerifier) discover(ctx context.Context) (string, error) {
	iss, err := url.Parse(v.o.Issuer)
	if err != nil || iss.Host == "" {
		return "", fmt.Errorf("issuer %q is not a URL", v.o.Issuer)
	}
	path := strings.TrimSuffix(iss.EscapedPath(), "/")
	root := iss.Scheme + "://" + iss.Host
	urls := []string{root + "/.well-known/oauth-authorization-server" + path, root + "/.well-known/openid-configuration" + path}
	if path != "" {
		urls = append(urls, root+path+"/.well-known/openid-configuration")
	}
	var errs []error
	for _, u := range urls {
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := v.getJSON(ctx, u, &meta); err != nil {
			if errors.Is(err, errRedirect) {
				// Not "absent": the issuer's origin points elsewhere.
				return "", err
			}
			errs = append(errs, err)
			continue
		}
		if meta.Issuer != v.o.Issuer {
			return "", fmt.Errorf("metadata at %s names issuer %q, want %q", u, meta.Issuer, v.o.Issuer)
		}
		if meta.JWKSURI == "" {
			return "", fmt.Errorf("metadata at %s has no jwks_uri", u)
		}
		if err := checkFetchURL("jwks_uri of the metadata at "+u, meta.JWKSURI); err != nil {
			return "", err
		}
		return meta.JWKSURI, nil
	}
	return "", fmt.Errorf("no authorization server metadata for %s: %w", v.o.Issuer, errors.Join(errs...))
}
