// Command oauth shows an MCP server protected by OAuth and a client that
// logs in by itself. The server checks bearer tokens with auth.Require
// (opaque tokens verified by RFC 7662 introspection) and publishes its
// protected resource metadata (RFC 9728); the client's HTTP transport is
// an oauth.Transport, which on the server's 401 discovers the
// authorization server, obtains a token with the client credentials
// grant and retries. A small authorization server, standard library
// only, stands in for a real one. Everything listens on loopback and the
// program exits when done.
//
//	go run ./examples/oauth
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/auth/oauth"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String() // http is accepted on loopback only
	resource := base + "/mcp"
	mux := http.NewServeMux()
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	defer func() { hs.Close(); <-served }()

	// The authorization server (a real one is a separate service).
	as := &authServer{issuer: base, resource: resource, tokens: map[string]bool{}}
	as.mount(mux)

	// The MCP server, behind the bearer middleware.
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "notes", Version: "1.0.0"}})
	err = server.AddTool(s, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
		return "you are " + auth.TokenInfoFrom(ctx).Subject, nil
	})
	if err != nil {
		return err
	}
	verifier, err := auth.NewIntrospectionVerifier(&auth.IntrospectionOptions{
		Endpoint: base + "/introspect",
		Audience: resource, // tokens issued for another resource are refused
		ClientID: "notes-server", ClientSecret: "rs-secret",
	})
	if err != nil {
		return err
	}
	requireToken, err := auth.Require(verifier, &auth.Options{Resource: resource, Scopes: []string{"notes:read"}})
	if err != nil {
		return err
	}
	mcpHandler := streamhttp.NewHandler(s, nil)
	defer mcpHandler.Close()
	mux.Handle("/mcp", requireToken(mcpHandler))
	if err := auth.MountProtectedResource(mux, auth.ProtectedResourceMetadata{
		Resource:             resource,
		AuthorizationServers: []string{base},
		ScopesSupported:      []string{"notes:read"},
	}); err != nil {
		return err
	}

	// Without a token: 401 and a challenge naming the metadata.
	resp, err := http.Post(resource, "application/json", nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	fmt.Println("without a token:", resp.StatusCode)

	// The client: its HTTP transport logs in when the server asks.
	login := &oauth.Transport{
		Client: &oauth.ClientInfo{ClientID: "reporting-job", ClientSecret: "job-secret"},
		Grant:  oauth.ClientCredentials{}, // no user: a service account
	}
	conn := streamable.New(resource, &streamable.Options{HTTPClient: &http.Client{Transport: login}})
	c, err := client.Connect(ctx, conn, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	out, _, err := client.CallTool[string](ctx, c, "whoami", nil)
	if err != nil {
		return err
	}
	fmt.Println("whoami:", out)
	fmt.Println("tokens issued:", as.issued())
	return nil
}

// authServer is a minimal OAuth authorization server: metadata (RFC
// 8414), the client credentials grant with client_secret_basic, and
// introspection (RFC 7662) for the resource server. Tokens are opaque.
type authServer struct {
	issuer, resource string
	mu               sync.Mutex
	tokens           map[string]bool
}

func (a *authServer) mount(mux *http.ServeMux) {
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"issuer":                                a.issuer,
			"token_endpoint":                        a.issuer + "/token",
			"introspection_endpoint":                a.issuer + "/introspect",
			"response_types_supported":              []string{"code"},
			"grant_types_supported":                 []string{"client_credentials"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic"},
			"scopes_supported":                      []string{"notes:read"},
		})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if !ok || id != "reporting-job" || secret != "job-secret" {
			w.WriteHeader(http.StatusUnauthorized)
			writeJSON(w, map[string]any{"error": "invalid_client"})
			return
		}
		if r.PostFormValue("grant_type") != "client_credentials" || r.PostFormValue("resource") != a.resource {
			w.WriteHeader(http.StatusBadRequest)
			writeJSON(w, map[string]any{"error": "invalid_request"})
			return
		}
		a.mu.Lock()
		token := fmt.Sprintf("opaque-%d", len(a.tokens)+1)
		a.tokens[token] = true
		a.mu.Unlock()
		writeJSON(w, map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": 3600, "scope": "notes:read"})
	})
	mux.HandleFunc("POST /introspect", func(w http.ResponseWriter, r *http.Request) {
		if id, secret, ok := r.BasicAuth(); !ok || id != "notes-server" || secret != "rs-secret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		a.mu.Lock()
		active := a.tokens[r.PostFormValue("token")]
		a.mu.Unlock()
		if !active {
			writeJSON(w, map[string]any{"active": false})
			return
		}
		writeJSON(w, map[string]any{
			"active": true, "sub": "reporting-job", "scope": "notes:read", "aud": a.resource,
			"iss": a.issuer, "exp": time.Now().Add(time.Hour).Unix(),
		})
	})
}

func (a *authServer) issued() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.tokens)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v) // a failed write is the client's loss

}
