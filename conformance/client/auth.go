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
		"auth/client-credentials-basic",
		"auth/client-credentials-jwt",
		"auth/enterprise-managed-authorization",
		"auth/wif-jwt-bearer",
		"auth/dpop",
		"auth/dpop-nonce",
	} {
		scenarios[name] = runAuth
	}
}

// authContext is MCP_CONFORMANCE_CONTEXT of the auth scenarios.
type authContext struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
	IdPClientID      string `json:"idp_client_id"`
	IdPIDToken       string `json:"idp_id_token"`
	IdPTokenEndpoint string `json:"idp_token_endpoint"`
	ValidJWT         string `json:"valid_jwt"`
}

// configure sets up t for the extension scenarios (client credentials,
// enterprise-managed authorization, workload identity, DPoP) and sets
// the pre-registered credentials of the others.
func (ac *authContext) configure(scenario string, t *oauth.Transport) error {
	if ac.ClientID != "" {
		t.Client = &oauth.ClientInfo{ClientID: ac.ClientID, ClientSecret: ac.ClientSecret}
	}
	switch scenario {
	case "auth/client-credentials-basic":
		t.Grant = oauth.ClientCredentials{}
		t.Client.AuthMethod = "client_secret_basic"
	case "auth/client-credentials-jwt":
		key, err := oauth.ParsePrivateKeyPEM([]byte(ac.PrivateKeyPEM))
		if err != nil {
			return err
		}
		t.Grant = oauth.ClientCredentials{}
		t.Client.PrivateKey = key
		t.Client.SigningAlg = ac.SigningAlgorithm
	case "auth/enterprise-managed-authorization":
		x := &oauth.IDJAGExchange{
			TokenEndpoint: ac.IdPTokenEndpoint,
			ClientID:      ac.IdPClientID,
			IDToken:       ac.IdPIDToken,
		}
		t.Grant = &oauth.JWTBearer{Assertion: x.Assertion}
	case "auth/wif-jwt-bearer":
		t.Grant = &oauth.JWTBearer{Assertion: oauth.StaticAssertion(ac.ValidJWT)}
	case "auth/dpop", "auth/dpop-nonce":
		key, err := oauth.NewDPoPKey()
		if err != nil {
			return err
		}
		t.DPoP = key
	}
	if t.Grant != nil && t.Client == nil {
		return fmt.Errorf("%s: no client_id in MCP_CONFORMANCE_CONTEXT", scenario)
	}
	return nil
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
	var ac authContext
	if e.context != "" {
		if err := json.Unmarshal([]byte(e.context), &ac); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	if err := ac.configure(e.scenario, t); err != nil {
		return err
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
