package streamhttp

import (
	"bytes"
	"strconv"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/mcp"
)

// rateLimitedPrefix is how an encoded mcp.CodeRateLimited error answer's
// error member begins (jsonrpc.EncodeError writes code first).
var rateLimitedPrefix = []byte(`"error":{"code":` + strconv.Itoa(mcp.CodeRateLimited) + `,`)

// retryAfter returns the Retry-After header value (whole seconds, at
// least 1; RFC 9110 §10.2.3) of a JSON answer that is a rate-limit error
// with data.retryAfterMs; ok is false for any other answer.
func retryAfter(msg []byte) (string, bool) {
	if !rateLimited(msg) {
		return "", false
	}
	var m struct {
		Error struct {
			Data mcp.RateLimitedData `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Error.Data.RetryAfterMs <= 0 {
		return "", false
	}
	secs := (m.Error.Data.RetryAfterMs + 999) / 1000
	return strconv.FormatInt(secs, 10), true
}

// rateLimited reports whether msg may be a rate-limit error answer. The
// SDK's encoder writes "jsonrpc", then "id" (if any), then "error" or
// "result": the member after the id decides without reading the rest of
// a result, however long. Bytes in another order are searched whole.
func rateLimited(msg []byte) bool {
	rest, ok := bytes.CutPrefix(msg, []byte(`{"jsonrpc":"2.0",`))
	if !ok {
		return bytes.Contains(msg, rateLimitedPrefix)
	}
	if r, ok := bytes.CutPrefix(rest, []byte(`"id":`)); ok {
		n := idLen(r)
		if n == 0 || n >= len(r) || r[n] != ',' {
			return bytes.Contains(msg, rateLimitedPrefix)
		}
		rest = r[n+1:]
	}
	return bytes.HasPrefix(rest, rateLimitedPrefix)
}

// idLen is the length of the id at the start of b: a string (to its
// closing quote) or a number; 0 when b starts with neither.
func idLen(b []byte) int {
	if len(b) > 0 && b[0] == '"' {
		for i := 1; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return 0
	}
	i := 0
	for i < len(b) && (b[i] == '-' || b[i] >= '0' && b[i] <= '9') {
		i++
	}
	return i
}
