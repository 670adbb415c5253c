package mcp

// CodeRateLimited is mcpkit's error code for a request refused by a rate
// limit (package ratelimit), in the implementation-defined server-error
// range; its data is RateLimitedData. Streamable HTTP answers it with a
// Retry-After header (and status 429 on 2026-07-28 requests).
const CodeRateLimited = -32029

// RateLimitedData is the error data of CodeRateLimited.
type RateLimitedData struct {
	// RetryAfterMs is how long to wait before the next request.
	RetryAfterMs int64 `json:"retryAfterMs"`
}
