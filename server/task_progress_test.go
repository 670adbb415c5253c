package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// A task's progress reaches the client in both eras over Streamable HTTP
// (docs/design/tasks.md, "Progress and log messages of a task").

// progressTool registers "steps", a task tool that reports progress three
// times, each step once the test says the client saw the one before
// (next), then completes.
func progressTool(t *testing.T, s *server.Server, next <-chan struct{}) {
	t.Helper()
	err := server.AddTool(s, &mcp.Tool{Name: "steps", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
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
			return "done", nil
		})
	if err != nil {
		t.Fatal(err)
	}
}

// serveHTTP serves s over Streamable HTTP on loopback (opts nil: the
// defaults).
func serveHTTP(t *testing.T, s *server.Server, opts ...*streamhttp.Options) string {
	t.Helper()
	var o *streamhttp.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	h := streamhttp.NewHandler(s, o)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	hs := httptest.NewServer(mux)
	t.Cleanup(func() { hs.Close(); _ = h.Close() })
	return hs.URL + "/mcp"
}

// TestTaskProgressLegacyHTTP: a 2025-11-25 task's progress, reported
// after the tools/call that created it was answered, reaches the client
// on its tasks/result stream with the call's token: each step once, in
// order, then the result. Before, the steps belonged to the answered
// tools/call and went nowhere.
func TestTaskProgressLegacyHTTP(t *testing.T) {
	t.Run("session", func(t *testing.T) { taskProgressLegacyHTTP(t, nil) })
	t.Run("stateless", func(t *testing.T) { taskProgressLegacyHTTP(t, &streamhttp.Options{Stateless: true}) })
}

func taskProgressLegacyHTTP(t *testing.T, opts *streamhttp.Options) {
	next := make(chan struct{})
	s := server.New(nil)
	progressTool(t, s, next)
	url := serveHTTP(t, s, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a hang guard
	defer cancel()
	c, err := client.Connect(ctx, streamable.New(url, nil), &client.Options{ProtocolVersion: mcp.Version20251125})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mu sync.Mutex
	var seen []string
	pctx := client.WithProgress(ctx, func(p *mcp.ProgressParams) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%v/%v %s", p.Progress, *p.Total, p.Message))
		mu.Unlock()
		if rt, ok := p.Meta[mcp.MetaKeyRelatedTask]; !ok || rt == nil {
			t.Errorf("progress %v without related-task _meta", p.Progress)
		}
		next <- struct{}{}
	})
	res, err := c.RunToolTask(pctx, &mcp.CallToolParams{Name: "steps"})
	if err != nil {
		t.Fatalf("RunToolTask: %v (progress seen %q)", err, seen)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "done" {
		t.Fatalf("result %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(seen, "; "); got != "1/3 step 1; 2/3 step 2; 3/3 step 3" {
		t.Errorf("progress seen: %s", got)
	}
}

// TestTaskProgressModernHTTP: a 2026-07-28 task's progress becomes its
// statusMessage, which the client's polls report: each step once, in
// order, then completed. Before, the task's progress was discarded.
func TestTaskProgressModernHTTP(t *testing.T) {
	next := make(chan struct{})
	s := server.New(nil)
	progressTool(t, s, next)
	url := serveHTTP(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a hang guard
	defer cancel()
	c, err := client.Connect(ctx, streamable.New(url, nil), &client.Options{ProtocolVersion: mcp.Version20260728})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var seen []string
	sctx := client.WithTaskStatus(ctx, func(tk *client.Task) {
		seen = append(seen, fmt.Sprintf("%s %s", tk.Status, tk.StatusMessage))
		if tk.Status == mcp.TaskWorking && strings.HasPrefix(tk.StatusMessage, "step ") {
			next <- struct{}{}
		}
	})
	res, err := c.RunToolTask(sctx, &mcp.CallToolParams{Name: "steps"})
	if err != nil {
		t.Fatalf("RunToolTask: %v (states seen %q)", err, seen)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "done" {
		t.Fatalf("result %q", got)
	}
	var steps []string
	for _, st := range seen {
		if strings.HasPrefix(st, "working step") {
			steps = append(steps, st)
		}
	}
	if got := strings.Join(steps, "; "); got != "working step 1 (1/3); working step 2 (2/3); working step 3 (3/3)" {
		t.Errorf("progress seen: %s (all states %q)", got, seen)
	}
	if last := seen[len(seen)-1]; !strings.HasPrefix(last, "completed") {
		t.Errorf("last state %q", last)
	}
}
