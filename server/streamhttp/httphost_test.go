package streamhttp

// Tests of the Host and Origin checks (DNS rebinding and cross-origin
// browser requests) on a loopback and on a non-loopback listener; the
// listener's address is what net/http puts in the request's context.

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/mcp"
)

type hostCase struct {
	name   string
	host   string
	origin []string // values of Origin (two: two header lines)
	fetch  string   // Sec-Fetch-Site
	ok     bool
}

// checkHostCases serves each case through a handler with opts, as if
// accepted on a listener at local, and checks that it is refused with
// 403 (and a JSON-RPC error) or let through.
func checkHostCases(t *testing.T, opts *Options, local string, cases []hostCase) {
	t.Helper()
	h := NewHandler(echoServer(), opts)
	defer h.Close()
	addr, err := net.ResolveTCPAddr("tcp", local)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A POST without a session: 400 once past the checks.
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, addr))
			r.Host = tc.host
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", httpenv.AcceptBoth)
			for _, o := range tc.origin {
				r.Header.Add("Origin", o)
			}
			if tc.fetch != "" {
				r.Header.Set("Sec-Fetch-Site", tc.fetch)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			refused := w.Code == http.StatusForbidden
			if refused == tc.ok {
				t.Fatalf("Host %q Origin %q Sec-Fetch-Site %q on %s: status %d, want ok=%v: %s", tc.host, tc.origin, tc.fetch, local, w.Code, tc.ok, w.Body.Bytes())
			}
			if refused {
				if m := httpenv.ParseMsg(t, w.Body.Bytes()); m.Error == nil || m.Error.Code != mcp.CodeInvalidRequest {
					t.Errorf("403 body %s, want a -32600 error", w.Body.Bytes())
				}
			}
		})
	}
}

func origins(o ...string) []string { return o }

func TestHTTPHostOriginLoopback(t *testing.T) {
	checkHostCases(t, nil, "127.0.0.1:8080", []hostCase{
		{"loopback host, no origin", "localhost:8080", nil, "", true},
		{"loopback ip host", "127.0.0.1:8080", nil, "", true},
		{"ipv6 loopback host", "[::1]:8080", nil, "", true},
		{"loopback origin", "localhost:8080", origins("http://localhost:8080"), "", true},
		{"loopback origin, other port", "127.0.0.1:8080", origins("http://localhost:3000"), "", true},
		{"same-origin fetch metadata", "localhost:8080", nil, "same-origin", true},
		{"user-initiated fetch metadata", "localhost:8080", nil, "none", true},

		{"rebinding: hostile host and origin", "evil.example.com:8080", origins("http://evil.example.com:8080"), "", false},
		{"hostile host, no origin", "evil.example.com", nil, "", false},
		{"hostile origin", "localhost:8080", origins("http://evil.example.com"), "", false},
		{"loopback-looking origin", "localhost:8080", origins("http://localhost.evil.example.com"), "", false},
		{"opaque origin", "localhost:8080", origins("null"), "", false},
		{"origin without scheme", "localhost:8080", origins("localhost:8080"), "", false},
		{"two origins, the second hostile", "localhost:8080", origins("http://localhost:8080", "http://evil.example.com"), "", false},
		{"cross-site fetch metadata without origin", "localhost:8080", nil, "cross-site", false},
		{"same-site fetch metadata without origin", "localhost:8080", nil, "same-site", false},
	})
}

// TestHTTPHostOriginPublic: on a non-loopback listener without lists,
// any Host may reach the server (its names are not known), so a Host
// proves nothing and an Origin that matches it neither: a page that
// rebinds its own name to the server's address sends exactly that.
// Browser requests are refused until AllowedOrigins or AllowedHosts say
// which are genuine; clients that send no Origin are served.
func TestHTTPHostOriginPublic(t *testing.T) {
	const lan = "192.0.2.10:8080"
	checkHostCases(t, nil, lan, []hostCase{
		{"any host, no origin", "mcp.example.com", nil, "", true},
		{"address host, no origin", "192.0.2.10:8080", nil, "", true},
		{"same-origin fetch metadata without origin", "mcp.example.com", nil, "same-origin", true},

		{"rebinding: origin matches host", "evil.example.com:8080", origins("http://evil.example.com:8080"), "", false},
		{"origin matches the address", "192.0.2.10:8080", origins("http://192.0.2.10:8080"), "", false},
		{"cross origin", "mcp.example.com", origins("https://app.example.com"), "", false},
		{"loopback origin", "mcp.example.com", origins("http://localhost"), "", false},
		{"cross-site fetch metadata without origin", "mcp.example.com", nil, "cross-site", false},
	})
	t.Run("AllowedHosts", func(t *testing.T) {
		checkHostCases(t, &Options{AllowedHosts: []string{"mcp.example.com"}}, lan, []hostCase{
			{"allowed host", "mcp.example.com", nil, "", true},
			{"allowed host with port", "mcp.example.com:8080", nil, "", true},
			{"allowed host, same origin", "mcp.example.com", origins("https://mcp.example.com"), "", true},
			{"allowed host, same origin with port", "mcp.example.com:8080", origins("http://mcp.example.com:8080"), "", true},

			{"other host", "evil.example.com", nil, "", false},
			{"rebinding", "evil.example.com:8080", origins("http://evil.example.com:8080"), "", false},
			{"allowed host, cross origin", "mcp.example.com", origins("https://evil.example.com"), "", false},
		})
	})
	t.Run("AllowedOrigins", func(t *testing.T) {
		checkHostCases(t, &Options{AllowedOrigins: []string{"https://app.example.com"}}, lan, []hostCase{
			{"allowed origin", "mcp.example.com", origins("https://app.example.com"), "", true},
			{"allowed origin, any case", "mcp.example.com", origins("HTTPS://App.Example.com"), "", true},
			{"allowed origin, cross-site metadata", "mcp.example.com", origins("https://app.example.com"), "cross-site", true},
			{"no origin", "mcp.example.com", nil, "", true},

			{"rebinding", "evil.example.com:8080", origins("http://evil.example.com:8080"), "", false},
			{"other origin", "mcp.example.com", origins("https://evil.example.com"), "", false},
			{"allowed origin with a suffix", "mcp.example.com", origins("https://app.example.com.evil.example"), "", false},
		})
	})
	t.Run("AllowedOrigins as CORS reads them", func(t *testing.T) {
		// Listed with a trailing slash (as a URL is often copied), and
		// with "*" and "null", which name no one here: the same rules as
		// CORSOptions.AllowedOrigins, which used to differ (the slash
		// made the entry match nothing).
		checkHostCases(t, &Options{AllowedOrigins: []string{"https://App.example.com/", "*", "null"}}, lan, []hostCase{
			{"listed with a slash", "mcp.example.com", origins("https://app.example.com"), "", true},
			{"other origin", "mcp.example.com", origins("https://evil.example.com"), "", false},
			{"null origin", "mcp.example.com", origins("null"), "", false},
		})
	})
	t.Run("DisableHostCheck", func(t *testing.T) {
		checkHostCases(t, &Options{DisableHostCheck: true}, lan, []hostCase{
			{"anything", "evil.example.com", origins("http://evil.example.com", "null"), "cross-site", true},
		})
	})
}
