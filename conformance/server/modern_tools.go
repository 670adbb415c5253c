package main

import (
	"context"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// addModernTools registers the probes the 2026-07-28 scenarios call.
func addModernTools(s *server.Server) {
	tool(s, "test_missing_capability", "Needs the client's sampling capability", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		if err := req.Require(mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}); err != nil {
			return nil, err
		}
		return text("Success"), nil
	})
	tool(s, "test_streaming_elicitation", "Streams progress, then needs the user's input", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		if err := req.Require(mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}); err != nil {
			return nil, err
		}
		_ = req.Log(ctx, mcp.LevelInfo, "conformance", "streaming")
		res, ok, err := req.ElicitResult("confirm")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, server.NeedInput().Elicit("confirm", &mcp.ElicitParams{Message: "Continue?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)})
		}
		return text("Streaming complete: " + res.Action), nil
	})
	tool(s, "test_logging_tool", "Logs only when the request asks for a log level", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		if err := req.Log(ctx, mcp.LevelDebug, "conformance", "Diagnostic trace logging activated"); err != nil {
			return nil, err
		}
		return text("Logging evaluated"), nil
	})
	var toolFlip, promptFlip atomic.Bool
	tool(s, "test_trigger_tool_change", "Changes the tool list", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		if toolFlip.Swap(!toolFlip.Load()) {
			s.RemoveTools("test_dynamic_tool")
		} else {
			tool(s, "test_dynamic_tool", "Comes and goes", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
				return text("dynamic"), nil
			})
		}
		return text("Mutation triggered"), nil
	})
	tool(s, "test_trigger_prompt_change", "Changes the prompt list", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		if promptFlip.Swap(!promptFlip.Load()) {
			s.RemovePrompts("test_dynamic_prompt")
		} else {
			_ = s.AddPrompt(&mcp.Prompt{Name: "test_dynamic_prompt", Description: "Comes and goes"},
				func(ctx context.Context, req *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
					return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{userText("dynamic")}}, nil
				})
		}
		return text("Mutation triggered"), nil
	})
	_ = s.AddRawTool(&mcp.Tool{
		Name:        "test_x_mcp_header",
		Description: "Mirrors its region argument into the Mcp-Param-Region header (SEP-2243)",
		InputSchema: jsontext.Value(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"level":{"type":"integer"}},"required":["region"]}`),
	}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("region ok"), nil
	})
}
