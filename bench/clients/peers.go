package clients

import (
	"context"
	"fmt"
	"net/http"

	mgclient "github.com/mark3labs/mcp-go/client"
	mgtransport "github.com/mark3labs/mcp-go/client/transport"
	mgmcp "github.com/mark3labs/mcp-go/mcp"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/bench/workload"
)

// structuredText returns structuredContent.text of a result decoded
// into any (a map), as go-sdk and mcp-go hand it over.
func structuredText(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["text"].(string)
	return s
}

type goSDK struct {
	cs *gomcp.ClientSession
	w  string
}

func newGoSDK(ctx context.Context, w, url string, hc *http.Client) (*goSDK, error) {
	c := gomcp.NewClient(&gomcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	v := workload.Modern
	if w == "W3c" {
		v = workload.Legacy
	}
	cs, err := c.Connect(ctx, &gomcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1},
		&gomcp.ClientSessionOptions{ProtocolVersion: v})
	if err != nil {
		return nil, fmt.Errorf("clients: gosdk: %w", err)
	}
	return &goSDK{cs: cs, w: w}, nil
}

func (g *goSDK) Call(ctx context.Context) error {
	if g.w == "W7c" {
		var names []string
		for t, err := range g.cs.Tools(ctx, nil) {
			if err != nil {
				return err
			}
			names = append(names, t.Name)
		}
		return checkTools(len(names), func(i int) string { return names[i] })
	}
	res, err := g.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": workload.Text}})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("clients: gosdk: tool error %v", res.Content)
	}
	return checkText("gosdk", structuredText(res.StructuredContent))
}

func (g *goSDK) Close() error { return g.cs.Close() }

type mcpGo struct {
	c *mgclient.Client
	w string
}

func newMCPGo(ctx context.Context, w, url string, hc *http.Client) (*mcpGo, error) {
	t, err := mgtransport.NewStreamableHTTP(url, mgtransport.WithHTTPBasicClient(hc))
	if err != nil {
		return nil, fmt.Errorf("clients: mcpgo: %w", err)
	}
	var opts []mgclient.ClientOption
	v := workload.Modern
	if w == "W3c" {
		v = workload.Legacy
		//lint:ignore SA1019 W3c measures the legacy (initialize) era on purpose
		opts = append(opts, mgclient.WithLegacyProtocolOnly())
	}
	c := mgclient.NewClient(t, opts...)
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("clients: mcpgo: %w", err)
	}
	req := mgmcp.InitializeRequest{}
	req.Params.ProtocolVersion = v
	req.Params.ClientInfo = mgmcp.Implementation{Name: "bench", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		c.Close()
		return nil, fmt.Errorf("clients: mcpgo: %w", err)
	}
	return &mcpGo{c: c, w: w}, nil
}

func (m *mcpGo) Call(ctx context.Context) error {
	if m.w == "W7c" {
		var names []string
		var req mgmcp.ListToolsRequest
		for {
			res, err := m.c.ListToolsByPage(ctx, req)
			if err != nil {
				return err
			}
			for _, t := range res.Tools {
				names = append(names, t.Name)
			}
			if res.NextCursor == "" {
				break
			}
			req.Params.Cursor = res.NextCursor
		}
		return checkTools(len(names), func(i int) string { return names[i] })
	}
	req := mgmcp.CallToolRequest{}
	req.Params.Name = "echo"
	req.Params.Arguments = map[string]any{"text": workload.Text}
	res, err := m.c.CallTool(ctx, req)
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("clients: mcpgo: tool error %v", res.Content)
	}
	return checkText("mcpgo", structuredText(res.StructuredContent))
}

func (m *mcpGo) Close() error { return m.c.Close() }
