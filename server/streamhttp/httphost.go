package streamhttp

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// checkHostOrigin protects the endpoint from web pages (2025-11-25 and
// 2026-07-28 Streamable HTTP, security warning: servers MUST validate
// Origin; MCP security best practices on DNS rebinding). It returns 403
// and a reason for a request that is refused, 0 otherwise.
//
// A page that rebinds its own name to the server's address makes the
// browser send Host and Origin of that name, matching each other: a
// Host is evidence only once checked against names the server knows
// to be its own (AllowedHosts, or loopback names on a loopback
// listener). So:
//
//   - the Host must be in AllowedHosts, or a loopback name on a
//     loopback listener; on another listener without AllowedHosts any
//     Host passes, but proves nothing;
//   - an Origin, when present (browsers send it on every POST and on
//     cross-origin requests), must be in AllowedOrigins, or else name
//     the checked Host itself, or be a loopback origin on a loopback
//     listener; one Origin only;
//   - without Origin, Sec-Fetch-Site (the fetch metadata browsers
//     send) must not say cross-site or same-site.
//
// A request with neither header comes from a client that is not a
// browser, which DNS rebinding does not concern.
func (h *Handler) checkHostOrigin(r *http.Request) (int, string) {
	loopback := isLoopbackListener(r)
	hostChecked := false
	switch {
	case len(h.opts.AllowedHosts) > 0:
		hostname := hostOnly(r.Host)
		if !slices.ContainsFunc(h.opts.AllowedHosts, func(a string) bool {
			return strings.EqualFold(a, r.Host) || strings.EqualFold(a, hostname)
		}) {
			return http.StatusForbidden, "Forbidden: Host not allowed"
		}
		hostChecked = true
	case loopback:
		if !isLoopbackName(hostOnly(r.Host)) {
			return http.StatusForbidden, "Forbidden: Host not allowed"
		}
		hostChecked = true
	}
	values := r.Header["Origin"]
	switch len(values) {
	case 0:
		switch headerValue(r.Header, "Sec-Fetch-Site") {
		case "", "same-origin", "none":
			return 0, ""
		}
		return http.StatusForbidden, "Forbidden: cross-site request"
	case 1:
	default:
		return http.StatusForbidden, "Forbidden: more than one Origin"
	}
	origin := values[0]
	if h.corsAllows(origin) {
		return 0, ""
	}
	if len(h.opts.AllowedOrigins) > 0 {
		if ok, _ := h.origins.Match(origin); ok {
			return 0, ""
		}
		return http.StatusForbidden, "Forbidden: Origin not allowed"
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return http.StatusForbidden, "Forbidden: invalid Origin"
	}
	switch {
	case !hostChecked:
		return http.StatusForbidden, "Forbidden: Origin not allowed (browser requests to this server need an allow-list: AllowedOrigins or AllowedHosts)"
	case loopback && isLoopbackName(u.Hostname()), strings.EqualFold(u.Host, r.Host):
		return 0, ""
	}
	return http.StatusForbidden, "Forbidden: Origin not allowed"
}

func isLoopbackListener(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return true // unknown (e.g. httptest.NewRecorder): be strict
	}
	if a, ok := addr.(*net.TCPAddr); ok && a != nil && a.Zone == "" { // the common case, without formatting the address
		return len(a.IP) == 0 || a.IP.IsLoopback()
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return true
	}
	ip := net.ParseIP(host)
	return ip == nil || ip.IsLoopback()
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// isLoopbackName reports whether host is "localhost" or a loopback IP
// address (IPv4, IPv6 or IPv4-mapped IPv6; not one with a zone).
func isLoopbackName(host string) bool {
	host = strings.Trim(host, "[]")
	if host == "127.0.0.1" || strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

// sessionGETAllowed applies to a GET that opens a 2024-11-05 session
// (Options.LegacySSE) the rule a POST meets, checkHostOrigin having
// passed it already. Browsers send Origin on every POST, so a POST from
// a page passes only with an Origin that a checked Host or AllowedOrigins
// vouches for; they send none on a same-origin GET, which is what a page
// that rebinds its name to the server makes. Such a GET must not create
// a session where the POST could not: without Origin, the Host must have
// been checked (AllowedHosts, or a loopback name on a loopback listener).
// An Origin present was judged by checkHostOrigin.
func sessionGETAllowed(h *Handler, r *http.Request) bool {
	if len(r.Header["Origin"]) > 0 {
		return true
	}
	return len(h.opts.AllowedHosts) > 0 || isLoopbackListener(r)
}
