package mcp

import (
	"encoding/base64"
	"strings"
)

// DecodeHeaderValue decodes a value of a 2026-07-28 HTTP header that
// mirrors a request member (Mcp-Name, Mcp-Param-*; SEP-2243): as it is,
// or the UTF-8 text of a "=?base64?…?=" sentinel (standard, strict
// base64). ok is false for a malformed sentinel.
func DecodeHeaderValue(v string) (s string, ok bool) {
	const pre, post = "=?base64?", "?="
	if !strings.HasPrefix(v, pre) || !strings.HasSuffix(v, post) || len(v) < len(pre)+len(post) {
		return v, true
	}
	b, err := base64.StdEncoding.Strict().DecodeString(v[len(pre) : len(v)-len(post)])
	if err != nil {
		return "", false
	}
	return string(b), true
}
