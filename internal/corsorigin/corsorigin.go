package corsorigin

import (
	"net/url"
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
	l := List{exact: make(map[string]bool, len(origins))}
	for _, origin := range origins {
		origin = strings.TrimSpace(origin)
		if origin == "*" {
			l.any = true
			continue
		}
		if origin = normal(origin); origin != "" && origin != "null" {
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
	if !l.any {
		return false, false
	}
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		u.Path == "" && u.RawQuery == "" && u.User == nil, false
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
