//go:build unix

package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// One client parks calls (input requests it never answers) and fills its
// share of an upstream's connections: past its caps it gets a clear error
// at once, and other clients' calls are still served. When every
// connection is held, Health says so and a new call fails after
// QueueTimeout rather than hang (issue 32, item 3; the attack test:
// bounded in count, each step an event).
func TestParkingClientLeavesOthersServed(t *testing.T) {
	for _, k := range upstreamKinds[:3] { // the legacy ones: a 2026 upstream parks nothing
		t.Run(k.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			ev := newEvents()
			up := startUpstream(t, k, ev)
			up.MaxConnections = 8 // 4 calls per client
			g, err := New(&Options{Upstreams: []Upstream{up}, MaxPendingPerClient: 2})
			must(t, err)
			queue := make(chan time.Time)
			g.queueAfter = func(time.Duration) <-chan time.Time { return queue }
			must(t, g.Start(ctx))
			t.Cleanup(func() { g.Close() })
			checkKind(t, g, k)
			url := serveGateway(t, g)

			x := connectClient(t, ctx, url, client.EraModern, "xavier", "", true)
			for i := range 2 {
				_, err := callTool(ctx, x.c, "ask", holdIn{Who: fmt.Sprint("X", i)})
				var ire *client.InputRequiredError
				if !errors.As(err, &ire) {
					t.Fatalf("X's call %d: %v", i, err)
				}
			}
			// Past its parked calls' cap: a clear error at once.
			_, err = callTool(ctx, x.c, "ask", holdIn{Who: "X2"})
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != mcp.CodeInternalError || !strings.Contains(je.Message, "per-client limit") {
				t.Fatalf("X's third parked call: %v", err)
			}
			if h := g.Health()[0]; h.Pending != 2 {
				t.Fatalf("health: %+v", h)
			}
			// Another client is served, its question and answer its own.
			y := connectClient(t, ctx, url, client.EraLegacy, "yve", "Yves", false)
			res, err := callTool(ctx, y.c, "ask", holdIn{Who: "Y"})
			if err != nil || resultText(res) != "answer Y Yves" {
				t.Fatalf("Y's call: %v %q", err, resultText(res))
			}

			// X fills its share of the connections (2 parked + 2 running);
			// one more is refused at once.
			gate, open := newGate(t, "g")
			done := make(chan error, 16)
			run := func(c *client.Client, who string) {
				go func() {
					_, err := callTool(ctx, c, "slow", holdIn{Who: who, Gate: gate})
					done <- err
				}()
				ev.wait(t, ctx, "start "+who)
			}
			run(x.c, "X-s0")
			run(x.c, "X-s1")
			_, err = callTool(ctx, x.c, "slow", holdIn{Who: "X-s2", Gate: gate})
			if !errors.As(err, &je) || je.Code != mcp.CodeInternalError || !strings.Contains(je.Message, "per-client limit") {
				t.Fatalf("X's fifth call: %v", err)
			}
			// Y takes the rest: every connection is held.
			for i := range 4 {
				run(y.c, fmt.Sprint("Y-s", i))
			}
			if h := g.Health()[0]; !h.Exhausted || h.Leased != 8 || h.MaxConnections != 8 {
				t.Fatalf("health when full: %+v", h)
			}
			// A third client's call waits for a connection, at most
			// QueueTimeout (the test's clock), then fails clearly.
			w := connectClient(t, ctx, url, client.EraLegacy, "walt", "", false)
			wDone := make(chan error, 1)
			go func() {
				_, err := callTool(ctx, w.c, "slow", holdIn{Who: "W", Gate: gate})
				wDone <- err
			}()
			queue <- time.Now() // received only by the waiting call
			if err := <-wDone; !errors.As(err, &je) || !strings.Contains(je.Message, "busy") {
				t.Fatalf("W's call: %v", err)
			}
			for range 6 {
				open()
			}
			for range 6 {
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			}
			if h := g.Health()[0]; h.Exhausted || h.Leased != 2 {
				t.Fatalf("health after: %+v", h)
			}
		})
	}
}
