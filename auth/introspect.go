package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
)

// Defaults and limits of IntrospectionOptions.
const (
	// DefaultIntrospectionCacheTTL bounds how long an active result is
	// reused: a token revoked at the authorization server is still
	// accepted for at most this long. A result is never kept past the
	// token's exp either.
	DefaultIntrospectionCacheTTL = time.Minute
	// DefaultIntrospectionCacheSize is how many active results are kept
	// at most.
	DefaultIntrospectionCacheSize = 10_000
	// DefaultIntrospectionMaxResponseBytes caps an introspection
	// response; a larger one is a failed call (503).
	DefaultIntrospectionMaxResponseBytes = 64 << 10
	// MaxIntrospectedTokenBytes is the longest token sent to the
	// authorization server: a longer one is refused (401) without a
	// call, so that a client cannot make every request forward a
	// megabyte. Opaque tokens are short; a JWT with many claims stays
	// well below it.
	MaxIntrospectedTokenBytes = 8 << 10
	// DefaultIntrospectionTimeout bounds one introspection call.
	DefaultIntrospectionTimeout = 5 * time.Second
)

// Client authentication methods of IntrospectionOptions.AuthMethod.
const (
	AuthClientSecretBasic = "client_secret_basic"
	AuthClientSecretPost  = "client_secret_post"
	AuthBearer            = "bearer"
)

// IntrospectionOptions configures an IntrospectionVerifier.
type IntrospectionOptions struct {
	// Endpoint is the authorization server's introspection endpoint
	// (RFC 7662 §2): https (http only on loopback hosts). Required.
	Endpoint string
	// Audience is this resource's canonical URI (RFC 8707): a result's
	// aud must contain it. Required. A result without aud is refused:
	// nothing would say the token was meant for this resource.
	Audience string
	// Issuer, when set, is the issuer principals are named after
	// (TokenInfo.Issuer), and a result's iss, when present, must equal
	// it. Empty: the result's iss.
	Issuer string
	// AuthMethod is how the resource server authenticates to the
	// endpoint: AuthClientSecretBasic (the default), AuthClientSecretPost
	// or AuthBearer.
	AuthMethod string
	// ClientID and ClientSecret are the resource server's credentials
	// for client_secret_basic and client_secret_post.
	ClientID, ClientSecret string
	// BearerToken is its credential for AuthBearer.
	BearerToken string
	// CacheTTL bounds how long an active result is reused. Default
	// DefaultIntrospectionCacheTTL; negative: results are not cached.
	CacheTTL time.Duration
	// CacheSize bounds how many results are kept. Default
	// DefaultIntrospectionCacheSize.
	CacheSize int
	// MaxResponseBytes caps a response. Default
	// DefaultIntrospectionMaxResponseBytes.
	MaxResponseBytes int64
	// Timeout bounds one call. Default DefaultIntrospectionTimeout.
	Timeout time.Duration
	// HTTPClient makes the calls; redirects are never followed. Default:
	// http.DefaultTransport.
	HTTPClient *http.Client

	now func() time.Time // tests
}

// IntrospectionVerifier verifies opaque access tokens by asking the
// authorization server (OAuth 2.0 Token Introspection, RFC 7662) and maps
// the answer into a TokenInfo as JWTVerifier does for JWTs: sub, iss,
// aud, exp, scope, cnf.jkt (DPoP binding), the rest (client_id,
// username, token_type…) in Extra.
//
// Active results are cached, keyed by a SHA-256 hash of the token (never
// the token), until the earlier of the token's exp and CacheTTL.
// Inactive results are not cached: a client sending a dead token is told
// so by each call, and no cache entry can outlive a token's activation.
// Failed calls (network, timeout, non-200, oversized or malformed
// answer) are never cached and wrap ErrUnavailable, so that Require
// answers 503: they say nothing about the token, and a 401 would send
// the client to re-authorize in vain. It is safe for concurrent use.
type IntrospectionVerifier struct {
	o       IntrospectionOptions
	client  *http.Client
	now     func() time.Time
	ttl     time.Duration
	size    int
	maxBody int64
	timeout time.Duration

	mu    sync.Mutex
	cache map[[sha256.Size]byte]cached
}

type cached struct {
	ti    *TokenInfo
	until time.Time
}

// NewIntrospectionVerifier checks o and returns a verifier.
func NewIntrospectionVerifier(opts *IntrospectionOptions) (*IntrospectionVerifier, error) {
	if opts == nil {
		return nil, errors.New("auth: NewIntrospectionVerifier needs options (Endpoint, Audience, client credentials)")
	}
	o := *opts
	if err := checkFetchURL("IntrospectionOptions.Endpoint", o.Endpoint); err != nil {
		return nil, err
	}
	if _, err := canonicalResource(o.Audience); err != nil {
		return nil, fmt.Errorf("auth: IntrospectionOptions.Audience: %w", err)
	}
	switch o.AuthMethod {
	case "", AuthClientSecretBasic, AuthClientSecretPost:
		if o.ClientID == "" || o.ClientSecret == "" {
			return nil, errors.New("auth: introspection with client_secret_basic or client_secret_post needs ClientID and ClientSecret")
		}
	case AuthBearer:
		if o.BearerToken == "" {
			return nil, errors.New("auth: introspection with bearer authentication needs BearerToken")
		}
	default:
		return nil, fmt.Errorf("auth: unknown introspection AuthMethod %q", o.AuthMethod)
	}
	v := &IntrospectionVerifier{o: o, cache: map[[sha256.Size]byte]cached{}}
	base := o.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	c := *base
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	v.client = &c
	v.now = o.now
	if v.now == nil {
		v.now = time.Now
	}
	v.ttl = cmpDefault(o.CacheTTL, DefaultIntrospectionCacheTTL)
	if o.CacheTTL < 0 {
		v.ttl = 0
	}
	v.size = o.CacheSize
	if v.size <= 0 {
		v.size = DefaultIntrospectionCacheSize
	}
	v.maxBody = o.MaxResponseBytes
	if v.maxBody <= 0 {
		v.maxBody = DefaultIntrospectionMaxResponseBytes
	}
	v.timeout = cmpDefault(o.Timeout, DefaultIntrospectionTimeout)
	return v, nil
}

// Verify implements Verifier.
func (v *IntrospectionVerifier) Verify(ctx context.Context, token string) (*TokenInfo, error) {
	if len(token) > MaxIntrospectedTokenBytes {
		return nil, fmt.Errorf("%w: the token is longer than %d bytes", ErrInvalidToken, MaxIntrospectedTokenBytes)
	}
	key := sha256.Sum256([]byte(token))
	now := v.now()
	v.mu.Lock()
	c, ok := v.cache[key]
	if ok && !now.Before(c.until) {
		delete(v.cache, key)
		ok = false
	}
	v.mu.Unlock()
	if ok {
		return cloneInfo(c.ti), nil
	}
	ti, err := v.introspect(ctx, token)
	if err != nil {
		return nil, err
	}
	v.store(key, ti, now)
	return cloneInfo(ti), nil
}

// store caches an active result until the earlier of its exp and
// now+CacheTTL, making room when the cache is full: expired entries go
// first, then arbitrary ones (a dropped entry costs one more call).
func (v *IntrospectionVerifier) store(key [sha256.Size]byte, ti *TokenInfo, now time.Time) {
	until := now.Add(v.ttl)
	if !ti.Expiration.IsZero() && ti.Expiration.Before(until) {
		until = ti.Expiration
	}
	if !until.After(now) {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.cache) >= v.size {
		for k, c := range v.cache {
			if !now.Before(c.until) {
				delete(v.cache, k)
			}
		}
		for k := range v.cache {
			if len(v.cache) < v.size {
				break
			}
			delete(v.cache, k)
		}
	}
	v.cache[key] = cached{ti: ti, until: until}
}

func cloneInfo(ti *TokenInfo) *TokenInfo {
	c := *ti
	c.Scopes = slices.Clone(ti.Scopes)
	c.Audience = slices.Clone(ti.Audience)
	c.Extra = maps.Clone(ti.Extra)
	return &c
}

// introspect makes one call and maps its answer.
func (v *IntrospectionVerifier) introspect(ctx context.Context, token string) (*TokenInfo, error) {
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	if v.o.AuthMethod == AuthClientSecretPost {
		form.Set("client_id", v.o.ClientID)
		form.Set("client_secret", v.o.ClientSecret)
	}
	// The call outlives a cancelled request no more than its timeout.
	cctx, cancel := context.WithTimeout(ctx, v.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, v.o.Endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	switch v.o.AuthMethod {
	case "", AuthClientSecretBasic:
		// RFC 6749 §2.3.1: both are form-encoded before Basic encoding.
		req.SetBasicAuth(url.QueryEscape(v.o.ClientID), url.QueryEscape(v.o.ClientSecret))
	case AuthBearer:
		req.Header.Set("Authorization", "Bearer "+v.o.BearerToken)
	}
	resp, err := v.client.Do(req)
	if err != nil {
		// The error may quote the URL, never the token (it is in the body).
		return nil, fmt.Errorf("%w: introspection: %w", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, v.maxBody))
		return nil, fmt.Errorf("%w: introspection: %s", ErrUnavailable, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, v.maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("%w: introspection: %w", ErrUnavailable, err)
	}
	if int64(len(body)) > v.maxBody {
		return nil, fmt.Errorf("%w: introspection response exceeds %d bytes", ErrUnavailable, v.maxBody)
	}
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("%w: introspection response is not a JSON object", ErrUnavailable)
	}
	return v.tokenInfo(raw)
}

// introspected are the members of a response TokenInfo carries in its
// own fields.
var introspected = []string{"active", "iss", "sub", "aud", "exp", "nbf", "iat", "scope"}

// tokenInfo maps an introspection response (RFC 7662 §2.2).
func (v *IntrospectionVerifier) tokenInfo(raw map[string]any) (*TokenInfo, error) {
	active, ok := raw["active"].(bool)
	if !ok {
		return nil, fmt.Errorf("%w: introspection response without a boolean active", ErrUnavailable)
	}
	if !active {
		return nil, fmt.Errorf("%w: the token is not active", ErrInvalidToken)
	}
	ti := &TokenInfo{}
	if err := v.identity(raw, ti); err != nil {
		return nil, err
	}
	if err := v.times(raw, ti); err != nil {
		return nil, err
	}
	scope, err := introString(raw, "scope")
	if err != nil {
		return nil, err
	}
	ti.Scopes = strings.Fields(scope)
	if ti.JKT, err = confirmationJKT(raw["cnf"]); err != nil {
		return nil, err
	}
	// A DPoP token comes with its key (RFC 9449 §6.2): an answer that
	// says DPoP without cnf.jkt would let a bound token pass as a bearer
	// one.
	if tt, ok := raw["token_type"].(string); ok && strings.EqualFold(tt, "DPoP") && ti.JKT == "" {
		return nil, fmt.Errorf("%w: a DPoP token without cnf.jkt", ErrInvalidToken)
	}
	for k, val := range raw {
		if slices.Contains(introspected, k) {
			continue
		}
		if ti.Extra == nil {
			ti.Extra = make(map[string]any)
		}
		ti.Extra[k] = val
	}
	return ti, nil
}

// introString reads an optional string member of an introspection
// response ("" when absent).
func introString(raw map[string]any, name string) (string, error) {
	switch s := raw[name].(type) {
	case nil:
		return "", nil
	case string:
		return s, nil
	}
	return "", fmt.Errorf("%w: introspection member %s is not a string", ErrInvalidToken, name)
}

// introTime reads an optional NumericDate member of an introspection
// response; ok is false when it is absent.
func introTime(raw map[string]any, name string) (t time.Time, ok bool, err error) {
	switch n := raw[name].(type) {
	case nil:
		return time.Time{}, false, nil
	case float64:
		if n < 0 || n > 1<<40 {
			break
		}
		return time.Unix(int64(n), 0), true, nil
	}
	return time.Time{}, false, fmt.Errorf("%w: introspection member %s is not a time", ErrInvalidToken, name)
}

// identity fills the subject, issuer and audience of ti from an
// introspection response, checking the issuer and audience configured.
func (v *IntrospectionVerifier) identity(raw map[string]any, ti *TokenInfo) error {
	var err error
	if ti.Subject, err = introString(raw, "sub"); err != nil {
		return err
	}
	if ti.Subject == "" {
		return fmt.Errorf("%w: no sub", ErrInvalidToken)
	}
	if ti.Issuer, err = introString(raw, "iss"); err != nil {
		return err
	}
	if v.o.Issuer != "" {
		if ti.Issuer != "" && ti.Issuer != v.o.Issuer {
			return fmt.Errorf("%w: iss is not the configured issuer", ErrInvalidToken)
		}
		ti.Issuer = v.o.Issuer
	}
	switch a := raw["aud"].(type) {
	case string:
		ti.Audience = []string{a}
	case []any:
		for _, e := range a {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("%w: aud holds a non-string", ErrInvalidToken)
			}
			ti.Audience = append(ti.Audience, s)
		}
	}
	if !slices.Contains(ti.Audience, v.o.Audience) {
		return fmt.Errorf("%w: aud does not name this resource", ErrInvalidToken)
	}
	return nil
}

// times checks exp, nbf and iat of an introspection response against the
// verifier's clock and fills ti's expiration.
func (v *IntrospectionVerifier) times(raw map[string]any, ti *TokenInfo) error {
	now := v.now()
	exp, hasExp, err := introTime(raw, "exp")
	if err != nil {
		return err
	}
	if hasExp {
		if !now.Before(exp) {
			return fmt.Errorf("%w: token expired", ErrInvalidToken)
		}
		ti.Expiration = exp
	}
	nbf, hasNbf, err := introTime(raw, "nbf")
	if err != nil {
		return err
	}
	if hasNbf && now.Add(DefaultLeeway).Before(nbf) {
		return fmt.Errorf("%w: token not valid yet", ErrInvalidToken)
	}
	if _, _, err := introTime(raw, "iat"); err != nil {
		return err
	}
	return nil
}
