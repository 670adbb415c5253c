// Command tasks shows a long-running tool run as a task, in both eras
// over an in-memory connection: the client starts it and gets a task id
// at once, checks on it, and waits for its result; a second task is
// cancelled while it runs.
//
//	go run ./examples/tasks
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/memory"
)

type reportIn struct {
	Year int `json:"year"`
}

type reportOut struct {
	Summary string `json:"summary"`
}

// newServer offers a report tool that may run as a task
// (execution.taskSupport "optional"). It waits for release, standing in
// for a long computation, so that the example can look at the task while
// it works.
func newServer(release <-chan struct{}, stopped chan<- error) (*server.Server, error) {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "reports", Version: "1.0.0"}})
	return s, errors.Join(server.AddTool(s, &mcp.Tool{
		Name:      "report",
		Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional},
	}, func(ctx context.Context, req *server.CallToolRequest, in reportIn) (reportOut, error) {
		select {
		case <-release:
			return reportOut{Summary: fmt.Sprintf("%d: 12 months, all green", in.Year)}, nil
		case <-ctx.Done(): // tasks/cancel ends the task's context
			return reportOut{}, context.Cause(ctx)
		}
	}),
		// A tool that only tasks run (taskSupport "required"), until
		// cancelled.
		server.AddTool(s, &mcp.Tool{
			Name:      "watch",
			Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired},
		}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (reportOut, error) {
			<-ctx.Done()
			stopped <- context.Cause(ctx)
			return reportOut{}, context.Cause(ctx)
		}))
}

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	for _, version := range []string{mcp.LatestLegacy, mcp.Version20260728} {
		if err := session(ctx, version); err != nil {
			return err
		}
	}
	return nil
}

func session(ctx context.Context, version string) error {
	release, stopped := make(chan struct{}), make(chan error, 1)
	s, err := newServer(release, stopped)
	if err != nil {
		return err
	}
	clientEnd, serverEnd := memory.NewPair()
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, serverEnd) }()
	defer func() { cancel(); <-served }()

	c, err := client.Connect(ctx, clientEnd, &client.Options{
		ProtocolVersion:  version,
		TaskPollInterval: 10 * time.Millisecond, // when the server suggests none
	})
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Printf("%s (%s)\n", c.Era(), c.ProtocolVersion())

	// Start: the server answers at once with the task.
	task, err := c.StartToolTask(ctx, &mcp.CallToolParams{Name: "report", Arguments: []byte(`{"year":2026}`)})
	if err != nil {
		return err
	}
	got, err := c.GetTask(ctx, task.ID)
	if err != nil {
		return err
	}
	fmt.Println("  started:", got.Status)

	close(release) // the long work is done
	res, err := c.TaskResult(ctx, task.ID)
	if err != nil {
		return err
	}
	fmt.Println("  result:", string(res.StructuredContent))

	// RunToolTask starts a task and waits for it in one call.
	res, err = c.RunToolTask(ctx, &mcp.CallToolParams{Name: "report", Arguments: []byte(`{"year":2027}`)})
	if err != nil {
		return err
	}
	fmt.Println("  run:", string(res.StructuredContent))

	// Cancel: the task's context ends and the task is cancelled.
	watch, err := c.StartToolTask(ctx, &mcp.CallToolParams{Name: "watch"})
	if err != nil {
		return err
	}
	if err := c.CancelTask(ctx, watch.ID); err != nil {
		return err
	}
	fmt.Println("  watch stopped:", <-stopped)
	// A 2026-07-28 task is cancelled once its handler has returned:
	// look until its status is final.
	for {
		if got, err = c.GetTask(ctx, watch.ID); err != nil {
			return err
		}
		if got.Status != mcp.TaskWorking {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	fmt.Println("  watch:", got.Status)
	return nil
}
