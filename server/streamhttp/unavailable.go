package streamhttp

import (
	"errors"
	"net/http"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/seam"
)

// unavailable reports whether err answers a request that could not be
// served for want of a store: the session store
// (seam.ErrStoreUnavailable) or what a handler or an interceptor depends
// on, such as a rate limiter's store (jsonrpc.ErrUnavailable). Such an
// answer gets status 503 in both eras.
func unavailable(err error) bool {
	return errors.Is(err, seam.ErrStoreUnavailable) || errors.Is(err, jsonrpc.ErrUnavailable)
}

// errSessionGone fails a request whose change of session state the
// SessionStore refused because it no longer holds the session (ended on
// another instance, or by its TTL, before this copy heard of it): the
// answer of an unknown session, HTTP 404, so that the client starts a new
// one, as it would on the next request.
var errSessionGone = jsonrpc.NewError(mcp.CodeInvalidRequest, "Not Found: unknown or ended session")

// statusOf is the status of the error answer err: 503 when unavailable,
// 404 when its session is gone, else status.
func statusOf(err error, status int) int {
	switch {
	case unavailable(err):
		return http.StatusServiceUnavailable
	case errors.Is(err, errSessionGone):
		return http.StatusNotFound
	}
	return status
}
