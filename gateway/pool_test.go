package gateway

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
)

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
			s := server.New(&server.Options{Info: mcp.Implementation{Name: "up", Version: "1"}})
			started := make(chan struct{}, 4)
			release := make(chan struct{}, 4)
			must(t, server.AddTool(s, &mcp.Tool{Name: "hold"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (echoOut, error) {
				started <- struct{}{}
				select {
				case <-release:
				case <-ctx.Done():
					return echoOut{}, ctx.Err()
				}
				return echoOut{Text: "held"}, nil
			}))
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
