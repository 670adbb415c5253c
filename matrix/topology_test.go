package matrix

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// The era axis: the revision a client speaks, and for 2025-11-25 whether
// it has a session.
type era struct {
	Name      string
	Version   string
	Stateless bool // 2025-11-25 served without sessions (streamhttp.Options.Stateless)
}

var (
	eraSession   = era{Name: "2025-11-25", Version: mcp.LatestLegacy}
	eraNoSession = era{Name: "2025-11-25-nosession", Version: mcp.LatestLegacy, Stateless: true}
	eraModern    = era{Name: "2026-07-28", Version: mcp.Version20260728}
	eras         = []era{eraSession, eraNoSession, eraModern}
)

func (e era) modern() bool { return e.Version == mcp.Version20260728 }

// The transport axis.
type carrier string

const (
	stdioT   carrier = "stdio"     // newline-delimited JSON over in-process pipes
	httpJSON carrier = "http-json" // Streamable HTTP, a JSON body whenever the answer is alone
	httpSSE  carrier = "http-sse"  // Streamable HTTP, every answer an event stream
	sse2024  carrier = "sse-2024"  // the 2024-11-05 HTTP+SSE transport only
)

var carriers = []carrier{stdioT, httpJSON, httpSSE, sse2024}

// endpoint serves one server on every carrier at once: stdio connections
// are made on demand, each HTTP flavour has its own loopback listener.
type endpoint struct {
	srv *server.Server
	// urls by carrier and statelessness.
	urls map[string]string

	mu       sync.Mutex
	sessions []*server.Session
}

func urlKey(c carrier, stateless bool) string { return fmt.Sprintf("%s/%v", c, stateless) }

// serve starts srv on every carrier; everything stops when the test ends.
// front, when set, wraps each HTTP handler (the gateway's ClientAddressKeys).
func serve(t testing.TB, srv *server.Server, front func(http.Handler) http.Handler) *endpoint {
	e := &endpoint{srv: srv, urls: map[string]string{}}
	start := func(key string, h *streamhttp.Handler, wrap func(http.Handler) http.Handler) {
		var hh http.Handler = h
		if wrap != nil {
			hh = wrap(hh)
		}
		if front != nil {
			hh = front(hh)
		}
		ts := httptest.NewServer(hh)
		t.Cleanup(func() {
			h.Close()
			ts.Close()
		})
		e.urls[key] = ts.URL + "/mcp"
	}
	for _, stateless := range []bool{false, true} {
		// SSEAfter < 0: a JSON answer stays JSON however long the
		// handler is silent, so that the carrier is what the cell says.
		start(urlKey(httpJSON, stateless), streamhttp.NewHandler(srv, &streamhttp.Options{Stateless: stateless, SSEAfter: -1}), nil)
		start(urlKey(httpSSE, stateless), streamhttp.NewHandler(srv, &streamhttp.Options{Stateless: stateless, AlwaysSSE: true}), nil)
	}
	start(urlKey(sse2024, false), streamhttp.NewHandler(srv, &streamhttp.Options{LegacySSE: true}), sseOnly)
	t.Cleanup(func() {
		e.mu.Lock()
		ss := e.sessions
		e.sessions = nil
		e.mu.Unlock()
		for _, s := range ss {
			s.Close()
		}
	})
	return e
}

// sseOnly refuses Streamable HTTP POSTs as a server of the 2024-11-05
// transport does, so that clients fall back to that transport.
func sseOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && !r.URL.Query().Has("sessionId") {
			w.Header().Set("Allow", "GET")
			http.Error(w, "only the HTTP+SSE transport here", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// dial opens a client-side connection to the endpoint over c, for a client
// of era e.
func (ep *endpoint) dial(c carrier, e era) (transport.Conn, error) {
	if c == stdioT {
		return ep.pipe(), nil
	}
	u, ok := ep.urls[urlKey(c, e.Stateless)]
	if !ok {
		return nil, fmt.Errorf("no %s endpoint for era %s", c, e.Name)
	}
	return streamable.New(u, nil), nil
}

// pipe connects a stdio conn to the server over in-process pipes.
func (ep *endpoint) pipe() transport.Conn {
	cr, cw := ep.pipes()
	return &pipeConn{Conn: stdio.NewConn(cr, cw, nil), closers: []io.Closer{cr, cw}}
}

// pipes serves a stdio session on in-process pipes and returns the
// client's ends: what the server writes, and where to write to it.
func (ep *endpoint) pipes() (*io.PipeReader, *io.PipeWriter) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ss := ep.srv.Connect(stdio.NewConn(sr, sw, nil))
	ep.mu.Lock()
	ep.sessions = append(ep.sessions, ss)
	ep.mu.Unlock()
	return cr, cw
}

// pipeConn closes its pipes with the connection, so that the server's end
// sees the end of its input.
type pipeConn struct {
	*stdio.Conn
	closers []io.Closer
}

func (p *pipeConn) Close() error {
	err := p.Conn.Close()
	for _, c := range p.closers {
		c.Close()
	}
	return err
}

// A topology is how the fixture is reached: directly, or through the
// gateway whose upstream is the fixture in one era and carrier.
type topology struct {
	Name    string
	Cluster bool // two instances sharing Redis (cluster_test.go)
	Gateway bool
	UpEra   era
	UpCarr  carrier
}

func (tp topology) String() string { return tp.Name }

var direct = topology{Name: "direct"}

func gatewayTopology(e era, c carrier) topology {
	return topology{Name: fmt.Sprintf("gateway(%s,%s)", e.Name, c), Gateway: true, UpEra: e, UpCarr: c}
}

// built is a topology running: the endpoint clients dial and the fixture
// whose probes the cells read.
type built struct {
	ep      *endpoint
	fx      *fixture
	cluster *cluster // the cluster topology's
}

// build starts a topology for the test's lifetime.
func build(t testing.TB, tp topology, subs []string) (*built, error) {
	if tp.Cluster {
		return buildCluster(t, subs)
	}
	fx, err := newFixture(subs)
	if err != nil {
		return nil, err
	}
	up := serve(t, fx.srv, nil)
	if !tp.Gateway {
		return &built{ep: up, fx: fx}, nil
	}
	u := gateway.Upstream{Name: "up", ProtocolVersion: tp.UpEra.Version}
	if tp.UpCarr == stdioT {
		u.Connect = func(ctx context.Context) (transport.Conn, error) { return up.pipe(), nil }
	} else {
		u.URL = up.urls[urlKey(tp.UpCarr, tp.UpEra.Stateless)]
	}
	g, err := gateway.New(&gateway.Options{
		Upstreams: []gateway.Upstream{u},
		// Each cell is a client of its own, named in its clientInfo: the
		// gateway's per-client caps then count each alone, as they would
		// count the users of a real deployment (anonymous stateless
		// clients would otherwise share one count).
		ClientKey: func(ctx context.Context, req *server.Request) string {
			if k := req.ClientInfo().Name; k != "" {
				return k
			}
			return gateway.DefaultClientKey(ctx, req)
		},
	})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { g.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		return nil, fmt.Errorf("gateway start: %w", err)
	}
	return &built{ep: serve(t, g.Server(), connectionKeys), fx: fx}, nil
}

// connectionKeys keys a request without a session or a clientInfo (a
// 2025-11-25 request without a session) by its TCP connection: each cell's
// client has connections of its own.
func connectionKeys(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(gateway.WithClientKey(r.Context(), r.RemoteAddr)))
	})
}
