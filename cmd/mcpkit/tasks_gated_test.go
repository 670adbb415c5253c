package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
)

// gateWriter collects what the command writes and closes seen once a
// line containing want has been written.
type gateWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *gateWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *gateWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestCallTaskProgressGated: `call --task` shows a task's first step
// while the task is still running, in both eras, over Streamable HTTP.
// The tool reports step 1 and then waits until the command has printed
// it (the test reads the command's stderr), so the step cannot come and
// go before the command looks: without progress on the terminal the
// task never ends and the test fails at its deadline.
func TestCallTaskProgressGated(t *testing.T) {
	for era, want := range map[string]string{
		"legacy": "progress: 1/2 step 1",
		"modern": "working: step 1 (1/2)",
	} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			stderr := &gateWriter{want: want, seen: make(chan struct{})}
			s := server.New(&server.Options{Info: mcp.Implementation{Name: "gated", Version: "1"}})
			err := server.AddTool(s, &mcp.Tool{Name: "steps", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
				func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
					if err := req.Progress(ctx, 1, 2, "step 1"); err != nil {
						return "", err
					}
					select {
					case <-stderr.seen:
					case <-ctx.Done():
						return "", ctx.Err()
					}
					if err := req.Progress(ctx, 2, 2, "step 2"); err != nil {
						return "", err
					}
					return "all steps done", nil
				})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(streamhttp.NewHandler(s, nil))
			defer ts.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "call", ts.URL, "--era", era, "--task", "steps")
			var stdout bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("mcpkit call --task: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), "all steps done") {
				t.Errorf("stdout:\n%s", stdout.String())
			}
		})
	}
}
