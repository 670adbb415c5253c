// Package clients drives the client benchmarks: the same operations made
// by the mcpkit, go-sdk and mcp-go clients and by a raw net/http +
// encoding/json loop (the ceiling), against servers.ClientServer, over an
// http.Client the caller gives (the same for all). Every answer is
// checked.
//
// The workloads:
//
//	W1c  a 2026-07-28 tools/call of "echo" (session-less)
//	W3c  a 2025-11-25 tools/call of "echo" on a session (initialize once)
//	W7c  a 2026-07-28 walk of tools/list: 200 tools, 50 a page (4 requests)
//	W8c  a 2026-07-28 two-round call of "confirm": input_required with an
//	     elicitation, answered by the client's handler, then the echo
//	     (mcpkit only: the others have no such driver)
package clients

import (
	"context"
	"fmt"
	"net/http"

	"github.com/mcpkit/mcpkit/bench/workload"
)

// SDKs lists the clients, in the report's order.
var SDKs = []string{"mcpkit", "gosdk", "mcpgo", "raw"}

// Workloads lists the client workloads.
var Workloads = []string{"W1c", "W3c", "W7c", "W8c"}

// Caller makes one operation of a workload and checks its answer.
type Caller interface {
	Call(ctx context.Context) error
	Close() error
}

// Supported reports whether sdk has workload w.
func Supported(sdk, w string) bool { return w != "W8c" || sdk == "mcpkit" }

// URL returns the endpoint of workload w on the server at base
// ("http://127.0.0.1:port").
func URL(base, w string) string {
	if w == "W3c" {
		return base + workload.PathSession
	}
	return base + workload.PathStateless
}

// New connects sdk's client for workload w to the server at base
// (servers.ClientServer) over hc.
func New(ctx context.Context, sdk, w, base string, hc *http.Client) (Caller, error) {
	if !Supported(sdk, w) {
		return nil, fmt.Errorf("clients: %s has no %s", sdk, w)
	}
	url := URL(base, w)
	switch sdk {
	case "mcpkit":
		return newKit(ctx, w, url, hc)
	case "gosdk":
		return newGoSDK(ctx, w, url, hc)
	case "mcpgo":
		return newMCPGo(ctx, w, url, hc)
	case "raw":
		return newRaw(ctx, w, url, hc)
	}
	return nil, fmt.Errorf("clients: unknown client %q (want one of %v)", sdk, SDKs)
}

// Tuned returns the http.Client every client of a run shares: keep-alive
// connections enough for conns concurrent callers, over rt (nil: a fresh
// http.Transport).
func Tuned(conns int, rt http.RoundTripper) *http.Client {
	if rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns = conns * 2
		t.MaxIdleConnsPerHost = conns * 2
		t.MaxConnsPerHost = 0
		t.DisableCompression = true
		t.ForceAttemptHTTP2 = false
		rt = t
	}
	return &http.Client{Transport: rt}
}

func checkText(what, got string) error {
	if got != workload.Text {
		return fmt.Errorf("clients: %s: echoed %q, want %q", what, got, workload.Text)
	}
	return nil
}

func checkTools(n int, name func(int) string) error {
	if n != workload.ListTools {
		return fmt.Errorf("clients: listed %d tools, want %d", n, workload.ListTools)
	}
	for i := range n {
		if want := fmt.Sprintf("tool%03d", i); name(i) != want {
			return fmt.Errorf("clients: tool %d is %q, want %q", i, name(i), want)
		}
	}
	return nil
}
