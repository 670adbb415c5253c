package ratelimit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// downLimiter fails every Take the way a Redis-backed limiter does when
// its server is unreachable: the error names the key and the address.
type downLimiter struct{}

func (downLimiter) Take(_ context.Context, key string, _ Rate) (time.Duration, error) {
	return 0, errors.New("redis: rate limit " + key + ": dial tcp 10.0.0.7:6379: connect: connection refused")
}

// TestLimiterDownRefuses: a request whose bucket the Limiter cannot
// read is refused (fail closed) with a -32603 "Service Unavailable"
// answer that says nothing of the store: no key, no address, no Redis.
func TestLimiterDownRefuses(t *testing.T) {
	ic := Interceptor(Options{Limiter: downLimiter{}, Principal: Every(time.Second, 5), Tool: Every(time.Second, 5)})
	served := 0
	h := ic(func(context.Context, *intercept.Call) (any, error) { served++; return "ok", nil })
	for _, c := range []intercept.Call{
		{Method: mcp.MethodToolsCall, Name: "secret-tool", Principal: "alice"},
		{Method: mcp.MethodToolsCall, Name: "secret-tool"}, // the tool bucket alone
	} {
		c.Side, c.Inbound = intercept.Server, true
		_, err := h(context.Background(), &c)
		e, ok := jsonrpc.AsError(err)
		if !ok || e.Code != mcp.CodeInternalError || !strings.HasPrefix(e.Message, "Service Unavailable") {
			t.Fatalf("principal %q: got %v, want -32603 Service Unavailable", c.Principal, err)
		}
		for _, leak := range []string{"6379", "10.0.0.7", "redis", DefaultPrefix, "alice", "secret-tool", "refused"} {
			if strings.Contains(e.Message, leak) || strings.Contains(string(e.Data), leak) {
				t.Errorf("the answer %q (data %s) tells the client %q", e.Message, e.Data, leak)
			}
		}
	}
	if served != 0 {
		t.Errorf("%d requests served with the limiter down, want 0 (fail closed)", served)
	}
}
