package client_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// TestOneEraMethodsSayWhich: a method of the other era is refused with
// ErrModern or ErrLegacy and names the request (and what replaces it),
// as it did before the era became a seam.
func TestOneEraMethodsSayWhich(t *testing.T) {
	ctx := testCtx(t)
	tr, _ := startFake(t, modernServer)
	mc := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20260728})
	_, listErr := mc.ListTasks(ctx, nil)
	for want, err := range map[string]error{
		"client: not part of the 2026-07-28 protocol (modern connection): ping":                                                  mc.Ping(ctx),
		"client: not part of the 2026-07-28 protocol (modern connection): resources/subscribe (use Listen)":                      mc.Subscribe(ctx, "x://a"),
		"client: not part of the 2026-07-28 protocol (modern connection): resources/unsubscribe (close the Listen subscription)": mc.Unsubscribe(ctx, "x://a"),
		"client: not part of the 2026-07-28 protocol (modern connection): notifications/roots/list_changed":                      mc.RootsChanged(ctx),
		"client: not part of the 2026-07-28 protocol (modern connection): tasks/list":                                            listErr,
	} {
		if !errors.Is(err, client.ErrModern) || err.Error() != want {
			t.Errorf("modern: %v, want %q", err, want)
		}
	}

	ltr, _ := startFake(t, legacyServer(nil))
	lc := connect(t, ltr, &client.Options{ProtocolVersion: mcp.LatestLegacy})
	_, listenErr := lc.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
	_, discoverErr := lc.Discover(ctx)
	for want, err := range map[string]error{
		"client: not available on a legacy (initialize) connection: subscriptions/listen": listenErr,
		"client: not available on a legacy (initialize) connection: server/discover":      discoverErr,
		"client: not available on a legacy (initialize) connection: tasks/update":         lc.UpdateTask(ctx, "t", nil),
	} {
		if !errors.Is(err, client.ErrLegacy) || err.Error() != want {
			t.Errorf("legacy: %v, want %q", err, want)
		}
	}
}

// TestRunToolTaskNilParamsProgressLegacy: RunToolTask with nil params
// and a progress function on a legacy connection to a server that runs
// tool calls as tasks returns the server's answer (here: no tool named
// ""). It used to dereference the nil params.
func TestRunToolTaskNilParamsProgressLegacy(t *testing.T) {
	sig := newStepSignals()
	s := server.New(nil)
	stepsTool(t, s, sig.seen1, sig.seen3)
	p := mcptest.NewPair(t, s, &mcptest.Options{Era: client.EraLegacy, Timeout: 20 * time.Second})
	if !p.Client.ServerCapabilities().Tasks.SupportsRequest(mcp.MethodToolsCall) {
		t.Fatal("the server does not run tool calls as tasks: the test would not reach the task path")
	}
	ctx := client.WithProgress(p.Context(), func(*mcp.ProgressParams) {})
	res, err := p.Client.RunToolTask(ctx, nil)
	switch {
	case err != nil:
		if !strings.Contains(err.Error(), "tool") {
			t.Errorf("err %v, want the server's refusal of the unnamed tool", err)
		}
	case res == nil || !res.IsError:
		t.Errorf("result %+v, want an error for the unnamed tool", res)
	}
}

// TestEraReadDuringHandshake: a request the server sends once the client
// has read its initialize response (a ping) is handled while Connect is
// still decoding that response and choosing the era; the interceptors
// read the era and revision (Call.Era, Call.Version) meanwhile. Under
// -race the two must not race: the pending era reads nothing Connect
// writes.
func TestEraReadDuringHandshake(t *testing.T) {
	a, b := memory.NewPair()
	answered := make(chan struct{})
	var once sync.Once
	srv := jsonrpc.NewConn(b, &jsonrpc.ConnOptions{Handler: &fakeServer{handle: legacyServer(nil), got: make(chan *jsonrpc.Message, 16)}})
	srv.Start()
	t.Cleanup(func() { srv.Close() })
	pinged := make(chan error, 1)
	go func() { // owned by the test: it waits for pinged
		<-answered
		pinged <- srv.Call(context.Background(), mcp.MethodPing, nil, nil)
	}()
	seen := make(chan intercept.Era, 1)
	ic := func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, call *intercept.Call) (any, error) {
			if call.Inbound && call.Method == mcp.MethodPing {
				seen <- call.Era
			}
			return next(ctx, call)
		}
	}
	c := connect(t, a, &client.Options{
		ProtocolVersion: mcp.LatestLegacy,
		Interceptors:    []intercept.Interceptor{ic},
		Observe: func(in bool, _ []byte) {
			if in { // the first message read: the initialize response
				once.Do(func() { close(answered) })
			}
		},
	})
	if era := recv(t, seen, "the ping"); era != 0 && era != client.EraLegacy {
		t.Errorf("Call.Era %v during the handshake", era)
	}
	if err := recv(t, pinged, "the answer to the ping"); err != nil {
		t.Errorf("ping: %v", err)
	}
	if c.Era() != client.EraLegacy {
		t.Errorf("era %v after Connect", c.Era())
	}
}
