package servers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/mcpkit/mcpkit/server/streamhttp"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// PathSoak is the soak endpoint (mcpkit only): the default, sessionful
// handler, which serves legacy sessions and 2026-07-28 requests alike.
const PathSoak = "/mcp-soak"

// SoakIn is the input of the soak server's tools. Steps and DelayMs are
// used by "progress" only: Steps notifications, DelayMs apart.
type SoakIn struct {
	Text    string `json:"text"`
	Steps   int    `json:"steps,omitempty"`
	DelayMs int    `json:"delayMs,omitempty"`
}

// Bounds of the "progress" tool's input, so that no request can hold the
// server for long.
const (
	SoakMaxSteps = 100
	SoakMaxDelay = 100 // ms
)

// MCPKitSoak is the soak command's server: default options (sessions,
// SSE, the legacy shim), and three tools:
//
//   - echo: returns its text;
//   - confirm: asks for an elicitation "ok" with server.NeedInput (a
//     sealed requestState on the modern wire; the legacy shim asks the
//     client itself on a session), then echoes its text;
//   - progress: sends Steps notifications/progress, DelayMs apart (the
//     answer becomes an event stream), then echoes its text; it stops
//     when its request is cancelled.
func MCPKitSoak() *streamhttp.Handler {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "bench-mcpkit-soak", Version: "1.0.0"}})
	server.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text"},
		func(ctx context.Context, req *server.CallToolRequest, in SoakIn) (EchoOut, error) {
			return EchoOut{Text: in.Text}, nil
		})
	server.AddTool(s, &mcp.Tool{Name: "confirm", Description: "Asks for confirmation, then echoes its text"},
		func(ctx context.Context, req *server.CallToolRequest, in SoakIn) (EchoOut, error) {
			ans, ok, err := req.ElicitResult("ok")
			if err != nil {
				return EchoOut{}, err
			}
			if !ok {
				return EchoOut{}, server.NeedInput().Elicit("ok", &mcp.ElicitParams{
					Message:         "Echo " + in.Text + "?",
					RequestedSchema: []byte(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`),
				}).State("soak:" + in.Text)
			}
			if ans.Action != mcp.ElicitActionAccept || ans.Content["ok"] != true {
				return EchoOut{}, fmt.Errorf("unexpected answer %q %v", ans.Action, ans.Content)
			}
			// The legacy shim runs the handler again with the answers and
			// the state it was given; the modern retry carries the sealed
			// state back.
			if req.RequestState() != "soak:"+in.Text {
				return EchoOut{}, fmt.Errorf("unexpected state %q", req.RequestState())
			}
			return EchoOut{Text: in.Text}, nil
		})
	server.AddTool(s, &mcp.Tool{Name: "progress", Description: "Reports progress, then echoes its text"},
		func(ctx context.Context, req *server.CallToolRequest, in SoakIn) (EchoOut, error) {
			if in.Steps < 0 || in.Steps > SoakMaxSteps || in.DelayMs < 0 || in.DelayMs > SoakMaxDelay {
				return EchoOut{}, errors.New("steps or delayMs out of bounds")
			}
			var t *time.Timer
			for i := 1; i <= in.Steps; i++ {
				if err := req.Progress(ctx, float64(i), float64(in.Steps), ""); err != nil {
					return EchoOut{}, err
				}
				if in.DelayMs > 0 && i < in.Steps {
					d := time.Duration(in.DelayMs) * time.Millisecond
					if t == nil {
						t = time.NewTimer(d)
						defer t.Stop()
					} else {
						t.Reset(d)
					}
					select {
					case <-t.C:
					case <-ctx.Done():
						return EchoOut{}, ctx.Err()
					}
				}
			}
			return EchoOut{Text: in.Text}, nil
		})
	return streamhttp.NewHandler(s, nil)
}

// MemPath is the memory endpoint of benchserver -mem-endpoint (W9 and
// the soak).
const MemPath = "/debug/bench-mem"

// Mem is the answer of the memory endpoint.
type Mem struct {
	HeapAlloc  uint64 `json:"heap_alloc"`
	HeapInuse  uint64 `json:"heap_inuse"`
	StackInuse uint64 `json:"stack_inuse"`
	Sys        uint64 `json:"sys"`
	Goroutines int    `json:"goroutines"`
}

// ServeMem collects garbage (twice: sync.Pool keeps a victim generation),
// returns free memory to the OS and answers the live heap, the heap spans
// in use, the stacks and the goroutine count (runtime.NumGoroutine, this
// request's own goroutine included).
func ServeMem(w http.ResponseWriter, r *http.Request) {
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(Mem{
		HeapAlloc:  ms.HeapAlloc,
		HeapInuse:  ms.HeapInuse,
		StackInuse: ms.StackInuse,
		Sys:        ms.Sys,
		Goroutines: runtime.NumGoroutine(),
	})
}
