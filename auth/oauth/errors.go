package oauth

import (
	"errors"
	"fmt"
)

// ErrNoAuthorizer is returned when a flow needs the user's authorization
// and Transport.Authorize is nil.
var ErrNoAuthorizer = errors.New("oauth: authorization needed but Transport.Authorize is nil")

// ResourceMismatchError reports that the protected resource metadata names a resource
// that is not the MCP server the client talks to. No request was made to
// any authorization server.
type ResourceMismatchError struct {
	Server   string // the MCP server URL
	Resource string // the metadata's resource
}

func (e *ResourceMismatchError) Error() string {
	return fmt.Sprintf("oauth: protected resource metadata is for %q, not for the server %q", e.Resource, e.Server)
}

// IssuerMismatchError reports that an authorization server's metadata, or its
// authorization response (RFC 9207 iss), names another issuer than the
// one expected. Where names the place ("metadata", "authorization
// response"). Got is empty when an advertised iss was missing.
type IssuerMismatchError struct {
	Where    string
	Expected string
	Got      string
}

func (e *IssuerMismatchError) Error() string {
	if e.Got == "" {
		return fmt.Sprintf("oauth: %s carries no issuer, expected %q", e.Where, e.Expected)
	}
	return fmt.Sprintf("oauth: %s names issuer %q, expected %q", e.Where, e.Got, e.Expected)
}

// DiscoveryError reports that the authorization server could not be discovered or is
// unusable (no metadata, no PKCE S256, ...).
type DiscoveryError struct {
	Reason string
	Err    error
}

func (e *DiscoveryError) Error() string {
	if e.Err != nil {
		return "oauth: discovery: " + e.Reason + ": " + e.Err.Error()
	}
	return "oauth: discovery: " + e.Reason
}

func (e *DiscoveryError) Unwrap() error { return e.Err }

// RegistrationError reports that no client registration could be obtained from the
// authorization server: no pre-registered credentials for it, no Client
// ID Metadata Document it accepts, and Dynamic Client Registration is not
// offered or failed (Err).
type RegistrationError struct {
	Issuer string
	Err    error
}

func (e *RegistrationError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("oauth: cannot register a client with %s: %v", e.Issuer, e.Err)
	}
	return fmt.Sprintf("oauth: cannot register a client with %s: no pre-registered credentials, no client ID metadata document support, no dynamic client registration", e.Issuer)
}

func (e *RegistrationError) Unwrap() error { return e.Err }

// AuthorizationError reports that the authorization response was an error
// (RFC 6749 §4.1.2.1), or was unusable (state mismatch, no code).
type AuthorizationError struct {
	Code        string // the error parameter, if any
	Description string
}

func (e *AuthorizationError) Error() string {
	if e.Code == "" {
		return "oauth: authorization failed: " + e.Description
	}
	s := "oauth: authorization failed: " + e.Code
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s
}

// TokenError reports that the token endpoint refused a request (RFC 6749 §5.2).
type TokenError struct {
	StatusCode  int
	Code        string
	Description string
}

func (e *TokenError) Error() string {
	s := fmt.Sprintf("oauth: token endpoint answered HTTP %d", e.StatusCode)
	if e.Code != "" {
		s += ": " + e.Code
	}
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s
}

// TooManyAuthorizationsError reports that one request was still refused after
// Attempts authorization flows (the server keeps asking for scopes it
// does not grant, or keeps rejecting fresh tokens).
type TooManyAuthorizationsError struct {
	Attempts   int
	StatusCode int    // of the last refusal, 401 or 403
	Scope      string // the scope last challenged for
}

func (e *TooManyAuthorizationsError) Error() string {
	return fmt.Sprintf("oauth: request still refused (HTTP %d, scope %q) after %d authorizations", e.StatusCode, e.Scope, e.Attempts)
}

// RedirectError reports that a server answered a request of the OAuth client with a
// redirect the client does not follow. Token, registration and token
// exchange requests carry credentials and follow no redirect at all;
// metadata requests follow redirects on their own origin (scheme, host
// and port) only, a few at most. Nothing was sent to Location.
type RedirectError struct {
	Endpoint string // what was requested: "token endpoint", "protected resource metadata", …
	URL      string // the URL requested
	Location string // where the answer redirected to
	Reason   string // why the redirect was refused
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("oauth: the %s %s redirected to %s: %s", e.Endpoint, e.URL, e.Location, e.Reason)
}

// InsecureURLError reports that a URL the OAuth client was to use is not https (or
// is not a usable absolute URL). MCP requires every authorization server
// endpoint to be served over https; http is accepted for loopback hosts
// only (localhost, 127.0.0.0/8, [::1]), where nothing crosses a network.
// No request was made to it.
type InsecureURLError struct {
	Endpoint string // what the URL is: "token endpoint", "issuer", …
	URL      string
	Reason   string
}

func (e *InsecureURLError) Error() string {
	return fmt.Sprintf("oauth: the %s %q is refused: %s", e.Endpoint, e.URL, e.Reason)
}
