package streamhttp

// Cross-origin resource sharing (Options.CORS; docs/design/cors.md): the
// preflight a browser sends before a cross-origin POST, GET or DELETE
// with the MCP headers, and the headers that let the page read the
// answer. It widens nothing the Host and Origin check refuses: an origin
// CORS allows is one that check accepts, and any other keeps its 403.

import (
	"net/http"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/internal/corsorigin"
	"github.com/mcpkit/mcpkit/internal/mcpheader"
	"github.com/mcpkit/mcpkit/mcp"
)

// DefaultCORSMaxAge is how long a browser may keep a preflight answer
// (Access-Control-Max-Age) when CORSOptions.MaxAge is zero. Chromium
// keeps one at most two hours whatever the server says; a shorter time
// makes a narrowed allow-list take effect sooner.
const DefaultCORSMaxAge = 10 * time.Minute

// CORSOptions lets web pages of other origins call the endpoint from a
// browser (fetch, EventSource). Off when Options.CORS is nil.
type CORSOptions struct {
	// AllowedOrigins lists the origins whose pages may call the endpoint
	// ("https://app.example.com": scheme, host and port as the browser
	// sends them in Origin; compared without regard to case, a trailing
	// slash ignored; "null" never matches). Each is also accepted by the Host and Origin check
	// (Options.AllowedOrigins need not repeat it); the Host check still
	// applies. "*" allows every http and https origin, but never with
	// credentials: those answers carry "Access-Control-Allow-Origin: *"
	// and no Access-Control-Allow-Credentials, so cookies and HTTP
	// authentication are not sent (a bearer token set by the page in
	// Authorization still is), nor the Private Network Access answer
	// that lets a public page reach a private or loopback address (given
	// to listed origins). On a loopback listener "*" lets every web
	// page the user visits call the server: list origins instead. Empty:
	// no origin is allowed and every preflight is refused.
	AllowedOrigins []string
	// AllowCredentials answers Access-Control-Allow-Credentials: true to
	// the origins listed by name (not to "*"), so that a page may send
	// cookies or HTTP authentication (fetch with credentials: "include").
	// Bearer tokens in Authorization do not need it.
	AllowCredentials bool
	// MaxAge is how long a browser may cache a preflight answer
	// (Access-Control-Max-Age, whole seconds). Default
	// DefaultCORSMaxAge; negative: no header (browsers then keep it
	// 5 seconds).
	MaxAge time.Duration
	// AllowedHeaders are request headers allowed beyond the MCP ones
	// (names that are not header tokens are ignored)
	// (Accept, Authorization, Content-Type, DPoP, Last-Event-ID,
	// MCP-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name and
	// every Mcp-Param-{Name} of SEP-2243), such as "traceparent".
	AllowedHeaders []string
	// ExposedHeaders are response headers a page may read beyond the
	// ones the endpoint sends (Mcp-Session-Id, MCP-Protocol-Version,
	// WWW-Authenticate, Retry-After); names that are not header tokens
	// are ignored.
	ExposedHeaders []string
}

// corsAllowHeaders are the request headers an MCP client in a browser
// sends that are not CORS-safelisted: both eras' transport headers, the
// SEP-2243 ones (Mcp-Param-{Name} is matched by prefix), and those of
// authorization (Authorization, RFC 9449 DPoP).
var corsAllowHeaders = []string{
	"accept", "authorization", "content-type", "dpop", "last-event-id",
	"mcp-method", "mcp-name", "mcp-protocol-version", "mcp-session-id",
}

// corsExposeHeaders are the response headers of the endpoint a page
// must read and that are not CORS-safelisted: the session id and
// revision of the legacy era, the authorization challenge of a 401 or
// 403 (MCP authorization), and the wait of a 429 or 503. SEP-2243
// defines request headers only.
var corsExposeHeaders = []string{"Mcp-Session-Id", "Mcp-Protocol-Version", "WWW-Authenticate", "Retry-After"}

// corsParamPrefix starts the SEP-2243 headers that mirror tool arguments
// (x-mcp-header), whose names only the tools know: a browser lists them
// in Access-Control-Request-Headers, and a preflight allows each.
const corsParamPrefix = "mcp-param-"

// newCORSPolicy prepares o once for NewHandler: the shared rules of
// internal/corsorigin, with the endpoint's methods and MCP headers.
func newCORSPolicy(o *CORSOptions, stateless bool) *corsorigin.Policy {
	methods := []string{http.MethodPost, http.MethodGet, http.MethodDelete}
	if stateless {
		methods = []string{http.MethodPost}
	}
	expose := append([]string(nil), corsExposeHeaders...)
	for _, name := range o.ExposedHeaders {
		if name = strings.TrimSpace(name); mcpheader.IsToken(name) {
			expose = append(expose, name)
		}
	}
	return corsorigin.NewPolicy(corsorigin.PolicyOptions{
		Origins:       o.AllowedOrigins,
		Methods:       methods,
		Headers:       append(append([]string(nil), corsAllowHeaders...), o.AllowedHeaders...),
		HeaderPrefix:  corsParamPrefix,
		Expose:        strings.Join(expose, ", "),
		Credentials:   o.AllowCredentials,
		MaxAge:        o.MaxAge,
		DefaultMaxAge: DefaultCORSMaxAge,
	})
}

// corsAllows reports whether the Host and Origin check accepts origin on
// the strength of the CORS allow-list.
func (h *Handler) corsAllows(origin string) bool {
	return h.cors != nil && h.cors.Allows(origin)
}

// serveCORS applies the CORS rules to a request the Host and Origin
// check has passed, and reports whether it answered it: a preflight is
// answered here (204 with the CORS headers, or 403 without them); any
// other request gets, when its Origin is allowed, the headers that let
// the page read the answer, and goes on.
func (h *Handler) serveCORS(w http.ResponseWriter, r *http.Request) bool {
	preflight, refusal := h.cors.Apply(w.Header(), r)
	switch {
	case !preflight:
		return false
	case refusal != "":
		writeError(w, http.StatusForbidden, mcp.ID{}, mcp.CodeInvalidRequest, "Forbidden: "+refusal)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
	return true
}

// CORS wraps next, a handler placed in front of h (authorization
// middleware, typically, which would refuse a preflight for want of a
// token), so that preflights are answered before it and its answers (a
// 401 with WWW-Authenticate) carry the CORS headers a page needs to read
// them. Requests refused by the Host and Origin check get their 403
// here. Without Options.CORS it returns next unchanged.
func (h *Handler) CORS(next http.Handler) http.Handler {
	if h.cors == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		corsorigin.AddVary(w.Header(), "Origin")
		if !h.opts.DisableHostCheck {
			if status, msg := h.checkHostOrigin(r); status != 0 {
				writeError(w, status, mcp.ID{}, mcp.CodeInvalidRequest, msg)
				return
			}
		}
		if h.serveCORS(w, r) {
			return
		}
		next.ServeHTTP(w, r)
	})
}
