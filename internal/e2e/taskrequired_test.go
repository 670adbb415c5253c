package e2e

// Tools that run only as tasks (execution.taskSupport "required"): the
// client calls them as tasks on its own, in both eras and over both
// carriers, without Options.Tasks — from the start when it listed the
// tool, after the server's refusal of a plain call when it did not — and
// reports the task's states through WithTaskStatus.

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

func requiredTaskServer() *server.Server {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "required", Version: "1.0.0"}})
	server.AddTool(s, &mcp.Tool{Name: "research", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}},
		func(_ context.Context, req *server.CallToolRequest, in struct {
			Topic string `json:"topic"`
		}) (string, error) {
			ans, ok, err := req.ElicitResult("depth")
			if err != nil {
				return "", err
			}
			if !ok {
				return "", server.NeedInput().Elicit("depth", &mcp.ElicitParams{Message: "How deep?",
					RequestedSchema: []byte(`{"type":"object","properties":{"confirm":{"type":"boolean"}}}`)})
			}
			return "researched " + in.Topic + " after " + ans.Action, nil
		})
	return s
}

func TestRequiredTaskToolsRunAsTasks(t *testing.T) {
	t.Parallel()
	for _, cr := range taskCarriers {
		for _, listed := range []bool{true, false} {
			name := cr.name + "/not listed"
			if listed {
				name = cr.name + "/listed"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				c := connectTasks(t, cr.version, cr.dial(t, requiredTaskServer()), client.Options{})
				ctx := testCtx(t)
				if listed {
					for _, err := range c.Tools(ctx) {
						if err != nil {
							t.Fatal(err)
						}
					}
				}
				var mu sync.Mutex
				var seen []mcp.TaskStatus
				sctx := client.WithTaskStatus(ctx, func(task *client.Task) {
					mu.Lock()
					seen = append(seen, task.Status)
					mu.Unlock()
				})
				res, err := c.CallTool(sctx, &mcp.CallToolParams{Name: "research", Arguments: []byte(`{"topic":"go"}`)})
				if err != nil {
					t.Fatalf("CallTool of a task-required tool: %v", err)
				}
				if got := text(res); got != "researched go after accept" {
					t.Errorf("result %q", got)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(seen) == 0 {
					t.Errorf("WithTaskStatus saw no task")
				} else if seen[0].Terminal() && len(seen) == 1 && cr.version == mcp.LatestLegacy {
					t.Errorf("legacy: the created task was already over: %v", seen)
				}
				if cr.version == mcp.Version20260728 && !slices.Contains(seen, mcp.TaskCompleted) {
					t.Errorf("modern: states %v, want completed among them", seen)
				}
			})
		}
	}
}
