package oauth

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultMaxAuthorizations is the default of Transport.MaxAuthorizations.
const DefaultMaxAuthorizations = 3

// DefaultRedirectURL is the default of Transport.RedirectURL.
const DefaultRedirectURL = "http://127.0.0.1:8976/callback"

// Transport is an http.RoundTripper that authorizes requests to MCP
// servers with OAuth 2.1 (see the package documentation). Set its fields
// before first use and do not change them afterwards; a Transport is safe
// for concurrent use and may serve several MCP servers (each server URL
// has its own tokens).
//
// Requests are replayed after an authorization flow; a body without
// GetBody is buffered in memory first.
type Transport struct {
	// Base sends the requests (to the MCP server and, unless HTTPClient is
	// set, to authorization servers). Default http.DefaultTransport.
	Base http.RoundTripper
	// HTTPClient, when set, sends the discovery, registration and token
	// requests instead of a client over Base. Its CheckRedirect is not
	// used: token, registration and grant requests follow no redirect,
	// metadata requests only redirects within their origin
	// (*RedirectError).
	HTTPClient *http.Client

	// Authorize performs the user-facing step of the flow (Headless,
	// Loopback.Authorize or the application's own). Nil makes flows that
	// need it fail with ErrNoAuthorizer.
	Authorize AuthorizeFunc
	// RedirectURL is the client's redirect URI. Default DefaultRedirectURL.
	RedirectURL string

	// Client holds pre-registered credentials, tried first. Set its
	// Issuer to the authorization server they were issued by; with an
	// empty Issuer they are bound to the first server they are used with.
	Client *ClientInfo
	// ClientIDMetadataURL is the https URL of the client's Client ID
	// Metadata Document, used as client_id with authorization servers that
	// advertise client_id_metadata_document_supported.
	ClientIDMetadataURL string
	// ClientName is the client_name sent in Dynamic Client Registration.
	// Default "mcpkit".
	ClientName string
	// ApplicationType is the application_type sent in Dynamic Client
	// Registration. Default "native" when RedirectURL is a loopback or
	// private-use URI, else "web".
	ApplicationType string
	// OfflineAccess asks for the offline_access scope (a refresh token)
	// when the authorization server lists it in scopes_supported. It is
	// never requested otherwise.
	OfflineAccess bool

	// Grant, when set, obtains tokens instead of the authorization code
	// flow (no user, no Authorize): ClientCredentials, or JWTBearer with
	// a workload identity token or an enterprise ID-JAG (IDJAGExchange).
	Grant Grant
	// DPoP, when set, makes the Transport ask for DPoP-bound tokens
	// (RFC 9449) and present them with a fresh proof on every request;
	// see DPoPKey. Authorization servers that list proof algorithms
	// without ES256 are sent no proof (and issue Bearer tokens).
	DPoP *DPoPKey

	// Store keeps registrations and tokens. Default: an in-memory store.
	Store Store
	// MaxAuthorizations bounds the authorization flows one request may
	// run before it fails with *TooManyAuthorizationsError. Default
	// DefaultMaxAuthorizations.
	MaxAuthorizations int

	initOnce sync.Once
	store    Store
	hc       *http.Client

	mu     sync.Mutex
	states map[string]*resourceState // by server key

	flowMu   sync.Mutex // one flow at a time
	preBound string     // the issuer an unbound Client was bound to
}

// resourceState is what the Transport holds for one MCP server URL.
type resourceState struct {
	issuer   string
	resource string
	token    Token
}

func (t *Transport) init() {
	t.initOnce.Do(func() {
		t.store = t.Store
		if t.store == nil {
			t.store = &MemoryStore{}
		}
		t.hc = t.HTTPClient
		if t.hc == nil {
			t.hc = &http.Client{Transport: t.base(), Timeout: 30 * time.Second}
		}
	})
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

func (t *Transport) maxAuthorizations() int {
	if t.MaxAuthorizations > 0 {
		return t.MaxAuthorizations
	}
	return DefaultMaxAuthorizations
}

func (t *Transport) redirectURL() string {
	if t.RedirectURL != "" {
		return t.RedirectURL
	}
	return DefaultRedirectURL
}

// serverKey identifies an MCP server: its URL without query or fragment,
// canonicalized.
func serverKey(u *url.URL) string {
	return canonicalOrigin(u) + strings.TrimSuffix(u.EscapedPath(), "/")
}

// bearer returns the usable access token for the server, or "".
func (t *Transport) bearer(key string) string {
	tok, _ := t.access(key)
	return tok
}

// access returns the usable access token for the server and its type
// ("Bearer" or "DPoP"), or "".
func (t *Transport) access(key string) (token, typ string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.states[key]
	if st == nil || st.token.AccessToken == "" || st.token.expired(time.Now()) {
		return "", ""
	}
	typ = "Bearer"
	if strings.EqualFold(st.token.TokenType, "DPoP") {
		typ = "DPoP"
	}
	return st.token.AccessToken, typ
}

func (t *Transport) state(key string) *resourceState {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st := t.states[key]; st != nil {
		c := *st
		return &c
	}
	return nil
}

func (t *Transport) setState(key string, st *resourceState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.states == nil {
		t.states = map[string]*resourceState{}
	}
	t.states[key] = st
}

// Token returns the access token the Transport holds for the MCP server
// at serverURL, or nil.
func (t *Transport) Token(serverURL string) *Token {
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil
	}
	st := t.state(serverKey(u))
	if st == nil {
		return nil
	}
	return &st.token
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.init()
	req, err := replayable(req)
	if err != nil {
		return nil, err
	}
	ctx := req.Context()
	key := serverKey(req.URL)
	attempts, rounds, nonceRetries := 0, 0, 0
	for {
		r, err := nextRound(req, rounds)
		if err != nil {
			return nil, err
		}
		rounds++
		used, typ := t.access(key)
		sentNonce, err := t.authorize(r, used, typ)
		if err != nil {
			return nil, err
		}
		resp, err := t.base().RoundTrip(r)
		if err != nil {
			return nil, err
		}
		var ch map[string]string
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			ch = oauthChallenge(resp.Header)
		}
		if t.DPoP != nil && typ == "DPoP" {
			// RFC 9449 §9: a nonce challenge is answered by a retry with
			// the nonce, not by a new authorization.
			n := t.DPoP.noteNonce(r.URL, resp.Header)
			if resp.StatusCode == http.StatusUnauthorized && wantsDPoPNonce(resp.Header) &&
				n != "" && n != sentNonce && nonceRetries < 2 {
				nonceRetries++
				drain(resp)
				continue
			}
		}
		stepUp := resp.StatusCode == http.StatusForbidden && ch != nil && ch["error"] == "insufficient_scope"
		if resp.StatusCode != http.StatusUnauthorized && !stepUp {
			return resp, nil
		}
		if ch == nil && len(resp.Header.Values("WWW-Authenticate")) > 0 {
			return resp, nil // another authentication scheme than OAuth
		}
		if attempts >= t.maxAuthorizations() || rounds > 2*t.maxAuthorizations()+2 {
			drain(resp)
			return nil, &TooManyAuthorizationsError{Attempts: attempts, StatusCode: resp.StatusCode, Scope: ch["scope"]}
		}
		drain(resp)
		ran, err := t.flow(ctx, req.URL, key, used, ch, stepUp)
		if err != nil {
			return nil, err
		}
		if ran {
			attempts++
		}
	}
}

// replayable returns req with a body that can be sent again (GetBody
// set), reading a body that cannot into memory.
func replayable(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody != nil {
		return req, nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return req, nil
}

// nextRound returns the request to send in round rounds (from 0): a clone
// of req, with a fresh copy of its body after the first.
func nextRound(req *http.Request, rounds int) (*http.Request, error) {
	r := req.Clone(req.Context())
	if rounds > 0 && req.Body != nil && req.Body != http.NoBody {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	return r, nil
}

// authorize sets the Authorization header of r for the access token used
// of type typ (nothing when used is empty), and with DPoP its proof; it
// returns the nonce the proof carries.
func (t *Transport) authorize(r *http.Request, used, typ string) (sentNonce string, err error) {
	switch {
	case used != "" && typ == "DPoP" && t.DPoP != nil:
		p, n, err := t.DPoP.proof(r.Method, r.URL, used)
		if err != nil {
			return "", err
		}
		r.Header.Set("Authorization", "DPoP "+used)
		r.Header.Set("DPoP", p)
		return n, nil
	case used != "":
		r.Header.Set("Authorization", "Bearer "+used)
	}
	return "", nil
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// flow obtains a new token for the server after a refusal of the request
// made with the token used (empty: none). ran is false when nothing was
// done because another request already replaced that token.
func (t *Transport) flow(ctx context.Context, server *url.URL, key, used string, ch map[string]string, stepUp bool) (ran bool, err error) {
	t.flowMu.Lock()
	defer t.flowMu.Unlock()
	if cur := t.bearer(key); cur != "" && cur != used {
		return false, nil
	}
	d, err := t.discover(ctx, server, ch)
	if err != nil {
		return true, err
	}
	prev := t.state(key)
	if prev != nil && (prev.issuer != d.issuer || prev.resource != d.resource) {
		prev = nil // what was held came from another server
	}
	now := time.Now()
	if !stepUp {
		// A token refused as invalid: another stored token, or a refresh.
		tok, err := t.store.Token(ctx, d.issuer, d.resource)
		if err != nil {
			return true, err
		}
		if tok != nil && tok.AccessToken != used && tok.AccessToken != "" && !tok.expired(now) {
			t.setState(key, &resourceState{issuer: d.issuer, resource: d.resource, token: *tok})
			return true, nil
		}
		if tok != nil && tok.RefreshToken != "" {
			if c, _ := t.store.Client(ctx, d.issuer); c != nil {
				if nt, err := t.refresh(ctx, d, c, tok); err == nil {
					if err := t.store.SetToken(ctx, d.issuer, d.resource, nt); err != nil {
						return true, err
					}
					t.setState(key, &resourceState{issuer: d.issuer, resource: d.resource, token: *nt})
					return true, nil
				}
			}
			// The refresh token is of no use any more.
			_ = t.store.SetToken(ctx, d.issuer, d.resource, nil)
		}
	}
	var held string
	if prev != nil {
		held = prev.token.Scope
	}
	scope := t.chooseScope(ch, d, held, stepUp)
	c, err := t.register(ctx, d)
	if err != nil {
		return true, err
	}
	var tok *Token
	if t.Grant != nil {
		tok, err = t.grantToken(ctx, d, c, scope)
	} else {
		tok, err = t.authorizationCode(ctx, d, c, scope)
	}
	if err != nil {
		return true, err
	}
	if err := t.store.SetToken(ctx, d.issuer, d.resource, tok); err != nil {
		return true, err
	}
	t.setState(key, &resourceState{issuer: d.issuer, resource: d.resource, token: *tok})
	return true, nil
}

// chooseScope picks the scope to request: the challenge's, else all of
// the resource's scopes_supported, else none; a step-up adds the scopes
// already held. offline_access is kept or added only when the
// authorization server lists it.
func (t *Transport) chooseScope(ch map[string]string, d *discovery, held string, stepUp bool) string {
	var scopes []string
	add := func(s ...string) {
		for _, x := range s {
			if x != "" && !slices.Contains(scopes, x) {
				scopes = append(scopes, x)
			}
		}
	}
	if stepUp {
		add(strings.Fields(held)...)
	}
	switch {
	case ch != nil && strings.TrimSpace(ch["scope"]) != "":
		add(strings.Fields(ch["scope"])...)
	case !stepUp && d.prm != nil && len(d.prm.ScopesSupported) > 0:
		add(d.prm.ScopesSupported...)
	}
	asOffline := slices.Contains(d.meta.ScopesSupported, "offline_access")
	if !asOffline {
		scopes = slices.DeleteFunc(scopes, func(s string) bool { return s == "offline_access" })
	} else if t.OfflineAccess && len(scopes) > 0 {
		add("offline_access")
	}
	return strings.Join(scopes, " ")
}
