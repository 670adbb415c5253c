package apps

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Validate checks that every entry of c is an origin a host can put in a
// Content Security Policy as is: scheme://host[:port], with the scheme
// https, wss, http or ws, an ASCII host name (a DNS name, "localhost",
// an IPv4 address or a bracketed IPv6 address), or a subdomain wildcard
// "*." before a name of two labels or more (https://*.example.com), an
// optional port (digits) and at most a "/" after it. The MCP Apps
// extension defines these lists as origins, so anything else is refused
// with an error that names the field, the index and the value: CSP
// keywords ('unsafe-inline', 'unsafe-eval', 'unsafe-hashes',
// 'wasm-unsafe-eval', 'self', nonces, hashes: anything quoted), a bare
// "*" or a wildcard host, other schemes (javascript:, data:, blob:,
// file:, …), a scheme-less host, a path, query or fragment, and any
// whitespace, control character, ';' or ',' (which would end the source
// list or the directive and inject another). A nil c is valid.
//
// AddResource calls it; a host may call it on the CSP a server sent
// (UI.Meta.CSP) before building a policy from it.
func (c *CSP) Validate() error {
	if c == nil {
		return nil
	}
	for _, f := range []struct {
		name string
		list []string
	}{
		{"ConnectDomains", c.ConnectDomains},
		{"ResourceDomains", c.ResourceDomains},
		{"FrameDomains", c.FrameDomains},
		{"BaseURIDomains", c.BaseURIDomains},
	} {
		for i, src := range f.list {
			if why := checkOrigin(src); why != "" {
				return fmt.Errorf("CSP.%s[%d] %q: %s", f.name, i, src, why)
			}
		}
	}
	return nil
}

// maxOriginLen bounds a source: a scheme, a 253-byte host name, a port.
const maxOriginLen = 300

// originWant ends the reasons checkOrigin gives: what a source should
// look like.
const originWant = "want an origin such as https://api.example.com"

// checkOrigin returns why src is not an acceptable origin, or "".
func checkOrigin(src string) string {
	switch {
	case src == "":
		return "empty; " + originWant
	case len(src) > maxOriginLen:
		return fmt.Sprintf("longer than %d bytes", maxOriginLen)
	}
	if why := checkSourceChars(src); why != "" {
		return why
	}
	if src == "*" {
		return "a bare wildcard allows every origin; " + originWant
	}
	rest, why := checkScheme(src)
	if why != "" {
		return why
	}
	return checkHostPort(strings.TrimSuffix(rest, "/"))
}

// checkSourceChars refuses the characters that would end a source, a
// directive or a policy, quotes and non-ASCII text.
func checkSourceChars(src string) string {
	for _, r := range src {
		switch {
		case r <= ' ' || r == 0x7f:
			return "contains whitespace or a control character, which would end the source; " + originWant
		case r == ';' || r == ',':
			return fmt.Sprintf("contains %q, which would end the CSP directive or policy; %s", r, originWant)
		case r == '\'' || r == '"':
			return "a CSP keyword or quoted source, not an origin; " + originWant
		case r >= 0x80:
			return "not ASCII (write an internationalized name in punycode); " + originWant
		}
	}
	return ""
}

// checkScheme checks that src starts with an allowed scheme and "://",
// and returns what follows.
func checkScheme(src string) (rest, why string) {
	scheme, rest, ok := strings.Cut(src, "://")
	if !ok {
		s, after, hasColon := strings.Cut(src, ":")
		switch {
		case !hasColon || strings.ContainsAny(s, "./[*") || after != "" && strings.Trim(after, "0123456789/") == "":
			return "", "no scheme; " + originWant
		case after == "":
			return "", fmt.Sprintf("a scheme source (%q) allows every host; %s", src, originWant)
		}
		return "", fmt.Sprintf("the scheme %q is not allowed (https, wss, http, ws); %s", strings.ToLower(s)+":", originWant)
	}
	switch strings.ToLower(scheme) {
	case "https", "wss", "http", "ws":
	default:
		return "", fmt.Sprintf("the scheme %q is not allowed (https, wss, http, ws)", strings.ToLower(scheme)+":")
	}
	return rest, ""
}

// checkHostPort checks the host (a name or a bracketed IPv6 address) and
// the optional port of an origin.
func checkHostPort(rest string) string {
	if strings.ContainsAny(rest, "/?#@\\") {
		return "has a path, query, fragment or user info; " + originWant
	}
	host, port := rest, ""
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return "an unclosed IPv6 address; " + originWant
		}
		host, port = host[:end+1], host[end+1:]
		if port != "" && !strings.HasPrefix(port, ":") {
			return "text after the IPv6 address; " + originWant
		}
		port = strings.TrimPrefix(port, ":")
		if !validIPv6(host[1:end]) {
			return "not an IPv6 address in brackets; " + originWant
		}
	} else {
		if i := strings.LastIndexByte(host, ':'); i >= 0 {
			host, port = host[:i], host[i+1:]
			if port == "" {
				return "an empty port; " + originWant
			}
		}
		if why := checkHost(host); why != "" {
			return why + "; " + originWant
		}
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port[0] == '0' {
			return fmt.Sprintf("the port %q is not a number from 1 to 65535", port)
		}
	}
	return ""
}

// checkHost checks a DNS name, or "*." and a name of two labels or more.
func checkHost(host string) string {
	name, wild := strings.CutPrefix(host, "*.")
	switch {
	case host == "":
		return "no host"
	case host == "*":
		return "a wildcard host allows every host"
	case strings.Contains(name, "*"):
		return "a wildcard is allowed only as the first label (https://*.example.com)"
	case len(name) > 253:
		return "a host name longer than 253 bytes"
	}
	labels := strings.Split(name, ".")
	if wild && len(labels) < 2 {
		return "a wildcard must stand before a name of two labels or more (https://*.example.com)"
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "not a valid host name"
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return "not a valid host name"
			}
		}
	}
	return ""
}

// validIPv6 reports whether s is an IPv6 address without a zone.
func validIPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6() && a.Zone() == ""
}
