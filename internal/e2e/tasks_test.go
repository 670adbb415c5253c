package e2e

// Tasks end to end: the client's task API (StartToolTask, RunToolTask,
// TaskResult, GetTask, CancelTask, ListTasks) against the real server's
// task-supporting tools, for a 2026-07-28 client (the tasks extension) in
// memory and over Streamable HTTP, and for a 2025-11-25 client (core
// tasks) in memory: completion, a tool error (a completed task with
// isError), a protocol error (a failed task), cancellation mid-run, and
// input required, answered by the client's Elicitation handler.

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/streamhttp"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

type taskSlowIn struct {
	Ms    int    `json:"ms"`
	Label string `json:"label"`
}

type taskNone struct{}

// tasksServer serves "task_sync", which never runs as a task, and the
// task-supporting "task_slow" (works ms milliseconds), "task_fails" (a
// tool error), "task_crashes" (a protocol error), "task_block" (works
// until cancelled) and "task_confirm" (asks for confirmation first).
func tasksServer() *server.Server {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "tasks", Version: "1.0.0"}})
	optional := &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
	server.AddTool(s, &mcp.Tool{Name: "task_slow", Execution: optional}, func(ctx context.Context, _ *server.CallToolRequest, in taskSlowIn) (string, error) {
		select {
		case <-time.After(time.Duration(in.Ms) * time.Millisecond):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		return "done " + in.Label, nil
	})
	server.AddTool(s, &mcp.Tool{Name: "task_sync"}, func(context.Context, *server.CallToolRequest, taskNone) (string, error) {
		return "at once", nil
	})
	server.AddTool(s, &mcp.Tool{Name: "task_fails", Execution: optional}, func(context.Context, *server.CallToolRequest, taskNone) (string, error) {
		return "", errors.New("the job failed")
	})
	server.AddTool(s, &mcp.Tool{Name: "task_crashes", Execution: optional}, func(context.Context, *server.CallToolRequest, taskNone) (string, error) {
		return "", jsonrpc.NewError(mcp.CodeInternalError, "Internal error: the job crashed")
	})
	server.AddTool(s, &mcp.Tool{Name: "task_block", Execution: optional}, func(ctx context.Context, _ *server.CallToolRequest, _ taskNone) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	server.AddTool(s, &mcp.Tool{Name: "task_confirm", Execution: optional}, func(_ context.Context, req *server.CallToolRequest, _ taskNone) (string, error) {
		ans, ok, err := req.ElicitResult("confirm")
		if err != nil {
			return "", err
		}
		if !ok {
			return "", server.NeedInput().Elicit("confirm", &mcp.ElicitParams{Message: "Sure?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)})
		}
		return fmt.Sprintf("%s %v", ans.Action, ans.Content["confirm"]), nil
	})
	// task_ask_then_run asks in the request (MRTR), then continues as a
	// task.
	server.AddTool(s, &mcp.Tool{Name: "task_ask_then_run", Execution: optional}, func(_ context.Context, req *server.CallToolRequest, _ taskNone) (*mcp.CallToolResult, error) {
		ans, ok, err := req.ElicitResult("confirm")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, server.NeedInput().Elicit("confirm", &mcp.ElicitParams{Message: "Go?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)})
		}
		answer := fmt.Sprintf("ran after %s", ans.Action)
		return nil, server.ContinueAsTask(func(context.Context, *server.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: answer}}}, nil
		})
	}, server.TaskOnDemand())
	return s
}

// taskCarriers are the connections of the task tests.
var taskCarriers = []struct {
	name    string
	version string
	dial    func(t testing.TB, srv *server.Server) transport.Conn
}{
	{"modern/memory", mcp.Version20260728, dialMemory},
	{"modern/http", mcp.Version20260728, dialHTTP},
	{"legacy/memory", mcp.LatestLegacy, dialMemory},
	{"legacy/http", mcp.LatestLegacy, dialHTTP},
}

func dialMemory(t testing.TB, srv *server.Server) transport.Conn {
	a, b := memory.NewPair()
	ss := srv.Connect(b)
	t.Cleanup(func() { ss.Close() })
	return a
}

func dialHTTP(t testing.TB, srv *server.Server) transport.Conn {
	h := streamhttp.NewHandler(srv, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	return streamable.New(ts.URL, nil)
}

func connectTasks(t *testing.T, version string, conn transport.Conn, opts client.Options) *client.Client {
	t.Helper()
	opts.ProtocolVersion = version
	opts.ElicitHandler = func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"confirm": true}}, nil
	}
	c, err := client.Connect(testCtx(t), conn, &opts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func taskArgs(ms int, label string) jsontext.Value {
	return jsontext.Value(fmt.Sprintf(`{"ms":%d,"label":%q}`, ms, label))
}

func TestTasksEndToEnd(t *testing.T) {
	for _, tc := range taskCarriers {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := tasksServer()
			c := connectTasks(t, tc.version, tc.dial(t, srv), client.Options{})
			ctx := testCtx(t)

			// Completion: a task, its state, its result.
			task, err := c.StartToolTask(ctx, &mcp.CallToolParams{Name: "task_slow", Arguments: taskArgs(100, "a")})
			if err != nil {
				t.Fatalf("StartToolTask: %v", err)
			}
			if task.ID == "" || task.Status.Terminal() {
				t.Fatalf("StartToolTask = %+v, want a running task", task)
			}
			if got, err := c.GetTask(ctx, task.ID); err != nil || got.ID != task.ID {
				t.Fatalf("GetTask: %+v, %v", got, err)
			}
			res, err := c.TaskResult(ctx, task.ID)
			if err != nil || res.IsError || text(res) != "done a" {
				t.Fatalf("TaskResult: %+v, %v", res, err)
			}
			if got, err := c.GetTask(ctx, task.ID); err != nil || got.Status != mcp.TaskCompleted {
				t.Fatalf("GetTask after the result: %+v, %v", got, err)
			}
			if tc.version != mcp.Version20260728 {
				found := false
				for tk, err := range c.Tasks(ctx) {
					if err != nil {
						t.Fatalf("Tasks: %v", err)
					}
					found = found || tk.ID == task.ID
				}
				if !found {
					t.Errorf("tasks/list does not list %s", task.ID)
				}
			}

			// A tool that does not run as a task answers at once.
			if task, err := c.StartToolTask(ctx, &mcp.CallToolParams{Name: "task_sync"}); err != nil || task.ID != "" || task.Status != mcp.TaskCompleted {
				t.Fatalf("StartToolTask(task_sync): %+v, %v", task, err)
			}
			if res, err := c.RunToolTask(ctx, &mcp.CallToolParams{Name: "task_sync"}); err != nil || text(res) != "at once" {
				t.Fatalf("RunToolTask(task_sync): %+v, %v", res, err)
			}

			// A tool error is a completed task with isError.
			if res, err := c.RunToolTask(ctx, &mcp.CallToolParams{Name: "task_fails"}); err != nil || !res.IsError {
				t.Fatalf("task_fails: %+v, %v", res, err)
			}
			// A protocol error is a failed task: the call's error.
			if _, err := c.RunToolTask(ctx, &mcp.CallToolParams{Name: "task_crashes"}); err == nil {
				t.Fatal("task_crashes: no error")
			} else {
				wantCode(t, err, mcp.CodeInternalError)
			}

			// Input required, answered by the Elicitation handler.
			if res, err := c.RunToolTask(ctx, &mcp.CallToolParams{Name: "task_confirm"}); err != nil || text(res) != "accept true" {
				t.Fatalf("task_confirm: %+v, %v", res, err)
			}

			// Cancellation mid-run.
			task, err = c.StartToolTask(ctx, &mcp.CallToolParams{Name: "task_block"})
			if err != nil || task.ID == "" {
				t.Fatalf("StartToolTask(task_block): %+v, %v", task, err)
			}
			if err := c.CancelTask(ctx, task.ID); err != nil {
				t.Fatalf("CancelTask: %v", err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				got, err := c.GetTask(ctx, task.ID)
				if err != nil {
					t.Fatalf("GetTask after cancel: %v", err)
				}
				if got.Status == mcp.TaskCancelled {
					break
				}
				if got.Status.Terminal() || time.Now().After(deadline) {
					t.Fatalf("status after cancel: %s", got.Status)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if tc.version == mcp.Version20260728 {
				if _, err := c.TaskResult(ctx, task.ID); !errors.Is(err, client.ErrTaskCanceled) {
					t.Fatalf("TaskResult of a cancelled task: %v", err)
				}
			}
		})
	}
}

// TestTasksTransparent: with Options.Tasks, a 2026 server runs a plain
// CallTool of a task-supporting tool as a task, and CallTool waits for it,
// also when the task starts after an input-required round.
func TestTasksTransparent(t *testing.T) {
	srv := tasksServer()
	c := connectTasks(t, mcp.Version20260728, dialHTTP(t, srv), client.Options{Tasks: true})
	ctx := testCtx(t)
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "task_slow", Arguments: taskArgs(50, "b")})
	if err != nil || text(res) != "done b" {
		t.Fatalf("CallTool: %+v, %v", res, err)
	}
	if res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "task_confirm"}); err != nil || text(res) != "accept true" {
		t.Fatalf("CallTool(task_confirm): %+v, %v", res, err)
	}
	// An input-required round first (the MRTR driver), then a task.
	if res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "task_ask_then_run"}); err != nil || text(res) != "ran after accept" {
		t.Fatalf("CallTool(task_ask_then_run): %+v, %v", res, err)
	}
	task, err := c.StartToolTask(ctx, &mcp.CallToolParams{Name: "task_ask_then_run"})
	if err != nil || task.ID == "" {
		t.Fatalf("StartToolTask(task_ask_then_run): %+v, %v", task, err)
	}
}

// TestTasksListen: a 2026 client follows a task through Listen with
// taskIds: notifications/tasks carry its status up to completion.
func TestTasksListen(t *testing.T) {
	srv := tasksServer()
	c := connectTasks(t, mcp.Version20260728, dialHTTP(t, srv), client.Options{})
	ctx := testCtx(t)
	task, err := c.StartToolTask(ctx, &mcp.CallToolParams{Name: "task_slow", Arguments: taskArgs(200, "l")})
	if err != nil || task.ID == "" {
		t.Fatalf("StartToolTask: %+v, %v", task, err)
	}
	sub, err := c.Listen(ctx, mcp.SubscriptionFilter{TaskIDs: []string{task.ID}})
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	defer sub.Close()
	if f := sub.Filter(); len(f.TaskIDs) != 1 || f.TaskIDs[0] != task.ID {
		t.Fatalf("acknowledged filter %+v", f)
	}
	for n := range sub.Notifications() {
		if n.Method != mcp.NotificationTasks {
			continue
		}
		var st struct {
			TaskID string         `json:"taskId"`
			Status mcp.TaskStatus `json:"status"`
		}
		if err := json.Unmarshal(n.Params, &st); err != nil || st.TaskID != task.ID {
			t.Fatalf("notifications/tasks params %s: %v", n.Params, err)
		}
		if st.Status == mcp.TaskCompleted {
			return
		}
		if st.Status.Terminal() {
			t.Fatalf("task ended %s", st.Status)
		}
	}
	t.Fatalf("the subscription ended before the task completed: %v", sub.Err())
}
