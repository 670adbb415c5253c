package oauth

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeAS is a configurable authorization server.
type fakeAS struct {
	t   *testing.T
	srv *httptest.Server

	// configuration (set before use)
	prefix       string   // issuer path, e.g. "/tenant1"
	metadataPath string   // "" : RFC 8414 path-aware default; "-": none
	issuer       string   // metadata issuer override
	methods      []string // token_endpoint_auth_methods_supported
	pkce         []string // code_challenge_methods_supported (nil: ["S256"])
	noPKCE       bool
	issSupported bool
	issMode      string // "correct" (default when issSupported), "omit", "wrong", "normalized"
	cimd         bool
	noDCR        bool
	scopes       []string // scopes_supported
	refresh      bool     // issue refresh tokens
	regMethod    string   // token_endpoint_auth_method in the DCR answer
	regSecret    string   // client_secret in the DCR answer ("" : none)
	clientID     string   // client_id issued by DCR
	// grantCheck judges client_credentials and jwt-bearer token requests:
	// an OAuth error code refuses the request ("" grants it).
	grantCheck func(r *http.Request, form url.Values) string
	dpop       bool   // advertise ES256 DPoP, bind tokens to valid proofs
	asNonce    string // DPoP nonce the token endpoint requires ("" : none)
	// redirects answers requests to a path with a redirect (307 for a
	// POST, 302 for a GET) to the URL given.
	redirects map[string]string
	// endpoints overrides members of the metadata (token_endpoint, …).
	endpoints map[string]string

	mu            sync.Mutex
	log           []string // "GET /path" of every request
	authQueries   []url.Values
	tokenForms    []url.Values
	tokenAuth     []string // Authorization header of token requests
	registrations []map[string]any
	codes         map[string]string // code -> challenge
	issued        map[string]string // token -> scope
	bound         map[string]string // DPoP token -> jkt
	dpopProofs    []string          // DPoP headers of token requests
	n             int
}

func newFakeAS(t *testing.T, cfg func(*fakeAS)) *fakeAS {
	a := &fakeAS{t: t, codes: map[string]string{}, issued: map[string]string{}, bound: map[string]string{}, clientID: "dcr-client"}
	if cfg != nil {
		cfg(a)
	}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *fakeAS) Issuer() string { return a.srv.URL + a.prefix }

func (a *fakeAS) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.log = append(a.log, r.Method+" "+r.URL.Path)
	a.mu.Unlock()
	if to, ok := a.redirects[r.URL.Path]; ok {
		redirect(w, r, to)
		return
	}
	mdPath := a.metadataPath
	if mdPath == "" {
		mdPath = "/.well-known/oauth-authorization-server" + a.prefix
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == mdPath:
		a.metadata(w)
	case r.URL.Path == a.prefix+"/authorize":
		a.authorize(w, r)
	case r.Method == http.MethodPost && r.URL.Path == a.prefix+"/token":
		a.token(w, r)
	case r.Method == http.MethodPost && r.URL.Path == a.prefix+"/register" && !a.noDCR:
		a.register(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (a *fakeAS) metadata(w http.ResponseWriter) {
	iss := a.issuer
	if iss == "" {
		iss = a.Issuer()
	}
	base := a.srv.URL + a.prefix
	m := map[string]any{
		"issuer":                   iss,
		"authorization_endpoint":   base + "/authorize",
		"token_endpoint":           base + "/token",
		"response_types_supported": []string{"code"},
	}
	if !a.noDCR {
		m["registration_endpoint"] = base + "/register"
	}
	if !a.noPKCE {
		p := a.pkce
		if p == nil {
			p = []string{"S256"}
		}
		m["code_challenge_methods_supported"] = p
	}
	if a.methods != nil {
		m["token_endpoint_auth_methods_supported"] = a.methods
	}
	if a.issSupported {
		m["authorization_response_iss_parameter_supported"] = true
	}
	if a.cimd {
		m["client_id_metadata_document_supported"] = true
	}
	if a.scopes != nil {
		m["scopes_supported"] = a.scopes
	}
	if a.dpop {
		m["dpop_signing_alg_values_supported"] = []string{"ES256"}
	}
	for k, v := range a.endpoints {
		m[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(m)
}

func (a *fakeAS) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	a.authQueries = append(a.authQueries, q)
	a.n++
	code := fmt.Sprintf("code-%d", a.n)
	a.codes[code] = q.Get("code_challenge")
	a.mu.Unlock()
	ru, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || ru.Scheme == "" {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	rq := ru.Query()
	rq.Set("code", code)
	if s := q.Get("state"); s != "" {
		rq.Set("state", s)
	}
	mode := a.issMode
	if mode == "" && a.issSupported {
		mode = "correct"
	}
	iss := a.issuer
	if iss == "" {
		iss = a.Issuer()
	}
	switch mode {
	case "correct":
		rq.Set("iss", iss)
	case "wrong":
		rq.Set("iss", "https://evil.example.com")
	case "normalized":
		rq.Set("iss", iss+"/")
	}
	ru.RawQuery = rq.Encode()
	http.Redirect(w, r, ru.String(), http.StatusFound)
}

func (a *fakeAS) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tokenForms = append(a.tokenForms, r.PostForm)
	a.tokenAuth = append(a.tokenAuth, r.Header.Get("Authorization"))
	a.n++
	oauthErr := func(status int, code string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, `{"error":%q}`, code)
	}
	jkt := ""
	if proof := r.Header.Get("DPoP"); a.dpop && proof != "" {
		a.dpopProofs = append(a.dpopProofs, proof)
		_, claims, thumb, err := verifyDPoPProof(proof)
		if err != nil || claims["htm"] != "POST" || claims["htu"] != a.srv.URL+a.prefix+"/token" || claims["ath"] != nil {
			oauthErr(http.StatusBadRequest, "invalid_dpop_proof")
			return
		}
		if a.asNonce != "" && claims["nonce"] != a.asNonce {
			w.Header().Set("DPoP-Nonce", a.asNonce)
			oauthErr(http.StatusBadRequest, "use_dpop_nonce")
			return
		}
		jkt = thumb
	}
	scope := ""
	switch gt := r.PostForm.Get("grant_type"); gt {
	case GrantTypeClientCredentials, GrantTypeJWTBearer:
		if a.grantCheck == nil {
			oauthErr(http.StatusBadRequest, "unsupported_grant_type")
			return
		}
		if code := a.grantCheck(r, r.PostForm); code != "" {
			status := http.StatusBadRequest
			if code == "invalid_client" {
				status = http.StatusUnauthorized
			}
			oauthErr(status, code)
			return
		}
		scope = r.PostForm.Get("scope")
	case "authorization_code":
		ch, ok := a.codes[r.PostForm.Get("code")]
		if !ok || ch != s256(r.PostForm.Get("code_verifier")) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"invalid_grant"}`)
			return
		}
		delete(a.codes, r.PostForm.Get("code"))
		last := a.authQueries[len(a.authQueries)-1]
		scope = last.Get("scope")
	case "refresh_token":
		if !strings.HasPrefix(r.PostForm.Get("refresh_token"), "rt-") {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"invalid_grant"}`)
			return
		}
		scope = a.issued[strings.TrimPrefix(r.PostForm.Get("refresh_token"), "rt-")]
	default:
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"unsupported_grant_type"}`)
		return
	}
	tok := fmt.Sprintf("tok-%s-%d", strings.TrimPrefix(a.srv.URL, "http://127.0.0.1:"), a.n)
	a.issued[tok] = scope
	resp := map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600}
	if jkt != "" {
		a.bound[tok] = jkt
		resp["token_type"] = "DPoP"
	}
	if scope != "" {
		resp["scope"] = scope
	}
	if a.refresh {
		resp["refresh_token"] = "rt-" + tok
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func (a *fakeAS) register(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	a.mu.Lock()
	a.registrations = append(a.registrations, body)
	a.mu.Unlock()
	resp := map[string]any{"client_id": a.clientID, "redirect_uris": body["redirect_uris"]}
	if a.regSecret != "" {
		resp["client_secret"] = a.regSecret
	}
	if a.regMethod != "" {
		resp["token_endpoint_auth_method"] = a.regMethod
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(resp)
}

// scopeOf returns the scope of an issued token and whether it is known.
func (a *fakeAS) scopeOf(tok string) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.issued[tok]
	return s, ok
}

func (a *fakeAS) revokeAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.issued = map[string]string{}
}

func (a *fakeAS) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.log)
}

func (a *fakeAS) tokenRequests() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.tokenForms)
}

func (a *fakeAS) authorizations() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.authQueries)
}

// fakeRS is a protected MCP-like resource at /mcp.
type fakeRS struct {
	srv *httptest.Server

	as          func() *fakeAS // the current authorization server
	prmPath     string         // "" : /.well-known/oauth-protected-resource/mcp; "-": none
	inHeader    bool           // resource_metadata in the challenge
	chalScope   string         // scope in the 401 challenge
	prmScopes   []string
	resource    string                       // PRM resource override
	required    func(r *http.Request) string // scope the request needs ("": none)
	denyForever bool                         // 403 insufficient_scope whatever the token
	prmURL      string                       // resource_metadata override in the challenge
	dpopScheme  bool                         // challenge with DPoP instead of Bearer
	rsNonce     string                       // DPoP nonce the resource requires ("" : none)
	dpopErrors  []string                     // proof problems seen
	jtis        []string                     // jti of every valid proof
	schemes     []string                     // Authorization scheme of every request
	redirects   map[string]string            // as fakeAS.redirects
	authServers []string                     // authorization_servers override

	mu     sync.Mutex
	log    []string
	bodies []string
}

func newFakeRS(t *testing.T, as func() *fakeAS, cfg func(*fakeRS)) *fakeRS {
	s := &fakeRS{as: as, inHeader: true}
	if cfg != nil {
		cfg(s)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *fakeRS) URL() string { return s.srv.URL + "/mcp" }

func (s *fakeRS) prm() string {
	if s.prmPath == "" {
		return "/.well-known/oauth-protected-resource/mcp"
	}
	return s.prmPath
}

func (s *fakeRS) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.log = append(s.log, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	if to, ok := s.redirects[r.URL.Path]; ok {
		redirect(w, r, to)
		return
	}
	if s.prmPath != "-" && r.Method == http.MethodGet && r.URL.Path == s.prm() {
		res := s.resource
		if res == "" {
			res = s.URL()
			if s.prm() == "/.well-known/oauth-protected-resource" {
				res = s.srv.URL
			}
		}
		m := map[string]any{"resource": res, "authorization_servers": []string{s.as().Issuer()}}
		if s.authServers != nil {
			m["authorization_servers"] = s.authServers
		}
		if s.prmScopes != nil {
			m["scopes_supported"] = s.prmScopes
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(m)
		return
	}
	if r.URL.Path != "/mcp" {
		http.NotFound(w, r)
		return
	}
	chal := func(extra string) string {
		var parts []string
		if extra != "" {
			parts = append(parts, extra)
		}
		if s.prmURL != "" {
			parts = append(parts, fmt.Sprintf(`resource_metadata="%s"`, s.prmURL))
		} else if s.inHeader && s.prmPath != "-" {
			parts = append(parts, fmt.Sprintf(`resource_metadata="%s%s"`, s.srv.URL, s.prm()))
		}
		scheme := "Bearer "
		if s.dpopScheme {
			scheme = "DPoP "
		}
		return strings.TrimSpace(scheme + strings.Join(parts, ", "))
	}
	authz := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(authz, " ")
	s.mu.Lock()
	s.schemes = append(s.schemes, scheme)
	s.mu.Unlock()
	scope, known := "", false
	if ok {
		scope, known = s.as().scopeOf(tok)
	}
	jkt := s.as().boundTo(tok)
	if known && (jkt != "") != (scheme == "DPoP") {
		known = false // a bound token presented as Bearer, or the reverse
	}
	if known && jkt != "" {
		problem, nonce := s.checkProof(r, tok, jkt)
		if problem != "" {
			s.mu.Lock()
			s.dpopErrors = append(s.dpopErrors, problem)
			s.mu.Unlock()
			known = false
		} else if s.rsNonce != "" && nonce != s.rsNonce {
			w.Header().Set("DPoP-Nonce", s.rsNonce)
			w.Header().Set("WWW-Authenticate", chal(`error="use_dpop_nonce"`))
			http.Error(w, `{"error":"use_dpop_nonce"}`, http.StatusUnauthorized)
			return
		}
	} else if ok && scheme != "Bearer" {
		known = false
	}
	if !known {
		extra := ""
		if s.chalScope != "" {
			extra = fmt.Sprintf(`scope="%s"`, s.chalScope)
		}
		w.Header().Set("WWW-Authenticate", chal(extra))
		http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
		return
	}
	need := ""
	if s.required != nil {
		need = s.required(r)
	}
	if s.denyForever || (need != "" && !slices.Contains(strings.Fields(scope), need)) {
		if need == "" {
			need = "mcp:admin"
		}
		w.Header().Set("WWW-Authenticate", chal(fmt.Sprintf(`error="insufficient_scope", scope="%s"`, need)))
		http.Error(w, `{"error":"insufficient_scope"}`, http.StatusForbidden)
		return
	}
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, string(b))
	s.mu.Unlock()
	_, _ = io.WriteString(w, "ok:"+string(b))
}

func (s *fakeRS) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// env is a fake AS and RS pair with a Transport.
type env struct {
	as *fakeAS
	rs *fakeRS
	tr *Transport
	hc *http.Client
}

func newEnv(t *testing.T, asCfg func(*fakeAS), rsCfg func(*fakeRS), trCfg func(*Transport)) *env {
	e := &env{}
	e.as = newFakeAS(t, asCfg)
	e.rs = newFakeRS(t, func() *fakeAS { return e.as }, rsCfg)
	e.tr = &Transport{Authorize: Headless(nil), RedirectURL: "http://localhost:3000/callback"}
	if trCfg != nil {
		trCfg(e.tr)
	}
	e.hc = &http.Client{Transport: e.tr}
	return e
}

// post sends body to the RS and returns the answer's body.
func (e *env) post(body string) (string, error) {
	resp, err := e.hc.Post(e.rs.URL(), "application/json", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return string(b), nil
}

func s256(v string) string {
	sum := sha256Sum([]byte(v))
	return b64(sum[:])
}

// boundTo returns the jkt a DPoP token is bound to, or "".
func (a *fakeAS) boundTo(tok string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bound[tok]
}

// checkProof checks the DPoP proof of a resource request presenting tok
// bound to jkt; it returns a problem ("" : none) and the proof's nonce.
func (s *fakeRS) checkProof(r *http.Request, tok, jkt string) (problem, nonce string) {
	proofs := r.Header.Values("DPoP")
	if len(proofs) != 1 {
		return fmt.Sprintf("%d DPoP headers", len(proofs)), ""
	}
	_, claims, thumb, err := verifyDPoPProof(proofs[0])
	switch {
	case err != nil:
		return err.Error(), ""
	case thumb != jkt:
		return "proof key is not the token's", ""
	case claims["htm"] != r.Method:
		return "htm", ""
	case claims["htu"] != s.srv.URL+r.URL.Path:
		return fmt.Sprintf("htu %v", claims["htu"]), ""
	case claims["ath"] != s256(tok):
		return "ath", ""
	}
	jti, _ := claims["jti"].(string)
	s.mu.Lock()
	defer s.mu.Unlock()
	if jti == "" || slices.Contains(s.jtis, jti) {
		return "jti missing or reused", ""
	}
	s.jtis = append(s.jtis, jti)
	nonce, _ = claims["nonce"].(string)
	return "", nonce
}

// redirect answers with a redirect to the URL to: 307 (the method and
// body are to be sent again) for a POST, 302 for a GET.
func redirect(w http.ResponseWriter, r *http.Request, to string) {
	code := http.StatusFound
	if r.Method == http.MethodPost {
		code = http.StatusTemporaryRedirect
	}
	http.Redirect(w, r, to, code)
}
