package server

// The HTTP test client these tests use is server/internal/httpenv, shared
// with server/streamhttp's tests; the handler comes from server/streamhttp
// through NewTestHTTPHandler (carrier_hook_test.go).

import (
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"
)

// httpEnv is one Streamable HTTP handler serving a server over loopback
// (httpenv.Env).
type httpEnv struct {
	httpenv.Env
	srv *Server
	h   TestHTTPHandler
}

// newHTTPEnv serves srv (a fresh server with logging when nil); see
// httpenv.New for what it checks at the end of the test.
func newHTTPEnv(t testing.TB, srv *Server, opts *HTTPOptions) *httpEnv {
	t.Helper()
	if srv == nil {
		srv = New(&Options{Logging: true})
	}
	e := &httpEnv{srv: srv}
	e.Env = *httpenv.New(t, func() httpenv.Handler {
		e.h = NewHTTPHandler(srv, opts)
		return e.h
	}, func() int { return len(srv.Sessions()) })
	return e
}

// sub returns a view of e whose failures belong to t (a subtest).
func (e *httpEnv) sub(t testing.TB) *httpEnv {
	c := *e
	c.T = t
	return &c
}

// waitFor polls cond until it holds. It is for state that changes on the
// server's own clock (the idle sweep); the deadline is a hang guard.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(httpenv.HangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
