package oauth

import (
	"net/http"
	"strings"
)

// Challenge is one authentication challenge of a WWW-Authenticate header
// (RFC 9110 §11.6.1).
type Challenge struct {
	// Scheme is the auth-scheme as sent (compare case-insensitively).
	Scheme string
	// Token68 is the token68 form of the credentials, if used.
	Token68 string
	// Params holds the auth-params, names lower-cased, values unquoted.
	Params map[string]string
}

// ParseChallenges parses WWW-Authenticate header values into challenges.
// Malformed input yields the challenges parsed before the error.
func ParseChallenges(values []string) []Challenge {
	var out []Challenge
	for _, v := range values {
		out = append(out, parseChallenges(v)...)
	}
	return out
}

// BearerChallenge returns the parameters of the first Bearer challenge of
// h's WWW-Authenticate fields, or nil.
func BearerChallenge(h http.Header) map[string]string {
	for _, c := range ParseChallenges(h.Values("WWW-Authenticate")) {
		if strings.EqualFold(c.Scheme, "Bearer") {
			return c.Params
		}
	}
	return nil
}

// oauthChallenge returns the parameters of the first Bearer challenge of
// h's WWW-Authenticate fields, else of the first DPoP challenge (RFC 9449
// §7.1, which carries the same OAuth parameters), or nil.
func oauthChallenge(h http.Header) map[string]string {
	var dpop map[string]string
	for _, c := range ParseChallenges(h.Values("WWW-Authenticate")) {
		switch {
		case strings.EqualFold(c.Scheme, "Bearer"):
			return c.Params
		case strings.EqualFold(c.Scheme, "DPoP") && dpop == nil:
			dpop = c.Params
		}
	}
	return dpop
}

// wantsDPoPNonce reports whether h has a DPoP challenge with the error
// use_dpop_nonce (RFC 9449 §9).
func wantsDPoPNonce(h http.Header) bool {
	for _, c := range ParseChallenges(h.Values("WWW-Authenticate")) {
		if strings.EqualFold(c.Scheme, "DPoP") && c.Params["error"] == "use_dpop_nonce" {
			return true
		}
	}
	return false
}

func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken68Char(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}

type chalLexer struct {
	s string
	i int
}

func (l *chalLexer) skipWS() {
	for l.i < len(l.s) && (l.s[l.i] == ' ' || l.s[l.i] == '\t') {
		l.i++
	}
}

func (l *chalLexer) token() string {
	start := l.i
	for l.i < len(l.s) && isTchar(l.s[l.i]) {
		l.i++
	}
	return l.s[start:l.i]
}

// quoted reads a quoted-string at l.i (which holds '"').
func (l *chalLexer) quoted() (string, bool) {
	var b strings.Builder
	l.i++
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch c {
		case '"':
			l.i++
			return b.String(), true
		case '\\':
			if l.i+1 < len(l.s) {
				l.i++
				c = l.s[l.i]
			}
		}
		b.WriteByte(c)
		l.i++
	}
	return b.String(), false
}

// skipCommas skips list separators (and empty list elements).
func (l *chalLexer) skipCommas() bool {
	saw := false
	for {
		l.skipWS()
		if l.i < len(l.s) && l.s[l.i] == ',' {
			l.i++
			saw = true
			continue
		}
		return saw
	}
}

// isParamStart reports whether an auth-param (token BWS "=") starts at l.i.
func (l *chalLexer) isParamStart() bool {
	j := l.i
	for j < len(l.s) && isTchar(l.s[j]) {
		j++
	}
	if j == l.i {
		return false
	}
	for j < len(l.s) && (l.s[j] == ' ' || l.s[j] == '\t') {
		j++
	}
	if j >= len(l.s) || l.s[j] != '=' {
		return false
	}
	// token68 may end in '=' padding: "abc==" is a token68 when no value
	// follows the '='s.
	k := j
	for k < len(l.s) && l.s[k] == '=' {
		k++
	}
	return k-j <= 1
}

func parseChallenges(s string) []Challenge {
	l := &chalLexer{s: s}
	var out []Challenge
	for {
		l.skipCommas()
		if l.i >= len(l.s) {
			return out
		}
		scheme := l.token()
		if scheme == "" {
			return out // malformed
		}
		c := Challenge{Scheme: scheme, Params: map[string]string{}}
		l.skipWS()
		if l.i < len(l.s) && l.s[l.i] != ',' && !l.isParamStart() {
			// token68
			start := l.i
			for l.i < len(l.s) && isToken68Char(l.s[l.i]) {
				l.i++
			}
			for l.i < len(l.s) && l.s[l.i] == '=' {
				l.i++
			}
			c.Token68 = l.s[start:l.i]
			out = append(out, c)
			continue
		}
		// auth-params until the next challenge (a token not followed by '=').
		for {
			save := l.i
			l.skipCommas()
			if l.i >= len(l.s) {
				break
			}
			if !l.isParamStart() {
				l.i = save
				break
			}
			name := strings.ToLower(l.token())
			l.skipWS()
			l.i++ // '='
			l.skipWS()
			var val string
			if l.i < len(l.s) && l.s[l.i] == '"' {
				v, ok := l.quoted()
				if !ok {
					c.Params[name] = v
					return append(out, c)
				}
				val = v
			} else {
				val = l.token()
			}
			if _, dup := c.Params[name]; !dup {
				c.Params[name] = val
			}
		}
		out = append(out, c)
	}
}
