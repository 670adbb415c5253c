package interop

// mcpkit and go-sdk over the deprecated HTTP+SSE transport (2024-11-05):
// mcpkit's client reaches go-sdk's NewSSEHandler with nothing but the URL
// (the backwards-compatibility fallback) and answers the roots/list the
// server sends right after initialization (outside any request of ours);
// go-sdk's SSEClientTransport reaches mcpkit's handler with LegacySSE,
// calls a tool with "arguments": null (go-sdk's nil map), and answers an
// elicitation.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

const hangGuard = 30 * time.Second

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	t.Cleanup(cancel)
	return ctx
}

type addArgs struct {
	X int `json:"x"`
	Y int `json:"y"`
}

func TestMcpkitClientGoSDKSSEServer(t *testing.T) {
	roots := make(chan []string, 1)
	srv := gomcp.NewServer(&gomcp.Implementation{Name: "gosdk-sse", Version: "1"}, &gomcp.ServerOptions{
		InitializedHandler: func(ctx context.Context, req *gomcp.InitializedRequest) {
			// Asked outside any request of the client, as the reference
			// filesystem server does.
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
				defer cancel()
				//lint:ignore SA1019 roots are what 2024-era servers ask for; the test is about them
				res, err := req.Session.ListRoots(ctx, nil)
				var uris []string
				if err != nil {
					uris = []string{"error: " + err.Error()}
				} else {
					for _, r := range res.Roots {
						uris = append(uris, r.URI)
					}
				}
				roots <- uris
			}()
		},
	})
	gomcp.AddTool(srv, &gomcp.Tool{Name: "add", Description: "adds"}, func(_ context.Context, _ *gomcp.CallToolRequest, in addArgs) (*gomcp.CallToolResult, any, error) {
		return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: fmt.Sprint(in.X + in.Y)}}}, nil, nil
	})
	ts := httptest.NewServer(gomcp.NewSSEHandler(func(*http.Request) *gomcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)

	for _, version := range []string{"", mcp.Version20241105} {
		t.Run("version "+version, func(t *testing.T) {
			tr := streamable.New(ts.URL, nil)
			c, err := client.Connect(testCtx(t), tr, &client.Options{
				ProtocolVersion: version,
				ListRootsHandler: func(context.Context) (*mcp.ListRootsResult, error) {
					return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///work", Name: "work"}}}, nil
				},
			})
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer c.Close()
			if !tr.Legacy() || c.Era() != client.EraLegacy {
				t.Fatalf("transport legacy %v, era %v: want the 2024-11-05 transport, legacy era", tr.Legacy(), c.Era())
			}
			select {
			case got := <-roots:
				if len(got) != 1 || got[0] != "file:///work" {
					t.Errorf("the server's roots/list got %v", got)
				}
			case <-time.After(hangGuard):
				t.Fatal("the server's roots/list was not answered")
			}
			res, err := c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "add", Arguments: []byte(`{"x":2,"y":40}`)})
			if err != nil || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "42" {
				t.Fatalf("CallTool = %+v, %v", res, err)
			}
		})
	}
}

func TestGoSDKSSEClientMcpkitServer(t *testing.T) {
	srv := server.New(&server.Options{Info: mcp.Implementation{Name: "mcpkit-sse", Version: "1"}})
	server.AddTool(srv, &mcp.Tool{Name: "hello"}, func(_ context.Context, req *server.CallToolRequest, in struct {
		Name string `json:"name,omitempty"`
	}) (string, error) {
		if in.Name == "" {
			in.Name = "world"
		}
		return "hello " + in.Name, nil
	})
	server.AddTool(srv, &mcp.Tool{Name: "ask"}, func(_ context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		ans, ok, err := req.ElicitResult("name")
		if err != nil {
			return "", err
		}
		if !ok {
			return "", server.NeedInput().Elicit("name", &mcp.ElicitParams{Message: "Name?",
				RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		}
		return fmt.Sprintf("%s %v", ans.Action, ans.Content["name"]), nil
	})
	h := streamhttp.NewHandler(srv, &streamhttp.Options{LegacySSE: true})
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})

	cl := gomcp.NewClient(&gomcp.Implementation{Name: "gosdk", Version: "1"}, &gomcp.ClientOptions{
		ElicitationHandler: func(context.Context, *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
			return &gomcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	cs, err := cl.Connect(testCtx(t), &gomcp.SSEClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("go-sdk Connect over HTTP+SSE: %v", err)
	}
	defer cs.Close()
	if h.SessionCount() != 1 {
		t.Errorf("SessionCount %d, want 1", h.SessionCount())
	}
	text := func(res *gomcp.CallToolResult) string {
		if len(res.Content) == 0 {
			return ""
		}
		tc, _ := res.Content[0].(*gomcp.TextContent)
		if tc == nil {
			return ""
		}
		return tc.Text
	}
	// A nil map is sent as "arguments": null.
	res, err := cs.CallTool(testCtx(t), &gomcp.CallToolParams{Name: "hello", Arguments: map[string]any(nil)})
	if err != nil || res.IsError || text(res) != "hello world" {
		t.Fatalf("CallTool(hello, null arguments) = %q (isError %v), %v", text(res), res != nil && res.IsError, err)
	}
	res, err = cs.CallTool(testCtx(t), &gomcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	if err != nil || text(res) != "accept Ada" {
		t.Fatalf("CallTool(ask) = %v, %v", res, err)
	}
	tools, err := cs.ListTools(testCtx(t), nil)
	if err != nil || len(tools.Tools) != 2 {
		t.Fatalf("ListTools = %v, %v", tools, err)
	}
}
