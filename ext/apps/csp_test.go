package apps_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/apps"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// unsafeSources are CSP sources a view must not declare: keywords,
// wildcards, other schemes, and text that would inject a directive.
var unsafeSources = []string{
	"'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'", "'wasm-unsafe-eval'", "'self'", "'none'",
	"'nonce-abc'", "'sha256-abc='", "*", "https://*", "https://*.com", "*.example.com",
	"javascript:", "javascript:alert(1)", "data:", "blob:", "filesystem:", "file:///etc/passwd", "https:",
	"example.com", "localhost:3000", "ftp://example.com",
	"https://example.com 'unsafe-inline'", "https://example.com;script-src *", "https://a.com,https://b.com",
	"https://example.com\tx", "https://example.com\n", "https://exa\x00mple.com", "",
	"https://example.com/path", "https://example.com?q", "https://example.com#f", "https://user@example.com",
	"https://exa*mple.com", "https://a.*.example.com", "https://-bad.example.com", "https://example..com",
	"https://example.com:0", "https://example.com:65536", "https://example.com:", "https://example.com:x",
	"https://[::1", "https://[::1]x", "https://[zz::1]", "https://bücher.example",
	"https://" + strings.Repeat("a", 300) + ".com",
}

// TestAddResourceRefusesUnsafeCSP: each unsafe source, in each of the
// four lists, fails AddResource with an error naming the view, the field
// and the value, and registers nothing.
func TestAddResourceRefusesUnsafeCSP(t *testing.T) {
	fields := []struct {
		name string
		set  func(*apps.CSP, []string)
	}{
		{"ConnectDomains", func(c *apps.CSP, v []string) { c.ConnectDomains = v }},
		{"ResourceDomains", func(c *apps.CSP, v []string) { c.ResourceDomains = v }},
		{"FrameDomains", func(c *apps.CSP, v []string) { c.FrameDomains = v }},
		{"BaseURIDomains", func(c *apps.CSP, v []string) { c.BaseURIDomains = v }},
	}
	for _, f := range fields {
		for _, src := range unsafeSources {
			s := server.New(nil)
			csp := &apps.CSP{}
			f.set(csp, []string{"https://ok.example.com", src})
			err := apps.AddResource(s, &apps.Resource{URI: "ui://v/bad", Name: "bad", HTML: viewHTML, Meta: apps.ResourceMeta{CSP: csp}})
			if err == nil {
				t.Errorf("%s %q: accepted", f.name, src)
				continue
			}
			msg := err.Error()
			for _, want := range []string{"apps:", `"ui://v/bad"`, "CSP." + f.name + "[1]", fmt.Sprintf("%q", src)} {
				if !strings.Contains(msg, want) {
					t.Errorf("%s %q: error %q does not contain %q", f.name, src, msg, want)
				}
			}
			if n := resourceCount(t, s); n != 0 {
				t.Errorf("%s %q: %d resources registered after the error", f.name, src, n)
			}
		}
	}
}

// TestAddResourceAcceptsOrigins: origins as the extension defines them
// register.
func TestAddResourceAcceptsOrigins(t *testing.T) {
	good := []string{
		"https://api.example.com", "wss://realtime.example.com", "http://localhost:3000", "ws://127.0.0.1:8080",
		"https://*.example.com", "https://cdn.example.com/", "HTTPS://CDN.Example.COM", "https://[::1]:8443",
		"https://xn--bcher-kva.example", "https://example.com:443",
	}
	s := server.New(nil)
	err := apps.AddResource(s, &apps.Resource{URI: "ui://v/good", Name: "good", HTML: viewHTML, Meta: apps.ResourceMeta{CSP: &apps.CSP{
		ConnectDomains: good, ResourceDomains: good, FrameDomains: good, BaseURIDomains: good,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := resourceCount(t, s); n != 1 {
		t.Errorf("%d resources, want 1", n)
	}
}

func resourceCount(t *testing.T, s *server.Server) int {
	t.Helper()
	a, b := memory.NewPair()
	ss := s.Connect(b)
	defer ss.Wait()
	c, err := client.Connect(context.Background(), a, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.ListResources(context.Background(), nil)
	if e, ok := jsonrpc.AsError(err); ok && e.Code == mcp.CodeMethodNotFound {
		return 0 // no resources capability: nothing was registered
	}
	if err != nil {
		t.Fatal(err)
	}
	return len(res.Resources)
}
