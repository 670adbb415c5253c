package gateway

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
)

// holdServer is an upstream server whose tool "hold" says on started
// that it runs, then waits for a value on release (or its end).
func holdServer(t *testing.T) (s *server.Server, started, release chan struct{}) {
	s = server.New(&server.Options{Info: mcp.Implementation{Name: "up", Version: "1"}})
	started, release = make(chan struct{}, 4), make(chan struct{}, 4)
	must(t, server.AddTool(s, &mcp.Tool{Name: "hold"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (echoOut, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return echoOut{}, ctx.Err()
		}
		return echoOut{Text: "held"}, nil
	}))
	return s, started, release
}

// TestCallTakesConnGivenBackBeforeDial: a call that finds every call
// connection leased, with room for one more, gets whichever comes first:
// a connection another call gives back, or the one opened for it. The
// gateway used to open a connection for the call and make the call wait
// for its handshake (server/discover, or initialize), which on a busy
// upstream takes longer than a call: the latency of every call that grew
// the pool (bench/README.md, "The gateway's p99"). Here the new
// connection's handshake is held until the end, and the call must finish
// on the connection the first call gives back; the connection opened
// meanwhile then joins the pool.
func TestCallTakesConnGivenBackBeforeDial(t *testing.T) {
	for _, up := range mcptest.Eras() {
		t.Run("upstream="+up.String(), func(t *testing.T) {
			s, started, release := holdServer(t)
			must(t, server.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *server.CallToolRequest, in echoIn) (echoOut, error) {
				return echoOut(in), nil
			}))
			var armed atomic.Bool
			var handshakes atomic.Int32
			dialing := make(chan struct{}, 4)
			gate := make(chan struct{})
			h := streamhttp.NewHandler(s, nil)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					body, err := io.ReadAll(r.Body)
					if err != nil {
						http.Error(w, err.Error(), http.StatusBadRequest)
						return
					}
					r.Body = io.NopCloser(bytes.NewReader(body))
					if bytes.Contains(body, []byte(`"method":"server/discover"`)) || bytes.Contains(body, []byte(`"method":"initialize"`)) {
						handshakes.Add(1)
						if armed.Load() {
							dialing <- struct{}{}
							select {
							case <-gate:
							case <-r.Context().Done():
								return
							}
						}
					}
				}
				h.ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)
			g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "u", URL: srv.URL, ProtocolVersion: version(up), HealthInterval: -1, MaxConnections: 4, MaxInFlight: 4}}})
			p := mcptest.NewPair(t, g.Server(), &mcptest.Options{Era: client.EraModern})
			call := func(name, args string) <-chan error {
				done := make(chan error, 1)
				go func() {
					var a jsontext.Value
					if args != "" {
						a = jsontext.Value(args)
					}
					_, err := p.Client.CallTool(p.Context(), &mcp.CallToolParams{Name: name, Arguments: a})
					done <- err
				}()
				return done
			}

			first := call("hold", "")
			waitFor(t, started, "the first call running upstream")
			control := handshakes.Load() // the control connection's and the first call connection's
			armed.Store(true)
			second := call("echo", `{"text":"hi"}`)
			waitFor(t, dialing, "a second call connection being opened")
			release <- struct{}{}
			must(t, waitFor(t, first, "the first call's end"))
			must(t, waitFor(t, second, "the second call, on the connection the first gave back"))

			// The connection opened meanwhile joins the pool (or, had it
			// not finished yet, another is opened): two calls at once run.
			armed.Store(false)
			close(gate)
			a, b := call("hold", ""), call("hold", "")
			waitFor(t, started, "a call running upstream")
			waitFor(t, started, "another call running upstream at the same time")
			release <- struct{}{}
			release <- struct{}{}
			must(t, waitFor(t, a, "a held call"))
			must(t, waitFor(t, b, "another held call"))
			if n := handshakes.Load() - control; n < 1 || n > 2 {
				t.Fatalf("%d handshakes after the first call connection's, want 1 or 2", n)
			}
		})
	}
}

// TestDialingCallEvictsNothing: with caller identities the pool is
// partitioned, and a call finding MaxConnections open and none idle of
// its caller's closes another caller's idle connection to make room for
// its own. A call whose own connection was being opened used to do that
// again on every wake while its dial ran (its dial counts in open): here
// Alice's dial is held, Bob's call ends, and Bob's connection, given back
// and idle, must survive the wake it gives Alice.
func TestDialingCallEvictsNothing(t *testing.T) {
	s, started, release := holdServer(t)
	var armed atomic.Bool
	dialing := make(chan struct{}, 1)
	gate := make(chan struct{})
	h := streamhttp.NewHandler(s, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if r.Method == http.MethodPost && tok == "tok-alice" && armed.Load() && r.Header.Get("Mcp-Method") == mcp.MethodServerDiscover {
			dialing <- struct{}{}
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		r.Header.Del("Authorization")
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	var opened sync.Once
	openGate := func() { opened.Do(func() { close(gate) }) }
	t.Cleanup(openGate) // before srv.Close, should the test fail with the dial held
	up := Upstream{Name: "u", URL: srv.URL, ProtocolVersion: mcp.Version20260728, HealthInterval: -1, MaxConnections: 2,
		Header: http.Header{"Authorization": {"Bearer gw-control"}}, Identity: Identity{Mode: IdentityPassThrough}}
	g := newGateway(t, &Options{Upstreams: []Upstream{up}})
	waits := make(chan struct{}, 8)
	g.ups[0].onWait = func() { waits <- struct{}{} }
	url := serveIdentityGateway(t, g)
	alice, bob := dialAs(t, url, "tok-alice", client.EraModern), dialAs(t, url, "tok-bob", client.EraModern)
	call := func(c *client.Client) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := c.CallTool(t.Context(), &mcp.CallToolParams{Name: "hold"})
			done <- err
		}()
		return done
	}

	bobDone := call(bob)
	waitFor(t, started, "Bob's call running upstream")
	waitFor(t, waits, "Bob's wait for his own connection") // so that the next are Alice's
	armed.Store(true)
	aliceDone := call(alice)
	waitFor(t, dialing, "Alice's connection being opened")
	waitFor(t, waits, "Alice waiting")
	release <- struct{}{}
	must(t, waitFor(t, bobDone, "Bob's call"))
	waitFor(t, waits, "Alice waiting again, after the wake Bob's connection gave")
	if h := g.Health()[0]; h.Connections != 2 {
		t.Fatalf("%d connections open while Alice's opens; want 2 (Bob's idle one kept)", h.Connections)
	}
	openGate()
	waitFor(t, started, "Alice's call running upstream")
	release <- struct{}{}
	must(t, waitFor(t, aliceDone, "Alice's call"))
}
