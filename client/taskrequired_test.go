package client_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// requiredTaskServer is a scripted 2025-11-25 server that runs tool
// calls as tasks and lists the tool "research" with taskSupport listed
// (empty: not said); a plain call of it is refused with plain, either
// -32601 or a tool error as the TypeScript SDK answers.
func requiredTaskServer(t *testing.T, listed string, plain func() (any, error)) (*client.Client, *fakeServer) {
	task := `{"taskId":"R1","status":"working","createdAt":"2025-11-30T08:00:00Z","lastUpdatedAt":"2025-11-30T08:00:00Z","ttl":30000}`
	tr, f := startFake(t, func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
		switch msg.Method {
		case mcp.MethodInitialize:
			res := initializeResult()
			res.Capabilities.Tools = &mcp.ToolsCapability{}
			res.Capabilities.Tasks = &mcp.TasksCapability{Requests: map[string]map[string]struct{}{"tools": {"call": {}}}}
			return res, nil
		case mcp.MethodToolsList:
			exec := ""
			if listed != "" {
				exec = `,"execution":{"taskSupport":"` + listed + `"}`
			}
			return jsontext.Value(`{"tools":[{"name":"research","inputSchema":{"type":"object"}` + exec + `}]}`), nil
		case mcp.MethodToolsCall:
			if strings.Contains(string(msg.Params), `"task":`) {
				return jsontext.Value(`{"task":` + task + `}`), nil
			}
			return plain()
		case mcp.MethodTasksResult:
			return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "report"}}}, nil
		}
		return nil, jsonrpc.ErrMethodNotFound
	})
	return connect(t, tr, &client.Options{ProtocolVersion: mcp.LatestLegacy}), f
}

func toolCalls(f *fakeServer) (plain, asTask int) {
	for _, m := range f.requests() {
		if m.Method != mcp.MethodToolsCall {
			continue
		}
		if strings.Contains(string(m.Params), `"task":`) {
			asTask++
		} else {
			plain++
		}
	}
	return plain, asTask
}

// TestRequiredTaskLegacy: the client learns a tool's task support from
// the server's listing before its first call (listing once), calls a
// required one as a task, and calls a tool again as a task when the
// listing did not say but the server refused the plain call -32601.
func TestRequiredTaskLegacy(t *testing.T) {
	toolError := func() (any, error) {
		return &mcp.CallToolResult{IsError: true, Content: mcp.Contents{&mcp.TextContent{Text: "MCP error -32601: requires task augmentation"}}}, nil
	}
	refused := func() (any, error) {
		return nil, jsonrpc.NewError(mcp.CodeMethodNotFound, "Tool research requires task augmentation (taskSupport: 'required')")
	}
	for _, tc := range []struct {
		name          string
		listed        string
		plain         func() (any, error)
		plainCalls    int
		want          string
		wantTaskCalls int
	}{
		{"listed required, tool error for a plain call", mcp.TaskSupportRequired, toolError, 0, "report", 2},
		{"not said, -32601 for a plain call", "", refused, 2, "report", 2},
		{"not said, a tool error stands", "", toolError, 2, "MCP error -32601: requires task augmentation", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := requiredTaskServer(t, tc.listed, tc.plain)
			for range 2 {
				res, err := c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "research"})
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Content[0].(*mcp.TextContent).Text; got != tc.want {
					t.Errorf("result %q, want %q", got, tc.want)
				}
			}
			plain, asTask := toolCalls(f)
			if plain != tc.plainCalls || asTask != tc.wantTaskCalls {
				t.Errorf("%d plain calls and %d as tasks, want %d and %d", plain, asTask, tc.plainCalls, tc.wantTaskCalls)
			}
			methods := f.methods()
			if n := len(slices.DeleteFunc(methods, func(m string) bool { return m != mcp.MethodToolsList })); n != 1 {
				t.Errorf("%d tools/list, want 1 (the first call lists, the listing is kept)", n)
			}
		})
	}
}
