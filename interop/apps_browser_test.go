package interop

// MCP Apps in a real browser (issue 34): `mcpkit app` renders a tool's
// ui:// view in headless Chromium, bridged to the server by the official
// MCP Apps SDK's AppBridge; the view gets the tool's result, calls a tool
// through the bridge, and shows what came back. Against the demo server
// (mcpkit serve, its dice view) and the official example app server
// (@modelcontextprotocol/server-basic-vanillajs, a view built on the
// SDK's App). The view's CSP and permissions: apps_csp_test.go.

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// openApp navigates the browser to the app page with the tool's view
// opened with args.
func openApp(t *testing.T, ctx context.Context, appURL, tool, args string) {
	t.Helper()
	q := url.Values{"tool": {tool}, "args": {args}}
	if err := chromedp.Do(ctx, chromedp.Navigate(appURL+"?"+q.Encode())); err != nil {
		t.Fatalf("opening %s: %v", appURL, err)
	}
}

// TestAppBrowserDemo: the demo's dice view (written without the SDK, by
// the postMessage protocol) gets the roll's result from the host and
// shows it; its button rolls again through the bridge.
// Both eras: the bridge's calls reach the server over the client's
// connection, whichever revision it speaks.
func TestAppBrowserDemo(t *testing.T) {
	t.Parallel()
	chromium(t)
	for _, era := range []string{"modern", "legacy"} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			appBrowserDemo(t, era)
		})
	}
}

func appBrowserDemo(t *testing.T, era string) {
	appURL := startApp(t, "--era", era, "--", mcpkitBin(t), "serve", "--stdio")
	ctx := browser(t)
	openApp(t, ctx, appURL, "roll", `{"dice":2}`)

	tools := waitEvent(t, ctx, "tools", 1)
	if string(tools.Detail) != `["roll"]` {
		t.Errorf("tools with a view: %s", tools.Detail)
	}
	view := waitEvent(t, ctx, "view", 1)
	var v struct{ URI, Policy string }
	_ = json.Unmarshal(view.Detail, &v)
	if v.URI != "ui://mcpkit-demo/dice" || !strings.Contains(v.Policy, "connect-src 'none'") {
		t.Errorf("view: %s", view.Detail)
	}
	waitEvent(t, ctx, "initialized", 1)
	res := waitEvent(t, ctx, "tool-result", 1)
	var roll struct {
		Structured struct {
			Rolls []int `json:"rolls"`
			Total int   `json:"total"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(res.Detail, &roll); err != nil || len(roll.Structured.Rolls) != 2 {
		t.Fatalf("the host's call of roll: %s (%v)", res.Detail, err)
	}

	// The view shows the host's result...
	frame := viewFrame(t, ctx)
	var total string
	want := "total " + itoa(roll.Structured.Total)
	waitInFrame(t, ctx, frame, `(() => { const s = document.getElementById("total").textContent; return s.startsWith("total") ? s : false })()`, &total)
	if total != want {
		t.Errorf("the view shows %q, want %q", total, want)
	}
	// ...and calls the tool itself, through the bridge and mcpkit app.
	var clicked bool
	waitInFrame(t, ctx, frame, `(() => { const b = document.getElementById("again"); if (b.disabled) return false; b.click(); return true })()`, &clicked)
	call := waitEvent(t, ctx, "view-call", 1)
	if !strings.Contains(string(call.Detail), `"name":"roll"`) || !strings.Contains(string(call.Detail), `"dice":3`) {
		t.Errorf("the view's call: %s", call.Detail)
	}
	again := waitEvent(t, ctx, "view-result", 1)
	if err := json.Unmarshal(again.Detail, &roll); err != nil || len(roll.Structured.Rolls) != 3 {
		t.Fatalf("the view's roll: %s (%v)", again.Detail, err)
	}
	var status string
	waitInFrame(t, ctx, frame, `(() => { const s = document.getElementById("status").textContent; return s || false })()`, &status)
	if status != "rolled again" {
		t.Errorf("the view's status: %q", status)
	}
	if err := inFrame(ctx, frame, `document.getElementById("total").textContent`, &total); err != nil {
		t.Fatal(err)
	}
	if want := "total " + itoa(roll.Structured.Total); total != want {
		t.Errorf("after the view's call it shows %q, want %q", total, want)
	}
}

// TestAppBrowserBasicVanilla: the official example app server's view
// (built with the SDK's App) shows the server time the host's call
// returned, and its "Get Server Time" button calls get-time through the
// bridge.
func TestAppBrowserBasicVanilla(t *testing.T) {
	t.Parallel()
	chromium(t)
	dir := peers(t)
	js := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-basic-vanillajs", "dist", "index.js")
	appURL := startApp(t, "--", filepath.Join(dir, "node"), js, "--stdio")
	ctx := browser(t)
	openApp(t, ctx, appURL, "get-time", `{}`)

	waitEvent(t, ctx, "initialized", 1)
	res := waitEvent(t, ctx, "tool-result", 1)
	var got struct {
		Structured struct {
			Time string `json:"time"`
		} `json:"structuredContent"`
	}
	isoTime := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d`)
	if err := json.Unmarshal(res.Detail, &got); err != nil || !isoTime.MatchString(got.Structured.Time) {
		t.Fatalf("the host's call of get-time: %s (%v)", res.Detail, err)
	}
	frame := viewFrame(t, ctx)
	var shown string
	waitInFrame(t, ctx, frame, `(() => { const s = document.getElementById("server-time").textContent; return s !== "Loading..." ? s : false })()`, &shown)
	if shown != got.Structured.Time {
		t.Errorf("the view shows %q, the tool returned %q", shown, got.Structured.Time)
	}

	var clicked bool
	if err := inFrame(ctx, frame, `(() => { document.getElementById("get-time-btn").click(); return true })()`, &clicked); err != nil {
		t.Fatal(err)
	}
	call := waitEvent(t, ctx, "view-call", 1)
	if !strings.Contains(string(call.Detail), `"name":"get-time"`) {
		t.Errorf("the view's call: %s", call.Detail)
	}
	again := waitEvent(t, ctx, "view-result", 1)
	if err := json.Unmarshal(again.Detail, &got); err != nil || !isoTime.MatchString(got.Structured.Time) {
		t.Fatalf("the view's get-time: %s (%v)", again.Detail, err)
	}
	want := got.Structured.Time
	waitInFrame(t, ctx, frame, `(() => { const s = document.getElementById("server-time").textContent; return s === `+jsString(want)+` ? s : false })()`, &shown)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
