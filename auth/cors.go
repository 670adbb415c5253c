package auth

// CORS for the public OAuth endpoints a browser client reads during
// discovery (docs/design/cors.md): the protected resource metadata, and
// an authorization server's metadata, token and registration endpoints.
// Nothing here carries the page's credentials: answers never allow them.

import (
	"net/http"
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
		if preflight, refusal := p.Apply(w.Header(), r); preflight {
			if refusal != "" {
				corsRefuse(w, refusal)
			} else {
				w.WriteHeader(http.StatusNoContent)
			}
			return
		}
		next.ServeHTTP(w, r)
	})
}

// newPublicCORS prepares o for an endpoint serving methods: the shared
// rules of internal/corsorigin, never with credentials.
func newPublicCORS(o *CORSOptions, methods []string) *corsorigin.Policy {
	if o == nil {
		o = &CORSOptions{}
	}
	return corsorigin.NewPolicy(corsorigin.PolicyOptions{
		Origins:       o.AllowedOrigins,
		Methods:       methods,
		Headers:       append(append([]string(nil), corsPublicHeaders...), o.AllowedHeaders...),
		Expose:        corsPublicExpose,
		MaxAge:        o.MaxAge,
		DefaultMaxAge: DefaultCORSMaxAge,
	})
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
