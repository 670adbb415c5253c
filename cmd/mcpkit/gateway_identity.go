package main

import (
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/auth/oauth"
	"github.com/mcpkit/mcpkit/gateway"
)

// identityConfig is an upstream's "identity" member (gateway.Identity):
// whose identity its calls carry.
type identityConfig struct {
	// Mode is "static" (or empty: the headers, the default),
	// "passthrough" (the caller's own token) or "exchange" (RFC 8693).
	Mode          string `json:"mode"`
	TokenEndpoint string `json:"tokenEndpoint"`
	ClientID      string `json:"clientID"`
	// ClientSecretEnv names the environment variable holding the
	// gateway's client secret at the token endpoint.
	ClientSecretEnv string   `json:"clientSecretEnv"`
	Audience        string   `json:"audience"`
	Resource        string   `json:"resource"`
	Scopes          []string `json:"scopes"`
}

// usesCaller reports whether the calls carry the caller's identity.
func (c *identityConfig) usesCaller() bool {
	return c != nil && c.Mode != "" && c.Mode != "static"
}

// check validates the identity of the upstream at; a, the gateway's
// auth, must authenticate the callers whose identity is used.
func (c *identityConfig) check(at string, u *upstreamConfig, a *authFileConfig) error {
	at += ".identity"
	switch c.Mode {
	case "", "static":
		if c.TokenEndpoint != "" || c.ClientID != "" || c.ClientSecretEnv != "" || len(c.Scopes) > 0 || c.Audience != "" || c.Resource != "" {
			return fieldErr(at, "tokenEndpoint, clientID, clientSecretEnv, audience, resource and scopes apply to mode \"exchange\" only")
		}
		return nil
	case string(gateway.IdentityPassThrough), string(gateway.IdentityExchange):
	default:
		return fieldErr(at+".mode", "%q is not static, passthrough or exchange", c.Mode)
	}
	switch {
	case u.URL == "":
		return fieldErr(at, "the caller's identity applies to a url upstream only")
	case a == nil:
		return fieldErr(at, "mode %q needs auth: the gateway must authenticate its callers before it acts for them", c.Mode)
	case a.DPoP == dpopRequired:
		return fieldErr(at, "mode %q cannot be used with auth.dpop \"required\": a DPoP-bound token is for the gateway only", c.Mode)
	}
	if c.Mode == string(gateway.IdentityPassThrough) {
		if c.TokenEndpoint != "" || c.ClientID != "" || c.ClientSecretEnv != "" || len(c.Scopes) > 0 || c.Audience != "" || c.Resource != "" {
			return fieldErr(at, "tokenEndpoint, clientID, clientSecretEnv, audience, resource and scopes apply to mode \"exchange\" only")
		}
		return nil
	}
	switch {
	case c.TokenEndpoint == "":
		return fieldErr(at+".tokenEndpoint", "required: the authorization server's token endpoint")
	case oauth.CheckEndpointURL("token endpoint", c.TokenEndpoint) != nil:
		return fieldErr(at+".tokenEndpoint", "%q is not an https URL (http only on a loopback host; no user information or fragment)", c.TokenEndpoint)
	case c.ClientID == "":
		return fieldErr(at+".clientID", "required: the gateway's client at the token endpoint")
	}
	for i, s := range c.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			return fieldErr(at+".scopes", "scope %d, %q, is not a scope token", i, s)
		}
	}
	for f, v := range map[string]string{"audience": c.Audience, "resource": c.Resource} {
		if v != "" && !strings.Contains(v, ":") {
			return fieldErr(at+"."+f, "%q is not a URI", v)
		}
	}
	return nil
}

// identity converts c (checked) into gateway.Identity, reading the
// client secret from the environment.
func (c *identityConfig) identity(at string) (gateway.Identity, error) {
	if !c.usesCaller() {
		return gateway.Identity{}, nil
	}
	id := gateway.Identity{Mode: gateway.IdentityMode(c.Mode), TokenEndpoint: c.TokenEndpoint, ClientID: c.ClientID,
		Audience: c.Audience, Resource: c.Resource, Scopes: c.Scopes}
	if c.ClientSecretEnv != "" {
		s, err := expandEnv("${" + c.ClientSecretEnv + "}")
		if err != nil {
			return id, fieldErr(at+".identity.clientSecretEnv", "%v", err)
		}
		id.ClientSecret = s
	}
	return id, nil
}

// identityLimits are the gateway's exchanged-token limits.
func (l *limitsConfig) identityLimits(o *gateway.Options) {
	o.TokenCacheSize = l.TokenCacheSize
	o.TokenExpiryMargin = time.Duration(l.TokenExpiryMargin)
}
