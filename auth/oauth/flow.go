package oauth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// discovery is what a flow learned about the resource and its
// authorization server.
type discovery struct {
	prm      *ResourceMetadata // nil: none found (2025-03-26 server)
	issuer   string            // the issuer identifier the metadata was looked up with
	resource string            // the RFC 8707 resource indicator to send
	meta     *ServerMetadata
}

// discover finds the protected resource metadata and the authorization
// server metadata of server.
func (t *Transport) discover(ctx context.Context, server *url.URL, ch map[string]string) (*discovery, error) {
	d := &discovery{}
	// The tokens of an MCP server on plain http would cross the network
	// in clear; its well-known metadata URLs would be plain http too.
	if _, err := checkURL("MCP server URL", serverKey(server)); err != nil {
		return nil, err
	}
	prm, err := t.resourceMetadata(ctx, server, ch)
	if err != nil {
		return nil, err
	}
	d.prm = prm
	if d.prm != nil {
		if d.prm.Resource == "" || !resourceMatches(d.prm.Resource, server) {
			return nil, &ResourceMismatchError{Server: server.String(), Resource: d.prm.Resource}
		}
		if len(d.prm.AuthorizationServers) == 0 {
			return nil, &DiscoveryError{Reason: "protected resource metadata lists no authorization server"}
		}
		d.issuer = d.prm.AuthorizationServers[0]
		d.resource = d.prm.Resource
	} else {
		// 2025-03-26: the MCP server's origin is the authorization server.
		d.issuer = origin(server)
		r, err := CanonicalResource((&url.URL{Scheme: server.Scheme, Host: server.Host, Path: server.Path, RawPath: server.RawPath}).String())
		if err != nil {
			return nil, &DiscoveryError{Reason: "server URL", Err: err}
		}
		d.resource = r
	}
	if d.meta, err = t.serverMetadata(ctx, d.issuer); err != nil {
		return nil, err
	}
	if d.meta == nil {
		if d.prm != nil {
			return nil, &DiscoveryError{Reason: "no authorization server metadata for " + d.issuer}
		}
		// 2025-03-26 fallback: the default endpoints at the server root,
		// with the PKCE S256 that revision mandates.
		o := origin(server)
		d.meta = &ServerMetadata{
			Issuer:                        d.issuer,
			AuthorizationEndpoint:         o + "/authorize",
			TokenEndpoint:                 o + "/token",
			RegistrationEndpoint:          o + "/register",
			CodeChallengeMethodsSupported: []string{"S256"},
		}
	}
	if err := t.checkEndpoints(d); err != nil {
		return nil, err
	}
	return d, nil
}

// resourceMetadata fetches the protected resource metadata of server: at
// the URL of the challenge's resource_metadata first, then at the
// well-known URLs. It returns nil when none is found.
func (t *Transport) resourceMetadata(ctx context.Context, server *url.URL, ch map[string]string) (*ResourceMetadata, error) {
	var candidates []string
	if u := ch["resource_metadata"]; u != "" {
		abs, err := checkMetadataURL(server, u)
		if err != nil {
			return nil, err
		}
		candidates = append(candidates, abs)
	}
	candidates = append(candidates, resourceMetadataURLs(server)...)
	for _, u := range candidates {
		var prm ResourceMetadata
		found, err := getJSON(ctx, t.hc, "protected resource metadata", u, &prm)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if re := (*RedirectError)(nil); errors.As(err, &re) {
			// Not "absent": the server points elsewhere, which is refused;
			// going on would silently fall back to another authorization
			// server.
			return nil, &DiscoveryError{Reason: "protected resource metadata", Err: err}
		}
		if err == nil && found {
			return &prm, nil
		}
	}
	return nil, nil
}

// serverMetadata fetches the authorization server metadata of issuer from
// its well-known URLs. It returns nil when none is found.
func (t *Transport) serverMetadata(ctx context.Context, issuer string) (*ServerMetadata, error) {
	urls, err := serverMetadataURLs(issuer)
	if err != nil {
		return nil, &DiscoveryError{Reason: "authorization server", Err: err}
	}
	for _, u := range urls {
		var m ServerMetadata
		found, err := getJSON(ctx, t.hc, "authorization server metadata", u, &m)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if re := (*RedirectError)(nil); errors.As(err, &re) {
			return nil, &DiscoveryError{Reason: "authorization server metadata", Err: err}
		}
		if err != nil || !found {
			continue
		}
		// RFC 8414 §3.3: the metadata must be about the issuer whose
		// well-known URL it was fetched from, as an exact string.
		if m.Issuer != issuer {
			return nil, &IssuerMismatchError{Where: "authorization server metadata at " + u, Expected: issuer, Got: m.Issuer}
		}
		return &m, nil
	}
	return nil, nil
}

// checkEndpoints checks the endpoints of d's authorization server that the
// flow will use: the token endpoint for a grant, the authorization and
// token endpoints and PKCE S256 otherwise.
func (t *Transport) checkEndpoints(d *discovery) error {
	if t.Grant != nil {
		// No authorization endpoint, no PKCE: only the token endpoint.
		if d.meta.TokenEndpoint == "" {
			return &DiscoveryError{Reason: "authorization server metadata of " + d.issuer + " lacks the token endpoint"}
		}
		_, err := checkURL("token endpoint", d.meta.TokenEndpoint)
		return err
	}
	if d.meta.AuthorizationEndpoint == "" || d.meta.TokenEndpoint == "" {
		return &DiscoveryError{Reason: "authorization server metadata of " + d.issuer + " lacks the authorization or token endpoint"}
	}
	if _, err := checkURL("token endpoint", d.meta.TokenEndpoint); err != nil {
		return err
	}
	if _, err := checkURL("authorization endpoint", d.meta.AuthorizationEndpoint); err != nil {
		return err
	}
	if !d.meta.supportsS256() {
		return &DiscoveryError{Reason: "authorization server " + d.issuer + " does not advertise PKCE S256 (code_challenge_methods_supported)"}
	}
	return nil
}

// register returns the client registration to use with d's authorization
// server: stored, pre-registered, a Client ID Metadata Document, or a new
// dynamic registration.
func (t *Transport) register(ctx context.Context, d *discovery) (*ClientInfo, error) {
	c, err := t.store.Client(ctx, d.issuer)
	if err != nil {
		return nil, err
	}
	if c != nil && c.ClientID != "" && (c.SecretExpiresAt.IsZero() || time.Now().Before(c.SecretExpiresAt)) {
		if c.PrivateKey == nil && t.Client != nil && t.Client.ClientID == c.ClientID {
			c.PrivateKey = t.Client.PrivateKey // not kept by serializing stores
		}
		return c, nil
	}
	save := func(c *ClientInfo) (*ClientInfo, error) {
		c.Issuer = d.issuer
		if err := t.store.SetClient(ctx, d.issuer, c); err != nil {
			return nil, err
		}
		return c, nil
	}
	if p := t.Client; p != nil && p.ClientID != "" {
		bound := p.Issuer
		if bound == "" {
			if t.preBound == "" {
				t.preBound = d.issuer
			}
			bound = t.preBound
		}
		if bound == d.issuer {
			c := *p
			return save(&c)
		}
	}
	if t.ClientIDMetadataURL != "" && d.meta.ClientIDMetadataDocumentSupported {
		if _, err := checkURL("client ID metadata document URL", t.ClientIDMetadataURL); err != nil {
			return nil, &RegistrationError{Issuer: d.issuer, Err: err}
		}
		return save(&ClientInfo{ClientID: t.ClientIDMetadataURL, AuthMethod: "none"})
	}
	if d.meta.RegistrationEndpoint == "" {
		return nil, &RegistrationError{Issuer: d.issuer}
	}
	if _, err := checkURL("registration endpoint", d.meta.RegistrationEndpoint); err != nil {
		return nil, &RegistrationError{Issuer: d.issuer, Err: err}
	}
	c, err = t.dynamicRegistration(ctx, d)
	if err != nil {
		return nil, &RegistrationError{Issuer: d.issuer, Err: err}
	}
	return save(c)
}

// dynamicRegistration registers the client (RFC 7591).
func (t *Transport) dynamicRegistration(ctx context.Context, d *discovery) (*ClientInfo, error) {
	appType := t.ApplicationType
	if appType == "" {
		appType = "web"
		if isLoopbackRedirect(t.redirectURL()) {
			appType = "native"
		}
	}
	name := t.ClientName
	if name == "" {
		name = "mcpkit"
	}
	method := "client_secret_basic"
	if sup := d.meta.TokenEndpointAuthMethodsSupported; len(sup) > 0 {
		for _, m := range []string{"none", "client_secret_basic", "client_secret_post"} {
			if slices.Contains(sup, m) {
				method = m
				break
			}
		}
	}
	grants := []string{"authorization_code", "refresh_token"}
	switch t.Grant.(type) {
	case nil:
	case ClientCredentials, *ClientCredentials:
		grants = []string{GrantTypeClientCredentials}
	case *JWTBearer:
		grants = []string{GrantTypeJWTBearer}
	}
	body, err := json.Marshal(map[string]any{
		"client_name":                name,
		"redirect_uris":              []string{t.redirectURL()},
		"grant_types":                grants,
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
		"application_type":           appType,
	})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.meta.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := send(t.hc, req, "registration endpoint", followNone)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		_ = json.Unmarshal(rb, &e)
		return nil, fmt.Errorf("registration endpoint answered HTTP %s: %s %s", resp.Status, e.Error, e.Description)
	}
	var r struct {
		ClientID        string          `json:"client_id"`
		ClientSecret    string          `json:"client_secret"`
		AuthMethod      string          `json:"token_endpoint_auth_method"`
		SecretExpiresAt json.RawMessage `json:"client_secret_expires_at"`
	}
	if err := json.Unmarshal(rb, &r); err != nil {
		return nil, fmt.Errorf("registration response: %w", err)
	}
	if r.ClientID == "" {
		return nil, errors.New("registration response has no client_id")
	}
	c := &ClientInfo{ClientID: r.ClientID, ClientSecret: r.ClientSecret, AuthMethod: r.AuthMethod}
	if n, ok := jsonSeconds(r.SecretExpiresAt); ok && n > 0 {
		c.SecretExpiresAt = time.Unix(n, 0)
	}
	return c, nil
}

// jsonSeconds reads a JSON number (or a string holding one).
func jsonSeconds(raw json.RawMessage) (int64, bool) {
	s := strings.Trim(strings.TrimSpace(string(raw)), `"`)
	if s == "" || s == "null" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return int64(f), true
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// authorizationCode runs the authorization code grant with PKCE.
func (t *Transport) authorizationCode(ctx context.Context, d *discovery, c *ClientInfo, scope string) (*Token, error) {
	if t.Authorize == nil {
		return nil, ErrNoAuthorizer
	}
	verifier := randomString(32)
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	state := randomString(16)

	au, err := url.Parse(d.meta.AuthorizationEndpoint)
	if err != nil {
		return nil, &DiscoveryError{Reason: "authorization endpoint", Err: err}
	}
	q := au.Query()
	q.Set("response_type", "code")
	q.Set("client_id", c.ClientID)
	q.Set("redirect_uri", t.redirectURL())
	q.Set("code_challenge", challenge)
	q.Set("code_challenge_method", "S256")
	q.Set("state", state)
	q.Set("resource", d.resource)
	if scope != "" {
		q.Set("scope", scope)
	}
	au.RawQuery = q.Encode()

	resp, err := t.Authorize(ctx, au.String())
	if err != nil {
		return nil, err
	}
	// RFC 9207: an iss present is compared, as a plain string, with the
	// issuer recorded for this flow; advertised support makes it required.
	// Nothing else of a response that fails this is looked at.
	if iss, ok := resp["iss"]; ok {
		if len(iss) != 1 || iss[0] != d.meta.Issuer {
			return nil, &IssuerMismatchError{Where: "authorization response", Expected: d.meta.Issuer, Got: strings.Join(iss, ",")}
		}
	} else if d.meta.AuthorizationResponseISSParameter {
		return nil, &IssuerMismatchError{Where: "authorization response", Expected: d.meta.Issuer}
	}
	if subtle.ConstantTimeCompare([]byte(resp.Get("state")), []byte(state)) != 1 {
		return nil, &AuthorizationError{Description: "state mismatch in the authorization response"}
	}
	if e := resp.Get("error"); e != "" {
		return nil, &AuthorizationError{Code: e, Description: resp.Get("error_description")}
	}
	code := resp.Get("code")
	if code == "" {
		return nil, &AuthorizationError{Description: "no code in the authorization response"}
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {t.redirectURL()},
		"code_verifier": {verifier},
		"resource":      {d.resource},
	}
	tok, err := t.tokenRequest(ctx, d, c, form)
	if err != nil {
		return nil, err
	}
	if tok.Scope == "" {
		tok.Scope = scope
	}
	return tok, nil
}

// refresh uses tok's refresh token.
func (t *Transport) refresh(ctx context.Context, d *discovery, c *ClientInfo, tok *Token) (*Token, error) {
	form := url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {tok.RefreshToken},
		"resource":      {d.resource},
	}
	nt, err := t.tokenRequest(ctx, d, c, form)
	if err != nil {
		return nil, err
	}
	if nt.RefreshToken == "" {
		nt.RefreshToken = tok.RefreshToken
	}
	if nt.Scope == "" {
		nt.Scope = tok.Scope
	}
	return nt, nil
}

// grantToken obtains a token with t.Grant.
func (t *Transport) grantToken(ctx context.Context, d *discovery, c *ClientInfo, scope string) (*Token, error) {
	form, err := t.Grant.TokenParams(ctx, &GrantRequest{
		Issuer:     d.issuer,
		Metadata:   d.meta,
		Resource:   d.resource,
		Scope:      scope,
		Client:     c,
		HTTPClient: redirectClient(t.hc, "grant request", followNone),
	})
	if err != nil {
		return nil, err
	}
	if form.Get("grant_type") == "" {
		return nil, errors.New("oauth: the grant set no grant_type")
	}
	form.Set("resource", d.resource)
	if scope != "" {
		form.Set("scope", scope)
	}
	tok, err := t.tokenRequest(ctx, d, c, form)
	if err != nil {
		return nil, err
	}
	if tok.Scope == "" {
		tok.Scope = scope
	}
	return tok, nil
}

// authMethod picks the token endpoint authentication method of c.
func authMethod(c *ClientInfo, m *ServerMetadata) string {
	if c.AuthMethod != "" {
		return c.AuthMethod
	}
	if c.PrivateKey != nil {
		return "private_key_jwt"
	}
	if c.ClientSecret == "" {
		return "none"
	}
	sup := m.TokenEndpointAuthMethodsSupported
	switch {
	case len(sup) == 0 || slices.Contains(sup, "client_secret_basic"):
		return "client_secret_basic"
	case slices.Contains(sup, "client_secret_post"):
		return "client_secret_post"
	}
	return "client_secret_basic"
}

// clientAssertion returns a private_key_jwt client assertion of c for
// the authorization server d (RFC 7523 §3; its audience is the issuer
// identifier, as RFC 7523bis and the MCP client credentials extension
// require).
func clientAssertion(d *discovery, c *ClientInfo) (string, error) {
	if c.PrivateKey == nil {
		return "", errors.New("oauth: private_key_jwt without ClientInfo.PrivateKey")
	}
	alg, err := jwsAlg(c.PrivateKey, c.SigningAlg)
	if err != nil {
		return "", err
	}
	now := time.Now()
	return signJWT(c.PrivateKey, alg, map[string]any{"typ": "JWT"}, map[string]any{
		"iss": c.ClientID,
		"sub": c.ClientID,
		"aud": d.issuer,
		"jti": randomString(16),
		"iat": now.Unix(),
		"exp": now.Add(5 * time.Minute).Unix(),
	})
}

// tokenRequest posts form to the token endpoint with c's authentication
// (and a DPoP proof when t.DPoP is set), retrying once when the server
// asks for a DPoP nonce.
func (t *Transport) tokenRequest(ctx context.Context, d *discovery, c *ClientInfo, form url.Values) (*Token, error) {
	method := authMethod(c, d.meta)
	switch method {
	case "client_secret_post":
		form.Set("client_id", c.ClientID)
		form.Set("client_secret", c.ClientSecret)
	case "client_secret_basic", "private_key_jwt":
	default: // none
		form.Set("client_id", c.ClientID)
	}
	endpoint, err := url.Parse(d.meta.TokenEndpoint)
	if err != nil {
		return nil, &DiscoveryError{Reason: "token endpoint", Err: err}
	}
	dpop := t.dpopFor(d.meta)
	for try := 0; ; try++ {
		if method == "private_key_jwt" {
			a, err := clientAssertion(d, c)
			if err != nil {
				return nil, err
			}
			form.Set("client_assertion_type", clientAssertionTypeJWT)
			form.Set("client_assertion", a)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint.String(), strings.NewReader(form.Encode()))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "application/json")
		if method == "client_secret_basic" {
			// RFC 6749 §2.3.1: form-encoded before Basic.
			req.SetBasicAuth(url.QueryEscape(c.ClientID), url.QueryEscape(c.ClientSecret))
		}
		var sentNonce string
		if dpop != nil {
			p, n, err := dpop.proof(http.MethodPost, endpoint, "")
			if err != nil {
				return nil, err
			}
			req.Header.Set("DPoP", p)
			sentNonce = n
		}
		tok, retry, err := t.tokenResponse(req, dpop, sentNonce)
		if retry && try == 0 {
			continue
		}
		return tok, err
	}
}

// dpopFor returns the DPoP key to use with an authorization server, or
// nil: none is set, or the server lists proof algorithms without ES256.
func (t *Transport) dpopFor(m *ServerMetadata) *DPoPKey {
	if t.DPoP == nil {
		return nil
	}
	if algs := m.DPoPSigningAlgValuesSupported; len(algs) > 0 && !slices.Contains(algs, "ES256") {
		return nil
	}
	return t.DPoP
}

// tokenResponse sends a token request and reads the answer. retry is
// true when the server asked for a DPoP nonce other than the one sent
// (RFC 9449 §8).
func (t *Transport) tokenResponse(req *http.Request, dpop *DPoPKey, sentNonce string) (tok *Token, retry bool, err error) {
	resp, err := send(t.hc, req, "token endpoint", followNone)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes))
	if err != nil {
		return nil, false, err
	}
	var r struct {
		AccessToken  string          `json:"access_token"`
		TokenType    string          `json:"token_type"`
		RefreshToken string          `json:"refresh_token"`
		ExpiresIn    json.RawMessage `json:"expires_in"`
		Scope        string          `json:"scope"`
		Error        string          `json:"error"`
		Description  string          `json:"error_description"`
	}
	jerr := json.Unmarshal(body, &r)
	var nonce string
	if dpop != nil {
		nonce = dpop.noteNonce(req.URL, resp.Header)
	}
	if resp.StatusCode != http.StatusOK {
		retry = dpop != nil && r.Error == "use_dpop_nonce" && nonce != "" && nonce != sentNonce
		return nil, retry, &TokenError{StatusCode: resp.StatusCode, Code: r.Error, Description: r.Description}
	}
	if jerr != nil || r.AccessToken == "" {
		return nil, false, &TokenError{StatusCode: resp.StatusCode, Description: "no access_token in the token response"}
	}
	typ := "Bearer"
	switch {
	case r.TokenType == "" || strings.EqualFold(r.TokenType, "Bearer"):
	case dpop != nil && strings.EqualFold(r.TokenType, "DPoP"):
		typ = "DPoP"
	default:
		return nil, false, &TokenError{StatusCode: resp.StatusCode, Description: "unsupported token_type " + r.TokenType}
	}
	tok = &Token{AccessToken: r.AccessToken, TokenType: typ, RefreshToken: r.RefreshToken, Scope: r.Scope}
	if n, ok := jsonSeconds(r.ExpiresIn); ok && n > 0 {
		tok.Expiry = time.Now().Add(time.Duration(n) * time.Second)
	}
	return tok, false, nil
}
