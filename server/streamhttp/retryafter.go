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
	if !bytes.Contains(msg, rateLimitedPrefix) {
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
