package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// Timeouts of the http.Server of "mcpkit serve --http". The MCP handler
// bounds the reading of each POST body itself (streamhttp.Options
// BodyReadTimeout); ReadTimeout and WriteTimeout stay zero, as they would
// cut event streams that rightly last longer.
const (
	// serveReadHeaderTimeout: a client has this long to send a request's
	// headers (a slow-header client holds a connection, nothing more).
	serveReadHeaderTimeout = 10 * time.Second
	// serveIdleTimeout closes keep-alive connections idle this long.
	serveIdleTimeout = 2 * time.Minute
)

// newHTTPServer is the http.Server of "mcpkit serve --http".
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: serveReadHeaderTimeout,
		IdleTimeout:       serveIdleTimeout,
	}
}

// listFlag is a repeatable flag whose values may also be comma-separated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for part := range strings.SplitSeq(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*l = append(*l, part)
		}
	}
	return nil
}

// accessLines says which Host and Origin values the endpoint accepts,
// for the startup message: on a listener beyond loopback, or when lists
// were given. Nothing for a loopback listener with the defaults (loopback
// names and origins only).
func accessLines(addr net.Addr, hosts, origins []string) []string {
	loopback := false
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsLoopback() {
		loopback = true
	}
	if loopback && len(hosts) == 0 && len(origins) == 0 {
		return nil
	}
	var lines []string
	switch {
	case len(hosts) > 0:
		lines = append(lines, "Host accepted: "+strings.Join(hosts, ", "))
	case loopback:
		lines = append(lines, "Host accepted: loopback names (localhost, 127.0.0.1, [::1])")
	default:
		lines = append(lines, "Host accepted: any, on addresses beyond loopback (--allow-host NAME restricts it to this server's names)")
	}
	switch {
	case len(origins) > 0:
		lines = append(lines, "Origin accepted: "+strings.Join(origins, ", ")+"; requests without Origin (not from a browser) too")
	case len(hosts) > 0:
		lines = append(lines, "Origin accepted: an accepted Host's own origin; requests without Origin (not from a browser) too (--allow-origin ORIGIN admits a web app)")
	default:
		lines = append(lines, "Origin accepted: none beyond loopback: browser requests are refused there, requests without Origin (not from a browser) are served (--allow-origin ORIGIN admits a web app)")
	}
	for i, l := range lines {
		lines[i] = fmt.Sprintf("mcpkit: %s", l)
	}
	return lines
}

// demoAuthAddr refuses a --auth server on an address beyond loopback: its
// demo authorization server and protected resource are plain http, which
// OAuth clients (mcpkit's among them) accept on loopback hosts only
// (OAuth 2.1 §1.5; MCP authorization, communication security). An
// unspecified address (every interface) is served under its loopback name.
func demoAuthAddr(addr net.Addr) error {
	ta, ok := addr.(*net.TCPAddr)
	if !ok || ta.IP.IsLoopback() || ta.IP.IsUnspecified() {
		return nil
	}
	return fmt.Errorf("--auth serves its demo authorization server over plain http, which OAuth clients accept on loopback only: listen on 127.0.0.1 or localhost, not %s", ta.IP)
}
