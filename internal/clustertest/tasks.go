package clustertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// TaskEvents is what the task tools of a cluster report.
type TaskEvents struct {
	// Started receives once per run of "taskhold" as it starts.
	Started chan struct{}
	// Cancelled receives once per run of "taskhold" whose context ended.
	Cancelled chan struct{}
}

func newTaskEvents() *TaskEvents {
	return &TaskEvents{Started: make(chan struct{}, 16), Cancelled: make(chan struct{}, 16)}
}

// addTaskTools registers the tools that may run as tasks:
//   - "taskask" asks for a name (elicitation) and greets it;
//   - "taskhold" waits for release or its cancellation, reporting both.
func addTaskTools(s *server.Server, release <-chan struct{}, ev *TaskEvents) {
	opt := &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
	_ = server.AddTool(s, &mcp.Tool{Name: "taskask", Execution: opt}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		res, ok, err := req.ElicitResult("who")
		if err != nil {
			return "", err
		}
		if !ok {
			return "", server.NeedInput().Elicit("who", &mcp.ElicitParams{
				Message:         "Who is there?",
				RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
			})
		}
		return fmt.Sprintf("hello %v", res.Content["name"]), nil
	})
	_ = server.AddTool(s, &mcp.Tool{Name: "taskhold", Execution: opt}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		ev.Started <- struct{}{}
		select {
		case <-release:
			return "released", nil
		case <-ctx.Done():
			ev.Cancelled <- struct{}{}
			return "", ctx.Err()
		}
	})
}

// RunTasks checks the task scenarios, each on a cluster of its own whose
// instances share a TaskStore (Backend.Tasks).
func RunTasks(t *testing.T, newCluster func(t *testing.T) *Cluster) {
	for _, era := range []string{mcp.LatestLegacy, mcp.Version20260728} {
		t.Run("TasksAcrossInstances/"+era, func(t *testing.T) { TasksAcrossInstances(t, newCluster(t), era) })
		t.Run("TaskOwnerKilled/"+era, func(t *testing.T) { TaskOwnerKilled(t, newCluster(t), era) })
	}
	t.Run("TaskStatusListen", func(t *testing.T) { TaskStatusListen(t, newCluster(t)) })
	t.Run("LegacyTaskStatus", func(t *testing.T) { LegacyTaskStatus(t, newCluster(t)) })
}

// LegacyTaskStatus checks that a 2025 task's notifications/tasks/status reach the
// session's GET stream, whichever instance holds it and whichever runs
// the task; cancelled from a third, the task's last status arrives.
func LegacyTaskStatus(t *testing.T, c *Cluster) {
	statuses := make(chan string, 16)
	conn := streamable.New(c.URL, nil)
	cl, err := client.Connect(testCtx(t), conn, &client.Options{ProtocolVersion: mcp.LatestLegacy, Listen: true, Tasks: true,
		OnNotification: func(_ context.Context, method string, params jsontext.Value) {
			if method == mcp.NotificationTasksStatus {
				statuses <- string(params)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	select {
	case <-conn.Listening():
	case <-time.After(20 * time.Second):
		t.Fatal("the GET stream did not connect")
	}
	ctx := testCtx(t)
	task, err := cl.StartToolTask(ctx, &mcp.CallToolParams{Name: "taskhold"})
	if err != nil || task.ID == "" {
		t.Fatalf("taskhold as a task: %+v, %v", task, err)
	}
	recv(t, c.Tasks.Started, "the task's start")
	if err := cl.CancelTask(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case p := <-statuses:
			if strings.Contains(p, task.ID) && strings.Contains(p, `"cancelled"`) {
				return
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no notifications/tasks/status cancelled on the GET stream")
		}
	}
}

// TaskStatusListen checks that subscriptions/listen streams naming a task, one on
// every instance, each get notifications/tasks when the task, running on
// one of them, completes.
func TaskStatusListen(t *testing.T, c *Cluster) {
	ctx := testCtx(t)
	cl := Connect(t, c, &client.Options{ProtocolVersion: mcp.Version20260728, Tasks: true})
	task, err := cl.StartToolTask(ctx, &mcp.CallToolParams{Name: "taskhold"})
	if err != nil || task.ID == "" {
		t.Fatalf("taskhold as a task: %+v, %v", task, err)
	}
	recv(t, c.Tasks.Started, "the task's start")
	var subs []*client.Subscription
	for range len(c.Nodes) { // round robin: one listen stream per instance
		s, err := cl.Listen(ctx, mcp.SubscriptionFilter{TaskIDs: []string{task.ID}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		if f := s.Filter(); len(f.TaskIDs) != 1 {
			t.Fatalf("agreed filter %+v: the task is not visible from every instance", f)
		}
		subs = append(subs, s)
	}
	listeners := map[int]bool{}
	for _, h := range c.Hits() {
		if h.What == mcp.MethodSubscriptionsListen {
			listeners[h.Node] = true
		}
	}
	if len(listeners) != len(c.Nodes) {
		t.Fatalf("listen streams on instances %v, want all %d", listeners, len(c.Nodes))
	}
	c.Release <- struct{}{}
	for i, s := range subs {
		done := false
		for n := range s.Notifications() {
			if n.Method == mcp.NotificationTasks && strings.Contains(string(n.Params), `"completed"`) && strings.Contains(string(n.Params), "released") {
				done = true
				break
			}
		}
		if !done {
			t.Errorf("listen stream %d did not hear the task complete (err %v)", i, s.Err())
		}
	}
}

// recv waits for ch; the bound reports a hang.
func recv(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not happen", what)
	}
}

// TasksAcrossInstances checks that every request of a task lands on the instance
// the round robin picks, not the one that runs it: a task that needs
// input gets it (2025: the elicitation travels on a tasks/result served
// elsewhere; 2026: tasks/update elsewhere reaches the owner), tasks/get
// works from every instance, tasks/list (2025) lists the task, and
// tasks/cancel from another instance cancels the owner's handler.
func TasksAcrossInstances(t *testing.T, c *Cluster, version string) {
	cl := Connect(t, c, &client.Options{ProtocolVersion: version, ElicitHandler: Greet, Tasks: true})
	ctx := testCtx(t)
	res, err := cl.RunToolTask(ctx, &mcp.CallToolParams{Name: "taskask"})
	if err != nil {
		t.Fatal(err)
	}
	if got := Text(t, res); got != "hello Ada" {
		t.Fatalf("taskask: %q", got)
	}

	task, err := cl.StartToolTask(ctx, &mcp.CallToolParams{Name: "taskhold"})
	if err != nil || task.ID == "" {
		t.Fatalf("taskhold as a task: %+v, %v", task, err)
	}
	recv(t, c.Tasks.Started, "the task's start")
	for range len(c.Nodes) { // round robin: once on every instance
		got, err := cl.GetTask(ctx, task.ID)
		if err != nil || got.Status != mcp.TaskWorking {
			t.Fatalf("tasks/get: %+v, %v", got, err)
		}
	}
	if version != mcp.Version20260728 {
		found := false
		for tk, err := range cl.Tasks(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			found = found || tk.ID == task.ID
		}
		if !found {
			t.Errorf("tasks/list does not list %s", task.ID)
		}
	}
	if err := cl.CancelTask(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	recv(t, c.Tasks.Cancelled, "the owner's handler cancellation")
	for {
		got, err := cl.GetTask(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == mcp.TaskCancelled {
			break
		}
		if got.Status != mcp.TaskWorking {
			t.Fatalf("after tasks/cancel: %s", got.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TaskOwnerKilled runs the case where the instance running a task is killed; once its lease
// (TaskLease) runs out, every instance reports the task failed, saying
// why, and waiting for its result ends with that error.
func TaskOwnerKilled(t *testing.T, c *Cluster, version string) {
	cl := Connect(t, c, &client.Options{ProtocolVersion: version, Tasks: true})
	ctx := testCtx(t)
	task, err := cl.StartToolTask(ctx, &mcp.CallToolParams{Name: "taskhold"})
	if err != nil || task.ID == "" {
		t.Fatalf("taskhold as a task: %+v, %v", task, err)
	}
	recv(t, c.Tasks.Started, "the task's start")
	owner := -1
	for _, n := range c.Nodes {
		if strings.HasPrefix(task.ID, "task-"+n.backend.Broker.ID()+"-") {
			owner = n.Index
		}
	}
	if owner < 0 {
		t.Fatalf("task id %q names no instance", task.ID)
	}
	c.Kill(owner)
	killed := time.Now()
	for {
		got, err := cl.GetTask(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == mcp.TaskFailed {
			if !strings.Contains(got.StatusMessage, "stopped before it finished") {
				t.Errorf("status message %q", got.StatusMessage)
			}
			break
		}
		if got.Status != mcp.TaskWorking {
			t.Fatalf("after the kill: %s", got.Status)
		}
		if time.Since(killed) > TaskLease+15*time.Second {
			t.Fatalf("still %s long after the lease", got.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, err = cl.TaskResult(ctx, task.ID)
	if err == nil || !strings.Contains(err.Error(), "stopped before it finished") {
		var fe *client.InputRequiredError
		if errors.As(err, &fe) {
			t.Fatalf("TaskResult: input required")
		}
		t.Fatalf("TaskResult after the owner died: %v", err)
	}
}
