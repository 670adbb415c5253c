package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// authCORSDo sends one request from a page at origin (a preflight for
// method when preflight is set) and returns the status and headers.
func authCORSDo(t *testing.T, method, url, origin string, preflight bool, reqHeaders, contentType, body string) (int, http.Header) {
	t.Helper()
	m := method
	if preflight {
		m = http.MethodOptions
	}
	req, err := http.NewRequestWithContext(t.Context(), m, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", origin)
	if preflight {
		req.Header.Set("Access-Control-Request-Method", method)
		if reqHeaders != "" {
			req.Header.Set("Access-Control-Request-Headers", reqHeaders)
		}
	} else if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// TestServeAuthCORS: with --auth --cors-origin, the protected resource
// metadata and the demo authorization server's metadata, registration
// and token endpoints answer the preflight of the listed origin and let
// its page read their answers (errors too); another origin's preflight
// is refused with no Access-Control-Allow-Origin, and its real requests
// are answered unreadable. The authorization page, a navigation, gets no
// CORS.
func TestServeAuthCORS(t *testing.T) {
	const app, other = "http://localhost:5173", "https://evil.example.com"
	endpoint := startHTTP(t, "--auth", "--cors-origin", app)
	base := strings.TrimSuffix(endpoint, "/mcp")
	cases := []struct {
		name, method, path, reqHeaders, contentType, body string
		status                                            int
	}{
		{"resource metadata", "GET", "/.well-known/oauth-protected-resource/mcp", "mcp-protocol-version", "", "", 200},
		{"resource metadata (root)", "GET", "/.well-known/oauth-protected-resource", "mcp-protocol-version", "", "", 200},
		{"AS metadata", "GET", "/.well-known/oauth-authorization-server", "mcp-protocol-version", "", "", 200},
		{"registration", "POST", "/register", "content-type", "application/json",
			`{"client_name":"page","redirect_uris":["http://localhost:5173/cb"]}`, 201},
		{"token", "POST", "/token", "dpop", "application/x-www-form-urlencoded", "grant_type=authorization_code&code=nope", 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := base + c.path
			status, h := authCORSDo(t, c.method, url, app, true, c.reqHeaders, "", "")
			if status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != app ||
				!strings.Contains(h.Get("Access-Control-Allow-Methods"), c.method) || h.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("preflight from %s: %d %v", app, status, h)
			}
			status, h = authCORSDo(t, c.method, url, other, true, c.reqHeaders, "", "")
			if status != http.StatusForbidden || h.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("preflight from %s: %d %v", other, status, h)
			}
			status, h = authCORSDo(t, c.method, url, app, false, "", c.contentType, c.body)
			if status != c.status || h.Get("Access-Control-Allow-Origin") != app {
				t.Errorf("%s from %s: %d %v, want %d readable", c.method, app, status, h, c.status)
			}
			status, h = authCORSDo(t, c.method, url, other, false, "", c.contentType, c.body)
			if status != c.status || h.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("%s from %s: %d %v, want %d unreadable", c.method, other, status, h, c.status)
			}
		})
	}
	status, h := authCORSDo(t, "GET", base+"/authorize", app, true, "", "", "")
	if status == http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("authorize preflight: %d %v, want no CORS", status, h)
	}
}

// TestServeAuthNoCORS: without --cors-origin the authorization server
// answers no CORS, and the resource metadata stays open to every origin.
func TestServeAuthNoCORS(t *testing.T) {
	base := strings.TrimSuffix(startHTTP(t, "--auth"), "/mcp")
	if status, h := authCORSDo(t, "POST", base+"/token", "http://localhost:5173", true, "dpop", "", ""); status == http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("token preflight: %d %v", status, h)
	}
	if status, h := authCORSDo(t, "GET", base+"/.well-known/oauth-protected-resource/mcp", "https://any.example", false, "", "", ""); status != 200 || h.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("resource metadata: %d %v", status, h)
	}
}
