package gateway

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
)

// TestParkedCallEndedByUpstream: the upstream ends a call while it is
// parked (it gives up on its own question). The call no longer counts as
// pending, and the client's late answer is told the call is over; no
// MaxInFlight slot stays taken.
func TestParkedCallEndedByUpstream(t *testing.T) {
	s := upstreamServer(t, "g")
	giveUp := make(chan struct{})
	must(t, server.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (echoOut, error) {
		ectx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() { // ends with the handler
			select {
			case <-giveUp:
				cancel()
			case <-ectx.Done():
			}
		}()
		_, err := req.Elicit(ectx, &mcp.ElicitParams{Message: "Who?", RequestedSchema: mustForm(t)})
		return echoOut{Text: "gave up"}, err
	}))
	mu := newMemUpstream(t, s)
	g, err := New(&Options{Upstreams: []Upstream{{Name: "u", Connect: mu.connect, ProtocolVersion: mcp.LatestLegacy, HealthInterval: -1, MaxInFlight: 2}}})
	must(t, err)
	ended := make(chan struct{}, 4)
	g.callEndHook = func() { ended <- struct{}{} }
	must(t, g.Start(t.Context()))
	t.Cleanup(func() { g.Close() })
	p := manualPair(t, g)

	ire := firstRound(t, p)
	close(giveUp)
	<-ended
	if h := g.Health()[0]; h.Pending != 0 || h.InFlight != 0 || h.Leased != 0 {
		t.Fatalf("after the upstream ended the parked call: pending %d, in flight %d, leased %d; want none", h.Pending, h.InFlight, h.Leased)
	}
	_, err = retry(p, ire, "late")
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != mcp.CodeInvalidParams {
		t.Fatalf("late answer: %v; want -32602 (no longer pending)", err)
	}
	if h := g.Health()[0]; h.InFlight != 0 {
		t.Fatalf("after the late answer: %d slots taken", h.InFlight)
	}
}

// TestRetiredControlNotLeased: with MaxConnections 1, a call the client
// abandons retires the upstream's one connection; a call waiting for it
// is never handed that connection (it is being closed, and what the
// upstream still sends for the abandoned call would reach it): it is
// told the upstream is not connected while the gateway connects again,
// or served on the new connection.
func TestRetiredControlNotLeased(t *testing.T) {
	s, ended, started := gatedServer(t)
	mu := newMemUpstream(t, s)
	g, err := New(&Options{
		// Every call its own client: the per-client cap is not in play.
		ClientKey: func(_ context.Context, req *server.Request) string { return req.ClientInfo().Name },
		Upstreams: []Upstream{{Name: "u", Connect: mu.connect, ProtocolVersion: mcp.LatestLegacy, HealthInterval: -1, MaxConnections: 1}},
	})
	must(t, err)
	queued := make(chan struct{}, 8)
	after := g.queueAfter
	g.queueAfter = func(d time.Duration) <-chan time.Time {
		queued <- struct{}{}
		return after(d)
	}
	must(t, g.Start(t.Context()))
	t.Cleanup(func() { g.Close() })

	a := mcptest.NewPair(t, g.Server(), &mcptest.Options{Client: &client.Options{Info: mcp.Implementation{Name: "a", Version: "1"}}})
	actx, cancel := context.WithCancel(a.Context())
	aDone := make(chan error, 1)
	go func() {
		_, err := a.Client.CallTool(actx, &mcp.CallToolParams{Name: "block"})
		aDone <- err
	}()
	<-started
	b := mcptest.NewPair(t, g.Server(), &mcptest.Options{Client: &client.Options{Info: mcp.Implementation{Name: "b", Version: "1"}}})
	bDone := make(chan error, 1)
	go func() {
		_, err := b.Client.CallTool(b.Context(), &mcp.CallToolParams{Name: "echo", Arguments: jsontext.Value(`{"text":"x"}`)})
		bDone <- err
	}()
	<-queued // b waits for the connection a holds
	cancel()
	if err := <-aDone; err == nil {
		t.Fatal("a's cancelled call succeeded")
	}
	if got := <-ended; got != "cancelled" {
		t.Fatalf("the upstream's call ended %q", got)
	}
	err = <-bDone
	switch {
	case err == nil:
		// Served: then on the connection made after the retirement.
		if n := g.Health()[0].Connects; n < 2 {
			t.Fatalf("b's call succeeded on connection %d, the retired one", n)
		}
	case !strings.Contains(err.Error(), ErrUnavailable.Error()):
		t.Fatalf("b's call, queued behind the abandoned one: %v; want success or %q", err, ErrUnavailable)
	}
}
