package streamhttp

import (
	"net/http"
	"strconv"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// sessionCapRetryAfter is the Retry-After of an initialize refused by a
// session cap: places free up as clients DELETE their sessions and idle
// ones are swept, not at a time the server can name.
const sessionCapRetryAfter = 10 * time.Second

// sessionCaps counts the sessions of each authenticated principal, for
// MaxSessionsPerPrincipal. Guarded by Handler.mu.
type sessionCaps struct {
	perPrincipal map[string]int    // principal → sessions held
	principalOf  map[string]string // session id → principal, for sessions counted above
}

// overCap returns why an initialize by principal must be refused, or ""
// when a session may be created. Called with h.mu held, in the same
// critical section that adds the session (admitted), so that concurrent
// initializes cannot exceed a cap.
func (h *Handler) overCap(principal string) string {
	if n := h.opts.MaxSessions; n >= 0 && len(h.sessions)+len(h.sse) >= n {
		return "Service Unavailable: the server holds as many sessions as it allows; try again later"
	}
	if n := h.opts.MaxSessionsPerPrincipal; n >= 0 && principal != "" && h.caps.perPrincipal[principal] >= n {
		return "Service Unavailable: this principal holds as many sessions as the server allows; end one (DELETE) or try again later"
	}
	return ""
}

// admitted counts a new session of principal. Called with h.mu held.
func (h *Handler) admitted(sid, principal string) {
	if principal == "" {
		return
	}
	c := &h.caps
	if c.perPrincipal == nil {
		c.perPrincipal = make(map[string]int)
		c.principalOf = make(map[string]string)
	}
	c.perPrincipal[principal]++
	c.principalOf[sid] = principal
}

// released uncounts session sid once it has left h.sessions. Called
// with h.mu held.
func (h *Handler) released(sid string) {
	c := &h.caps
	p, ok := c.principalOf[sid]
	if !ok {
		return
	}
	delete(c.principalOf, sid)
	if c.perPrincipal[p] <= 1 {
		delete(c.perPrincipal, p)
	} else {
		c.perPrincipal[p]--
	}
}

// refuseOverCap answers an initialize over a cap: 503, Retry-After, and
// a JSON-RPC error for its id.
func refuseOverCap(w http.ResponseWriter, msg *jsonrpc.Message, why string) {
	w.Header().Set("Retry-After", strconv.Itoa(int(sessionCapRetryAfter/time.Second)))
	writeError(w, http.StatusServiceUnavailable, msg.ID, mcp.CodeInternalError, why)
}
