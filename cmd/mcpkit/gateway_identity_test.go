package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/auth/oauth"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// grantToken gets a token from the demo authorization server by the
// client credentials grant: subject client, the scopes, for resource.
func grantToken(t *testing.T, a *demoAS, client, scope, resource string) string {
	t.Helper()
	resp, err := http.PostForm(a.issuer+"/token", url.Values{"grant_type": {oauth.GrantTypeClientCredentials}, "client_id": {client},
		"scope": {scope}, "resource": {resource}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.UnmarshalRead(resp.Body, &v, json.RejectUnknownMembers(false)); err != nil || resp.StatusCode != http.StatusOK || v.AccessToken == "" {
		t.Fatalf("client credentials for %s: %s (%v)", client, resp.Status, err)
	}
	return v.AccessToken
}

// tokenSeen is what the identity test's upstream saw of a call's token.
type tokenSeen struct {
	Sub    string   `json:"sub"`
	Aud    []string `json:"aud"`
	Scopes []string `json:"scopes"`
	Act    string   `json:"act"`
}

// startAudienceChecked runs an MCP server behind auth.Require trusting
// a's tokens for audience only, whose tool whoami tells the token it was
// called with, and admin_op needs scope admin. An empty audience is the
// server's own URL, which it returns. rejectOnce, when set, makes
// it answer the next call 401 once (a token revoked, say).
func startAudienceChecked(t *testing.T, a *demoAS, audience string, rejectOnce *atomic.Bool) string {
	srv := httptest.NewUnstartedServer(nil)
	t.Cleanup(srv.Close)
	self := "http://" + srv.Listener.Addr().String() + "/mcp"
	if audience == "" {
		audience = self
	}
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "checked", Version: "1"}})
	if err := server.AddTool(s, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (tokenSeen, error) {
		ti := auth.TokenInfoFrom(ctx)
		out := tokenSeen{Sub: ti.Subject, Aud: ti.Audience, Scopes: ti.Scopes}
		if act, ok := ti.Extra["act"].(map[string]any); ok {
			out.Act, _ = act["sub"].(string)
		}
		return out, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := server.AddTool(s, &mcp.Tool{Name: "admin_op"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
		return "done", nil
	}); err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewJWTVerifier(&auth.JWTOptions{Issuer: a.issuer, Audience: audience, JWKSURL: a.issuer + "/jwks"})
	if err != nil {
		t.Fatal(err)
	}
	mw, err := auth.Require(v, &auth.Options{Resource: audience, ToolScopes: map[string][]string{"admin_op": {"admin"}}})
	if err != nil {
		t.Fatal(err)
	}
	h := mw(streamhttp.NewHandler(s, nil))
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rejectOnce != nil && r.Method == http.MethodPost && rejectOnce.CompareAndSwap(true, false) {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	srv.Start()
	return self
}

// TestGatewayIdentity: "mcpkit gateway" with auth, in front of two
// upstreams that check their tokens' audience: one called with a token
// exchanged for each caller (RFC 8693, at the demo authorization server
// of "mcpkit serve --auth"), one with the caller's own token. Two callers
// with different scopes, in both eras: each call reaches the upstream
// with its caller's own token (subject the caller, audience the upstream,
// the exchanging gateway as actor), scopes are respected, an exchange
// refused and an exchanged token rejected once are handled.
func TestGatewayIdentity(t *testing.T) {
	t.Parallel()
	a := startAS(t, authConfig{tokens: tokensJWT, dpop: dpopOff})
	const gwResource = "https://gateway.test/mcp" // the audience of the callers' tokens
	var rejectOnce atomic.Bool
	exURL := startAudienceChecked(t, a, "", &rejectOnce) // audience: its own URL
	ptURL := startAudienceChecked(t, a, gwResource, nil)
	cfg := map[string]any{
		"http": map[string]any{"addr": "127.0.0.1:0"},
		"auth": map[string]any{
			"resource":             gwResource,
			"authorizationServers": []string{a.issuer},
			"jwt":                  map[string]any{"issuer": a.issuer, "jwksURL": a.issuer + "/jwks", "algorithms": []string{"ES256"}},
		},
		"gateway": map[string]any{"tokenCacheSize": 10, "tokenExpiryMargin": "1m"},
		"upstreams": []any{
			map[string]any{"name": "ex", "prefix": "ex", "url": exURL, "headers": map[string]string{"Authorization": "Bearer ${EX_TOKEN}"},
				"identity": map[string]any{"mode": "exchange", "tokenEndpoint": a.issuer + "/token", "clientID": "mcpkit-gateway", "scopes": []string{"read", "admin"}}},
			map[string]any{"name": "pt", "prefix": "pt", "url": ptURL, "headers": map[string]string{"Authorization": "Bearer ${PT_TOKEN}"},
				"identity": map[string]any{"mode": "passthrough"}},
		},
	}
	b, _ := json.Marshal(cfg)
	path := filepath.Join(t.TempDir(), "gateway.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"EX_TOKEN=" + grantToken(t, a, "gateway-control", "read", exURL),
		"PT_TOKEN=" + grantToken(t, a, "gateway-control", "read", gwResource),
	}
	g := startGatewayEnv(t, env, "--config", path)
	alice := grantToken(t, a, "alice", "read admin", gwResource)
	bob := grantToken(t, a, "bob", "read", gwResource)
	carol := grantToken(t, a, "carol", "other", gwResource)

	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			ca, cb := dialGateway(t, g.url, alice, era), dialGateway(t, g.url, bob, era)
			for _, c := range []struct {
				c      *client.Client
				sub    string
				scopes string
			}{{ca, "alice", "read admin"}, {cb, "bob", "read"}} {
				seen, err := whoamiVia(t, c.c, "ex_whoami")
				if err != nil {
					t.Fatalf("%s: %v", c.sub, err)
				}
				if seen.Sub != c.sub || len(seen.Aud) != 1 || seen.Aud[0] != exURL || strings.Join(seen.Scopes, " ") != c.scopes || seen.Act != "mcpkit-gateway" {
					t.Fatalf("%s's exchanged call reached the upstream with %+v; want sub %s, aud %s, scopes %q, act mcpkit-gateway", c.sub, seen, c.sub, exURL, c.scopes)
				}
				seen, err = whoamiVia(t, c.c, "pt_whoami")
				if err != nil {
					t.Fatalf("%s pass-through: %v", c.sub, err)
				}
				if seen.Sub != c.sub || len(seen.Aud) != 1 || seen.Aud[0] != gwResource || seen.Act != "" {
					t.Fatalf("%s's pass-through call reached the upstream with %+v; want its own token", c.sub, seen)
				}
			}
			// Scopes: alice's exchanged token holds admin, bob's does not.
			if _, err := callTool(t, ca, "ex_admin_op"); err != nil {
				t.Fatalf("alice admin_op: %v", err)
			}
			_, err := callTool(t, cb, "ex_admin_op")
			wantIdentityError(t, err, http.StatusForbidden, "insufficient_scope")
			// An exchange refused: carol holds none of the scopes asked.
			_, err = whoamiVia(t, dialGateway(t, g.url, carol, era), "ex_whoami")
			wantIdentityError(t, err, http.StatusForbidden, "invalid_scope")
			// The upstream rejects the cached token once: exchanged again.
			rejectOnce.Store(true)
			if seen, err := whoamiVia(t, ca, "ex_whoami"); err != nil || seen.Sub != "alice" {
				t.Fatalf("after a rejected token: %+v, %v", seen, err)
			}
			if rejectOnce.Load() {
				t.Fatal("the upstream was not called")
			}
		})
	}
}

func dialGateway(t *testing.T, u, token, era string) *client.Client {
	t.Helper()
	v := mcp.Version20260728
	if era == "legacy" {
		v = mcp.LatestLegacy
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, streamable.New(u, &streamable.Options{Header: http.Header{"Authorization": {"Bearer " + token}}}),
		&client.Options{ProtocolVersion: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func callTool(t *testing.T, c *client.Client, name string) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return c.CallTool(ctx, &mcp.CallToolParams{Name: name})
}

func whoamiVia(t *testing.T, c *client.Client, name string) (tokenSeen, error) {
	var seen tokenSeen
	res, err := callTool(t, c, name)
	if err != nil {
		return seen, err
	}
	if err := json.Unmarshal(res.StructuredContent, &seen); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return seen, nil
}

func wantIdentityError(t *testing.T, err error, status int, code string) {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		t.Fatalf("error %v; want a JSON-RPC error", err)
	}
	var data struct {
		Status int    `json:"status"`
		Error  string `json:"error"`
	}
	if err := json.Unmarshal(je.Data, &data); err != nil || data.Status != status || data.Error != code {
		t.Fatalf("error %v, data %s; want status %d, error %q", je, je.Data, status, code)
	}
	if strings.Contains(je.Message, "eyJ") || strings.Contains(string(je.Data), "eyJ") {
		t.Fatalf("the error shows a token: %v", je)
	}
}

// TestGatewayIdentityConfig: the identity members the gateway refuses,
// each with an error naming the member; and a good one planned.
func TestGatewayIdentityConfig(t *testing.T) {
	const authOn = `"auth": {"authorizationServers": ["https://as"], "jwt": {"issuer": "https://as"}}, `
	const authDPoP = `"auth": {"authorizationServers": ["https://as"], "jwt": {"issuer": "https://as"}, "dpop": "required"}, `
	up := func(identity string) string {
		return `"upstreams": [{"name": "a", "url": "https://up/mcp", "identity": ` + identity + `}]}`
	}
	for _, tc := range []struct{ name, json, want string }{
		{"bad mode", `{` + authOn + up(`{"mode": "caller"}`), `gw.json: upstreams[0].identity.mode: "caller" is not static, passthrough or exchange`},
		{"without auth", `{` + up(`{"mode": "passthrough"}`), `gw.json: upstreams[0].identity: mode "passthrough" needs auth`},
		{"with DPoP required", `{` + authDPoP + up(`{"mode": "exchange", "tokenEndpoint": "https://as/token", "clientID": "gw"}`), `gw.json: upstreams[0].identity: mode "exchange" cannot be used with auth.dpop "required"`},
		{"on a command", `{` + authOn + `"upstreams": [{"name": "a", "command": ["srv"], "identity": {"mode": "passthrough"}}]}`, "gw.json: upstreams[0].identity: the caller's identity applies to a url upstream only"},
		{"no token endpoint", `{` + authOn + up(`{"mode": "exchange", "clientID": "gw"}`), "gw.json: upstreams[0].identity.tokenEndpoint: required"},
		{"http token endpoint", `{` + authOn + up(`{"mode": "exchange", "tokenEndpoint": "http://as/token", "clientID": "gw"}`), `gw.json: upstreams[0].identity.tokenEndpoint: "http://as/token" is not an https URL`},
		{"token endpoint with a fragment", `{` + authOn + up(`{"mode": "exchange", "tokenEndpoint": "https://as/token#x", "clientID": "gw"}`), `gw.json: upstreams[0].identity.tokenEndpoint: "https://as/token#x" is not an https URL`},
		{"no client", `{` + authOn + up(`{"mode": "exchange", "tokenEndpoint": "https://as/token"}`), "gw.json: upstreams[0].identity.clientID: required"},
		{"bad scope", `{` + authOn + up(`{"mode": "exchange", "tokenEndpoint": "https://as/token", "clientID": "gw", "scopes": ["a b"]}`), `gw.json: upstreams[0].identity.scopes: scope 0, "a b", is not a scope token`},
		{"exchange members on passthrough", `{` + authOn + up(`{"mode": "passthrough", "scopes": ["a"]}`), "gw.json: upstreams[0].identity: tokenEndpoint, clientID"},
		{"negative cache", `{"gateway": {"tokenCacheSize": -1}, "upstreams": [{"name": "a", "url": "https://up/mcp"}]}`, "gw.json: gateway.tokenCacheSize: must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseGatewayConfig("gw.json", []byte(tc.json))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant one beginning %q", err, tc.want)
			}
		})
	}
	c, err := parseGatewayConfig("gw.json", []byte(`{`+authOn+`"gateway": {"tokenCacheSize": 5, "tokenExpiryMargin": "10s"}, `+
		up(`{"mode": "exchange", "tokenEndpoint": "https://as/token", "clientID": "gw", "clientSecretEnv": "GW_TEST_SECRET", "scopes": ["read"]}`)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.plan("gw.json", io.Discard); err == nil || !strings.Contains(err.Error(), "upstreams[0].identity.clientSecretEnv: $GW_TEST_SECRET is not set") {
		t.Fatalf("unset secret: %v", err)
	}
	t.Setenv("GW_TEST_SECRET", "s")
	p, err := c.plan("gw.json", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	id := p.opts.Upstreams[0].Identity
	if id.Mode != gateway.IdentityExchange || id.ClientSecret != "s" || id.ClientID != "gw" || !p.callerTokens ||
		p.opts.TokenCacheSize != 5 || p.opts.TokenExpiryMargin != 10*time.Second {
		t.Fatalf("planned %+v, cache %d, margin %s, caller tokens %v", id, p.opts.TokenCacheSize, p.opts.TokenExpiryMargin, p.callerTokens)
	}
}

// TestGatewayIdentityGuideConfig: the guide's identity example is a
// valid configuration.
func TestGatewayIdentityGuideConfig(t *testing.T) {
	t.Setenv("CRM_GATEWAY_TOKEN", "t")
	t.Setenv("GATEWAY_SECRET", "s")
	if found := planGuideConfigs(t, func(body string) bool { return strings.Contains(body, `"identity"`) }); found != 1 {
		t.Fatalf("%d identity examples in the guide, want 1", found)
	}
}

// TestDemoASOtherGrants: the demo authorization server's client
// credentials and token exchange refuse what they cannot grant.
func TestDemoASOtherGrants(t *testing.T) {
	a := startAS(t, authConfig{tokens: tokensJWT, dpop: dpopOff})
	good := grantToken(t, a, "alice", "read", "https://r.test/mcp")
	post := func(a *demoAS, form url.Values) (int, string) {
		resp, err := http.PostForm(a.issuer+"/token", form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v struct {
			Error string `json:"error"`
		}
		_ = json.UnmarshalRead(resp.Body, &v, json.RejectUnknownMembers(false))
		return resp.StatusCode, v.Error
	}
	exchange := func(subject, scope string) url.Values {
		return url.Values{"grant_type": {oauth.GrantTypeTokenExchange}, "client_id": {"gw"}, "subject_token": {subject},
			"subject_token_type": {oauth.TokenTypeAccessToken}, "resource": {"https://up.test/mcp"}, "scope": {scope}}
	}
	for _, tc := range []struct {
		name   string
		as     *demoAS
		form   url.Values
		status int
		code   string
	}{
		{"exchange", a, exchange(good, "read"), http.StatusOK, ""},
		{"not a token", a, exchange("garbage", ""), http.StatusBadRequest, "invalid_grant"},
		{"another issuer's", a, exchange(grantToken(t, startAS(t, authConfig{tokens: tokensJWT, dpop: dpopOff}), "x", "read", "r"), ""), http.StatusBadRequest, "invalid_grant"},
		{"scope not held", a, exchange(good, "admin"), http.StatusBadRequest, "invalid_scope"},
		{"no client", a, url.Values{"grant_type": {oauth.GrantTypeClientCredentials}, "resource": {"r"}}, http.StatusUnauthorized, "invalid_client"},
		{"no resource", a, url.Values{"grant_type": {oauth.GrantTypeClientCredentials}, "client_id": {"c"}}, http.StatusBadRequest, "invalid_target"},
		{"opaque tokens", startAS(t, authConfig{tokens: tokensOpaque, dpop: dpopOff}), url.Values{"grant_type": {oauth.GrantTypeClientCredentials}, "client_id": {"c"}, "resource": {"r"}}, http.StatusBadRequest, "unsupported_grant_type"},
	} {
		if status, code := post(tc.as, tc.form); status != tc.status || code != tc.code {
			t.Errorf("%s: %d %q; want %d %q", tc.name, status, code, tc.status, tc.code)
		}
	}
}
