package gateway

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
)

// toolNames lists the client's tools, sorted.
func toolNames(t *testing.T, p *mcptest.Pair) []string {
	t.Helper()
	var names []string
	for tool, err := range p.Client.Tools(p.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// changes opens what delivers tools/list_changed to the test in the
// pair's era: the legacy handler, or a modern subscription.
func changes(t *testing.T, g *Gateway, era client.Era) (*mcptest.Pair, <-chan struct{}) {
	t.Helper()
	ch := make(chan struct{}, 64)
	opts := &mcptest.Options{Era: era, Client: &client.Options{
		NoCache:            true,
		OnToolsListChanged: func(context.Context) { ch <- struct{}{} },
	}}
	p := mcptest.NewPair(t, g.Server(), opts)
	if era == client.EraModern {
		sub, err := p.Client.Listen(p.Context(), mcp.SubscriptionFilter{ToolsListChanged: true})
		must(t, err)
		t.Cleanup(func() { sub.Close() })
	}
	return p, ch
}

// waitTools waits for list changes until the client's tool list is want.
func waitTools(t *testing.T, p *mcptest.Pair, ch <-chan struct{}, want string) {
	t.Helper()
	for {
		if got := strings.Join(toolNames(t, p), ","); got == want {
			return
		}
		select {
		case <-ch:
		case <-p.Context().Done():
			t.Fatalf("tools never became %q (now %q)", want, strings.Join(toolNames(t, p), ","))
		}
	}
}

func TestUpstreamDiesAndReturns(t *testing.T) {
	for _, era := range mcptest.Eras() {
		t.Run(era.String(), func(t *testing.T) {
			mu := newMemUpstream(t, upstreamServer(t, "a"))
			other := newMemUpstream(t, upstreamServer(t, "b"))
			restart := make(chan time.Time)
			g, err := New(&Options{Upstreams: []Upstream{
				{Name: "a", Prefix: "a", Connect: mu.connect, ProtocolVersion: mcp.LatestLegacy, HealthInterval: -1},
				{Name: "b", Prefix: "b", Connect: other.connect, ProtocolVersion: mcp.Version20260728, HealthInterval: -1},
			}})
			must(t, err)
			// Restart pauses wait for the test's word.
			g.after = func(time.Duration) <-chan time.Time { return restart }
			readyA := make(chan struct{}, 8)
			g.stateHook = func(name string, s State) {
				if name == "a" && s == StateReady {
					readyA <- struct{}{}
				}
			}
			must(t, g.Start(t.Context()))
			t.Cleanup(func() { g.Close() })
			<-mu.connected
			p, ch := changes(t, g, era)
			all := "a_echo,a_greet,a_twice,a_work,b_echo,b_greet,b_twice,b_work"
			waitTools(t, p, ch, all)

			mu.kill()
			waitTools(t, p, ch, "b_echo,b_greet,b_twice,b_work")
			if h := g.Health()[0]; h.State != StateDown && h.State != StateConnecting {
				t.Fatalf("health after death = %+v", h)
			}
			res, err := p.Client.CallTool(p.Context(), &mcp.CallToolParams{Name: "a_echo", Arguments: []byte(`{"text":"x"}`)})
			if err == nil && !res.IsError {
				t.Fatal("a withdrawn tool answered")
			}

			restart <- time.Now()
			if n := <-mu.connected; n != 2 {
				t.Fatalf("connection %d", n)
			}
			waitTools(t, p, ch, all)
			<-readyA // the first connection's
			<-readyA
			if h := g.Health()[0]; h.State != StateReady || h.Connects != 2 {
				t.Fatalf("health after return = %+v", h)
			}
			if out := mcptest.CallTool[echoOut](t, p, "a_echo", echoIn{Text: "back"}); out.Text != "a:back" {
				t.Fatalf("echo = %q", out.Text)
			}
		})
	}
}

func TestListChangesPassThrough(t *testing.T) {
	for _, up := range mcptest.Eras() {
		for _, down := range mcptest.Eras() {
			t.Run(up.String()+"/"+down.String(), func(t *testing.T) {
				s := upstreamServer(t, "u")
				mu := newMemUpstream(t, s)
				g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "u", Prefix: "u", Connect: mu.connect, ProtocolVersion: version(up), HealthInterval: -1}}})
				p, ch := changes(t, g, down)
				waitTools(t, p, ch, "u_echo,u_greet,u_twice,u_work")
				must(t, s.AddRawTool(&mcp.Tool{Name: "late"}, func(context.Context, *server.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "late"}}}, nil
				}))
				waitTools(t, p, ch, "u_echo,u_greet,u_late,u_twice,u_work")
				s.RemoveTools("echo", "greet")
				waitTools(t, p, ch, "u_late,u_twice,u_work")
			})
		}
	}
}

func TestNameConflicts(t *testing.T) {
	a := newMemUpstream(t, upstreamServer(t, "a"))
	b := newMemUpstream(t, upstreamServer(t, "b"))
	g := newGateway(t, &Options{Upstreams: []Upstream{
		{Name: "a", Connect: a.connect, ProtocolVersion: mcp.LatestLegacy, HealthInterval: -1},
		{Name: "b", Connect: b.connect, ProtocolVersion: mcp.LatestLegacy, HealthInterval: -1},
	}})
	// Start connects the upstreams concurrently; the one listed first
	// keeps every name, whichever registered first.
	h := g.Health()
	winner, loser := h[0], h[1]
	if winner.Tools != 4 || loser.Tools != 0 || len(loser.Conflicts) != 6 || loser.Conflicts[0] != "prompt hello" {
		t.Fatalf("health = %+v / %+v", winner, loser)
	}
	p := mcptest.NewPair(t, g.Server(), nil)
	out := mcptest.CallTool[echoOut](t, p, "echo", echoIn{Text: "x"})
	if out.Text != winner.Name+":x" {
		t.Fatalf("echo = %q", out.Text)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	conn := newMemUpstream(t, server.New(nil)).connect
	for _, tc := range []struct {
		name string
		ups  []Upstream
		want string
	}{
		{"none", nil, "no upstream"},
		{"bad name", []Upstream{{Name: "a b", Connect: conn}}, "name"},
		{"twice", []Upstream{{Name: "a", Connect: conn}, {Name: "a", Connect: conn}}, "used twice"},
		{"bad prefix", []Upstream{{Name: "a", Prefix: "1x", Connect: conn}}, "prefix"},
		{"underscore prefix", []Upstream{{Name: "a", Prefix: "a_b", Connect: conn}}, "prefix"},
		{"same prefix", []Upstream{{Name: "a", Prefix: "p", Connect: conn}, {Name: "b", Prefix: "p", Connect: conn}}, "another upstream"},
		{"no transport", []Upstream{{Name: "a"}}, "exactly one"},
		{"two transports", []Upstream{{Name: "a", URL: "http://x", Command: []string{"x"}}}, "exactly one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(&Options{Upstreams: tc.ups})
			if err == nil || !strings.HasPrefix(err.Error(), "gateway: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// fakeTimers replaces the gateway's input timers with ones the test fires.
type fakeTimers struct {
	mu  sync.Mutex
	fns []*fakeTimer
}

type fakeTimer struct {
	f       func()
	stopped bool
}

func (ft *fakeTimers) afterFunc(_ time.Duration, f func()) func() bool {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	tm := &fakeTimer{f: f}
	ft.fns = append(ft.fns, tm)
	return func() bool {
		ft.mu.Lock()
		defer ft.mu.Unlock()
		was := !tm.stopped
		tm.stopped = true
		return was
	}
}

// fire runs every timer not stopped.
func (ft *fakeTimers) fire() int {
	ft.mu.Lock()
	var run []func()
	for _, tm := range ft.fns {
		if !tm.stopped {
			tm.stopped = true
			run = append(run, tm.f)
		}
	}
	ft.mu.Unlock()
	for _, f := range run {
		f()
	}
	return len(run)
}
