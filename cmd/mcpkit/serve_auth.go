package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/auth/oauth"
)

// The values of "mcpkit serve --auth-tokens" and "--dpop".
const (
	tokensJWT    = "jwt"    // signed JWTs, checked against the demo's JWK Set
	tokensOpaque = "opaque" // random strings, checked by introspection
	dpopOff      = "off"
	dpopOptional = "optional" // bound tokens need their proofs, bearer tokens pass
	dpopRequired = "required" // only DPoP-bound tokens
)

// demoTokenLifetime is the lifetime of the demo's access tokens.
const demoTokenLifetime = time.Hour

// authConfig is how "mcpkit serve --auth" protects its endpoint.
type authConfig struct {
	tokens string // tokensJWT or tokensOpaque
	dpop   string // dpopOff, dpopOptional or dpopRequired
}

func (c *authConfig) check() error {
	switch {
	case c.tokens != tokensJWT && c.tokens != tokensOpaque:
		return fmt.Errorf("--auth-tokens must be %s or %s, not %q", tokensJWT, tokensOpaque, c.tokens)
	case c.dpop != dpopOff && c.dpop != dpopOptional && c.dpop != dpopRequired:
		return fmt.Errorf("--dpop must be %s, %s or %s, not %q", dpopOff, dpopOptional, dpopRequired, c.dpop)
	}
	return nil
}

// demoAS is the tiny OAuth authorization server of "mcpkit serve --auth":
// metadata (RFC 8414), dynamic client registration (RFC 7591), and the
// authorization code flow with PKCE S256, issuing access tokens bound to
// one resource: ES256 JWTs (RFC 9068, its JWK Set at /jwks) or opaque
// tokens (an introspection endpoint, RFC 7662, at /introspect, for the
// resource server only). Unless DPoP is off, a token request carrying a
// DPoP proof (RFC 9449 §5) gets a DPoP token bound to the proof's key
// (cnf.jkt); with DPoP required, a token request without one is refused.
// It approves every authorization request at once (a demo has no users),
// and keeps everything in memory.
type demoAS struct {
	issuer string    // its issuer identifier: an origin
	log    io.Writer // one line per registration and authorization; nil: none
	cfg    authConfig
	signer jose.Signer
	jwk    jose.JSONWebKey    // the public signing key
	proofs *auth.DPoPVerifier // nil with DPoP off
	cors   *auth.CORSOptions  // the browser endpoints' CORS (demoASCORS); nil: none
	// rsSecret authenticates the resource server at /introspect (client
	// "mcp-resource", client_secret_basic).
	rsSecret string

	mu             sync.Mutex
	codes          map[string]string // code -> code_challenge, resource
	codeResources  map[string]string
	tokens         map[string]demoToken // opaque access token -> what it grants
	registrations  int
	authorizations int
	tokenClients   []string // the client of each token request
}

// demoToken is what an opaque token grants.
type demoToken struct {
	resource, client, jkt string
	exp                   time.Time
}

const demoRSClient = "mcp-resource"

func newDemoAS(issuer string, log io.Writer, cfg authConfig) (*demoAS, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	a := &demoAS{issuer: issuer, log: log, cfg: cfg, codes: map[string]string{}, codeResources: map[string]string{},
		tokens: map[string]demoToken{}, rsSecret: rand.Text()}
	a.jwk = jose.JSONWebKey{Key: &k.PublicKey, KeyID: rand.Text()[:8], Algorithm: string(jose.ES256), Use: "sig"}
	opts := (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", a.jwk.KeyID)
	if a.signer, err = jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k}, opts); err != nil {
		return nil, err
	}
	if cfg.dpop != dpopOff {
		if a.proofs, err = auth.NewDPoPVerifier(&auth.DPoPOptions{}); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func (a *demoAS) logf(format string, args ...any) {
	if a.log != nil {
		fmt.Fprintf(a.log, "mcpkit: "+format+"\n", args...)
	}
}

// mount adds the server's endpoints to mux, at the issuer's root.
func (a *demoAS) mount(mux *http.ServeMux) {
	a.handle(mux, http.MethodGet, "/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		m := map[string]any{
			"issuer":                                a.issuer,
			"authorization_endpoint":                a.issuer + "/authorize",
			"token_endpoint":                        a.issuer + "/token",
			"registration_endpoint":                 a.issuer + "/register",
			"response_types_supported":              []string{"code"},
			"grant_types_supported":                 []string{"authorization_code", oauth.GrantTypeClientCredentials, oauth.GrantTypeTokenExchange},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none", "client_secret_basic", "client_secret_post"},
		}
		if a.cfg.tokens == tokensJWT {
			m["jwks_uri"] = a.issuer + "/jwks"
		} else {
			m["introspection_endpoint"] = a.issuer + "/introspect"
			m["introspection_endpoint_auth_methods_supported"] = []string{"client_secret_basic"}
		}
		if a.proofs != nil {
			m["dpop_signing_alg_values_supported"] = strings.Fields(a.proofs.Algorithms())
		}
		writeJSONResponse(w, http.StatusOK, m)
	})
	a.handle(mux, http.MethodPost, "/register", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.UnmarshalRead(http.MaxBytesReader(w, r.Body, 64<<10), &body, json.RejectUnknownMembers(false)); err != nil {
			writeJSONResponse(w, http.StatusBadRequest, map[string]any{"error": "invalid_client_metadata"})
			return
		}
		a.mu.Lock()
		a.registrations++
		id := fmt.Sprintf("client-%d", a.registrations)
		a.mu.Unlock()
		a.logf("registered OAuth client %s (%v)", id, body["client_name"])
		writeJSONResponse(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": body["redirect_uris"],
			"token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		ru, err := url.Parse(q.Get("redirect_uri"))
		if err != nil || ru.Scheme == "" || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" {
			http.Error(w, "bad authorization request", http.StatusBadRequest)
			return
		}
		code := rand.Text()
		a.mu.Lock()
		a.authorizations++
		a.codes[code] = q.Get("code_challenge")
		a.codeResources[code] = q.Get("resource")
		a.mu.Unlock()
		a.logf("authorized OAuth client %s (the demo approves every request)", q.Get("client_id"))
		rq := ru.Query()
		rq.Set("code", code)
		rq.Set("state", q.Get("state"))
		ru.RawQuery = rq.Encode()
		http.Redirect(w, r, ru.String(), http.StatusFound)
	})
	a.handle(mux, http.MethodPost, "/token", a.token)
	if a.cfg.tokens == tokensJWT {
		mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
			writeJSONResponse(w, http.StatusOK, map[string]any{"keys": []jose.JSONWebKey{a.jwk}})
		})
	} else {
		mux.HandleFunc("POST /introspect", a.introspect)
	}
}

// token is the token endpoint.
func (a *demoAS) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSONResponse(w, http.StatusBadRequest, map[string]any{"error": "invalid_request"})
		return
	}
	client := r.PostForm.Get("client_id")
	if user, _, ok := r.BasicAuth(); ok {
		client = user
	}
	if a.otherGrant(w, r, client) {
		return
	}
	var jkt string
	if a.proofs != nil {
		proofs := r.Header.Values("DPoP")
		var err error
		switch {
		case len(proofs) > 1:
			err = errors.New("more than one DPoP proof")
		case len(proofs) == 1:
			jkt, err = a.proofs.Verify(r.Context(), auth.DPoPRequest{Proof: proofs[0], Method: r.Method, URL: a.issuer + "/token"})
		case a.cfg.dpop == dpopRequired:
			err = errors.New("this server issues DPoP-bound tokens only")
		}
		if errors.Is(err, auth.ErrUnavailable) {
			writeJSONResponse(w, http.StatusServiceUnavailable, map[string]any{"error": "temporarily_unavailable"})
			return
		}
		if err != nil {
			writeJSONResponse(w, http.StatusBadRequest, map[string]any{"error": auth.ErrCodeInvalidDPoPProof, "error_description": err.Error()})
			return
		}
	}
	code := r.PostForm.Get("code")
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tokenClients = append(a.tokenClients, client)
	ch, ok := a.codes[code]
	resource := a.codeResources[code]
	delete(a.codes, code)
	delete(a.codeResources, code)
	if r.PostForm.Get("grant_type") != "authorization_code" || !ok || ch != base64.RawURLEncoding.EncodeToString(sum[:]) {
		writeJSONResponse(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
		return
	}
	now := time.Now()
	var tok string
	if a.cfg.tokens == tokensOpaque {
		tok = rand.Text() + rand.Text()
		a.tokens[tok] = demoToken{resource: resource, client: client, jkt: jkt, exp: now.Add(demoTokenLifetime)}
	} else {
		claims := map[string]any{"iss": a.issuer, "sub": "demo-user", "aud": resource, "client_id": client,
			"iat": now.Unix(), "exp": now.Add(demoTokenLifetime).Unix(), "jti": rand.Text()}
		if jkt != "" {
			claims["cnf"] = map[string]any{"jkt": jkt}
		}
		var err error
		if tok, err = jwt.Signed(a.signer).Claims(claims).Serialize(); err != nil {
			writeJSONResponse(w, http.StatusInternalServerError, map[string]any{"error": "server_error"})
			return
		}
	}
	typ := "Bearer"
	if jkt != "" {
		typ = "DPoP"
	}
	writeJSONResponse(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": typ, "expires_in": int(demoTokenLifetime.Seconds())})
}

// introspect is the introspection endpoint (RFC 7662), for the resource
// server only.
func (a *demoAS) introspect(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok || id != demoRSClient || subtle.ConstantTimeCompare([]byte(secret), []byte(a.rsSecret)) != 1 {
		w.Header().Set("WWW-Authenticate", `Basic realm="introspection"`)
		writeJSONResponse(w, http.StatusUnauthorized, map[string]any{"error": "invalid_client"})
		return
	}
	if err := r.ParseForm(); err != nil {
		writeJSONResponse(w, http.StatusBadRequest, map[string]any{"error": "invalid_request"})
		return
	}
	a.mu.Lock()
	t, ok := a.tokens[r.PostForm.Get("token")]
	a.mu.Unlock()
	if !ok || !time.Now().Before(t.exp) {
		writeJSONResponse(w, http.StatusOK, map[string]any{"active": false})
		return
	}
	ans := map[string]any{"active": true, "iss": a.issuer, "sub": "demo-user", "aud": t.resource, "client_id": t.client,
		"exp": t.exp.Unix(), "token_type": "Bearer"}
	if t.jkt != "" {
		ans["token_type"] = "DPoP"
		ans["cnf"] = map[string]any{"jkt": t.jkt}
	}
	writeJSONResponse(w, http.StatusOK, ans)
}

// verifier returns the verifier of the tokens the server issues for
// resource: a JWT verifier on its JWK Set, or an introspection verifier
// on its introspection endpoint.
func (a *demoAS) verifier(resource string) (auth.Verifier, error) {
	if a.cfg.tokens == tokensOpaque {
		return auth.NewIntrospectionVerifier(&auth.IntrospectionOptions{
			Endpoint: a.issuer + "/introspect", Audience: resource, Issuer: a.issuer,
			ClientID: demoRSClient, ClientSecret: a.rsSecret,
		})
	}
	return auth.NewJWTVerifier(&auth.JWTOptions{
		Issuer: a.issuer, Audience: resource, JWKSURL: a.issuer + "/jwks",
		Algorithms: []jose.SignatureAlgorithm{jose.ES256},
	})
}

// protect wraps h, the MCP endpoint at resource, in auth.Require with the
// verifier of cfg and, unless DPoP is off, DPoP checks (with server
// nonces) on top.
func (a *demoAS) protect(resource string, h http.Handler) (http.Handler, error) {
	v, err := a.verifier(resource)
	if err != nil {
		return nil, err
	}
	o := &auth.Options{Resource: resource}
	if a.cfg.dpop != dpopOff {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		if o.DPoP, err = auth.NewDPoPVerifier(&auth.DPoPOptions{Required: a.cfg.dpop == dpopRequired, NonceKey: key}); err != nil {
			return nil, err
		}
	}
	mw, err := auth.Require(v, o)
	if err != nil {
		return nil, err
	}
	return mw(h), nil
}

// metadata is the Protected Resource Metadata of resource.
func (a *demoAS) metadata(resource string) auth.ProtectedResourceMetadata {
	m := auth.ProtectedResourceMetadata{Resource: resource, AuthorizationServers: []string{a.issuer}, ResourceName: "mcpkit demo"}
	if a.proofs != nil {
		m.DPoPSigningAlgValuesSupported = strings.Fields(a.proofs.Algorithms())
		m.DPoPBoundAccessTokensRequired = a.cfg.dpop == dpopRequired
	}
	return m
}

// counts returns how many registrations, authorizations and token
// requests the server saw.
func (a *demoAS) counts() (registrations, authorizations, tokens int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.registrations, a.authorizations, len(a.tokenClients)
}

func writeJSONResponse(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.MarshalWrite(w, v)
}
