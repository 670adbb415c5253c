package auth_test

import (
	"log"
	"net/http"

	"github.com/mcpkit/mcpkit/server/streamhttp"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/server"
)

// An MCP server that accepts JWT access tokens from one authorization
// server, needs mcp:read for everything and mcp:admin for one tool, and
// publishes its protected resource metadata.
func Example() {
	const resource = "https://mcp.example.com/mcp"
	const issuer = "https://auth.example.com"

	verifier, err := auth.NewJWTVerifier(&auth.JWTOptions{
		Issuer:   issuer,
		Audience: resource, // RFC 8707: tokens for other resources are refused
		// JWKSURL empty: jwks_uri comes from the issuer's metadata.
	})
	if err != nil {
		log.Fatal(err)
	}
	s := server.New(nil)
	mcpHandler := streamhttp.NewHandler(s, nil)
	defer mcpHandler.Close()

	requireToken, err := auth.Require(verifier, &auth.Options{
		Resource:   resource,
		Scopes:     []string{"mcp:read"},
		ToolScopes: map[string][]string{"delete_everything": {"mcp:admin"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", requireToken(mcpHandler))
	if err := auth.MountProtectedResource(mux, auth.ProtectedResourceMetadata{
		Resource:             resource,
		AuthorizationServers: []string{issuer},
		ScopesSupported:      []string{"mcp:read", "mcp:admin"},
	}); err != nil {
		log.Fatal(err)
	}
	_ = http.Server{Addr: ":8443", Handler: mux}
}
