package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

type none struct{}

type promptIn struct {
	Prompt string `json:"prompt" jsonschema:"description=The prompt to send to the LLM"`
}

type messageIn struct {
	Message string `json:"message" jsonschema:"description=The message to show the user"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: s}}}
}

func tool[In any](s *server.Server, name, description string, h func(ctx context.Context, req *server.CallToolRequest, in In) (*mcp.CallToolResult, error)) {
	_ = server.AddTool(s, &mcp.Tool{Name: name, Description: description}, h)
}

// jsonSchema2020Tool is the SEP-1613/SEP-2106 fixture schema, kept verbatim.
const jsonSchema2020Tool = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
	`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},` +
	`"phone":{"type":"string"},"email":{"type":"string"}},` +
	`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
	`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},` +
	`"additionalProperties":false}`

func addTools(s *server.Server) {
	tool(s, "test_simple_text", "Returns a simple text response", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		return text("This is a simple text response for testing."), nil
	})
	tool(s, "test_image_content", "Returns an image", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.ImageContent{Data: pngImage, MIMEType: "image/png"}}}, nil
	})
	tool(s, "test_audio_content", "Returns audio", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.AudioContent{Data: wavAudio, MIMEType: "audio/wav"}}}, nil
	})
	tool(s, "test_embedded_resource", "Returns an embedded resource", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{
			URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content.",
		}}}}, nil
	})
	tool(s, "test_multiple_content_types", "Returns text, an image and a resource", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		data, _ := json.Marshal(map[string]any{"test": "data", "value": 123})
		return &mcp.CallToolResult{Content: mcp.Contents{
			&mcp.TextContent{Text: "Multiple content types test:"},
			&mcp.ImageContent{Data: pngImage, MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: string(data)}},
		}}, nil
	})
	tool(s, "test_tool_with_logging", "Sends log messages while it runs", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			if i > 0 {
				time.Sleep(50 * time.Millisecond)
			}
			if err := req.Log(ctx, mcp.LevelInfo, "conformance", msg); err != nil {
				return nil, err
			}
		}
		return text("Tool with logging executed successfully"), nil
	})
	tool(s, "test_tool_with_progress", "Reports progress while it runs", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		for i, p := range []float64{0, 50, 100} {
			if i > 0 {
				time.Sleep(50 * time.Millisecond)
			}
			if err := req.Progress(ctx, p, 100, fmt.Sprintf("Completed step %v of 100", p)); err != nil {
				return nil, err
			}
		}
		token, _ := req.Meta().ProgressToken()
		return text(fmt.Sprint(token.Value())), nil
	})
	tool(s, "test_error_handling", "Always fails", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		// The suite checks this exact text, capital letter included.
		return nil, errors.New("This tool intentionally returns an error for testing") //lint:ignore ST1005 fixture text
	})
	tool(s, "test_reconnection", "Closes its SSE stream mid-call; the result arrives after the client resumes (SEP-1699)", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		req.CloseStream()
		time.Sleep(100 * time.Millisecond)
		return text("Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."), nil
	})
	tool(s, "test_sampling", "Asks the client's model", func(ctx context.Context, req *server.CallToolRequest, in promptIn) (*mcp.CallToolResult, error) {
		res, ok, err := req.CreateMessageResult("llm")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, server.NeedInput().CreateMessage("llm", sampleText(in.Prompt, 100))
		}
		return text("LLM response: " + samplingText(res)), nil
	})
	tool(s, "test_elicitation", "Asks the user", func(ctx context.Context, req *server.CallToolRequest, in messageIn) (*mcp.CallToolResult, error) {
		// The form the suite documents (and answers).
		return elicit(req, in.Message, `{"type":"object","properties":{"username":{"type":"string","description":"User's response"},`+
			`"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`, "User response")
	})
	tool(s, "test_elicitation_sep1034_defaults", "Asks the user with defaults for every primitive type (SEP-1034)", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		return elicit(req, "Please review and update the form fields with defaults", `{"type":"object","properties":{`+
			`"name":{"type":"string","description":"User name","default":"John Doe"},`+
			`"age":{"type":"integer","description":"User age","default":30},`+
			`"score":{"type":"number","description":"User score","default":95.5},`+
			`"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},`+
			`"verified":{"type":"boolean","description":"Verification status","default":true}},"required":[]}`, "Elicitation completed")
	})
	tool(s, "test_elicitation_sep1330_enums", "Asks the user with every enum shape (SEP-1330)", func(ctx context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
		return elicit(req, "Please select options from the enum fields", `{"type":"object","properties":{`+
			`"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},`+
			`"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},`+
			`"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},`+
			`"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},`+
			`"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}`+
			`},"required":[]}`, "Elicitation completed")
	})
	_ = s.AddRawTool(&mcp.Tool{
		Name:        "json_schema_2020_12_tool",
		Description: "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
		InputSchema: jsontext.Value(jsonSchema2020Tool),
	}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("JSON Schema 2020-12 tool called with: " + string(req.Params.Arguments)), nil
	})
}

// elicit asks the user through an input-required answer and reports
// what they said.
func elicit(req *server.CallToolRequest, message, schema, prefix string) (*mcp.CallToolResult, error) {
	res, ok, err := req.ElicitResult("form")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, server.NeedInput().Elicit("form", &mcp.ElicitParams{Message: message, RequestedSchema: jsontext.Value(schema)})
	}
	content, _ := json.Marshal(res.Content)
	if res.Content == nil {
		content = []byte("{}")
	}
	return text(fmt.Sprintf("%s: action=%s, content=%s", prefix, res.Action, content)), nil
}
