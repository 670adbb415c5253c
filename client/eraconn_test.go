package client_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
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
