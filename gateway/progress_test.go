//go:build unix

package gateway

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// A plain call of a 2026 upstream's task-supporting tool, by a client of
// either era that asks for progress and sets a log level, gets the
// upstream's progress and log messages (issue 33, item 5): the gateway
// calls the upstream as the client did, not as a task, whose messages a
// 2026 server has no channel for.
func TestModernTaskToolProgressAndLogs(t *testing.T) {
	kinds := []upstreamKind{
		{"modern-http", "http", mcp.Version20260728},
		{"modern-stdio", "stdio", mcp.Version20260728},
	}
	for _, k := range kinds {
		for _, era := range []client.Era{client.EraLegacy, client.EraModern} {
			t.Run(k.name+"/"+era.String(), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
				defer cancel()
				ev := newEvents()
				url := gatewayOver(t, k, ev, nil)
				d := connectClient(t, ctx, url, era, "alice", "", false)
				var steps []string
				pctx := client.WithProgress(ctx, func(p *mcp.ProgressParams) {
					steps = append(steps, fmt.Sprint(p.Progress, " ", p.Message))
				})
				res, err := callTool(pctx, d.c, "report", holdIn{Who: "A"})
				if err != nil || resultText(res) != "reported A" {
					t.Fatalf("report: %q, %v", resultText(res), err)
				}
				if got := fmt.Sprint(steps); got != "[1 step A 2 step A 3 step A]" {
					t.Errorf("progress = %s", got)
				}
				lctx, lcancel := context.WithTimeout(ctx, 15*time.Second)
				defer lcancel()
				d.waitLog(t, lctx, "working A")
			})
		}
	}
}
