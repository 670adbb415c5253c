package streamhttp

import (
	"net/http"
	"strings"

	"github.com/mcpkit/mcpkit/server/internal/seam"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// repeatedMCPHeader returns the name of an MCP header (Mcp-Method,
// Mcp-Name, Mcp-Param-*, MCP-Protocol-Version, Mcp-Session-Id: every
// name net/http canonicalizes to "Mcp-…") that the request carries more
// than once, or "". The handler reads the first value; a proxy in front
// of it may read the last, and so route, authorize or log another
// method, tool or session than the one that runs. One pass over the
// header map, no allocation.
func repeatedMCPHeader(h http.Header) string {
	for name, values := range h {
		if len(values) > 1 && len(name) > 4 && strings.EqualFold(name[:4], "mcp-") {
			return name
		}
	}
	return ""
}

// refuseRepeated answers a POST that repeats MCP header name: 400 with
// -32020 (header mismatch, SEP-2243) when the request is a 2026-07-28
// one, -32600 otherwise. The era is found as post finds it, except that
// any value of a repeated MCP-Protocol-Version counts.
func (h *Handler) refuseRepeated(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message, name string) {
	modern := false
	if h.opts.Stateless || headerValue(r.Header, headerSessionID) == "" {
		for _, v := range r.Header.Values(headerProtocolVersion) {
			modern = modern || mcp.IsModern(seam.TrimOWS(v))
		}
		if !modern && msg.IsRequest() {
			if call, err := h.p.Classify(msg); err == nil {
				modern = call.Claimed
			}
		}
	}
	if modern {
		writeRPCError(w, http.StatusBadRequest, msg.ID, seam.HeaderMismatch("the %s header is sent more than once", name))
		return
	}
	writeError(w, http.StatusBadRequest, msg.ID, mcp.CodeInvalidRequest, "Bad Request: the "+name+" header is sent more than once")
}
