package client_test

import (
	"context"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestResultIdentity: a modern result's _meta does not repeat the
// server's identity when it is the one the client knows (from
// server/discover, or from the first result that carried one when the
// client made no discovery); Client.ServerInfo reports it. Another
// identity, the other keys, and the _meta of content blocks are kept.
func TestResultIdentity(t *testing.T) {
	other := mcp.Implementation{Name: "other", Version: "9"}
	handle := func(_ context.Context, msg *jsonrpc.Message) (any, error) {
		switch msg.Method {
		case mcp.MethodServerDiscover:
			return discoverResult(mcp.Version20260728), nil
		case mcp.MethodToolsCall:
			var p mcp.CallToolParams
			if err := json.Unmarshal(msg.Params, &p); err != nil {
				return nil, err
			}
			res := &mcp.CallToolResult{ResultType: mcp.ResultComplete,
				Content: mcp.Contents{&mcp.TextContent{Text: "ok", Meta: withServerInfo()}}}
			switch p.Name {
			case "same":
				res.Meta = withServerInfo()
			case "more":
				res.Meta = mcp.Meta{mcp.MetaKeyServerInfo: serverInfo, "com.example/k": "v"}
			case "other":
				res.Meta = mcp.Meta{mcp.MetaKeyServerInfo: other}
			}
			return res, nil
		}
		return nil, jsonrpc.ErrMethodNotFound
	}
	for _, tc := range []struct {
		name    string
		version string // "": automatic, with server/discover
	}{{"discovered", ""}, {"learned", mcp.Version20260728}} {
		t.Run(tc.name, func(t *testing.T) {
			tr, _ := startFake(t, handle)
			c := connect(t, tr, &client.Options{Info: mcp.Implementation{Name: "id", Version: "1"}, ProtocolVersion: tc.version})
			ctx := testCtx(t)
			call := func(name string) *mcp.CallToolResult {
				t.Helper()
				res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: name})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				block, ok := res.Content[0].(*mcp.TextContent)
				if !ok || block.Meta[mcp.MetaKeyServerInfo] == nil {
					t.Errorf("%s: a content block's _meta lost its keys: %+v", name, res.Content[0])
				}
				return res
			}
			if res := call("same"); res.Meta != nil {
				t.Errorf("same: Meta %v, want nil (the known identity left out)", res.Meta)
			}
			if got := c.ServerInfo(); got.Name != serverInfo.Name {
				t.Errorf("ServerInfo() = %+v, want %+v", got, serverInfo)
			}
			res := call("more")
			if _, ok := res.Meta[mcp.MetaKeyServerInfo]; ok || len(res.Meta) != 1 || res.Meta["com.example/k"] == nil {
				t.Errorf("more: Meta %v, want the other key alone", res.Meta)
			}
			res = call("other")
			if info, err := res.Meta.ServerInfo(); err != nil || info == nil || info.Name != other.Name {
				t.Errorf("other: Meta %v, want the other identity kept", res.Meta)
			}
			if got := c.ServerInfo(); got.Name != serverInfo.Name {
				t.Errorf("after another identity, ServerInfo() = %+v, want the first %+v", got, serverInfo)
			}
			if res := call("none"); res.Meta != nil {
				t.Errorf("none: Meta %v", res.Meta)
			}
			if tc.version == "" {
				d, err := c.Discover(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if info, err := d.Meta.ServerInfo(); err != nil || info == nil || info.Name != serverInfo.Name {
					t.Errorf("the server/discover result keeps the identity: %v", d.Meta)
				}
			}
		})
	}
}
