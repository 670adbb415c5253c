package servers

import (
	"context"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/store"
)

// ClusterStores are the deployment seams of one instance of the
// multi-instance workloads (benchserver -cluster). Zero: every store in
// memory, one instance alone.
type ClusterStores struct {
	Sessions store.SessionStore
	Events   store.EventStore
	Broker   store.Broker
	Tasks    store.TaskStore
}

// Cluster returns one instance of the multi-instance server: a sessionful
// legacy handler on the given stores, with the echo tool (W3, on
// /mcp-session) and "quick", a tool that may run as a task and echoes its
// text (WT, on /mcp-tasks). Several instances given the same shared
// stores serve the same sessions and tasks behind a round-robin proxy.
// The returned function closes the handler and shuts the server down.
func Cluster(st ClusterStores) (http.Handler, func(), error) {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "bench-cluster", Version: "1.0.0"}, TaskStore: st.Tasks})
	echo := func(ctx context.Context, req *server.CallToolRequest, in EchoIn) (EchoOut, error) {
		return EchoOut(in), nil
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text"}, echo); err != nil {
		return nil, nil, err
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "quick", Description: "Echoes its text, as a task if asked", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}}, echo); err != nil {
		return nil, nil, err
	}
	h := streamhttp.NewHandler(s, &streamhttp.Options{SessionStore: st.Sessions, EventStore: st.Events, Broker: st.Broker})
	mux := http.NewServeMux()
	mux.Handle(PathSession, h)
	mux.Handle("/mcp-tasks", h)
	return mux, func() {
		h.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	}, nil
}

// Gateway returns an mcpkit gateway in front of one mcpkit upstream
// reached over Streamable HTTP at upstreamURL, speaking version to it, and
// the gateway's downstream handlers: session-less on /mcp (both eras) and
// sessionful on /mcp-session, like MCPKit's. The upstream's tools keep
// their names (no prefix). Each downstream connection counts as its own
// client for the gateway's per-client limits (the load generator's
// connections are its callers; they all share one IP address, which
// gateway.ClientAddressKeys would count as one client). It fails unless the upstream is ready within
// 30 seconds. The returned function closes everything.
func Gateway(upstreamURL, version string, hc *http.Client) (http.Handler, func(), error) {
	g, err := gateway.New(&gateway.Options{Upstreams: []gateway.Upstream{{
		Name: "echo", URL: upstreamURL, HTTPClient: hc, ProtocolVersion: version, HealthInterval: -1,
	}}})
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		g.Close()
		return nil, nil, err
	}
	stateless := streamhttp.NewHandler(g.Server(), &streamhttp.Options{Stateless: true})
	session := streamhttp.NewHandler(g.Server(), nil)
	mux := http.NewServeMux()
	mux.Handle(PathStateless, stateless)
	mux.Handle(PathSession, session)
	perConn := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(gateway.WithClientKey(r.Context(), r.RemoteAddr)))
	})
	return perConn, func() {
		stateless.Close()
		session.Close()
		g.Close()
	}, nil
}

// RoundRobin returns the multi-instance workloads' load balancer (cmd/rrproxy):
// a reverse proxy that sends each request to the next of backends in
// turn, with no stickiness, over tr. Answers are flushed as they come.
func RoundRobin(backends []*url.URL, tr http.RoundTripper) *httputil.ReverseProxy {
	var next atomic.Uint64
	return &httputil.ReverseProxy{
		Transport:     tr,
		FlushInterval: -1,
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(backends[(next.Add(1)-1)%uint64(len(backends))])
			r.Out.Host = r.In.Host
		},
	}
}
