package auth

// CORS for the public OAuth endpoints a browser client reads during
// discovery (docs/design/cors.md): the protected resource metadata, and
// an authorization server's metadata, token and registration endpoints.
// Nothing here carries the page's credentials: answers never allow them.

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/mcpkit/mcpkit/internal/corsorigin"
)

// DefaultCORSMaxAge is how long a browser may keep a preflight answer of
// a handler wrapped by CORS (Access-Control-Max-Age) when
// CORSOptions.MaxAge is zero: the same as server/streamhttp's.
const DefaultCORSMaxAge = 10 * time.Minute

// CORSOptions is the cross-origin policy of a public endpoint that web
// pages of other origins read without cookies or HTTP authentication:
// the protected resource metadata (ProtectedResourceOptions.CORS), or an
// authorization server's metadata, token and registration endpoints
// (wrapped with CORS). A browser MCP client on another origin needs them
// to complete discovery. The zero value allows no origin.
type CORSOptions struct {
	// AllowedOrigins lists the origins whose pages may read the answers
	// ("https://app.example.com": scheme, host and port as the browser
	// sends them in Origin; compared without regard to case, a trailing
	// slash ignored; "null" never matches). "*" allows every http and
	// https origin and is answered "Access-Control-Allow-Origin: *".
	// Empty: no origin; every preflight is refused. Pass the list given
	// to server/streamhttp's CORSOptions so that one list governs both.
	AllowedOrigins []string
	// AllowedHeaders are request headers allowed beyond Accept,
	// Authorization (client authentication at a token endpoint),
	// Content-Type, DPoP and MCP-Protocol-Version; names that are not
	// header tokens are ignored.
	AllowedHeaders []string
	// MaxAge is how long a browser may cache a preflight answer
	// (whole seconds). Default DefaultCORSMaxAge; negative: no header.
	MaxAge time.Duration
}

// corsPublicHeaders are the request headers a browser OAuth client sends
// to these endpoints that are not CORS-safelisted.
var corsPublicHeaders = []string{"accept", "authorization", "content-type", "dpop", "mcp-protocol-version"}

// corsPublicExpose are the response headers of these endpoints a page
// must read: a token endpoint's DPoP nonce (RFC 9449 §8) and the
// challenge of a failed client authentication.
const corsPublicExpose = "DPoP-Nonce, WWW-Authenticate"

// CORS wraps next, a handler serving methods (such as "GET", or "POST"
// for a token endpoint), with the policy o: a preflight (OPTIONS with
// Access-Control-Request-Method) is answered here, 204 for an allowed
// origin asking for one of methods and allowed headers, else 403 with an
// OAuth error body (invalid_request) and no Access-Control-* header;
// other requests go on to next, those of an allowed origin with the
// headers that let the page read the answer. Credentials are never
// allowed. A nil o allows no origin.
func CORS(o *CORSOptions, methods []string, next http.Handler) http.Handler {
	p := newPublicCORS(o, methods)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.serve(w, r) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// publicCORS is CORSOptions prepared once.
type publicCORS struct {
	allow   corsorigin.List
	methods map[string]bool
	allowM  string // Access-Control-Allow-Methods
	headers map[string]bool
	allowH  string // Access-Control-Allow-Headers
	maxAge  string // "" for none
}

func newPublicCORS(o *CORSOptions, methods []string) *publicCORS {
	if o == nil {
		o = &CORSOptions{}
	}
	p := &publicCORS{allow: corsorigin.Parse(o.AllowedOrigins), methods: map[string]bool{}, headers: map[string]bool{}}
	var ms []string
	for _, m := range append(append([]string(nil), methods...), http.MethodOptions) {
		if m = strings.ToUpper(strings.TrimSpace(m)); m != "" && !p.methods[m] {
			p.methods[m] = true
			ms = append(ms, m)
		}
	}
	p.allowM = strings.Join(ms, ", ")
	var hs []string
	for _, name := range append(append([]string(nil), corsPublicHeaders...), o.AllowedHeaders...) {
		if name = strings.ToLower(strings.TrimSpace(name)); corsorigin.IsToken(name) && !p.headers[name] {
			p.headers[name] = true
			hs = append(hs, name)
		}
	}
	p.allowH = strings.Join(hs, ", ")
	p.maxAge = corsorigin.MaxAge(o.MaxAge, DefaultCORSMaxAge)
	return p
}

// match reports whether origin may read the answers, and whether by name
// rather than through "*".
func (p *publicCORS) match(origin string) (ok, explicit bool) {
	return p.allow.Match(origin)
}

// serve applies the policy and reports whether it answered r (a
// preflight).
func (p *publicCORS) serve(w http.ResponseWriter, r *http.Request) bool {
	hdr := w.Header()
	hdr.Add("Vary", "Origin") // the answer depends on it, refusals too
	origins := r.Header["Origin"]
	preflight := r.Method == http.MethodOptions && len(r.Header["Access-Control-Request-Method"]) > 0
	if !preflight {
		if len(origins) == 1 {
			if ok, explicit := p.match(origins[0]); ok {
				setPublicAllowOrigin(hdr, origins[0], explicit)
				hdr.Set("Access-Control-Expose-Headers", corsPublicExpose)
			}
		}
		return false
	}
	if len(origins) != 1 {
		corsRefuse(w, "a CORS preflight needs exactly one Origin")
		return true
	}
	ok, explicit := p.match(origins[0])
	if !ok {
		corsRefuse(w, "Origin not allowed (CORS)")
		return true
	}
	if m := strings.TrimSpace(r.Header.Get("Access-Control-Request-Method")); !p.methods[m] {
		corsRefuse(w, "method "+strconv.Quote(m)+" not allowed (CORS; allowed: "+p.allowM+")")
		return true
	}
	for _, line := range r.Header["Access-Control-Request-Headers"] {
		for name := range strings.SplitSeq(line, ",") {
			if name = strings.ToLower(strings.TrimSpace(name)); name != "" && !p.headers[name] {
				corsRefuse(w, "header "+strconv.Quote(name)+" not allowed (CORS)")
				return true
			}
		}
	}
	setPublicAllowOrigin(hdr, origins[0], explicit)
	hdr.Set("Access-Control-Allow-Methods", p.allowM)
	hdr.Set("Access-Control-Allow-Headers", p.allowH)
	if p.maxAge != "" {
		hdr.Set("Access-Control-Max-Age", p.maxAge)
	}
	if explicit && strings.EqualFold(r.Header.Get("Access-Control-Request-Private-Network"), "true") {
		// Private Network Access, for listed origins only (as streamhttp).
		hdr.Set("Access-Control-Allow-Private-Network", "true")
	}
	w.WriteHeader(http.StatusNoContent)
	return true
}

func setPublicAllowOrigin(hdr http.Header, origin string, explicit bool) {
	if explicit {
		hdr.Set("Access-Control-Allow-Origin", origin)
		return
	}
	hdr.Set("Access-Control-Allow-Origin", "*")
}

// corsRefuse answers a refused preflight: 403, an OAuth error body, and
// no Access-Control-* header, so the browser fails it.
func corsRefuse(w http.ResponseWriter, why string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusForbidden)
	body, _ := json.Marshal(map[string]string{"error": "invalid_request", "error_description": "Forbidden: " + why})
	_, _ = w.Write(body)
}
