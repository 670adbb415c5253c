package streamhttp

import (
	"errors"
	"net/http"

	"github.com/mcpkit/mcpkit/jsonrpc"
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

// statusOf is the status of the error answer err: 503 when unavailable,
// else status.
func statusOf(err error, status int) int {
	if unavailable(err) {
		return http.StatusServiceUnavailable
	}
	return status
}
