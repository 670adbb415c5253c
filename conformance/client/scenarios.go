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
		ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
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

// runRequestMetadata makes a few requests; the server refuses the first
// with -32022 and the client retries it in a revision the error names.
// Every handler is registered so that roots, sampling and elicitation are
// declared in each request's clientCapabilities.
func runRequestMetadata(ctx context.Context, e *env) error {
	c, err := e.connect(ctx, client.Options{
		ListRootsHandler: func(context.Context) (*mcp.ListRootsResult, error) { return &mcp.ListRootsResult{}, nil },
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return nil, errors.New("no model here")
		},
		ElicitHandler: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionDecline}, nil
		},
	})
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ListTools(ctx, nil); err != nil {
		return err
	}
	if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "test_tool", Arguments: jsontext.Value(`{}`)}); err != nil {
		return err
	}
	return nil
}

// runStandardHeaders drives tools/list, tools/call, resources/list,
// resources/read, prompts/list and prompts/get once each, on what the
// server lists; the transport sends Mcp-Method and Mcp-Name.
func runStandardHeaders(ctx context.Context, e *env) error {
	c, err := e.connect(ctx, client.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	tools, err := c.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	if len(tools.Tools) > 0 {
		if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: tools.Tools[0].Name, Arguments: jsontext.Value(`{}`)}); err != nil {
			return err
		}
	}
	resources, err := c.ListResources(ctx, nil)
	if err != nil {
		return err
	}
	if len(resources.Resources) > 0 {
		if _, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: resources.Resources[0].URI}); err != nil {
			return err
		}
	}
	prompts, err := c.ListPrompts(ctx, nil)
	if err != nil {
		return err
	}
	if len(prompts.Prompts) > 0 {
		if _, err := c.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompts.Prompts[0].Name}); err != nil {
			return err
		}
	}
	return nil
}

// toolCalls is the MCP_CONFORMANCE_CONTEXT of http-custom-headers.
type toolCalls struct {
	ToolCalls []struct {
		Name      string         `json:"name"`
		Arguments jsontext.Value `json:"arguments"`
	} `json:"toolCalls"`
}

// runCustomHeaders lists the tools (which tells the client their
// x-mcp-header annotations), then makes the calls the context lists; the
// client mirrors the annotated arguments into Mcp-Param-* headers.
func runCustomHeaders(ctx context.Context, e *env) error {
	var calls toolCalls
	if err := json.Unmarshal([]byte(e.context), &calls); err != nil {
		return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
	}
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
	for _, call := range calls.ToolCalls {
		res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: call.Name, Arguments: call.Arguments})
		if err != nil {
			return fmt.Errorf("%s: %w", call.Name, err)
		}
		if res.IsError {
			return fmt.Errorf("%s failed: %v", call.Name, res.Content)
		}
	}
	return nil
}

// runInvalidToolHeaders lists the tools and calls every one the client
// kept: it drops those whose x-mcp-header annotations are invalid.
func runInvalidToolHeaders(ctx context.Context, e *env) error {
	c, err := e.connect(ctx, client.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	var kept []mcp.Tool
	for tool, err := range c.Tools(ctx) {
		if err != nil {
			return err
		}
		kept = append(kept, tool)
	}
	if len(kept) == 0 {
		return errors.New("no valid tool is listed")
	}
	for _, tool := range kept {
		if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: jsontext.Value(`{"region":"us-west1"}`)}); err != nil {
			return fmt.Errorf("%s: %w", tool.Name, err)
		}
	}
	return nil
}

// runRefNoDeref lists the tools: a schema's network $ref is kept as it is,
// never fetched.
func runRefNoDeref(ctx context.Context, e *env) error {
	c, err := e.connect(ctx, client.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	n := 0
	for _, err := range c.Tools(ctx) {
		if err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return errors.New("no tool is listed")
	}
	return nil
}

// runMRTRRequestState calls the mock's multi round-trip tools (SEP-2322):
// two answer input_required with an elicitation, one with and one
// without a requestState; the client's driver accepts with the same
// handler that would answer a legacy elicitation/create, and retries with
// a new id, the answer and the state byte for byte (none when none came).
// Then an unrelated tool, which must see neither, and a tool whose result
// has no resultType, which is final.
func runMRTRRequestState(ctx context.Context, e *env) error {
	c, err := e.connect(ctx, client.Options{
		ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"confirmed": true}}, nil
		},
	})
	if err != nil {
		return err
	}
	defer c.Close()
	for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
		res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: jsontext.Value(`{}`)})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if res.IsError {
			return fmt.Errorf("%s failed: %v", name, res.Content)
		}
	}
	return nil
}
