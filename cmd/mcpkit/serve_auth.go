package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/auth"
)

// demoAS is the tiny OAuth authorization server of "mcpkit serve --auth":
// metadata (RFC 8414), dynamic client registration (RFC 7591), and the
// authorization code flow with PKCE S256, issuing opaque access tokens
// bound to one resource. It approves every authorization request at once
// (a demo has no users), and keeps everything in memory.
type demoAS struct {
	issuer string    // its issuer identifier: an origin
	log    io.Writer // one line per registration and authorization; nil: none

	mu             sync.Mutex
	codes          map[string]string // code -> code_challenge, resource
	codeResources  map[string]string
	tokens         map[string]string // access token -> resource
	registrations  int
	authorizations int
	tokenClients   []string // the client of each token request
}

func newDemoAS(issuer string, log io.Writer) *demoAS {
	return &demoAS{issuer: issuer, log: log, codes: map[string]string{}, codeResources: map[string]string{},
		tokens: map[string]string{}}
}

func (a *demoAS) logf(format string, args ...any) {
	if a.log != nil {
		fmt.Fprintf(a.log, "mcpkit: "+format+"\n", args...)
	}
}

// mount adds the server's endpoints to mux, at the issuer's root.
func (a *demoAS) mount(mux *http.ServeMux) {
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSONResponse(w, http.StatusOK, map[string]any{
			"issuer":                                a.issuer,
			"authorization_endpoint":                a.issuer + "/authorize",
			"token_endpoint":                        a.issuer + "/token",
			"registration_endpoint":                 a.issuer + "/register",
			"response_types_supported":              []string{"code"},
			"grant_types_supported":                 []string{"authorization_code"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none", "client_secret_basic", "client_secret_post"},
		})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
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
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			writeJSONResponse(w, http.StatusBadRequest, map[string]any{"error": "invalid_request"})
			return
		}
		client := r.PostForm.Get("client_id")
		if user, _, ok := r.BasicAuth(); ok {
			client = user
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
		tok := rand.Text()
		a.tokens[tok] = resource
		writeJSONResponse(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
	})
}

// verifier accepts the tokens the server issued for resource.
func (a *demoAS) verifier(resource string) auth.Verifier {
	return auth.VerifierFunc(func(ctx context.Context, token string) (*auth.TokenInfo, error) {
		a.mu.Lock()
		res, ok := a.tokens[token]
		a.mu.Unlock()
		if !ok || res != resource {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Subject: "demo-user", Issuer: a.issuer, Audience: []string{resource}}, nil
	})
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
