package auth

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-json-experiment/json"
)

// TestProtectedResourceMetadata: served at the path-based and the root
// well-known URIs (RFC 9728 §3.1, MCP authorization), offline_access dropped,
// bearer_methods_supported defaulted, GET/HEAD only, CORS open.
func TestProtectedResourceMetadata(t *testing.T) {
	meta := ProtectedResourceMetadata{
		Resource:             "https://mcp.example.com/tenant/mcp",
		AuthorizationServers: []string{"https://as.example.com"},
		ScopesSupported:      []string{"mcp:read", "offline_access", "mcp:write"},
		ResourceName:         "Example",
	}
	mux := http.NewServeMux()
	if err := MountProtectedResource(mux, meta); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, p := range []string{"/.well-known/oauth-protected-resource/tenant/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := srv.Client().Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("%s: %d %v", p, resp.StatusCode, resp.Header)
		}
		var got map[string]any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{
			"resource":                 "https://mcp.example.com/tenant/mcp",
			"authorization_servers":    []any{"https://as.example.com"},
			"scopes_supported":         []any{"mcp:read", "mcp:write"},
			"bearer_methods_supported": []any{"header"},
			"resource_name":            "Example",
		}
		if len(got) != len(want) {
			t.Errorf("%s: %s", p, body)
		}
		for k, v := range want {
			gb, _ := json.Marshal(got[k])
			wb, _ := json.Marshal(v)
			if string(gb) != string(wb) {
				t.Errorf("%s: %s = %s, want %s", p, k, gb, wb)
			}
		}
	}
	for _, m := range []string{http.MethodPost, http.MethodPut} {
		req, _ := http.NewRequest(m, srv.URL+"/.well-known/oauth-protected-resource", nil)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d", m, resp.StatusCode)
		}
	}
	w := httptest.NewRecorder()
	prh, err := ProtectedResourceHandler(meta)
	if err != nil {
		t.Fatal(err)
	}
	prh.ServeHTTP(w, httptest.NewRequest(http.MethodHead, "/", nil))
	if w.Code != 200 || w.Body.Len() != 0 {
		t.Errorf("HEAD: %d %q", w.Code, w.Body)
	}
	// A resource without a path is mounted once, at the root URI.
	mux2 := http.NewServeMux()
	if err := MountProtectedResource(mux2, ProtectedResourceMetadata{Resource: "https://mcp.example.com/", AuthorizationServers: []string{"https://as"}}); err != nil {
		t.Fatal(err)
	}
	w = httptest.NewRecorder()
	mux2.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource", nil))
	if w.Code != 200 {
		t.Errorf("root-only resource: %d", w.Code)
	}
}

// TestProtectedResourceValidate: resource and authorization_servers are
// required (MCP authorization: at least one authorization server).
func TestProtectedResourceValidate(t *testing.T) {
	for _, m := range []ProtectedResourceMetadata{
		{AuthorizationServers: []string{"https://as"}},
		{Resource: "https://mcp.example.com/mcp"},
		{Resource: "mcp", AuthorizationServers: []string{"https://as"}},
		{Resource: "https://mcp.example.com/mcp#f", AuthorizationServers: []string{"https://as"}},
		{Resource: "https://mcp.example.com/mcp", AuthorizationServers: []string{"as"}},
		{Resource: "https://mcp.example.com/mcp", AuthorizationServers: []string{"https://as?x=1"}},
	} {
		if err := m.Validate(); err == nil {
			t.Errorf("%+v validated", m)
		}
		if err := MountProtectedResource(http.NewServeMux(), m); err == nil {
			t.Errorf("%+v mounted", m)
		}
	}
	if h, err := ProtectedResourceHandler(ProtectedResourceMetadata{}); err == nil || h != nil {
		t.Error("ProtectedResourceHandler accepted invalid metadata")
	}
}

// TestResourceMetadataURL: the well-known prefix goes between the host
// and the path (RFC 9728 §3.1).
func TestResourceMetadataURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://mcp.example.com/mcp":       "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
		"https://mcp.example.com/mcp/":      "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
		"https://mcp.example.com":           "https://mcp.example.com/.well-known/oauth-protected-resource",
		"https://mcp.example.com/":          "https://mcp.example.com/.well-known/oauth-protected-resource",
		"http://127.0.0.1:8080/a/b":         "http://127.0.0.1:8080/.well-known/oauth-protected-resource/a/b",
		"https://mcp.example.com/a%2Fb/mcp": "https://mcp.example.com/.well-known/oauth-protected-resource/a%2Fb/mcp",
	} {
		got, err := ResourceMetadataURL(in)
		if err != nil || got != want {
			t.Errorf("ResourceMetadataURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "/mcp", "mcp.example.com", "https://x/#f"} {
		if _, err := ResourceMetadataURL(bad); err == nil {
			t.Errorf("ResourceMetadataURL(%q) accepted", bad)
		}
	}
}
