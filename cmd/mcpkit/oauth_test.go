package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpkit/mcpkit/server/streamhttp"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/auth/oauth"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// startAS runs the demo authorization server of "mcpkit serve --auth" on
// an origin of its own (default configuration unless cfg is given).
func startAS(t *testing.T, cfg ...authConfig) *demoAS {
	srv := httptest.NewUnstartedServer(nil)
	t.Cleanup(srv.Close)
	c := authConfig{tokens: tokensJWT, dpop: dpopOptional}
	if len(cfg) > 0 {
		c = cfg[0]
	}
	a, err := newDemoAS("http://"+srv.Listener.Addr().String(), nil, c)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.mount(mux)
	srv.Config.Handler = mux
	srv.Start()
	return a
}

// startProtected runs an MCP server (one add tool) behind auth.Require,
// trusting the tokens a issued for it, and returns its endpoint.
func startProtected(t *testing.T, a *demoAS) string {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "protected", Version: "1"}})
	server.AddTool(s, &mcp.Tool{Name: "add"}, func(ctx context.Context, req *server.CallToolRequest, in struct {
		A int `json:"a"`
		B int `json:"b"`
	}) (string, error) {
		return fmt.Sprintf("sum %d", in.A+in.B), nil
	})
	h := streamhttp.NewHandler(s, nil)
	rs := httptest.NewUnstartedServer(nil)
	t.Cleanup(func() {
		_ = h.Close()
		rs.Close()
	})
	resource := "http://" + rs.Listener.Addr().String() + "/mcp"
	mux := http.NewServeMux()
	ph, err := a.protect(resource, h)
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/mcp", ph)
	if err := auth.MountProtectedResource(mux, a.metadata(resource)); err != nil {
		t.Fatal(err)
	}
	rs.Config.Handler = mux
	rs.Start()
	return resource
}

func TestOAuthLogin(t *testing.T) {
	a := startAS(t)
	url := startProtected(t, a)
	dir := t.TempDir()
	env := []string{"MCPKIT_CONFIG_DIR=" + dir, headlessEnv + "=1"}

	// Without authorization the server's 401 is a connection failure.
	expect(t, mcpkitEnv(t, env, "call", "--no-auth", url, "add", "a=1", "b=2"), exitConn)
	if _, err := os.Stat(filepath.Join(dir, "oauth.json")); !os.IsNotExist(err) {
		t.Fatalf("--no-auth wrote the token store: %v", err)
	}

	for _, era := range []string{"legacy", "modern"} {
		expect(t, mcpkitEnv(t, env, "call", "--era", era, url, "add", "a=2", "b=40"), 0, "sum 42")
	}
	// One registration and one authorization: the second run took the
	// token from the store.
	if reg, authz, toks := a.counts(); reg != 1 || authz != 1 || toks != 1 {
		t.Fatalf("registrations %d, authorizations %d, token requests %d; want 1, 1, 1", reg, authz, toks)
	}
	path := filepath.Join(dir, "oauth.json")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", path, fi.Mode().Perm())
	}
	var sf storeFile
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &sf, json.RejectUnknownMembers(false)); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	if c := sf.Clients[a.issuer]; c.ClientID != "client-1" {
		t.Errorf("the stored client of %s is %+v:\n%s", a.issuer, c, b)
	}
	if tok := sf.Tokens[a.issuer][url]; tok.AccessToken == "" {
		t.Errorf("no token stored for %s at %s:\n%s", url, a.issuer, b)
	}

	// A pre-registered client: no dynamic registration.
	env2 := []string{"MCPKIT_CONFIG_DIR=" + t.TempDir(), headlessEnv + "=1"}
	expect(t, mcpkitEnv(t, env2, "call", "--client-id", "pre-1", "--client-secret", "s3cret", url, "add", "a=1", "b=1"),
		0, "sum 2")
	a.mu.Lock()
	last := a.tokenClients[len(a.tokenClients)-1]
	a.mu.Unlock()
	if reg, _, _ := a.counts(); reg != 1 || last != "pre-1" {
		t.Errorf("pre-registered client: registrations %d (want 1), token request by %q (want pre-1)", reg, last)
	}

	expect(t, mcpkitEnv(t, env, "call", "--client-id", "x", "add", "--", bin, "serve", "--stdio"), exitUsage)
}

func TestFileStore(t *testing.T) {
	ctx := context.Background()
	s := &fileStore{path: filepath.Join(t.TempDir(), "sub", "oauth.json")}
	if c, err := s.Client(ctx, "https://as"); c != nil || err != nil {
		t.Fatalf("empty store: %v, %v", c, err)
	}
	if err := s.SetClient(ctx, "https://as", &oauth.ClientInfo{ClientID: "c1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetToken(ctx, "https://as", "https://rs/mcp", &oauth.Token{AccessToken: "t1"}); err != nil {
		t.Fatal(err)
	}
	s2 := &fileStore{path: s.path} // another invocation
	if c, _ := s2.Client(ctx, "https://as"); c == nil || c.ClientID != "c1" {
		t.Fatalf("client %+v", c)
	}
	if tok, _ := s2.Token(ctx, "https://as", "https://rs/mcp"); tok == nil || tok.AccessToken != "t1" {
		t.Fatalf("token %+v", tok)
	}
	if tok, _ := s2.Token(ctx, "https://other", "https://rs/mcp"); tok != nil {
		t.Fatalf("a token of another issuer: %+v", tok)
	}
	if err := s2.SetToken(ctx, "https://as", "https://rs/mcp", nil); err != nil {
		t.Fatal(err)
	}
	if tok, _ := s.Token(ctx, "https://as", "https://rs/mcp"); tok != nil {
		t.Fatalf("deleted token %+v", tok)
	}
}

// TestServeAuth: "mcpkit serve --auth" requires OAuth, and mcpkit logs in
// to it (headless: the demo authorization server approves at once).
func TestServeAuth(t *testing.T) {
	url := startHTTP(t, "--auth")
	env := []string{"MCPKIT_CONFIG_DIR=" + t.TempDir(), headlessEnv + "=1"}
	expect(t, mcpkitEnv(t, env, "call", "--no-auth", url, "add", "a=1", "b=2"), exitConn)
	for _, era := range []string{"legacy", "modern"} {
		expect(t, mcpkitEnv(t, env, "call", "--era", era, url, "add", "a=2", "b=40"), 0, `{"sum":42}`)
	}
	expect(t, mcpkitEnv(t, env, "read", url, "demo://readme"), 0, "mcpkit speaks MCP")
	expect(t, mcpkit(t, "serve", "--stdio", "--auth"), exitUsage)
}
