package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

func runInitialize(ctx context.Context, e *env) error {
	c, err := e.connect(ctx, client.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.ListTools(ctx, nil)
	return err
}

func runToolsCall(ctx context.Context, e *env) error {
	c, err := e.connect(ctx, client.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	for _, err := range c.Tools(ctx) {
		if err != nil {
			return err
		}
	}
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "add_numbers", Arguments: jsontext.Value(`{"a":5,"b":3}`)})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("add_numbers failed: %v", res.Content)
	}
	return nil
}

// runElicitationDefaults accepts the form without filling anything in:
// the client applies the schema's defaults (SEP-1034).
func runElicitationDefaults(ctx context.Context, e *env) error {
	c, err := e.connect(ctx, client.Options{
		ElicitationDefaults: true,
		Elicitation: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{}}, nil
		},
	})
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ListTools(ctx, nil); err != nil {
		return err
	}
	// This server sends its elicitation request without tying it to the
	// call (on the standalone stream), so the stream must be open first.
	e.awaitListening(ctx)
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "test_client_elicitation_defaults"})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("test_client_elicitation_defaults failed: %v", res.Content)
	}
	return nil
}

// runSSERetry calls a tool whose response stream the server closes
// early; the transport resumes it with GET and Last-Event-ID.
func runSSERetry(ctx context.Context, e *env) error {
	c, err := e.connect(ctx, client.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ListTools(ctx, nil); err != nil {
		return err
	}
	_, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "test_reconnection"})
	return err
}

// runSchemaPreservation sends the 2020-12 tool's input schema back to the
// server exactly as it was listed.
func runSchemaPreservation(ctx context.Context, e *env) error {
	c, err := e.connect(ctx, client.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	var schema jsontext.Value
	for tool, err := range c.Tools(ctx) {
		if err != nil {
			return err
		}
		if tool.Name == "json_schema_2020_12_tool" {
			schema = tool.InputSchema
		}
	}
	if schema == nil {
		return errors.New("json_schema_2020_12_tool is not listed")
	}
	args, err := json.Marshal(map[string]jsontext.Value{"schema": schema})
	if err != nil {
		return err
	}
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "json_schema_echo", Arguments: args})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("json_schema_echo failed: %v", res.Content)
	}
	return nil
}
