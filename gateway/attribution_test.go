//go:build unix

package gateway

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
)

// eraOf alternates the clients' eras over the upstream kinds, so that
// each kind meets both eras as the first client and as the second.
func eraOf(i int) (client.Era, client.Era) {
	if i%2 == 0 {
		return client.EraLegacy, client.EraModern
	}
	return client.EraModern, client.EraLegacy
}

// Client A calls a tool that, ignoring cancellation, logs and asks later;
// A goes away mid-call. Client B's call, in flight when the upstream
// logs and asks for A, hears neither, and B's answers never reach A's
// tool (issue 32, item 1).
func TestAbandonedCallLeaksNothing(t *testing.T) {
	for i, k := range upstreamKinds {
		eraA, eraB := eraOf(i)
		t.Run(fmt.Sprintf("%s/A=%s/B=%s", k.name, eraA, eraB), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			ev := newEvents()
			url := gatewayOver(t, k, ev, nil)
			a := connectClient(t, ctx, url, eraA, "alice", "from-A", false)
			b := connectClient(t, ctx, url, eraB, "bob", "from-B", false)
			gateA, openA := newGate(t, "a")
			gateB, openB := newGate(t, "b")

			actx, cancelA := context.WithCancel(ctx)
			aDone := make(chan error, 1)
			go func() {
				_, err := callTool(actx, a.c, "hold", holdIn{Who: "A", Gate: gateA})
				aDone <- err
			}()
			a.waitLog(t, ctx, "start A")
			cancelA() // A goes away mid-call
			<-aDone
			a.c.Close()

			type result struct {
				text string
				err  error
			}
			bDone := make(chan result, 1)
			go func() {
				res, err := callTool(ctx, b.c, "slow", holdIn{Who: "B", Gate: gateB})
				bDone <- result{resultText(res), err}
			}()
			b.waitLog(t, ctx, "start B")
			openA() // the upstream now logs and asks for A, while B's call runs
			out := ev.wait(t, ctx, "outcome A ")
			openB()
			r := <-bDone
			if r.err != nil || r.text != "done B" {
				t.Fatalf("B's call: %q, %v", r.text, r.err)
			}
			if heard := b.heard(); strings.Contains(heard, " A") {
				t.Fatalf("B heard A's messages: %q", heard)
			}
			if strings.Contains(out, "from-B") {
				t.Fatalf("B's answer reached A's tool: %q", out)
			}
		})
	}
}

// An eliciting call gets its input request, and its answer reaches it,
// with several other calls in flight to the same upstream (issue 32,
// item 2): a legacy client by a real elicitation request, a 2026 client
// by input_required rounds.
func TestElicitationWithCallsInFlight(t *testing.T) {
	const others = 3
	for _, k := range upstreamKinds {
		t.Run(k.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			ev := newEvents()
			url := gatewayOver(t, k, ev, func(up *Upstream) { up.MaxConnections = 8 })
			s := connectClient(t, ctx, url, client.EraLegacy, "sam", "from-S", false)
			gate, open := newGate(t, "s")
			slow := make(chan error, others)
			for i := range others {
				go func() {
					_, err := callTool(ctx, s.c, "slow", holdIn{Who: fmt.Sprint("S", i), Gate: gate})
					slow <- err
				}()
			}
			for i := range others {
				ev.wait(t, ctx, fmt.Sprint("start S", i)) // each slow call runs upstream
			}
			for _, era := range []client.Era{client.EraLegacy, client.EraModern} {
				who := "C-" + era.String()
				c := connectClient(t, ctx, url, era, who, "name-"+who, false)
				res, err := callTool(ctx, c.c, "ask", holdIn{Who: who})
				if err != nil || res.IsError {
					t.Fatalf("%s: %v %q", who, err, resultText(res))
				}
				if got, want := resultText(res), "answer "+who+" name-"+who; got != want {
					t.Fatalf("%s: %q, want %q", who, got, want)
				}
				if got := c.heard(); !strings.Contains(got, "question "+who) {
					t.Fatalf("%s heard %q", who, got)
				}
			}
			if got := s.heard(); strings.Contains(got, "C-") {
				t.Fatalf("S heard %q", got)
			}
			for range others {
				open()
			}
			for range others {
				if err := <-slow; err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// checkKind checks that the gateway reached the upstream in k's era.
// gatewayOver starts an upstream of kind k (its events to ev), a gateway
// in front of it (adjust, when set, changes the upstream's settings
// first), checks the upstream's kind, and serves the gateway: its URL.
func gatewayOver(t *testing.T, k upstreamKind, ev *events, adjust func(*Upstream)) string {
	t.Helper()
	up := startUpstream(t, k, ev)
	if adjust != nil {
		adjust(&up)
	}
	g := newGateway(t, &Options{Upstreams: []Upstream{up}})
	checkKind(t, g, k)
	return serveGateway(t, g)
}

func checkKind(t *testing.T, g *Gateway, k upstreamKind) {
	t.Helper()
	h := g.Health()[0]
	want := client.EraLegacy.String()
	if k.version == "2026-07-28" {
		want = client.EraModern.String()
	}
	if h.State != StateReady || h.Era != want {
		t.Fatalf("upstream %s: %+v", k.name, h)
	}
	t.Logf("upstream %s: %s %s", k.name, h.Era, h.ProtocolVersion)
}
