// Package mcpheader encodes and decodes the values of the 2026-07-28 HTTP
// headers that mirror members of a request (SEP-2243: Mcp-Name,
// Mcp-Param-*): the client transport encodes them, the server and the
// authorization middleware decode them. It also holds the rule for a
// header name (IsToken) that the client, the server and the CORS rules
// apply.
package mcpheader

import (
	"encoding/base64"
	"strings"
)

// Markers of the SEP-2243 base64 form of a header value.
const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// Encode returns the text s as the value of an MCP request metadata
// header: s itself when every byte is visible ASCII or an inner space,
// with no leading or trailing space, and s does not look like an encoded
// value; otherwise "=?base64?{standard base64 of s's UTF-8 bytes}?=". The
// empty string is sent as is.
func Encode(s string) string {
	if plain(s) {
		return s
	}
	return base64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + base64Suffix
}

func plain(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	// A value that looks like the encoded form must be encoded itself, or
	// the server would decode it. Compared without regard to case, to be
	// safe with servers that are lenient there.
	looksEncoded := len(s) >= len(base64Prefix)+len(base64Suffix) &&
		strings.EqualFold(s[:len(base64Prefix)], base64Prefix) && strings.HasSuffix(s, base64Suffix)
	return !looksEncoded
}

// Decode decodes a header value: as it is, or the UTF-8 text of a
// "=?base64?…?=" sentinel (standard, strict base64). ok is false for a
// malformed sentinel.
func Decode(v string) (s string, ok bool) {
	if !strings.HasPrefix(v, base64Prefix) || !strings.HasSuffix(v, base64Suffix) || len(v) < len(base64Prefix)+len(base64Suffix) {
		return v, true
	}
	b, err := base64.StdEncoding.Strict().DecodeString(v[len(base64Prefix) : len(v)-len(base64Suffix)])
	if err != nil {
		return "", false
	}
	return string(b), true
}

// IsToken reports whether s is an RFC 9110 token: what a header name may
// be.
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
