package client_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
)

// stepsTool registers "steps", a task tool that reports step 1, waits
// until the client saw it (seen1), reports steps 2 and 3 back to back
// — faster than any poll — and completes once the client saw step 3
// (seen3).
func stepsTool(t *testing.T, s *server.Server, seen1, seen3 <-chan struct{}) {
	t.Helper()
	err := server.AddTool(s, &mcp.Tool{Name: "steps", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
		func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
			wait := func(ch <-chan struct{}) error {
				select {
				case <-ch:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			if err := req.Progress(ctx, 1, 3, "step 1"); err != nil {
				return "", err
			}
			if err := wait(seen1); err != nil {
				return "", err
			}
			for i := 2; i <= 3; i++ {
				if err := req.Progress(ctx, float64(i), 3, fmt.Sprintf("step %d", i)); err != nil {
					return "", err
				}
			}
			return "done", wait(seen3)
		})
	if err != nil {
		t.Fatal(err)
	}
}

// stepSignals turns the steps the client reports into the tool's
// signals: seen1 and seen3 are closed once, when step 1 and step 3 are
// first seen.
type stepSignals struct {
	seen1, seen3 chan struct{}
	mu           sync.Mutex
	steps        []string
}

func newStepSignals() *stepSignals {
	return &stepSignals{seen1: make(chan struct{}), seen3: make(chan struct{})}
}

func (s *stepSignals) saw(step string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps = append(s.steps, step)
	switch {
	case strings.HasPrefix(step, "step 1"):
		close(s.seen1)
	case strings.HasPrefix(step, "step 3"):
		close(s.seen3)
	}
}

func (s *stepSignals) seen() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.steps, "; ")
}

// TestRunToolTaskProgressModern: a 2026-07-28 task's progress steps are
// its statusMessage; RunToolTask reports each once, in order, to
// WithTaskStatus — also steps that follow each other faster than the
// server's pollIntervalMs (the client listens for the task's
// notifications/tasks while it waits). Before, only the polls reported
// them, and step 2 was lost behind step 3.
func TestRunToolTaskProgressModern(t *testing.T) {
	sig := newStepSignals()
	s := server.New(nil)
	stepsTool(t, s, sig.seen1, sig.seen3)
	p := mcptest.NewPair(t, s, &mcptest.Options{Era: client.EraModern, Timeout: 20 * time.Second})
	var states []string
	ctx := client.WithTaskStatus(p.Context(), func(tk *client.Task) {
		states = append(states, string(tk.Status))
		if tk.Status == mcp.TaskWorking && strings.HasPrefix(tk.StatusMessage, "step ") {
			sig.saw(tk.StatusMessage)
		}
	})
	res, err := p.Client.RunToolTask(ctx, &mcp.CallToolParams{Name: "steps"})
	if err != nil {
		t.Fatalf("RunToolTask: %v (steps seen %q)", err, sig.seen())
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "done" {
		t.Fatalf("result %q", got)
	}
	if got := sig.seen(); got != "step 1 (1/3); step 2 (2/3); step 3 (3/3)" {
		t.Errorf("steps seen: %s", got)
	}
	if last := states[len(states)-1]; last != string(mcp.TaskCompleted) {
		t.Errorf("states %q: the last is not completed", states)
	}
}

// TestRunToolTaskProgressLegacy: a 2025-11-25 task's progress reaches
// WithProgress with the call's token until the outcome, each step once,
// in order.
func TestRunToolTaskProgressLegacy(t *testing.T) {
	sig := newStepSignals()
	s := server.New(nil)
	stepsTool(t, s, sig.seen1, sig.seen3)
	p := mcptest.NewPair(t, s, &mcptest.Options{Era: client.EraLegacy, Timeout: 20 * time.Second})
	ctx := client.WithProgress(p.Context(), func(pp *mcp.ProgressParams) {
		sig.saw(fmt.Sprintf("%s (%v/%v)", pp.Message, pp.Progress, *pp.Total))
	})
	res, err := p.Client.RunToolTask(ctx, &mcp.CallToolParams{Name: "steps"})
	if err != nil {
		t.Fatalf("RunToolTask: %v (steps seen %q)", err, sig.seen())
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "done" {
		t.Fatalf("result %q", got)
	}
	if got := sig.seen(); got != "step 1 (1/3); step 2 (2/3); step 3 (3/3)" {
		t.Errorf("steps seen: %s", got)
	}
}
