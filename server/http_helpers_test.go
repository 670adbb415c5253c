package server

// The HTTP test client these tests use is server/internal/httpenv, shared
// with server/streamhttp's tests; the handler comes from server/streamhttp
// through NewTestHTTPHandler (carrier_hook_test.go).

import (
	"fmt"
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

const elicitCaps = `{"elicitation":{"form":{}}}`

// subscribe subscribes the session to uri.
func (e *httpEnv) subscribe(sid, uri string) {
	e.T.Helper()
	if m := e.RPC(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/subscribe","params":{"uri":%q}}`, e.ID(), uri)); m.Error != nil {
		e.T.Fatalf("resources/subscribe: %s", m.Raw)
	}
}

// expectNext reads the next message of a standalone stream and checks it
// is the notification method: a marker sent after the traffic under test
// proves that nothing else reached the stream before it.
func expectNext(t testing.TB, st *httpenv.SSEStream, method string) *httpenv.RPCMsg {
	t.Helper()
	_, m := st.Message()
	if m.Method != method || len(m.ID) != 0 {
		t.Fatalf("the GET stream carried %s; want %s next", m.Raw, method)
	}
	return m
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
