package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
)

func TestCORSOriginFlag(t *testing.T) {
	for _, o := range []string{"https://app.example.com", "http://localhost:3000", "http://127.0.0.1:8081/", "*"} {
		if c, err := corsOptions([]string{o}); err != nil || c == nil {
			t.Errorf("--cors-origin %s: %v", o, err)
		}
	}
	for _, o := range []string{"app.example.com", "ftp://app.example.com", "https://app.example.com/path", "https://", "null", "https://u@app.example.com"} {
		if _, err := corsOptions([]string{o}); err == nil {
			t.Errorf("--cors-origin %s accepted", o)
		}
	}
	if c, err := corsOptions(nil); c != nil || err != nil {
		t.Errorf("no --cors-origin: %v, %v; want CORS off", c, err)
	}
	var out bytes.Buffer
	if err := runServe(context.Background(), []string{"--stdio", "--cors-origin", "https://a.example.com"}, &out); exitCode(err) != exitUsage {
		t.Errorf("--cors-origin with --stdio: %v, want a usage error", err)
	}
	if err := runServe(context.Background(), []string{"--http", "127.0.0.1:0", "--cors-origin", "a.example.com"}, &out); exitCode(err) != exitUsage {
		t.Errorf("--cors-origin without a scheme: %v, want a usage error", err)
	}
}

// corsPreflight sends the preflight of a browser page at origin before
// a POST with the MCP headers, and returns the answer.
func corsPreflight(t *testing.T, endpoint, origin string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodOptions, endpoint, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,mcp-protocol-version,mcp-session-id")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestServeCORS: mcpkit serve --http --cors-origin answers the
// preflights of that origin, also in front of --auth (whose endpoint
// would refuse a preflight for want of a token), and refuses others.
func TestServeCORS(t *testing.T) {
	const app = "http://localhost:5173"
	for _, extra := range [][]string{nil, {"--auth"}} {
		t.Run(strings.Join(append([]string{"serve"}, extra...), " "), func(t *testing.T) {
			endpoint := startHTTP(t, append([]string{"--cors-origin", app}, extra...)...)
			resp := corsPreflight(t, endpoint, app)
			if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != app {
				t.Fatalf("preflight from %s: status %d, Access-Control-Allow-Origin %q", app, resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
			}
			resp = corsPreflight(t, endpoint, "https://evil.example.com")
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Fatalf("preflight from another origin: status %d, Access-Control-Allow-Origin %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
			}
		})
	}
}
