package oauth

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// maxMetadataRedirects bounds the same-origin redirects one metadata
// request follows.
const maxMetadataRedirects = 3

// redirectPolicy says which redirects a request of the OAuth client
// follows.
type redirectPolicy int

// Redirect policies of the OAuth client's own requests.
const (
	// followNone: requests that carry credentials (client secrets,
	// assertions, codes, refresh tokens, ID tokens) — token, registration
	// and token exchange requests. A 307/308 would have the client send
	// them again to the redirect's target, a 301/302/303 turn them into
	// a GET somewhere else; neither is what the client asked for.
	followNone redirectPolicy = iota
	// followSameOrigin: metadata GETs, whose answers are trusted. A
	// document moved within its origin is followed; another origin never
	// is, since the origin is what the client decided to trust.
	followSameOrigin
)

// redirectClient returns a copy of hc (nil: http.DefaultClient) that
// refuses the redirects policy forbids with a *RedirectError naming
// endpoint. The copy keeps hc's transport, jar and timeout; hc's own
// CheckRedirect is replaced, never consulted.
func redirectClient(hc *http.Client, endpoint string, policy redirectPolicy) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	c := *hc
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		first, prev := via[0], via[len(via)-1]
		e := &RedirectError{Endpoint: endpoint, URL: prev.URL.String(), Location: req.URL.String()}
		switch {
		case policy == followNone:
			e.Reason = "requests carrying credentials follow no redirect"
		case canonicalOrigin(req.URL) != canonicalOrigin(first.URL):
			e.Reason = "another origin; only redirects within the origin of the request are followed"
		case len(via) > maxMetadataRedirects:
			e.Reason = "too many redirects"
		default:
			return nil
		}
		return e
	}
	return &c
}

// send sends req with hc under the redirect policy; a refused redirect
// is returned as the *RedirectError itself, not wrapped in a *url.Error.
func send(hc *http.Client, req *http.Request, endpoint string, policy redirectPolicy) (*http.Response, error) {
	resp, err := redirectClient(hc, endpoint, policy).Do(req)
	if re := (*RedirectError)(nil); errors.As(err, &re) {
		return nil, re
	}
	return resp, err
}

// checkURL parses raw, a URL the OAuth client is to use as endpoint,
// and refuses it unless it is an absolute https URL, or an http URL of
// a loopback host (RFC 8252 §8.3; the MCP specification requires https
// for every authorization server endpoint and allows http only for
// localhost redirect URIs, a loopback server being the same case: the
// traffic never leaves the machine). A URL with user information or a
// fragment is refused too (RFC 8414 §2, RFC 6749 §3.1).
func checkURL(endpoint, raw string) (*url.URL, error) {
	e := &InsecureURLError{Endpoint: endpoint, URL: raw}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		e.Reason = "not a URL"
	case !u.IsAbs() || u.Host == "" || u.Opaque != "":
		e.Reason = "not an absolute URL"
	case u.User != nil:
		e.Reason = "it carries user information"
	case u.Fragment != "" || strings.HasSuffix(raw, "#"):
		e.Reason = "it carries a fragment"
	case strings.EqualFold(u.Scheme, "https"):
		return u, nil
	case !strings.EqualFold(u.Scheme, "http"):
		e.Reason = "only https is accepted"
	case !isLoopbackHost(u.Hostname()):
		e.Reason = "https is required (plain http only for loopback hosts)"
	default:
		return u, nil
	}
	return nil, e
}

// isLoopbackHost reports whether host (without port or brackets) names
// the local machine: localhost, 127.0.0.0/8 or ::1.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkMetadataURL checks the resource_metadata URL of a challenge of
// the MCP server at server: the rules of checkURL, and a loopback URL
// only for a server on loopback itself. RFC 9728 §5 and the MCP
// specification let the document live on another origin than the
// server (it is authenticated by its resource member, which must
// designate the server); but a server elsewhere has no business making
// the client send requests into the local machine.
func checkMetadataURL(server *url.URL, raw string) (string, error) {
	const endpoint = "protected resource metadata URL (resource_metadata)"
	ref, err := url.Parse(raw)
	if err != nil {
		return "", &InsecureURLError{Endpoint: endpoint, URL: raw, Reason: "not a URL"}
	}
	abs := server.ResolveReference(ref).String()
	u, err := checkURL(endpoint, abs)
	if err != nil {
		return "", err
	}
	if isLoopbackHost(u.Hostname()) && !isLoopbackHost(server.Hostname()) {
		return "", &InsecureURLError{Endpoint: endpoint, URL: abs, Reason: "a loopback URL named by a server that is not on loopback"}
	}
	return abs, nil
}

// CheckEndpointURL reports why raw may not serve as an authorization
// server endpoint (what names it in the error, such as "token
// endpoint"): an *InsecureURLError unless it is an absolute https URL, or
// http on a loopback host, without user information or a fragment. It
// is the check every request of this package applies, for configuration
// that is read before any request is made.
func CheckEndpointURL(what, raw string) error {
	_, err := checkURL(what, raw)
	return err
}
