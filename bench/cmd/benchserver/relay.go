package main

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
)

// relay is the gateway workload's floor (issue 37): a plain net/http
// reverse proxy in front of the upstream at upstreamURL, on every path
// (so /mcp and /mcp-session reach the upstream's). It relays bytes and
// headers and understands nothing of MCP: what it spends per call is what
// net/http costs on both sides of a relay, a server and a client in one
// process. The gateway's CPU per call divided by the relay's is what
// mcpkit adds on top of that.
func relay(upstreamURL string, hc *http.Client) (http.Handler, error) {
	u, err := url.Parse(upstreamURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("relay upstream %q: want http://host:port", upstreamURL)
	}
	base := &url.URL{Scheme: u.Scheme, Host: u.Host}
	return &httputil.ReverseProxy{
		Transport:     hc.Transport,
		FlushInterval: -1,
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(base)
			r.Out.Host = r.In.Host
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "relay: "+err.Error(), http.StatusBadGateway)
		},
	}, nil
}
