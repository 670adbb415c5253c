package corsorigin

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// List is an allow-list of web origins. The zero List allows none.
type List struct {
	exact map[string]bool
	any   bool
}

// Parse reads an allow-list: exact origins (scheme://host[:port],
// matched without regard to case or a trailing slash) and "*", any http
// or https origin. "null" (sandboxed frames, file: pages of any site)
// and empty entries name no one.
func Parse(origins []string) List {
	l := ParseNames(origins)
	l.any = slices.ContainsFunc(origins, func(o string) bool { return strings.TrimSpace(o) == "*" })
	return l
}

// ParseNames reads an allow-list of exact origins only, as Parse does but
// with "*" naming no one: for a list that must name every origin it
// admits.
func ParseNames(origins []string) List {
	l := List{exact: make(map[string]bool, len(origins))}
	for _, origin := range origins {
		if origin = normal(strings.TrimSpace(origin)); origin != "" && origin != "null" && origin != "*" {
			l.exact[origin] = true
		}
	}
	return l
}

func normal(origin string) string { return strings.ToLower(strings.TrimSuffix(origin, "/")) }

// Match reports whether the Origin header value origin is allowed, and
// whether by name (explicit) rather than through "*".
func (l List) Match(origin string) (ok, explicit bool) {
	if l.exact[normal(origin)] {
		return true, true
	}
	return l.any && webOrigin(origin), false
}

// webOrigin reports whether origin is an http or https origin as a
// browser serializes it: the scheme, "://", a host (a name, an IPv4
// address or a bracketed IPv6 one) and an optional port of digits,
// nothing else (no user information, path, query or fragment). It reads
// the bytes in place: it runs on every request of a "*" list.
func webOrigin(origin string) bool {
	rest, ok := strings.CutPrefix(origin, "https://")
	if !ok {
		if rest, ok = strings.CutPrefix(origin, "http://"); !ok {
			return false
		}
	}
	host, port := rest, ""
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 2 {
			return false
		}
		host, port = rest[1:end], rest[end+1:]
		for i := 0; i < len(host); i++ {
			if c := host[i]; !isHex(c) && c != ':' && c != '.' {
				return false
			}
		}
	} else {
		if i := strings.IndexByte(rest, ':'); i >= 0 {
			host, port = rest[:i], rest[i:]
		}
		if host == "" {
			return false
		}
		for i := 0; i < len(host); i++ {
			switch c := host[i]; {
			case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '-', c == '_':
			default:
				return false
			}
		}
	}
	if port == "" {
		return true
	}
	if port[0] != ':' || len(port) == 1 {
		return false
	}
	for i := 1; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// MaxAge is the Access-Control-Max-Age value of maxAge in seconds: def
// when maxAge is zero, "" (no header) when it is negative.
func MaxAge(maxAge, def time.Duration) string {
	switch {
	case maxAge == 0:
		return strconv.FormatInt(int64(def/time.Second), 10)
	case maxAge > 0:
		return strconv.FormatInt(int64(maxAge/time.Second), 10)
	}
	return ""
}
