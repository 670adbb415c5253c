package auth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/mcpkit/mcpkit/auth/oauth"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// TestOAuthTransportKeepsRedirectPolicy: with mcpkit's OAuth client
// (DPoP-bound tokens) under the Streamable HTTP transport, a protected
// MCP endpoint that starts redirecting to another origin gets the call
// refused with streamable.ErrCrossOriginRedirect, the other origin
// receiving nothing; with AllowCrossOriginRedirects, the other origin
// receives neither the token nor the DPoP proof (the redirect policy is
// the http.Client's, and the OAuth transport, below it, keys its tokens
// by server).
func TestOAuthTransportKeepsRedirectPolicy(t *testing.T) {
	as := newDPoPAS(t, false)
	s := server.New(nil)
	server.AddTool(s, &mcp.Tool{Name: "add"}, func(ctx context.Context, req *server.CallToolRequest, in struct{ A, B int }) (int, error) {
		return in.A + in.B, nil
	})
	h := streamhttp.NewHandler(s, nil)
	t.Cleanup(func() { _ = h.Close() })

	var mu sync.Mutex
	var leaked []http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.Header.Clone())
		mu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(other.Close)

	mux := http.NewServeMux()
	rs := httptest.NewServer(mux)
	t.Cleanup(rs.Close)
	resource := rs.URL + "/mcp"
	v, err := NewJWTVerifier(&JWTOptions{Issuer: as.srv.URL, Audience: resource, JWKSURL: as.srv.URL + "/jwks", Algorithms: []jose.SignatureAlgorithm{jose.ES256}})
	if err != nil {
		t.Fatal(err)
	}
	dv, err := NewDPoPVerifier(&DPoPOptions{Required: true})
	if err != nil {
		t.Fatal(err)
	}
	protected := mustRequire(v, &Options{Resource: resource, Scopes: []string{"mcp:read"}, DPoP: dv})(h)
	var moved atomic.Bool
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if moved.Load() {
			http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
			return
		}
		protected.ServeHTTP(w, r)
	})
	if err := MountProtectedResource(mux, ProtectedResourceMetadata{
		Resource: resource, AuthorizationServers: []string{as.srv.URL}, ScopesSupported: []string{"mcp:read"},
		DPoPSigningAlgValuesSupported: []string{"ES256"}, DPoPBoundAccessTokensRequired: true,
	}); err != nil {
		t.Fatal(err)
	}
	key, err := oauth.NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	tr := &oauth.Transport{Authorize: oauth.Headless(nil), RedirectURL: "http://127.0.0.1:9/callback", DPoP: key}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, streamable.New(resource, &streamable.Options{HTTPClient: &http.Client{Transport: tr}}),
		&client.Options{ProtocolVersion: mcp.LatestLegacy})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer c.Close()
	add := func(c *client.Client) error {
		_, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: []byte(`{"A":2,"B":3}`)})
		return err
	}
	if err := add(c); err != nil {
		t.Fatalf("before the move: %v", err)
	}
	if tok := tr.Token(resource); tok == nil || tok.AccessToken == "" {
		t.Fatal("no token after an authorized call")
	}
	moved.Store(true)
	if err := add(c); !errors.Is(err, streamable.ErrCrossOriginRedirect) {
		t.Errorf("after the move: %v, want ErrCrossOriginRedirect", err)
	}
	mu.Lock()
	n := len(leaked)
	mu.Unlock()
	if n != 0 {
		t.Fatalf("the other origin received %d requests", n)
	}

	_, err = client.Connect(ctx, streamable.New(resource, &streamable.Options{
		HTTPClient: &http.Client{Transport: tr}, AllowCrossOriginRedirects: true, NoLegacyFallback: true,
	}), &client.Options{ProtocolVersion: mcp.LatestLegacy})
	if err == nil {
		t.Fatal("Connect through the other origin succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) == 0 {
		t.Fatal("with AllowCrossOriginRedirects the redirect was not followed")
	}
	for _, hd := range leaked {
		if hd.Get("Authorization") != "" || hd.Get("DPoP") != "" || hd.Get("Mcp-Session-Id") != "" {
			t.Errorf("the other origin received credentials: %v", hd)
		}
	}
}
