package auth

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-json-experiment/json"
)

// WellKnownPath is the RFC 9728 well-known path prefix.
const WellKnownPath = "/.well-known/oauth-protected-resource"

// ProtectedResourceMetadata is the RFC 9728 §2 document (MCP authorization: an
// MCP server MUST serve it, with at least one authorization server).
type ProtectedResourceMetadata struct {
	// Resource is the canonical URI of the MCP server (RFC 8707), the
	// audience its tokens carry. Required.
	Resource string `json:"resource"`
	// AuthorizationServers lists the issuer identifiers of the
	// authorization servers. At least one is required.
	AuthorizationServers []string `json:"authorization_servers"`
	// JWKSURI is the resource's own JWK Set (for signed responses); most
	// MCP servers leave it empty.
	JWKSURI string `json:"jwks_uri,omitzero"`
	// ScopesSupported lists the scopes clients may request;
	// offline_access is never advertised (SEP-2207).
	ScopesSupported []string `json:"scopes_supported,omitzero"`
	// BearerMethodsSupported: default ["header"], the only method the
	// middleware accepts.
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitzero"`
	// ResourceSigningAlgValuesSupported (RFC 9728 §2).
	ResourceSigningAlgValuesSupported []string `json:"resource_signing_alg_values_supported,omitzero"`
	// ResourceName is a human-readable name.
	ResourceName string `json:"resource_name,omitzero"`
	// ResourceDocumentation, ResourcePolicyURI and ResourceTOSURI are
	// URLs of human-readable pages.
	ResourceDocumentation string `json:"resource_documentation,omitzero"`
	ResourcePolicyURI     string `json:"resource_policy_uri,omitzero"`
	ResourceTOSURI        string `json:"resource_tos_uri,omitzero"`
	// DPoPSigningAlgValuesSupported and DPoPBoundAccessTokensRequired
	// are the RFC 9449 §5.2 members.
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitzero"`
	DPoPBoundAccessTokensRequired bool     `json:"dpop_bound_access_tokens_required,omitzero"`
}

// Validate checks the members MCP requires: an absolute Resource without
// fragment, and at least one absolute authorization server URL.
func (m *ProtectedResourceMetadata) Validate() error {
	if _, err := canonicalResource(m.Resource); err != nil {
		return err
	}
	if len(m.AuthorizationServers) == 0 {
		return fmt.Errorf("auth: protected resource metadata needs at least one authorization server")
	}
	for _, as := range m.AuthorizationServers {
		u, err := url.Parse(as)
		if err != nil || u.Scheme == "" || u.Host == "" || u.Fragment != "" || u.RawQuery != "" {
			return fmt.Errorf("auth: authorization server %q is not an issuer URL", as)
		}
	}
	return nil
}

// canonicalResource parses a canonical resource URI (RFC 8707 §2: an
// absolute URI without fragment).
func canonicalResource(resource string) (*url.URL, error) {
	u, err := url.Parse(resource)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Fragment != "" || u.Opaque != "" {
		return nil, fmt.Errorf("auth: resource %q is not an absolute URI without fragment", resource)
	}
	return u, nil
}

// ResourceMetadataURL returns the path-based well-known URI of the
// protected resource metadata of resource (RFC 9728 §3.1): the
// well-known prefix inserted between the host and the path, such as
// https://mcp.example.com/.well-known/oauth-protected-resource/mcp for
// https://mcp.example.com/mcp. A trailing slash of the path is dropped.
func ResourceMetadataURL(resource string) (string, error) {
	u, err := canonicalResource(resource)
	if err != nil {
		return "", err
	}
	out := url.URL{Scheme: u.Scheme, Host: u.Host, Path: WellKnownPath + strings.TrimSuffix(u.Path, "/"), RawQuery: u.RawQuery}
	if u.RawPath != "" {
		out.RawPath = WellKnownPath + strings.TrimSuffix(u.RawPath, "/")
	}
	return out.String(), nil
}

// ProtectedResourceOptions tunes ProtectedResourceHandlerWith and
// MountProtectedResourceWith. The zero value (and nil) serves the
// document as ProtectedResourceHandler does.
type ProtectedResourceOptions struct {
	// CORS, when set, lets only the pages of its allowed origins read the
	// document from a browser (the origins given to the MCP endpoint's
	// CORS, typically). nil: any web page may
	// (Access-Control-Allow-Origin: *); the document is public and the
	// answer never allows credentials, so nil is the usual choice.
	CORS *CORSOptions
}

// ProtectedResourceHandler serves meta as JSON to GET and HEAD (405
// otherwise), with CORS open to any origin so that browser-based clients
// can discover the authorization server. offline_access is removed from
// scopes_supported; bearer_methods_supported defaults to ["header"]. It
// returns an error when meta does not Validate.
func ProtectedResourceHandler(meta ProtectedResourceMetadata) (http.Handler, error) {
	return ProtectedResourceHandlerWith(meta, nil)
}

// ProtectedResourceHandlerWith is ProtectedResourceHandler with options:
// with opts.CORS, preflights and answers follow that policy (CORS)
// instead of allowing every origin.
func ProtectedResourceHandlerWith(meta ProtectedResourceMetadata, opts *ProtectedResourceOptions) (http.Handler, error) {
	if err := meta.Validate(); err != nil {
		return nil, err
	}
	meta.ScopesSupported = normScopes(meta.ScopesSupported)
	if meta.BearerMethodsSupported == nil {
		meta.BearerMethodsSupported = []string{"header"}
	}
	body, err := json.Marshal(&meta)
	if err != nil {
		return nil, fmt.Errorf("auth: encoding protected resource metadata: %w", err)
	}
	serve := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodOptions:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			w.WriteHeader(http.StatusNoContent)
			return
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "max-age=3600")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	})
	if opts != nil && opts.CORS != nil {
		return CORS(opts.CORS, []string{http.MethodGet, http.MethodHead}, serve), nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Open to every origin, the same answer whatever the Origin.
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Mcp-Protocol-Version")
		}
		serve(w, r)
	}), nil
}

// MountProtectedResource registers ProtectedResourceHandler(meta) on mux
// at the path-based well-known URI of meta.Resource
// (/.well-known/oauth-protected-resource/<path>) and at the root one
// (/.well-known/oauth-protected-resource), the two places MCP clients
// look (MCP authorization). When the resource has no path, both are the same
// and it is registered once. A host serving several MCP resources should
// mount each with its own path and register the root one itself, if at
// all. It returns an error when meta does not Validate, and panics as
// http.ServeMux.Handle does on conflicting registrations.
func MountProtectedResource(mux *http.ServeMux, meta ProtectedResourceMetadata) error {
	return MountProtectedResourceWith(mux, meta, nil)
}

// MountProtectedResourceWith is MountProtectedResource with options
// (ProtectedResourceHandlerWith).
func MountProtectedResourceWith(mux *http.ServeMux, meta ProtectedResourceMetadata, opts *ProtectedResourceOptions) error {
	if err := meta.Validate(); err != nil {
		return err
	}
	u, _ := canonicalResource(meta.Resource)
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	if strings.ContainsAny(p, "{}") {
		return fmt.Errorf("auth: resource path %q cannot be a ServeMux pattern", u.Path)
	}
	h, err := ProtectedResourceHandlerWith(meta, opts)
	if err != nil {
		return err
	}
	mux.Handle(WellKnownPath, h)
	if p != "" {
		mux.Handle(WellKnownPath+p, h)
	}
	return nil
}
