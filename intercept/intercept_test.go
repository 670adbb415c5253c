package intercept

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

func TestChainOrder(t *testing.T) {
	var trail []string
	mk := func(name string) Interceptor {
		return func(next Handler) Handler {
			return func(ctx context.Context, c *Call) (any, error) {
				trail = append(trail, name+">")
				res, err := next(ctx, c)
				trail = append(trail, "<"+name)
				return res, err
			}
		}
	}
	h := Chain(mk("a"), nil, mk("b"))(func(context.Context, *Call) (any, error) {
		trail = append(trail, "handler")
		return nil, nil
	})
	if _, err := h(context.Background(), &Call{}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(trail, " "); got != "a> b> handler <b <a" {
		t.Errorf("order %q", got)
	}
	if Chain() != nil || Chain(nil) != nil {
		t.Error("Chain of none is not nil")
	}
}

func TestRecover(t *testing.T) {
	h := Recover(nil)(func(context.Context, *Call) (any, error) { panic("boom") })
	_, err := h(context.Background(), &Call{Method: "tools/call"})
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != mcp.CodeInternalError || !strings.Contains(e.Message, "tools/call") {
		t.Fatalf("got %v", err)
	}
}

func TestMeta(t *testing.T) {
	shared := mcp.Meta{"a": jsontext.Value(`"x"`)}
	c := &Call{Meta: shared, Params: &mcp.CallToolParams{Name: "t", Meta: mcp.Meta{"keep": 1}}}
	if p, _ := c.ParamsWithMeta(); p != c.Params {
		t.Error("ParamsWithMeta re-encoded params without SetMeta")
	}
	c.SetMeta("traceparent", "00-abc")
	if _, ok := shared["traceparent"]; ok {
		t.Error("SetMeta wrote the shared map")
	}
	if s, ok := c.MetaString("a"); !ok || s != "x" {
		t.Errorf("MetaString(a) = %q, %v", s, ok)
	}
	p, err := c.ParamsWithMeta()
	if err != nil {
		t.Fatal(err)
	}
	got := string(p.(jsontext.Value))
	if !strings.Contains(got, `"traceparent":"00-abc"`) || !strings.Contains(got, `"keep":1`) || !strings.Contains(got, `"name":"t"`) {
		t.Errorf("params %s", got)
	}
	bad := &Call{Params: jsontext.Value(`[1]`)}
	bad.SetMeta("k", "v")
	if _, err := bad.ParamsWithMeta(); err == nil || !strings.HasPrefix(err.Error(), "intercept: ") {
		t.Errorf("array params: %v", err)
	}
}
