package streamhttp

import (
	"testing"

	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestRetryAfter: a rate-limit error answer gets its Retry-After whatever
// its id; results (even ones whose text holds the error's bytes) and
// other errors get none; bytes not in the encoder's order are searched
// whole.
func TestRetryAfter(t *testing.T) {
	limited := jsonrpc.NewError(mcp.CodeRateLimited, "Too many requests").WithData(mcp.RateLimitedData{RetryAfterMs: 1500})
	hidden := `"error":{"code":-32029,"message":"x","data":{"retryAfterMs":9000}}`
	result, err := wire.EncodeResult(mcp.IntID(3), &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: hidden}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		msg  []byte
		want string
	}{
		{"int id", wire.EncodeError(mcp.IntID(-12), limited), "2"},
		{"string id", wire.EncodeError(mcp.StringID(`a"b\",`), limited), "2"},
		{"no id", wire.EncodeError(mcp.ID{}, limited), "2"},
		{"other order", []byte(`{"error":{"code":-32029,"message":"m","data":{"retryAfterMs":1}},"id":1,"jsonrpc":"2.0"}`), "1"},
		{"other error", wire.EncodeError(mcp.IntID(1), jsonrpc.NewError(mcp.CodeInternalError, "x")), ""},
		{"result with the bytes", result, ""},
		{"no data", wire.EncodeError(mcp.IntID(1), jsonrpc.NewError(mcp.CodeRateLimited, "x")), ""},
	} {
		got, ok := retryAfter(c.msg)
		if ok != (c.want != "") || got != c.want {
			t.Errorf("%s: Retry-After %q (%v), want %q", c.name, got, ok, c.want)
		}
	}
}
