package streamable

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// DefaultMaxRedirects is the default of Options.MaxRedirects: the
// redirects one request follows (net/http's own default).
const DefaultMaxRedirects = 10

var (
	// ErrCrossOriginRedirect is why a request failed when the server
	// redirected it to another origin (scheme, host and port) and
	// Options.AllowCrossOriginRedirects is not set. The error names both
	// URLs.
	ErrCrossOriginRedirect = errors.New("streamable: redirect to another origin refused")
	// ErrRedirectDropsBody is why a POST failed when the server answered
	// 301, 302 or 303: following it would turn the message into a GET
	// and lose it. Only 307 and 308 keep the method and body.
	ErrRedirectDropsBody = errors.New("streamable: redirect would turn the POST into a GET")
	// ErrTooManyRedirects is why a request failed after
	// Options.MaxRedirects redirects.
	ErrTooManyRedirects = errors.New("streamable: too many redirects")
)

// redirectClient returns the client the Conn sends with: a shallow copy
// of hc (same Transport, Jar and Timeout; hc itself is never modified)
// whose CheckRedirect applies the Conn's policy first and then hc's own
// CheckRedirect, if any, which can refuse more but never widen it.
func (c *Conn) redirectClient(hc *http.Client) *http.Client {
	cp := *hc
	user := hc.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := c.checkRedirect(req, via); err != nil {
			return err
		}
		if user != nil {
			return user(req, via)
		}
		return nil
	}
	return &cp
}

// checkRedirect is the Conn's redirect policy (see Options.AllowCrossOriginRedirects).
// net/http calls it with the next request's headers already copied from
// the first one; what it removes from req.Header is not sent.
func (c *Conn) checkRedirect(req *http.Request, via []*http.Request) error {
	first, prev := via[0], via[len(via)-1]
	if len(via) > c.opts.MaxRedirects {
		return fmt.Errorf("%w (%d) from %s", ErrTooManyRedirects, len(via), first.URL.Redacted())
	}
	if first.Method == http.MethodPost && req.Method != http.MethodPost {
		return fmt.Errorf("%w: %s redirected to %s with %s", ErrRedirectDropsBody,
			prev.URL.Redacted(), req.URL.Redacted(), req.Response.Status)
	}
	if originOf(req.URL) == originOf(first.URL) {
		return nil
	}
	if !c.opts.AllowCrossOriginRedirects {
		return fmt.Errorf("%w: %s redirected to %s (set Options.AllowCrossOriginRedirects to follow it)",
			ErrCrossOriginRedirect, prev.URL.Redacted(), req.URL.Redacted())
	}
	stripCredentials(req.Header, c.opts.Header)
	return nil
}

// stripCredentials removes from h what must not reach another origin:
// the MCP headers (the session, the revision, the request metadata),
// credentials, cookies set by hand (a Jar adds the target's own after
// this), and every header the caller configured in Options.Header.
func stripCredentials(h, configured http.Header) {
	for k := range h {
		ck := http.CanonicalHeaderKey(k)
		switch {
		case strings.HasPrefix(ck, "Mcp-"), ck == "Last-Event-Id",
			ck == "Authorization", ck == "Proxy-Authorization", ck == "Dpop", ck == "Cookie":
			delete(h, k)
		}
	}
	for k := range configured {
		h.Del(k)
	}
}

// originOf is the origin of u: scheme and host lower-cased, the default
// port of the scheme made explicit.
func originOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}
