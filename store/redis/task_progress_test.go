package redisstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/clustertest"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// TestClusterTaskProgress: a task's progress reaches the mcpkit client
// through the round-robin proxy over three instances sharing Redis, in
// both eras: each step once, in order, then the result. The tool reports
// a step and waits until the client saw it. A 2025-11-25 client's
// tasks/result lands on another instance than the task's (the owner
// sends the steps there through the broker); a 2026-07-28 task's steps
// are its statusMessage, read from Redis by whichever instance a poll or
// the client's listen stream reaches.
func TestClusterTaskProgress(t *testing.T) {
	for _, era := range faultEras {
		t.Run(era, func(t *testing.T) {
			c, _ := faultCluster(t)
			next := make(chan struct{})
			for _, n := range c.Nodes {
				err := server.AddTool(n.Server, &mcp.Tool{Name: "steps", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
					func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
						for i := 1; i <= 3; i++ {
							if err := req.Progress(ctx, float64(i), 3, fmt.Sprintf("step %d", i)); err != nil {
								return "", err
							}
							select {
							case <-next:
							case <-ctx.Done():
								return "", ctx.Err()
							}
						}
						return "stepped", nil
					})
				if err != nil {
					t.Fatal(err)
				}
			}
			cl := clustertest.Connect(t, c, &client.Options{ProtocolVersion: era, Tasks: true})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a hang guard
			defer cancel()
			var mu sync.Mutex
			var steps []string
			saw := func(step string) {
				mu.Lock()
				steps = append(steps, step)
				mu.Unlock()
				next <- struct{}{}
			}
			ctx = client.WithProgress(ctx, func(p *mcp.ProgressParams) { saw(p.Message) })
			ctx = client.WithTaskStatus(ctx, func(tk *client.Task) {
				if tk.Status == mcp.TaskWorking && strings.HasPrefix(tk.StatusMessage, "step ") {
					saw(strings.Fields(tk.StatusMessage)[0] + " " + strings.Fields(tk.StatusMessage)[1])
				}
			})
			res, err := cl.RunToolTask(ctx, &mcp.CallToolParams{Name: "steps"})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Fatalf("RunToolTask: %v (steps seen %q)", err, steps)
			}
			if got := clustertest.Text(t, res); got != "stepped" {
				t.Fatalf("result %q", got)
			}
			if got := strings.Join(steps, "; "); got != "step 1; step 2; step 3" {
				t.Errorf("steps seen: %s", got)
			}
			t.Logf("hits %v", c.Hits())
		})
	}
}
