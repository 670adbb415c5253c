package streamhttp

import (
	"net/http"

	"github.com/mcpkit/mcpkit/internal/httpbody"
	"github.com/mcpkit/mcpkit/mcp"
)

// readBody reads a POST body within MaxBodyBytes and BodyReadTimeout
// (internal/httpbody), answering 413, 408 or 400 itself when it cannot
// (ok false).
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, status, e := httpbody.Read(w, r, h.opts.MaxBodyBytes, h.opts.BodyReadTimeout)
	if e != nil {
		writeRPCError(w, status, mcp.ID{}, e)
		return nil, false
	}
	return body, true
}
