//go:build !race

// The race detector's instrumentation allocates on its own, so the
// allocation ceiling is checked without -race: scripts/test runs it in a
// pass of its own ("allocation ceilings").

package server

import (
	"testing"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"
)

// TestInterceptNoAllocs holds a no-op interceptor to no allocation per
// request, in both eras.
func TestInterceptNoAllocs(t *testing.T) {
	for _, request := range [][]byte{httpenv.BenchRequest, httpenv.BenchModernRequest} {
		none, one := forecastSession(), forecastSession(noopInterceptor)
		base := testing.AllocsPerRun(200, func() { serveOnce(t, none, request) })
		with := testing.AllocsPerRun(200, func() { serveOnce(t, one, request) })
		if with > base {
			t.Errorf("%s: %v allocations per request with a no-op interceptor, %v without", request[:40], with, base)
		}
	}
}
