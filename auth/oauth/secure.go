package oauth

import (
	"errors"
	"net/http"
)

// maxMetadataRedirects bounds the same-origin redirects one metadata
// request follows.
const maxMetadataRedirects = 3

// Redirect policies of the OAuth client's own requests.
const (
	// followNone: requests that carry credentials (client secrets,
	// assertions, codes, refresh tokens, ID tokens) — token, registration
	// and token exchange requests. A 307/308 would have the client send
	// them again to the redirect's target, a 301/302/303 turn them into
	// a GET somewhere else; neither is what the client asked for.
	followNone = false
	// followSameOrigin: metadata GETs, whose answers are trusted. A
	// document moved within its origin is followed; another origin never
	// is, since the origin is what the client decided to trust.
	followSameOrigin = true
)

// redirectClient returns a copy of hc (nil: http.DefaultClient) that
// refuses the redirects policy forbids with a *RedirectError naming
// endpoint. The copy keeps hc's transport, jar and timeout; hc's own
// CheckRedirect is replaced, never consulted.
func redirectClient(hc *http.Client, endpoint string, policy bool) *http.Client {
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
func send(hc *http.Client, req *http.Request, endpoint string, policy bool) (*http.Response, error) {
	resp, err := redirectClient(hc, endpoint, policy).Do(req)
	if re := (*RedirectError)(nil); errors.As(err, &re) {
		return nil, re
	}
	return resp, err
}
