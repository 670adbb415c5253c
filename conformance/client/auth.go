package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mcpkit/mcpkit/auth/oauth"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// cimdURL is the Client ID Metadata Document URL the suite expects
// (auth/basic-cimd).
const cimdURL = "https://conformance-test.local/client-metadata.json"

func init() {
	for _, name := range []string{
		"auth/metadata-default",
		"auth/metadata-var1",
		"auth/metadata-var2",
		"auth/metadata-var3",
		"auth/basic-cimd",
		"auth/scope-from-www-authenticate",
		"auth/scope-from-scopes-supported",
		"auth/scope-omitted-when-undefined",
		"auth/scope-step-up",
		"auth/scope-retry-limit",
		"auth/token-endpoint-auth-basic",
		"auth/token-endpoint-auth-post",
		"auth/token-endpoint-auth-none",
		"auth/pre-registration",
		"auth/2025-03-26-oauth-metadata-backcompat",
		"auth/2025-03-26-oauth-endpoint-fallback",
		"auth/resource-mismatch",
		"auth/offline-access-scope",
		"auth/offline-access-not-supported",
		"auth/authorization-server-migration",
		"auth/iss-supported",
		"auth/iss-not-advertised",
		"auth/iss-supported-missing",
		"auth/iss-wrong-issuer",
		"auth/iss-unexpected",
		"auth/iss-normalized",
		"auth/metadata-issuer-mismatch",
	} {
		scenarios[name] = runAuth
	}
}

// runAuth connects through the OAuth round tripper (the mock
// authorization server redirects at once, so the headless authorizer
// does), lists the tools and calls test-tool. Pre-registered credentials
// come from MCP_CONFORMANCE_CONTEXT when it has them.
func runAuth(ctx context.Context, e *env) error {
	t := &oauth.Transport{
		Authorize:           oauth.Headless(nil),
		RedirectURL:         "http://localhost:3000/callback",
		ClientName:          "mcpkit-conformance-client",
		ClientIDMetadataURL: cimdURL,
		OfflineAccess:       true,
	}
	if e.context != "" {
		var creds struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		}
		if err := json.Unmarshal([]byte(e.context), &creds); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
		if creds.ClientID != "" {
			t.Client = &oauth.ClientInfo{ClientID: creds.ClientID, ClientSecret: creds.ClientSecret}
		}
	}
	e.httpClient = &http.Client{Transport: t}
	c, err := e.connect(ctx, client.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ListTools(ctx, nil); err != nil {
		return err
	}
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "test-tool"})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("test-tool failed: %v", res.Content)
	}
	return nil
}
