package main

import (
	"context"
	"fmt"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// The task fixtures (2025-11-25 core tasks and the 2026 tasks extension,
// SEP-2663). Each declares its task support on the tool; the server
// decides when a call becomes a task.

func taskTool(support string) *mcp.ToolExecution { return &mcp.ToolExecution{TaskSupport: support} }

var confirmSchema = jsontext.Value(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)

type greetIn struct {
	Name string `json:"name" jsonschema:"description=Who to greet"`
}

type slowIn struct {
	Seconds float64 `json:"seconds,omitzero" jsonschema:"description=How long to work"`
	Label   string  `json:"label,omitzero" jsonschema:"description=A label echoed in the result"`
}

type fileIn struct {
	Filename string `json:"filename" jsonschema:"description=The file to delete"`
}

func addTaskTools(s *server.Server) {
	_ = server.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greets someone, synchronously"},
		func(_ context.Context, _ *server.CallToolRequest, in greetIn) (*mcp.CallToolResult, error) {
			return text(fmt.Sprintf("Hello, %s!", in.Name)), nil
		})

	_ = server.AddTool(s, &mcp.Tool{Name: "slow_compute", Description: "Works for the given number of seconds", Execution: taskTool(mcp.TaskSupportOptional)},
		func(ctx context.Context, _ *server.CallToolRequest, in slowIn) (*mcp.CallToolResult, error) {
			select {
			case <-time.After(time.Duration(in.Seconds * float64(time.Second))):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return text(fmt.Sprintf("Computed %s in %gs", in.Label, in.Seconds)), nil
		})

	_ = server.AddTool(s, &mcp.Tool{Name: "failing_job", Description: "Fails with a tool error after a second", Execution: taskTool(mcp.TaskSupportRequired)},
		func(ctx context.Context, _ *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("the job failed")
		})

	_ = server.AddTool(s, &mcp.Tool{Name: "protocol_error_job", Description: "Fails with a protocol error", Execution: taskTool(mcp.TaskSupportOptional)},
		func(context.Context, *server.CallToolRequest, none) (*mcp.CallToolResult, error) {
			return nil, jsonrpc.NewError(mcp.CodeInternalError, "Internal error: the job crashed")
		})

	_ = server.AddTool(s, &mcp.Tool{Name: "confirm_delete", Description: "Asks for confirmation, then deletes a file", Execution: taskTool(mcp.TaskSupportOptional)},
		func(_ context.Context, req *server.CallToolRequest, in fileIn) (*mcp.CallToolResult, error) {
			ans, ok, err := req.ElicitResult("confirm")
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, server.NeedInput().Elicit("confirm", &mcp.ElicitParams{Message: "Delete " + in.Filename + "?", RequestedSchema: confirmSchema})
			}
			if ans.Action != mcp.ElicitActionAccept || ans.Content["confirm"] != true {
				return text("Kept " + in.Filename), nil
			}
			return text("Deleted " + in.Filename), nil
		})

	_ = server.AddTool(s, &mcp.Tool{Name: "multi_input", Description: "Asks two questions at once", Execution: taskTool(mcp.TaskSupportOptional)},
		func(_ context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
			first, ok1, err := req.ElicitResult("first")
			if err != nil {
				return nil, err
			}
			second, ok2, err := req.ElicitResult("second")
			if err != nil {
				return nil, err
			}
			if !ok1 || !ok2 {
				in := server.NeedInput()
				if !ok1 {
					in.Elicit("first", askName("First name?"))
				}
				if !ok2 {
					in.Elicit("second", askName("Second name?"))
				}
				return nil, in
			}
			return text(fmt.Sprintf("Got %s and %s", acceptedName(first), acceptedName(second))), nil
		})

	_ = server.AddTool(s, &mcp.Tool{Name: "test_tool_with_task", Description: "Asks for a name, then greets as a task", Execution: taskTool(mcp.TaskSupportOptional)},
		func(_ context.Context, req *server.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
			name, ok, err := req.ElicitResult("user_name")
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, server.NeedInput().Elicit("user_name", askName("What is your name?"))
			}
			who := acceptedName(name)
			return nil, server.ContinueAsTask(func(ctx context.Context, _ *server.CallToolRequest) (*mcp.CallToolResult, error) {
				select {
				case <-time.After(200 * time.Millisecond):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return text("Hello, " + who + "!"), nil
			})
		}, server.TaskOnDemand())
}
