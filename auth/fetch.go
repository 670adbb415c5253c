package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-json-experiment/json"
)

// maxRedirects bounds the same-origin redirects one fetch follows.
const maxRedirects = 3

// errRedirect is wrapped by the error of a fetch whose answer was a
// redirect the verifier does not follow.
var errRedirect = errors.New("redirect refused")

// getJSON GETs u and decodes its JSON body (at most 1 MiB) into dst.
// Redirects are followed within u's origin only: the metadata and keys
// the verifier trusts come from the origin it was configured with or
// that the issuer's metadata named, never from wherever an answer
// points.
func (v *JWTVerifier) getJSON(ctx context.Context, u string, dst any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	c := *v.client
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		prev := via[len(via)-1].URL
		switch {
		case originOf(req.URL) != originOf(via[0].URL):
			return fmt.Errorf("%w: %s redirected to %s, another origin", errRedirect, prev, req.URL)
		case len(via) > maxRedirects:
			return fmt.Errorf("%w: %s redirected to %s, more than %d redirects", errRedirect, prev, req.URL, maxRedirects)
		}
		return nil
	}
	resp, err := c.Do(req)
	if err != nil {
		if ue := (*url.Error)(nil); errors.As(err, &ue) && errors.Is(err, errRedirect) {
			return ue.Err // the redirect error names the URLs already
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxMetadataBytes))
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if len(body) > maxMetadataBytes {
		return fmt.Errorf("GET %s: document exceeds %d bytes", u, maxMetadataBytes)
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// originOf is the origin of u (RFC 6454): scheme, host and port, with
// case and default ports normalized.
func originOf(u *url.URL) string {
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		return scheme + "://" + net.JoinHostPort(host, port)
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host
}

// checkFetchURL refuses a URL the verifier is to fetch keys or metadata
// from unless it is absolute https, or http on a loopback host
// (localhost, 127.0.0.0/8, ::1), where nothing crosses a network: keys
// fetched in clear could be replaced on the way, and with them every
// token's signature.
func checkFetchURL(what, raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return fmt.Errorf("auth: %s %q is not an absolute https URL", what, raw)
	case u.User != nil:
		return fmt.Errorf("auth: %s %q carries user information; an https URL without it is required", what, raw)
	case strings.EqualFold(u.Scheme, "https"):
		return nil
	case strings.EqualFold(u.Scheme, "http") && isLoopbackHost(u.Hostname()):
		return nil
	}
	return fmt.Errorf("auth: %s %q must be https (plain http only on loopback hosts)", what, raw)
}

// isLoopbackHost reports whether host (without port or brackets) names
// the local machine.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
