package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// The multi round-trip fixtures (SEP-2322). They are written once, in
// the input-required style: on 2026-07-28 the client answers and
// retries; on a legacy session the server asks the client itself.

var nameSchema = jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)

func askName(message string) *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: message, RequestedSchema: nameSchema}
}

func sampleText(text string, maxTokens int64) *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{
		Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewSamplingContent(&mcp.TextContent{Text: text})}},
		MaxTokens: maxTokens,
	}
}

// acceptedName returns the name from an accepted elicitation answer.
func acceptedName(res *mcp.ElicitResult) string {
	if res == nil || res.Action != mcp.ElicitActionAccept {
		return ""
	}
	name, _ := res.Content["name"].(string)
	return name
}

func samplingText(res *mcp.CreateMessageResult) string {
	if res != nil && len(res.Content.Blocks) > 0 {
		if t, ok := res.Content.Blocks[0].(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return "no response"
}

func addMRTRTools(s *server.Server) {
	tool(s, "test_input_required_result_elicitation", "Asks for the user's name, then greets them", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		res, ok, err := req.ElicitResult("user_name")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, server.NeedInput().Elicit("user_name", askName("What is your name?"))
		}
		return text(fmt.Sprintf("Hello, %s!", acceptedName(res))), nil
	})
	tool(s, "test_input_required_result_sampling", "Asks the client's model a question", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		res, ok, err := req.CreateMessageResult("sample_request")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, server.NeedInput().CreateMessage("sample_request", sampleText("What is the capital of France?", 100))
		}
		return text("Sampling result: " + samplingText(res)), nil
	})
	tool(s, "test_input_required_result_list_roots", "Asks for the client's roots", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		res, ok, err := req.ListRootsResult("client_roots")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, server.NeedInput().ListRoots("client_roots")
		}
		return text(fmt.Sprintf("Found %d root(s)", len(res.Roots))), nil
	})
	tool(s, "test_input_required_result_request_state", "Keeps state across the round trip", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		_, ok, err := req.ElicitResult("confirm")
		if err != nil {
			return nil, err
		}
		if !ok || req.RequestState() != "round-1" {
			// The suite answers {"ok":true}: the form it documents.
			return nil, server.NeedInput().Elicit("confirm", &mcp.ElicitParams{Message: "Please confirm",
				RequestedSchema: jsontext.Value(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)}).State("round-1")
		}
		return text("state-ok: requestState validated"), nil
	})
	tool(s, "test_input_required_result_multiple_inputs", "Asks for a name, a greeting and the roots at once", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		name, okName, err := req.ElicitResult("user_name")
		if err != nil {
			return nil, err
		}
		greeting, okGreeting, err := req.CreateMessageResult("greeting")
		if err != nil {
			return nil, err
		}
		roots, okRoots, err := req.ListRootsResult("client_roots")
		if err != nil {
			return nil, err
		}
		if !okName || !okGreeting || !okRoots {
			return nil, server.NeedInput().
				Elicit("user_name", askName("What is your name?")).
				CreateMessage("greeting", sampleText("Generate a greeting", 50)).
				ListRoots("client_roots").
				State("multiple")
		}
		return text(fmt.Sprintf("Name: %s; Greeting: %s; Roots: %d", acceptedName(name), samplingText(greeting), len(roots.Roots))), nil
	})
	tool(s, "test_input_required_result_multi_round", "Asks two questions, one round each", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		switch state := req.RequestState(); {
		case strings.HasPrefix(state, "step2:"):
			color, ok, err := req.ElicitResult("step2")
			if err != nil {
				return nil, err
			}
			if ok {
				c, _ := color.Content["color"].(string)
				return text(fmt.Sprintf("Multi-round complete for %s who likes %s", strings.TrimPrefix(state, "step2:"), c)), nil
			}
			return nil, server.NeedInput().Elicit("step2", &mcp.ElicitParams{Message: "What is your favorite color?",
				RequestedSchema: jsontext.Value(`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`)}).State(state)
		case state == "step1":
			name, ok, err := req.ElicitResult("step1")
			if err != nil {
				return nil, err
			}
			if ok {
				return nil, server.NeedInput().Elicit("step2", &mcp.ElicitParams{Message: "What is your favorite color?",
					RequestedSchema: jsontext.Value(`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`)}).State("step2:" + acceptedName(name))
			}
		}
		return nil, server.NeedInput().Elicit("step1", askName("What is your name?")).State("step1")
	})
	tool(s, "test_input_required_result_tampered_state", "Keeps integrity-protected state", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		if req.RequestState() == "protected" {
			return text("integrity-ok: state verified"), nil
		}
		return nil, server.NeedInput().Elicit("user_name", askName("What is your name?")).State("protected")
	})
	tool(s, "test_input_required_result_capabilities", "Asks only for what the client can answer", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		if got := req.InputResponses(); len(got) > 0 {
			keys := make([]string, 0, len(got))
			for k := range got {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return text("capabilities-ok: received " + strings.Join(keys, ",")), nil
		}
		caps := req.ClientCapabilities()
		in := server.NeedInput()
		asked := false
		if caps.Elicitation.SupportsForm() {
			in.Elicit("user_name", askName("What is your name?"))
			asked = true
		}
		if caps.Sampling != nil {
			in.CreateMessage("sample", sampleText("Sample request", 50))
			asked = true
		}
		if caps.Roots != nil {
			in.ListRoots("roots")
			asked = true
		}
		if !asked {
			return text("No supported capabilities declared"), nil
		}
		return nil, in
	})
	_ = s.AddPrompt(&mcp.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that asks for context first"},
		func(ctx context.Context, req *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
			res, ok, err := req.ElicitResult("user_context")
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, server.NeedInput().Elicit("user_context", &mcp.ElicitParams{Message: "What context should the prompt use?",
					RequestedSchema: jsontext.Value(`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`)})
			}
			c, _ := res.Content["context"].(string)
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{userText("Prompt with context: " + c)}}, nil
		})
}
