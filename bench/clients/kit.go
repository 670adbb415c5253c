package clients

import (
	"context"
	"fmt"
	"net/http"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/bench/workload"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// echoArgs is the arguments of every echo call, encoded once, as a user
// of mcpkit's raw API would.
var echoArgs = jsontext.Value(`{"text":"` + workload.Text + `"}`)

type kit struct {
	c *client.Client
	w string
}

func newKit(ctx context.Context, w, url string, hc *http.Client) (*kit, error) {
	opts := &client.Options{
		Info:            mcp.Implementation{Name: "bench", Version: "1.0.0"},
		ProtocolVersion: mcp.Version20260728,
	}
	if w == "W3c" {
		opts.ProtocolVersion = mcp.Version20251125
	}
	if w == "W8c" {
		opts.ElicitHandler = func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"ok": true}}, nil
		}
	}
	c, err := client.Connect(ctx, streamable.New(url, &streamable.Options{HTTPClient: hc}), opts)
	if err != nil {
		return nil, fmt.Errorf("clients: mcpkit: %w", err)
	}
	return &kit{c: c, w: w}, nil
}

func (k *kit) Call(ctx context.Context) error {
	switch k.w {
	case "W7c":
		names := make([]string, 0, workload.ListTools)
		for t, err := range k.c.Tools(ctx) {
			if err != nil {
				return err
			}
			names = append(names, t.Name)
		}
		return checkTools(len(names), func(i int) string { return names[i] })
	}
	name := "echo"
	if k.w == "W8c" {
		name = "confirm"
	}
	res, err := k.c.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: echoArgs})
	if err != nil {
		return err
	}
	var out struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
		return fmt.Errorf("clients: mcpkit: structuredContent: %w", err)
	}
	return checkText("mcpkit", out.Text)
}

func (k *kit) Close() error { return k.c.Close() }
