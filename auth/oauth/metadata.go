package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// ResourceMetadata is OAuth 2.0 Protected Resource Metadata (RFC 9728).
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers,omitempty"`
	ScopesSupported      []string `json:"scopes_supported,omitempty"`
}

// ServerMetadata is OAuth 2.0 Authorization Server Metadata (RFC 8414),
// or the OpenID Connect Discovery document, in the fields the client uses.
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint,omitempty"`
	TokenEndpoint                     string   `json:"token_endpoint,omitempty"`
	RegistrationEndpoint              string   `json:"registration_endpoint,omitempty"`
	ScopesSupported                   []string `json:"scopes_supported,omitempty"`
	ResponseTypesSupported            []string `json:"response_types_supported,omitempty"`
	GrantTypesSupported               []string `json:"grant_types_supported,omitempty"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported,omitempty"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported,omitempty"`
	AuthorizationResponseISSParameter bool     `json:"authorization_response_iss_parameter_supported,omitempty"`
	// DPoPSigningAlgValuesSupported lists the DPoP proof algorithms the
	// server accepts (RFC 9449 §5.1).
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
}

// maxMetadataBytes bounds a metadata, registration or token response.
const maxMetadataBytes = 1 << 20

// getJSON GETs u, the document named what, and decodes a 200 JSON
// answer into v. found is false for answers that say "not here" (4xx, or
// a body that is not JSON). Redirects are followed within u's origin
// only (*RedirectError).
func getJSON(ctx context.Context, hc *http.Client, what, u string, v any) (found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := send(hc, req, what, followSameOrigin)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes))
	if err != nil {
		return false, err
	}
	if resp.StatusCode != http.StatusOK {
		if resp.StatusCode >= 500 {
			return false, fmt.Errorf("oauth: GET %s: HTTP %s", u, resp.Status)
		}
		return false, nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return false, nil
	}
	return true, nil
}

// origin returns scheme://host of u.
func origin(u *url.URL) string {
	return u.Scheme + "://" + u.Host
}

// resourceMetadataURLs returns the well-known protected resource metadata
// URLs of the resource at server, in the order to try them (RFC 9728 §3.1;
// path-based first, then the root).
func resourceMetadataURLs(server *url.URL) []string {
	const wk = "/.well-known/oauth-protected-resource"
	p := strings.TrimSuffix(server.EscapedPath(), "/")
	if p == "" {
		return []string{origin(server) + wk}
	}
	return []string{origin(server) + wk + p, origin(server) + wk}
}

// serverMetadataURLs returns the metadata URLs of the authorization server
// whose issuer identifier is issuer, in the order the MCP specification
// gives (RFC 8414 §3.1 and OpenID Connect Discovery, path-aware).
func serverMetadataURLs(issuer string) ([]string, error) {
	u, err := checkURL("issuer", issuer)
	if err != nil {
		return nil, err
	}
	if u.RawQuery != "" || u.ForceQuery {
		// RFC 8414 §2: an issuer has no query or fragment.
		return nil, &InsecureURLError{Endpoint: "issuer", URL: issuer, Reason: "it carries a query"}
	}
	o := origin(u)
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	if p == "" {
		return []string{
			o + "/.well-known/oauth-authorization-server",
			o + "/.well-known/openid-configuration",
		}, nil
	}
	return []string{
		o + "/.well-known/oauth-authorization-server" + p,
		o + "/.well-known/openid-configuration" + p,
		o + p + "/.well-known/openid-configuration",
	}, nil
}

// canonicalOrigin lower-cases scheme and host and drops a default port.
func canonicalOrigin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host
}

// CanonicalResource returns the canonical form of an MCP server URL as an
// RFC 8707 resource indicator: lower-case scheme and host, no default
// port, no fragment, no trailing slash.
func CanonicalResource(server string) (string, error) {
	u, err := url.Parse(server)
	if err != nil {
		return "", err
	}
	if u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("oauth: %q is not an absolute URL", server)
	}
	s := canonicalOrigin(u) + strings.TrimSuffix(u.EscapedPath(), "/")
	if u.RawQuery != "" {
		s += "?" + u.RawQuery
	}
	return s, nil
}

// resourceMatches reports whether the resource identifier of protected
// resource metadata designates the MCP server at server: the same origin
// (compared after scheme-based normalization) and a path that is the
// server's or a path-segment prefix of it (a resource at the root covers
// the whole origin).
func resourceMatches(resource string, server *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil || r.Scheme == "" || r.Host == "" || r.Fragment != "" {
		return false
	}
	if canonicalOrigin(r) != canonicalOrigin(server) {
		return false
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	sp := strings.TrimSuffix(server.EscapedPath(), "/")
	return rp == "" || sp == rp || strings.HasPrefix(sp, rp+"/")
}

// supportsS256 reports whether the metadata advertises PKCE S256.
func (m *ServerMetadata) supportsS256() bool {
	return slices.Contains(m.CodeChallengeMethodsSupported, "S256")
}
