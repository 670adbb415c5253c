package client

import (
	"context"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/internal/jsontok"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Interceptors (package intercept; docs/design/interceptors.md): every
// request and notification the client sends goes through rpc and
// notifyOut, and every one it receives, and every input request of an
// input-required result it answers, through inbound. Without
// Options.Interceptors each is a direct call.

// icCall is the Call of a message of this client.
func (c *Client) icCall(method string, params any, inbound, note bool, round int) *intercept.Call {
	return &intercept.Call{
		Side:         intercept.Client,
		Inbound:      inbound,
		Notification: note,
		Method:       method,
		Era:          c.Era(),
		Version:      c.ProtocolVersion(),
		Params:       params,
		Round:        round,
	}
}

// rpc sends one request through the interceptors; round is its multi
// round-trip round (0: a first request).
func (c *Client) rpc(ctx context.Context, method string, params, result any, opts jsonrpc.CallOptions, round int) error {
	if c.chain == nil {
		return c.conn.CallWith(ctx, method, params, result, opts)
	}
	return c.rpcChain(ctx, method, params, result, opts, round)
}

// rpcChain is rpc through the interceptors: a function of its own, so
// that the options its closure captures (moved to the heap) are not
// those of the direct path.
func (c *Client) rpcChain(ctx context.Context, method string, params, result any, opts jsonrpc.CallOptions, round int) error {
	ic := c.icCall(method, params, false, false, round)
	ic.Name = callName(params)
	if round == 0 && method == mcp.MethodInitialize {
		if p, ok := params.(*mcp.InitializeParams); ok {
			ic.Version = p.ProtocolVersion
		}
	}
	h := c.chain(func(ctx context.Context, ic *intercept.Call) (any, error) {
		p, err := ic.ParamsWithMeta()
		if err != nil {
			return nil, err
		}
		if err := c.conn.CallWith(ctx, ic.Method, p, result, opts); err != nil {
			return nil, err
		}
		return result, nil
	})
	res, err := h(ctx, ic)
	if err != nil {
		return err
	}
	return jsontok.Transcode(res, result)
}

// notifyOut sends one notification through the interceptors.
func (c *Client) notifyOut(ctx context.Context, method string, params any) error {
	if c.chain == nil {
		return c.conn.Notify(ctx, method, params)
	}
	h := c.chain(func(ctx context.Context, ic *intercept.Call) (any, error) {
		p, err := ic.ParamsWithMeta()
		if err != nil {
			return nil, err
		}
		return nil, c.conn.Notify(ctx, ic.Method, p)
	})
	_, err := h(ctx, c.icCall(method, params, false, true, 0))
	return err
}

// inbound runs a request or notification of the server, or an input
// request of an input-required result, through the interceptors, ending
// in serve with the method and raw params they leave.
func (c *Client) inbound(ctx context.Context, method string, raw jsontext.Value, note bool, round int, serve func(ctx context.Context, method string, raw jsontext.Value) (any, error)) (any, error) {
	if c.chain == nil {
		return serve(ctx, method, raw)
	}
	ic := c.icCall(method, nil, true, note, round)
	ic.Raw, ic.Meta = raw, metaOf(raw)
	h := c.chain(func(ctx context.Context, ic *intercept.Call) (any, error) {
		return serve(ctx, ic.Method, ic.Raw)
	})
	return h(ctx, ic)
}

// callName is what a request is about (intercept.Call.Name): the tool
// or prompt name, the resource URI or the task id of its params.
func callName(params any) string {
	switch p := params.(type) {
	case *mcp.CallToolParams:
		return p.Name
	case *mcp.GetPromptParams:
		return p.Name
	case *mcp.ReadResourceParams:
		return p.URI
	case jsontext.Value:
		var v struct {
			Name   string `json:"name"`
			URI    string `json:"uri"`
			TaskID string `json:"taskId"`
		}
		if json.Unmarshal(p, &v, json.RejectUnknownMembers(false)) != nil {
			return ""
		}
		switch {
		case v.Name != "":
			return v.Name
		case v.URI != "":
			return v.URI
		}
		return v.TaskID
	}
	return ""
}

// metaOf reads the _meta of raw params, for Call.Meta (nil when absent
// or unreadable: the handler reports malformed params).
func metaOf(raw jsontext.Value) mcp.Meta {
	if len(raw) == 0 || raw.Kind() != '{' {
		return nil
	}
	var p struct {
		Meta mcp.Meta `json:"_meta"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return nil
	}
	return p.Meta
}
