package streamhttp

import (
	"net/http"

	"github.com/mcpkit/mcpkit/internal/mcpheader"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/seam"
)

// SEP-2243 request headers of the 2026-07-28 Streamable HTTP transport.
const (
	headerMethod = "Mcp-Method"
	headerName   = "Mcp-Name"
)

// checkStandardHeaders validates Mcp-Method and Mcp-Name against the body.
func checkStandardHeaders(h http.Header, method string, c *seam.Call) *jsonrpc.Error {
	got, present := h[headerMethod]
	if !present || len(got) == 0 {
		return seam.HeaderMismatch("the Mcp-Method header is missing")
	}
	if v := seam.TrimOWS(got[0]); v != method {
		return seam.HeaderMismatch("Mcp-Method header value '%s' does not match body value '%s'", v, method)
	}
	var want string
	switch method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet:
		want = c.Name
	case mcp.MethodResourcesRead:
		want = c.URI
	case mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel:
		want = c.TaskID
	default:
		return nil
	}
	names, present := h[headerName]
	if !present || len(names) == 0 {
		return seam.HeaderMismatch("the Mcp-Name header is missing")
	}
	v, ok := mcpheader.Decode(seam.TrimOWS(names[0]))
	if !ok {
		return seam.HeaderMismatch("the Mcp-Name header has an invalid base64 value")
	}
	if v != want {
		return seam.HeaderMismatch("Mcp-Name header value '%s' does not match body value '%s'", v, want)
	}
	return nil
}

// headerValue is h.Get(key) for a key already in canonical form (every
// header constant of this package; TestHeaderKeysCanonical), without
// canonicalizing it again on every request.
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}
