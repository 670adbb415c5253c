package auth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/internal/httpbody"
	"github.com/mcpkit/mcpkit/internal/mcpheader"
	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// offlineAccess is never put in a challenge or in scopes_supported
// (SEP-2207, MCP authorization).
const offlineAccess = "offline_access"

// Options configures Require.
type Options struct {
	// Resource is this server's canonical URI (RFC 8707), such as
	// "https://mcp.example.com/mcp": the audience tokens must carry and
	// the resource of the Protected Resource Metadata. Required unless
	// ResourceMetadataURL is set.
	Resource string
	// ResourceMetadataURL is the URL of the Protected Resource Metadata
	// named in every challenge (resource_metadata). Default: the
	// path-based well-known URI of Resource (ResourceMetadataURL func).
	ResourceMetadataURL string
	// Scopes are needed by every request.
	Scopes []string
	// MethodScopes are needed, on top of Scopes, by JSON-RPC requests
	// and notifications of the named methods (such as "tools/call" or
	// "resources/read").
	MethodScopes map[string][]string
	// ToolScopes are needed, on top of Scopes and MethodScopes, by a
	// tools/call of the named tool.
	ToolScopes map[string][]string
	// Implies reports whether a granted scope satisfies a needed one,
	// for scope hierarchies (MCP authorization: servers MUST account for them),
	// such as "files:write" implying "files:read". Default: equality.
	Implies func(granted, needed string) bool
	// Principal names the authenticated principal that sealed MRTR state
	// is bound to (server.WithPrincipal). Default: TokenInfo.Principal
	// (issuer and subject).
	Principal func(*TokenInfo) string
	// MaxBodyBytes caps the body read to find the method and tool when
	// MethodScopes or ToolScopes are set (413 beyond). Only the body of
	// a request whose token was verified is read. Keep it equal to
	// the wrapped server's streamhttp.Options.MaxBodyBytes. Default
	// streamhttp.DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// BodyReadTimeout bounds that read as streamhttp.Options.BodyReadTimeout
	// bounds the server's: a client (with a valid token) whose body stalls
	// gets 408 and its connection closed. It is a read deadline, cleared
	// once the body is read, and not set when the http.Server has a
	// ReadTimeout (which already bounds the request). Default
	// streamhttp.DefaultBodyReadTimeout; negative: no bound.
	BodyReadTimeout time.Duration
	// DPoP, when set, makes the middleware accept DPoP-bound tokens
	// (RFC 9449): "Authorization: DPoP <token>" with one DPoP proof
	// header, checked by this verifier against the request, the token
	// and its cnf.jkt; with DPoPOptions.Required, bearer tokens are
	// refused. Share one verifier (or at least one ReplayCache) between
	// the instances serving a resource. Without it, "DPoP" credentials
	// are not recognized and DPoP-bound tokens are refused.
	DPoP *DPoPVerifier
	// Logger receives the reason of each rejection at debug level.
	// Tokens are never logged. Default: nothing is logged.
	Logger *slog.Logger

	now func() time.Time // tests
}

// middleware is a configured Require.
type middleware struct {
	v         Verifier
	o         Options
	metaURL   string
	base      []string
	peek      bool
	principal func(*TokenInfo) string
	implies   func(granted, needed string) bool
	now       func() time.Time
	log       *slog.Logger
	maxBody   int64
	// bodyTimeout bounds the body read of needed (negative: none).
	bodyTimeout time.Duration
	dpop        *DPoPVerifier
	// target is the URL a request was sent to (the htu of its proof).
	target func(*http.Request) string
}

// Require returns middleware that lets a request through only with a
// valid bearer token granting the scopes it needs (MCP authorization):
//
//   - no bearer credentials → 401 with
//     WWW-Authenticate: Bearer resource_metadata="…", scope="…", the
//     scope being Scopes plus, when rules exist, those of the method and
//     tool named by the SEP-2243 Mcp-Method and Mcp-Name headers (the
//     body of an unauthenticated request is never read);
//   - a token the Verifier rejects → the same with error="invalid_token";
//   - a valid token lacking scopes → 403 with error="insufficient_scope"
//     and the full set of scopes the request needs (2026 rule), found in
//     the body when MethodScopes or ToolScopes are set;
//   - a malformed Authorization header, more than one, or a token in the
//     query string → 400 invalid_request;
//   - a Verifier error wrapping ErrUnavailable → 503.
//
// With Options.DPoP (RFC 9449), "Authorization: DPoP <token>" is
// accepted too, and every 401 and 403 carries a DPoP challenge with
// algs next to the Bearer one (alone when DPoP is required):
//
//   - a token whose cnf.jkt binds it to a key needs the DPoP scheme and
//     one valid DPoP proof by that key for this very request (method,
//     URL, ath), not seen before → else 401 invalid_dpop_proof (or
//     invalid_token for a bound token used as a bearer token);
//   - more than one DPoP header → 401 invalid_dpop_proof;
//   - with nonces (DPoPOptions.NonceKey), a proof without a fresh one →
//     401 use_dpop_nonce and a DPoP-Nonce header; every accepted
//     request's response carries the next nonce;
//   - a replay cache that fails → 503.
//
// Without Options.DPoP, a token bound by cnf is refused (its binding
// could not be checked).
//
// The token is read only from the Authorization header (scheme
// case-insensitive). The Verifier owns expiry checks; as a safeguard the
// middleware also refuses a TokenInfo whose Expiration is more than
// DefaultLeeway in the past. On success the request's context carries the
// TokenInfo (TokenInfoFrom) and the principal (server.WithPrincipal),
// and the Authorization and DPoP headers are removed before next runs,
// so that the token cannot be passed upstream.
//
// Require returns an error, and no middleware, when v is nil or opts
// names neither Resource nor ResourceMetadataURL, or names an invalid
// Resource, or sets DPoP without Resource or DPoPOptions.TargetURL.
func Require(v Verifier, opts *Options) (func(http.Handler) http.Handler, error) {
	if v == nil {
		return nil, errors.New("auth: Require needs a Verifier")
	}
	m := &middleware{v: v}
	if opts != nil {
		m.o = *opts
	}
	m.metaURL = m.o.ResourceMetadataURL
	if m.metaURL == "" {
		if m.o.Resource == "" {
			return nil, errors.New("auth: Require needs Options.Resource or Options.ResourceMetadataURL")
		}
		u, err := ResourceMetadataURL(m.o.Resource)
		if err != nil {
			return nil, err
		}
		m.metaURL = u
	}
	m.base = normScopes(m.o.Scopes)
	m.peek = len(m.o.MethodScopes) > 0 || len(m.o.ToolScopes) > 0
	m.principal = m.o.Principal
	if m.principal == nil {
		m.principal = (*TokenInfo).Principal
	}
	m.implies = m.o.Implies
	if m.implies == nil {
		m.implies = func(granted, needed string) bool { return granted == needed }
	}
	m.now = m.o.now
	if m.now == nil {
		m.now = time.Now
	}
	m.log = m.o.Logger
	m.maxBody = m.o.MaxBodyBytes
	if m.maxBody <= 0 {
		m.maxBody = httpbody.DefaultMaxBytes
	}
	m.bodyTimeout = m.o.BodyReadTimeout
	if m.bodyTimeout == 0 {
		m.bodyTimeout = httpbody.DefaultReadTimeout
	}
	if m.dpop = m.o.DPoP; m.dpop != nil {
		m.target = m.dpop.o.TargetURL
		if m.target == nil {
			if m.o.Resource == "" {
				return nil, errors.New("auth: Require with DPoP needs Options.Resource or DPoPOptions.TargetURL")
			}
			ru, err := url.Parse(m.o.Resource)
			if err != nil {
				return nil, fmt.Errorf("auth: Options.Resource: %w", err)
			}
			origin := originOf(ru)
			m.target = func(r *http.Request) string { return origin + r.URL.EscapedPath() }
		}
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m.serve(w, r, next)
		})
	}, nil
}

func (m *middleware) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	scheme, token, present, reason := credentials(r, m.dpop != nil)
	if reason != "" {
		m.debug(r, "malformed request", "reason", reason)
		m.challenge(w, http.StatusBadRequest, "invalid_request", reason, nil)
		return
	}
	// The token is checked before the body is read: an unauthenticated
	// client must not make the server read (up to MaxBodyBytes) what it
	// sends. Until then, only the headers hint at the scopes needed.
	if !present {
		m.debug(r, "no access token")
		m.challenge(w, http.StatusUnauthorized, "", "", m.hinted(r))
		return
	}
	proofs := r.Header.Values("DPoP")
	if m.dpop != nil && len(proofs) > 1 {
		m.debug(r, "more than one DPoP header")
		m.challenge(w, http.StatusUnauthorized, ErrCodeInvalidDPoPProof, "more than one DPoP proof", m.hinted(r))
		return
	}
	if m.dpop != nil && m.dpop.Required() && scheme != schemeDPoP {
		m.debug(r, "bearer token where DPoP is required")
		m.challenge(w, http.StatusUnauthorized, "invalid_token", "a DPoP-bound access token is required", m.hinted(r))
		return
	}
	ti, err := m.v.Verify(r.Context(), token)
	if err == nil && ti == nil {
		err = fmt.Errorf("%w: the verifier returned no token info", ErrInvalidToken)
	}
	if err == nil && !ti.Expiration.IsZero() && m.now().After(ti.Expiration.Add(DefaultLeeway)) {
		err = fmt.Errorf("%w: token expired", ErrInvalidToken)
	}
	if err == nil {
		err = m.checkBinding(r, scheme, token, ti, proofs)
	}
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			m.debug(r, "token verification unavailable", "err", err)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write(oauthError("temporarily_unavailable", "the access token cannot be verified now"))
			return
		}
		m.debug(r, "invalid token", "err", err)
		if de := (*DPoPError)(nil); errors.As(err, &de) {
			if de.Code == ErrCodeUseDPoPNonce && m.dpop != nil && m.dpop.UsesNonces() {
				w.Header().Set("DPoP-Nonce", m.dpop.NewNonce())
			}
			m.challenge(w, http.StatusUnauthorized, de.Code, de.Description, m.hinted(r))
			return
		}
		m.challenge(w, http.StatusUnauthorized, "invalid_token", "the access token is invalid or expired", m.hinted(r))
		return
	}
	needed, rpcStatus, rpcErr := m.needed(w, r)
	if rpcErr != nil {
		// The body could not be read the way the server will read it: fail
		// closed rather than guess which scopes it needs.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rpcStatus)
		_, _ = w.Write(wire.EncodeError(mcp.ID{}, rpcErr))
		return
	}
	if !m.grants(ti, needed) {
		m.debug(r, "insufficient scope", "subject", ti.Subject)
		m.challenge(w, http.StatusForbidden, "insufficient_scope", "the access token lacks scopes this request needs", needed)
		return
	}
	if m.dpop != nil && m.dpop.UsesNonces() {
		w.Header().Set("DPoP-Nonce", m.dpop.NewNonce()) // RFC 9449 §8.2: the next nonce to use
	}
	ctx := WithTokenInfo(r.Context(), ti)
	ctx = server.WithPrincipal(ctx, m.principal(ti))
	r = r.WithContext(ctx)
	r.Header = r.Header.Clone() // WithContext shares the header map
	r.Header.Del("Authorization")
	r.Header.Del("DPoP")
	next.ServeHTTP(w, r)
}

// checkBinding enforces the token's DPoP binding (RFC 9449 §7): a bound
// token only with the DPoP scheme and a valid proof by its key, the
// DPoP scheme only with a bound token.
func (m *middleware) checkBinding(r *http.Request, scheme, token string, ti *TokenInfo, proofs []string) error {
	switch {
	case ti.JKT == "" && scheme == schemeDPoP:
		return fmt.Errorf("%w: the DPoP scheme with a token that is not DPoP-bound", ErrInvalidToken)
	case ti.JKT == "":
		return nil
	case m.dpop == nil:
		return fmt.Errorf("%w: a DPoP-bound token, and DPoP is not enabled", ErrInvalidToken)
	case scheme != schemeDPoP:
		return fmt.Errorf("%w: a DPoP-bound token used as a bearer token", ErrInvalidToken)
	case len(proofs) == 0:
		return badProof("a DPoP-bound token without a DPoP proof")
	}
	_, err := m.dpop.Verify(r.Context(), DPoPRequest{
		Proof: proofs[0], Method: r.Method, URL: m.target(r), AccessToken: token, JKT: ti.JKT,
	})
	return err
}

// grants reports whether ti's scopes satisfy every needed scope.
func (m *middleware) grants(ti *TokenInfo, needed []string) bool {
	for _, n := range needed {
		if !slices.ContainsFunc(ti.Scopes, func(g string) bool { return m.implies(g, n) }) {
			return false
		}
	}
	return true
}

// hinted returns the scopes an unauthenticated request is told it
// needs in its 401 challenge, without reading the body: Scopes, plus
// those of the method and tool its SEP-2243 Mcp-Method and Mcp-Name
// headers name (2026 clients send them on every POST). The headers are
// only a hint for the client's first token request: once the token is
// verified, the scopes are enforced on what the body says (needed), so a
// header that lies costs its sender one more round trip, nothing else.
func (m *middleware) hinted(r *http.Request) []string {
	if !m.peek || r.Method != http.MethodPost {
		return m.base
	}
	method := r.Header.Get("Mcp-Method")
	if method == "" {
		return m.base
	}
	need := slices.Clone(m.base)
	need = append(need, m.o.MethodScopes[method]...)
	if method == mcp.MethodToolsCall {
		if name, ok := mcpheader.Decode(r.Header.Get("Mcp-Name")); ok {
			need = append(need, m.o.ToolScopes[name]...)
		}
	}
	return normScopes(need)
}

// needed returns the scopes an authenticated request needs: Scopes, plus those of its method
// and tool when rules exist. The body is read (up to MaxBodyBytes) and
// put back for the wrapped handler. A body the server's own strict
// decoder would refuse yields a JSON-RPC error and its status.
func (m *middleware) needed(w http.ResponseWriter, r *http.Request) ([]string, int, *jsonrpc.Error) {
	if !m.peek || r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
		return m.base, 0, nil
	}
	body, status, e := httpbody.Read(w, r, m.maxBody, m.bodyTimeout)
	if e != nil {
		return m.base, status, e
	}
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	msg, err := wire.Decode(body, jsonrpc.Limits{MaxBytes: int(m.maxBody)})
	if err != nil {
		derr := jsonrpc.NewError(mcp.CodeParseError, err.Error()) // Decode's errors are all *jsonrpc.Error
		errors.As(err, &derr)
		return m.base, http.StatusBadRequest, derr
	}
	if msg.Method == "" { // a response to a server→client request
		return m.base, 0, nil
	}
	need := slices.Clone(m.base)
	need = append(need, m.o.MethodScopes[msg.Method]...)
	if msg.Method == mcp.MethodToolsCall && len(m.o.ToolScopes) > 0 {
		var p struct {
			Name string `json:"name"`
		}
		if msg.Params != nil {
			// The server decodes params with the same JSON v2 defaults
			// (case-sensitive names, no duplicates), so both see one name.
			if err := json.Unmarshal(msg.Params, &p); err != nil {
				return m.base, http.StatusBadRequest, jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: params must be an object with a string name")
			}
		}
		need = append(need, m.o.ToolScopes[p.Name]...)
	}
	return normScopes(need), 0, nil
}

// challenge writes an error answer with its WWW-Authenticate header:
// a Bearer challenge unless DPoP is required, and a DPoP challenge
// (RFC 9449 §7.1, with algs) when DPoP is enabled. The error code goes
// in each, except the DPoP-only ones (invalid_dpop_proof,
// use_dpop_nonce), which go in the DPoP challenge only.
func (m *middleware) challenge(w http.ResponseWriter, status int, code, desc string, scopes []string) {
	params := func(scheme, extra string, withCode bool) string {
		var b strings.Builder
		b.WriteString(scheme + " ")
		if code != "" && withCode {
			fmt.Fprintf(&b, "error=%s, ", quote(code))
		}
		b.WriteString(extra)
		fmt.Fprintf(&b, "resource_metadata=%s", quote(m.metaURL))
		if len(scopes) > 0 {
			fmt.Fprintf(&b, ", scope=%s", quote(strings.Join(scopes, " ")))
		}
		return b.String()
	}
	dpopOnly := code == ErrCodeInvalidDPoPProof || code == ErrCodeUseDPoPNonce
	h := w.Header()
	if m.dpop == nil || !m.dpop.Required() {
		h.Add("WWW-Authenticate", params("Bearer", "", !dpopOnly))
	}
	if m.dpop != nil {
		h.Add("WWW-Authenticate", params("DPoP", fmt.Sprintf("algs=%s, ", quote(m.dpop.Algorithms())), true))
	}
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if code == "" {
		code, desc = "invalid_token", "an access token is required"
	}
	_, _ = w.Write(oauthError(code, desc))
}

func (m *middleware) debug(r *http.Request, msg string, args ...any) {
	if m.log == nil {
		return
	}
	m.log.DebugContext(r.Context(), "auth: "+msg, append([]any{"method", r.Method, "path", r.URL.Path}, args...)...)
}

// oauthError is an RFC 6750 §3 error body.
func oauthError(code, desc string) []byte {
	b, _ := json.Marshal(struct {
		Error       string `json:"error"`
		Description string `json:"error_description,omitzero"`
	}{code, desc})
	return b
}

// The authentication schemes Require reads.
const (
	schemeBearer = "Bearer"
	schemeDPoP   = "DPoP"
)

// credentials extracts the access token of r and its scheme: Bearer,
// or DPoP when dpop is true. present is false when r carries no such
// credentials; reason is non-empty when the request is malformed
// (RFC 6750 invalid_request).
func credentials(r *http.Request, dpop bool) (scheme, token string, present bool, reason string) {
	if r.URL.Query().Has("access_token") {
		return "", "", false, "access tokens are not accepted in the query string"
	}
	vals := r.Header.Values("Authorization")
	switch len(vals) {
	case 0:
		return "", "", false, ""
	case 1:
	default:
		return "", "", false, "more than one Authorization header"
	}
	v := strings.TrimSpace(vals[0])
	scheme, rest, _ := strings.Cut(v, " ")
	switch {
	case strings.EqualFold(scheme, schemeBearer):
		scheme = schemeBearer
	case dpop && strings.EqualFold(scheme, schemeDPoP):
		scheme = schemeDPoP
	case scheme == "":
		return "", "", false, "empty Authorization header"
	default:
		return "", "", false, "" // another scheme: no credentials of ours
	}
	token = strings.TrimLeft(rest, " ")
	if !isToken68(token) {
		return "", "", false, "malformed access token"
	}
	return scheme, token, true, ""
}

// isToken68 reports whether s is an RFC 7235 token68 (RFC 6750 b64token).
func isToken68(s string) bool {
	if s == "" {
		return false
	}
	end := len(s)
	for end > 0 && s[end-1] == '=' {
		end--
	}
	if end == 0 {
		return false
	}
	for i := 0; i < end; i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}

// quote is an RFC 9110 quoted-string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}

// normScopes drops empty scopes, duplicates and offline_access, keeping
// the first-seen order.
func normScopes(in []string) []string {
	var out []string
	for _, s := range in {
		if s == "" || s == offlineAccess || slices.Contains(out, s) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// HasScopes reports whether the request of ctx was authenticated
// with a token granting every scope in scopes (exact names:
// Options.Implies is not consulted). It is for decisions a
// handler makes after the response has started (filtering list results,
// say); to make a client step up, declare the scopes in
// Options.MethodScopes or Options.ToolScopes instead: only the
// middleware can still answer 403 (docs/design/auth.md).
func HasScopes(ctx context.Context, scopes ...string) bool {
	ti := TokenInfoFrom(ctx)
	if ti == nil {
		return false
	}
	for _, s := range scopes {
		if !ti.HasScope(s) {
			return false
		}
	}
	return true
}
