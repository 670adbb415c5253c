package auth_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpkit/mcpkit/auth"
)

// Require in front of any handler, with a Verifier of your own (here a
// fixed token; NewJWTVerifier and NewIntrospectionVerifier are the real
// ones). Without a valid token the client gets 401 and a challenge that
// names the protected resource metadata, where an MCP client starts its
// OAuth flow (auth/oauth does).
func ExampleRequire() {
	verify := auth.VerifierFunc(func(ctx context.Context, token string) (*auth.TokenInfo, error) {
		if token != "let-me-in" {
			return nil, errors.New("unknown token")
		}
		return &auth.TokenInfo{Subject: "ada", Scopes: []string{"mcp:read"}}, nil
	})
	requireToken, err := auth.Require(verify, &auth.Options{
		Resource: "https://mcp.example.com/mcp",
		Scopes:   []string{"mcp:read"},
	})
	if err != nil {
		log.Fatal(err)
	}
	// Stands in for streamhttp.NewHandler(s, nil).
	mcpHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello, %s", auth.TokenInfoFrom(r.Context()).Subject)
	})
	hs := httptest.NewServer(requireToken(mcpHandler))
	defer hs.Close()

	for _, token := range []string{"", "let-me-in"} {
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			fmt.Println(resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		} else {
			fmt.Println(resp.StatusCode, string(body))
		}
	}
	// Output:
	// 401 Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp:read"
	// 200 hello, ada
}
