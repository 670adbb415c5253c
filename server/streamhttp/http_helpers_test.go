package streamhttp

// The HTTP test client these tests use is server/internal/httpenv, shared
// with the server package's tests; this file adds the handler's own state.

import (
	"testing"

	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/internal/httpenv"
)

// httpEnv is one Handler served over loopback (httpenv.Env), with the
// server and the handler at hand for white-box checks.
type httpEnv struct {
	httpenv.Env
	srv *server.Server
	h   *Handler
}

// newHTTPEnv serves srv (a fresh server with logging when nil); see
// httpenv.New for what it checks at the end of the test.
func newHTTPEnv(t testing.TB, srv *server.Server, opts *Options) *httpEnv {
	t.Helper()
	if srv == nil {
		srv = server.New(&server.Options{Logging: true})
	}
	e := &httpEnv{srv: srv}
	e.Env = *httpenv.New(t, func() httpenv.Handler {
		e.h = NewHandler(srv, opts)
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

// session returns the handler's state of session sid.
func (e *httpEnv) session(sid string) *httpSession {
	e.T.Helper()
	e.h.mu.Lock()
	defer e.h.mu.Unlock()
	hs := e.h.sessions[sid]
	if hs == nil {
		e.T.Fatalf("no session %s", sid)
	}
	return hs
}

// streams reports how many POST streams a session still tracks, by
// request id and by stream id.
func (hs *httpSession) streams() (byReq, byID int) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	byID = hs.byID.len()
	if hs.get != nil {
		byID-- // the standalone stream lives as long as the session
	}
	return hs.byReq.len(), byID
}
