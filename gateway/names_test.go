package gateway

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
)

// TestNameKeptByDeadUpstream: without prefixes, the upstream listed first
// keeps a name it listed while it is down or no longer lists it: the name
// is withdrawn, the upstream listed after it never registers it, calls
// fail instead of reaching that other server, and the name returns with
// its keeper.
func TestNameKeptByDeadUpstream(t *testing.T) {
	sa, sb := upstreamServer(t, "a"), upstreamServer(t, "b")
	a, b := newMemUpstream(t, sa), newMemUpstream(t, sb)
	g, err := New(&Options{Upstreams: []Upstream{
		{Name: "a", Connect: a.connect, ProtocolVersion: mcp.LatestLegacy, HealthInterval: -1},
		{Name: "b", Connect: b.connect, ProtocolVersion: mcp.Version20260728, HealthInterval: -1},
	}})
	must(t, err)
	// A's restart pause waits for the test's word; asking for it means A's
	// items are withdrawn.
	restart := make(chan time.Time)
	paused := make(chan struct{}, 8)
	g.after = func(time.Duration) <-chan time.Time {
		paused <- struct{}{}
		return restart
	}
	synced := make(chan string, 64)
	g.syncHook = func(name string) { synced <- name }
	readyA := make(chan struct{}, 8)
	g.stateHook = func(name string, s State) {
		if name == "a" && s == StateReady {
			readyA <- struct{}{}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	must(t, g.Start(ctx))
	t.Cleanup(func() { g.Close() })
	<-readyA
	ua, ub := g.ups[0], g.ups[1]
	p := mcptest.NewPair(t, g.Server(), nil)
	all := "echo,greet,twice,work"
	if got := strings.Join(toolNames(t, p), ","); got != all {
		t.Fatalf("tools = %s", got)
	}
	if out := mcptest.CallTool[echoOut](t, p, "echo", echoIn{Text: "x"}); out.Text != "a:x" {
		t.Fatalf("echo = %q", out.Text)
	}

	// waitSync makes b sync and waits for a sync of b that listed late,
	// an item added after the step before (so the sync began after it).
	waitSync := func(late string) {
		t.Helper()
		signal(ub.resync)
		for g.names.lookup(kindTool, late) != ub {
			select {
			case <-synced:
			case <-ctx.Done():
				t.Fatalf("b never registered %s", late)
			}
		}
	}
	addTool := func(s *server.Server, name string) {
		t.Helper()
		must(t, s.AddRawTool(&mcp.Tool{Name: name}, func(context.Context, *server.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: name}}}, nil
		}))
	}
	// refused checks that echo is neither listed nor answered, and that b
	// reports it as a conflict.
	refused := func(listed string) {
		t.Helper()
		if got := strings.Join(toolNames(t, p), ","); got != listed {
			t.Fatalf("tools = %s, want %s", got, listed)
		}
		if o := g.names.lookup(kindTool, "echo"); o != nil {
			t.Fatalf("echo is registered for %s", o.cfg.Name)
		}
		res, err := p.Client.CallTool(p.Context(), &mcp.CallToolParams{Name: "echo", Arguments: []byte(`{"text":"secret"}`)})
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != mcp.CodeInvalidParams {
			t.Fatalf("echo = %+v, %v; want the -32602 of an unknown tool", res, err)
		}
		if h := g.Health()[1]; !slices.Contains(h.Conflicts, "tool echo") {
			t.Fatalf("b's health = %+v", h)
		}
	}

	a.kill()
	<-paused
	addTool(sb, "late1")
	waitSync("late1")
	refused("late1")

	// The keeper's return restores its names.
	restart <- time.Now()
	<-readyA
	if got := strings.Join(toolNames(t, p), ","); got != "echo,greet,late1,twice,work" {
		t.Fatalf("tools after a's return = %s", got)
	}
	if out := mcptest.CallTool[echoOut](t, p, "echo", echoIn{Text: "y"}); out.Text != "a:y" {
		t.Fatalf("echo = %q", out.Text)
	}

	// The keeper, alive, stops listing echo: withdrawn, not handed over.
	sa.RemoveTools("echo")
	signal(ua.resync)
	for g.names.lookup(kindTool, "echo") != nil {
		select {
		case <-synced:
		case <-ctx.Done():
			t.Fatal("echo never withdrawn")
		}
	}
	addTool(sb, "late2")
	waitSync("late2")
	refused("greet,late1,late2,twice,work")
}
