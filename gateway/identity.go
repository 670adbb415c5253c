package gateway

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/auth/oauth"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// Per-caller identity (docs/design/gateway-identity.md). An upstream
// reached by URL may be called as the gateway (static headers, the
// default), with the caller's own bearer token, or with a token of the
// caller's obtained by an RFC 8693 exchange for that upstream. With a
// caller's identity, the upstream's call connections belong to one
// caller each: a connection is opened for a caller, bound to it (its
// HTTP client puts that caller's token on every request) and leased only
// to that caller's calls.

// IdentityMode says whose identity an upstream's calls carry.
type IdentityMode string

const (
	// IdentityStatic: the gateway's own, Upstream.Header (the default).
	IdentityStatic IdentityMode = ""
	// IdentityPassThrough: the caller's own bearer token, sent to the
	// upstream's origin only (never across a redirect to another).
	IdentityPassThrough IdentityMode = "passthrough"
	// IdentityExchange: a token obtained for the upstream by an RFC 8693
	// token exchange of the caller's token, cached per caller token and
	// upstream until it expires.
	IdentityExchange IdentityMode = "exchange"
)

// Identity configures the identity an upstream's calls carry, and the
// follow-ups of the tasks they start. The control connection (lists,
// subscriptions, health checks, skills requests) always carries the
// static Header.
type Identity struct {
	// Mode chooses the identity; the zero value is IdentityStatic.
	Mode IdentityMode
	// TokenEndpoint is the authorization server's token endpoint, where
	// the caller's token is exchanged (IdentityExchange).
	TokenEndpoint string
	// ClientID and ClientSecret authenticate the gateway at the token
	// endpoint: client_secret_basic with a secret, else the client_id
	// in the form.
	ClientID     string
	ClientSecret string
	// Audience and Resource name the upstream in the exchange (RFC 8693
	// audience, RFC 8707 resource). Default: the upstream's URL, both.
	Audience string
	Resource string
	// Scopes are asked for the exchanged token (none: the authorization
	// server's choice).
	Scopes []string
	// HTTPClient sends the exchange; it follows no redirect whatever its
	// policy. Default http.DefaultClient's transport.
	HTTPClient *http.Client
}

const (
	// DefaultTokenCacheSize bounds the exchanged tokens the gateway
	// keeps (one per caller token and upstream): past it the least
	// recently used is dropped and exchanged again when next needed.
	DefaultTokenCacheSize = 1000
	// DefaultTokenExpiryMargin is how long before its expiry an exchanged
	// token stops being used (clocks differ, requests take time).
	DefaultTokenExpiryMargin = 30 * time.Second
	// assumedLifetime is the lifetime of an exchanged token whose answer
	// gave no expires_in.
	assumedLifetime = 5 * time.Minute
)

// callerTokenKey is the context key of WithCallerToken.
type callerTokenKey struct{}

// WithCallerToken returns a context carrying the bearer token the caller
// presented. CallerTokens sets it from the HTTP request; the gateway uses
// it only for a request that also has a principal (server.WithPrincipal,
// which auth.Require sets once it verified the token).
func WithCallerToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, callerTokenKey{}, token)
}

// CallerTokens wraps the gateway server's HTTP handler so that the
// caller's bearer token (Authorization: Bearer) is kept in the request's
// context (WithCallerToken), for upstreams whose Identity is the caller's.
// Put it outside the authentication middleware, which removes the header:
// CallerTokens(require(handler)). A DPoP-bound token (Authorization: DPoP)
// is not kept: its proofs are for the gateway only.
func CallerTokens(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok, ok := bearerToken(r.Header); ok {
			r = r.WithContext(WithCallerToken(r.Context(), tok))
		}
		next.ServeHTTP(w, r)
	})
}

func bearerToken(h http.Header) (string, bool) {
	v := h.Values("Authorization")
	if len(v) != 1 {
		return "", false
	}
	scheme, tok, ok := strings.Cut(v[0], " ")
	tok = strings.TrimSpace(tok)
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || strings.ContainsAny(tok, " \t") {
		return "", false
	}
	return tok, true
}

// caller is who a call with a caller identity is made for.
type caller struct {
	key   string // the principal: the call connections' partition
	token string // the token the caller presented with this request
}

type callerKey struct{}

func callerFrom(ctx context.Context) *caller {
	c, _ := ctx.Value(callerKey{}).(*caller)
	return c
}

// identify returns ctx with the caller of req, for an upstream with a
// caller identity; a request without a verified caller is refused.
func (u *upstream) identify(ctx context.Context, req *server.Request) (context.Context, error) {
	if u.cfg.Identity.Mode == IdentityStatic {
		return ctx, nil
	}
	p := server.CallerOf(ctx, req).Principal
	tok, _ := ctx.Value(callerTokenKey{}).(string)
	if p == "" || tok == "" {
		return ctx, &IdentityError{Upstream: u.cfg.Name, Status: http.StatusUnauthorized, Code: "invalid_token",
			Description: "the upstream is called with the caller's identity, and this request carries no authenticated bearer token"}
	}
	return context.WithValue(ctx, callerKey{}, &caller{key: p, token: tok}), nil
}

// IdentityError is the error of a call whose caller identity could not be
// used: no token, a token exchange refused, or the upstream refusing the
// caller's token (after one fresh exchange). It carries no token. The
// caller gets it as a JSON-RPC -32603 error whose data holds Upstream,
// Status, Code and Scope.
type IdentityError struct {
	Upstream string
	// Status is the HTTP status of the refusal: 401 (no or a rejected
	// token), 403 (insufficient scope), or the token endpoint's status.
	Status int
	// Code is the OAuth error code (invalid_token, invalid_grant,
	// insufficient_scope, …), Description its explanation, Scope the
	// scope a 403 asked for.
	Code        string
	Description string
	Scope       string
}

func (e *IdentityError) Error() string {
	s := fmt.Sprintf("gateway: upstream %q: the caller's identity was refused (%d %s)", e.Upstream, e.Status, e.Code)
	if e.Description != "" {
		s += ": " + e.Description
	}
	if e.Scope != "" {
		s += fmt.Sprintf(" (scope %q needed)", e.Scope)
	}
	return s
}

// rpc is the JSON-RPC error the caller gets.
func (e *IdentityError) rpc() *jsonrpc.Error {
	data := map[string]any{"upstream": e.Upstream, "status": e.Status, "error": e.Code}
	if e.Scope != "" {
		data["scope"] = e.Scope
	}
	je := jsonrpc.NewError(mcp.CodeInternalError, "Internal error: "+strings.TrimPrefix(e.Error(), "gateway: "))
	if b, err := json.Marshal(data); err == nil {
		je.Data = b
	}
	return je
}

// connIdentity binds a call connection to one caller.
type connIdentity struct {
	key   string
	token atomic.Pointer[string] // the newest token the caller presented
}

func newConnIdentity(c *caller) *connIdentity {
	ci := &connIdentity{key: c.key}
	ci.token.Store(&c.token)
	return ci
}

// identityTransport puts the bound caller's identity on every request of
// one call connection.
type identityTransport struct {
	u      *upstream
	who    *connIdentity
	origin string
	base   http.RoundTripper
}

func origin(u *url.URL) string { return strings.ToLower(u.Scheme + "://" + u.Host) }

func (t *identityTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if origin(req.URL) != t.origin {
		// Never the caller's identity to another origin.
		closeBody(req)
		return nil, fmt.Errorf("gateway: upstream %q: refusing to send a caller's identity to another origin (%s)", t.u.cfg.Name, origin(req.URL))
	}
	// The connection's caller's newest token (takeConn updates it when a
	// call of that caller leases the connection). When the request's
	// context names the caller (not every request of a connection runs
	// in its call's context), it must be the connection's.
	subject := *t.who.token.Load()
	if c := callerFrom(req.Context()); c != nil {
		if c.key != t.who.key {
			closeBody(req)
			return nil, fmt.Errorf("gateway: upstream %q: a call connection of one caller was used for another's call", t.u.cfg.Name)
		}
		subject = c.token
		t.who.token.Store(&c.token)
	}
	if t.u.cfg.Identity.Mode == IdentityPassThrough {
		r := req.Clone(req.Context())
		r.Header.Set("Authorization", "Bearer "+subject)
		resp, err := t.base.RoundTrip(r)
		return t.refused(resp, err)
	}
	tok, err := t.u.g.tokens.get(req.Context(), t.u, subject)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || (req.Body != nil && req.GetBody == nil) {
		return t.refused(resp, err)
	}
	// The upstream rejected the exchanged token (revoked, or its keys
	// changed): drop it, exchange again, and try once more.
	drain(resp)
	t.u.g.tokens.drop(t.u, subject)
	if tok, err = t.u.g.tokens.get(req.Context(), t.u, subject); err != nil {
		return nil, err
	}
	r = req.Clone(req.Context())
	if req.GetBody != nil {
		if r.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	r.Header.Set("Authorization", "Bearer "+tok)
	resp, err = t.base.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		t.u.g.tokens.drop(t.u, subject)
	}
	return t.refused(resp, err)
}

// refused turns the upstream's 401 or 403 into an IdentityError.
func (t *identityTransport) refused(resp *http.Response, err error) (*http.Response, error) {
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	e := &IdentityError{Upstream: t.u.cfg.Name, Status: resp.StatusCode}
	params := oauth.BearerChallenge(resp.Header) // nil reads as empty
	e.Code, e.Scope = params["error"], params["scope"]
	if e.Code == "" {
		e.Code = "invalid_token"
	}
	if resp.StatusCode == http.StatusUnauthorized {
		e.Description = "the upstream rejected the caller's token"
		if t.u.cfg.Identity.Mode == IdentityExchange {
			e.Description = "the upstream rejected the exchanged token, and the one exchanged again"
		}
	} else {
		e.Description = "the upstream refused the caller's token"
	}
	drain(resp)
	t.u.g.log.Warn("gateway: upstream refused a caller's identity", "upstream", t.u.cfg.Name, "status", e.Status, "error", e.Code)
	return nil, e
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

// identityClient is the HTTP client of a call connection bound to who:
// the upstream's own transport under identityTransport, following
// redirects within the upstream's origin only, without cookies.
func (u *upstream) identityClient(who *connIdentity) *http.Client {
	base := u.httpClient()
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	uu, _ := url.Parse(u.cfg.URL) // checked in New
	o := origin(uu)
	return &http.Client{
		Transport: &identityTransport{u: u, who: who, origin: o, base: rt},
		// No cookie jar: a jar shared by the callers' connections would
		// carry what the upstream set for one caller to another.
		Timeout: base.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if origin(req.URL) != o {
				return fmt.Errorf("gateway: upstream %q: not following a redirect to another origin (%s) with a caller's identity", u.cfg.Name, origin(req.URL))
			}
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return nil
		},
	}
}

// tokenCache keeps exchanged tokens by upstream and caller token, least
// recently used dropped past max.
type tokenCache struct {
	max    int
	margin time.Duration
	now    func() time.Time

	mu  sync.Mutex
	m   map[string]*list.Element
	lru *list.List // of *cachedToken, most recent first
	// flights are the exchanges under way, by key: a second request for
	// the same token waits for the first's answer.
	flights map[string]*flight
	// joinHook, when set (tests), hears of each request that waits for
	// another's exchange.
	joinHook func()
}

// flight is one exchange under way; done is closed once tok or err is
// set.
type flight struct {
	done chan struct{}
	tok  string
	err  error
}

type cachedToken struct {
	key   string
	token string
	exp   time.Time
}

// newTokenCache makes the cache; a max or margin not positive is the
// default.
func newTokenCache(max int, margin time.Duration, now func() time.Time) *tokenCache {
	if max <= 0 {
		max = DefaultTokenCacheSize
	}
	if margin <= 0 {
		margin = DefaultTokenExpiryMargin
	}
	return &tokenCache{max: max, margin: margin, now: now, m: map[string]*list.Element{}, lru: list.New(), flights: map[string]*flight{}}
}

// cacheKey names an upstream's token for a caller token; the caller's
// token itself is not kept.
func cacheKey(u *upstream, subject string) string {
	sum := sha256.Sum256([]byte(subject))
	return u.cfg.Name + "\x00" + hex.EncodeToString(sum[:])
}

// get returns a token of the caller's for u: cached and not within the
// margin of its expiry, or exchanged now (once for concurrent requests of
// the same token: the others wait for its answer, or for their ctx).
func (c *tokenCache) get(ctx context.Context, u *upstream, subject string) (string, error) {
	for {
		tok, err := c.getOnce(ctx, u, subject)
		// An exchange joined from another request ends with that
		// request's context: a waiter still wanting the token asks again.
		if (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) && ctx.Err() == nil {
			continue
		}
		return tok, err
	}
}

func (c *tokenCache) getOnce(ctx context.Context, u *upstream, subject string) (string, error) {
	key := cacheKey(u, subject)
	c.mu.Lock()
	if e, ok := c.m[key]; ok {
		ct := e.Value.(*cachedToken)
		if c.now().Add(c.margin).Before(ct.exp) {
			c.lru.MoveToFront(e)
			c.mu.Unlock()
			return ct.token, nil
		}
		c.lru.Remove(e)
		delete(c.m, key)
	}
	if f, ok := c.flights[key]; ok {
		c.mu.Unlock()
		if c.joinHook != nil {
			c.joinHook()
		}
		select {
		case <-f.done:
			return f.tok, f.err
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	f := &flight{done: make(chan struct{})}
	c.flights[key] = f
	c.mu.Unlock()
	tok, life, err := u.exchange(ctx, subject)
	c.mu.Lock()
	delete(c.flights, key)
	f.tok, f.err = tok, err
	close(f.done)
	if err != nil {
		c.mu.Unlock()
		return "", err
	}
	if e, ok := c.m[key]; ok {
		c.lru.Remove(e)
	}
	c.m[key] = c.lru.PushFront(&cachedToken{key: key, token: tok, exp: c.now().Add(life)})
	for c.lru.Len() > c.max {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.m, old.Value.(*cachedToken).key)
	}
	c.mu.Unlock()
	return tok, nil
}

// drop forgets u's token for the caller token.
func (c *tokenCache) drop(u *upstream, subject string) {
	key := cacheKey(u, subject)
	c.mu.Lock()
	if e, ok := c.m[key]; ok {
		c.lru.Remove(e)
		delete(c.m, key)
	}
	c.mu.Unlock()
}

func (c *tokenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// exchange runs the RFC 8693 token exchange of subject for a token of
// u's: the token and its lifetime.
func (u *upstream) exchange(ctx context.Context, subject string) (string, time.Duration, error) {
	id := u.cfg.Identity
	x := &oauth.TokenExchange{
		TokenEndpoint: id.TokenEndpoint, ClientID: id.ClientID, ClientSecret: id.ClientSecret,
		SubjectToken: subject, SubjectTokenType: oauth.TokenTypeAccessToken, RequestedTokenType: oauth.TokenTypeAccessToken,
		Audience: id.Audience, Resource: id.Resource, Scope: strings.Join(id.Scopes, " "),
		HTTPClient: id.HTTPClient,
	}
	t, err := x.Exchange(ctx)
	if err != nil && ctx.Err() != nil {
		return "", 0, ctx.Err() // the call was given up: not the exchange's failure
	}
	var te *oauth.TokenError
	if err != nil && !errors.As(err, &te) {
		u.g.log.Warn("gateway: token exchange failed", "upstream", u.cfg.Name, "err", err)
		return "", 0, &IdentityError{Upstream: u.cfg.Name, Status: http.StatusBadGateway, Code: "temporarily_unavailable",
			Description: "the token exchange could not reach the authorization server"}
	}
	if te == nil && t.TokenType != "" && !strings.EqualFold(t.TokenType, "Bearer") {
		te = &oauth.TokenError{StatusCode: http.StatusOK}
	}
	if te != nil {
		e := &IdentityError{Upstream: u.cfg.Name, Status: http.StatusForbidden, Code: te.Code, Description: "token exchange refused"}
		if te.StatusCode == http.StatusOK {
			e.Code, e.Description = "server_error", "the token exchange gave no usable bearer token"
		} else {
			if e.Code == "" {
				e.Code = "server_error"
			}
			if te.Description != "" {
				e.Description += ": " + te.Description
			}
		}
		if e.Code == "invalid_grant" || e.Code == "invalid_token" {
			// The caller's token itself was refused.
			e.Status = http.StatusUnauthorized
		}
		u.g.log.Warn("gateway: token exchange refused", "upstream", u.cfg.Name, "status", te.StatusCode, "error", e.Code)
		return "", 0, e
	}
	life := assumedLifetime
	if t.ExpiresIn > 0 {
		life = t.ExpiresIn
	}
	return t.AccessToken, life, nil
}

// checkIdentity checks u's Identity and fills its defaults.
func checkIdentity(u *Upstream) error {
	id := &u.Identity
	switch id.Mode {
	case IdentityStatic:
		return nil
	case IdentityPassThrough, IdentityExchange:
	default:
		return fmt.Errorf("gateway: upstream %q: identity mode %q: want %q, %q or %q", u.Name, id.Mode, IdentityStatic, IdentityPassThrough, IdentityExchange)
	}
	if u.URL == "" {
		return fmt.Errorf("gateway: upstream %q: a caller's identity (%s) needs an upstream reached by URL", u.Name, id.Mode)
	}
	uu, err := url.Parse(u.URL)
	if err != nil || (uu.Scheme != "http" && uu.Scheme != "https") || uu.Host == "" {
		return fmt.Errorf("gateway: upstream %q: a caller's identity (%s) needs an http or https URL", u.Name, id.Mode)
	}
	if id.Mode == IdentityPassThrough {
		return nil
	}
	if err := oauth.CheckEndpointURL("token endpoint", id.TokenEndpoint); err != nil {
		return fmt.Errorf("gateway: upstream %q: identity exchange: %w", u.Name, err)
	}
	if id.Audience == "" {
		id.Audience = u.URL
	}
	if id.Resource == "" {
		id.Resource = u.URL
	}
	for _, s := range id.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			return fmt.Errorf("gateway: upstream %q: identity exchange: scope %q is not a scope token", u.Name, s)
		}
	}
	return nil
}
