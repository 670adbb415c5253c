package oauth_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"github.com/mcpkit/mcpkit/auth/oauth"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// A desktop or command-line client that logs its user in: on the MCP
// server's 401 the Transport discovers the authorization server,
// registers (Dynamic Client Registration, unless Client or
// ClientIDMetadataURL say otherwise), runs the authorization code flow
// with PKCE through the user's browser, and retries with the token.
func ExampleTransport() {
	lb := &oauth.Loopback{Addr: "127.0.0.1:8976"} // receives the redirect
	login := &oauth.Transport{
		RedirectURL: lb.RedirectURL(),
		Authorize:   lb.Authorize, // prints the URL to open (or set Loopback.Open)
		ClientName:  "my-mcp-client",
	}
	conn := streamable.New("https://mcp.example.com/mcp", &streamable.Options{
		HTTPClient: &http.Client{Transport: login},
	})
	c, err := client.Connect(context.Background(), conn, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
}

// A service with no user obtains its tokens with the client credentials
// grant, using credentials registered in advance.
func ExampleClientCredentials() {
	login := &oauth.Transport{
		Client: &oauth.ClientInfo{ClientID: "reporting-job", ClientSecret: "secret from your vault"},
		Grant:  oauth.ClientCredentials{},
	}
	_ = &http.Client{Transport: login} // for streamable.Options.HTTPClient
}

// Reading what a server's 401 asks for.
func ExampleBearerChallenge() {
	h := http.Header{}
	h.Set("WWW-Authenticate", `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="notes:read"`)
	params := oauth.BearerChallenge(h)
	fmt.Println(params["resource_metadata"])
	fmt.Println(params["scope"])
	// Output:
	// https://mcp.example.com/.well-known/oauth-protected-resource/mcp
	// notes:read
}
