package interop

// Helpers of the browser tests: headless Chromium (Debian's chromium)
// driven over the Chrome DevTools protocol by chromedp, and `mcpkit app`
// started against a target. Waits poll page state within a bound
// (chromedp.Poll), never sleep.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// requireBrowserEnv makes a missing Chromium a failure instead of a skip.
const requireBrowserEnv = "MCPKIT_REQUIRE_BROWSER"

// chromium returns the path of the Chromium executable, or skips (one
// line) when there is none, unless MCPKIT_REQUIRE_BROWSER=1.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(requireBrowserEnv) == "1" {
		t.Fatal("chromium is not installed and " + requireBrowserEnv + "=1 (Debian package chromium)")
	}
	t.Skip("chromium is not installed: the browser tests of mcpkit app skip (Debian package chromium)")
	return ""
}

// browser starts a headless Chromium with a fresh profile and returns a
// context of its first tab; console messages and exceptions of the page
// go to the test log. The browser ends with the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	exe := chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// Keeps the view's sandboxed (opaque-origin) iframe in the page's
		// process, so that it shows in the tab's frame tree and the test
		// can read its DOM; its sandbox and CSP are the same either way.
		chromedp.Flag("disable-features", "IsolateSandboxedIframes"),
	}
	// The browser lives as long as the context of the first Run: the
	// test's, bounded by hangGuard, cancelled at its end.
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf), chromedp.WithListener(func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			t.Logf("console.%s: %s", ev.Type, strings.Join(parts, " "))
		case *runtime.EventExceptionThrown:
			t.Logf("page exception: %s", ev.ExceptionDetails.Text)
		}
	}))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if _, err := chromedp.Run(ctx, chromedp.Func(func(context.Context, *chromedp.Target) error { return nil })); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	return ctx
}

// startApp runs `mcpkit app` with the SDK bundle of the peers folder
// against target and returns the page's URL, read from the line it
// prints; the process is interrupted and waited for at the end.
func startApp(t *testing.T, target ...string) string {
	t.Helper()
	bundle := filepath.Join(peers(t), "app-bridge.js")
	cmd := exec.Command(mcpkitBin(t), append([]string{"app", "--bridge", bundle}, target...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &testLogWriter{t: t, prefix: "[mcpkit app stderr] "}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		<-done
	})
	url := make(chan string, 1)
	go func() { // owned by the test: ends when the process's stdout closes
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "mcpkit app: open "); ok {
				u, _, _ := strings.Cut(rest, " ")
				select {
				case url <- u:
				default:
				}
			}
		}
		_ = cmd.Wait()
	}()
	select {
	case u := <-url:
		return u
	case <-done:
		t.Fatal("mcpkit app exited before serving")
	case <-testCtx(t).Done():
		t.Fatal("mcpkit app did not say where it serves")
	}
	return ""
}

// testLogWriter sends a process's stderr to the test log.
type testLogWriter struct {
	t      *testing.T
	prefix string
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s%s", w.prefix, strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// appEvent is an entry of window.mcpkitApp.events, the host page's record.
type appEvent struct {
	Kind   string          `json:"kind"`
	Detail json.RawMessage `json:"detail"`
}

// waitEvent polls the host page until its record holds the n-th (from 1)
// event of kind, or an error event, and returns it.
func waitEvent(t *testing.T, ctx context.Context, kind string, n int) appEvent {
	t.Helper()
	js := fmt.Sprintf(`(() => {
		const ev = (window.mcpkitApp && window.mcpkitApp.events) || [];
		const bad = ev.find((e) => e.kind === "error" || e.kind === "view-call-error");
		if (bad) return JSON.stringify(bad);
		const hits = ev.filter((e) => e.kind === %q);
		return hits.length >= %d ? JSON.stringify(hits[%d]) : false;
	})()`, kind, n, n-1)
	out, err := chromedp.Run(ctx, chromedp.Poll[string](js, chromedp.WithPollingInterval(pollInterval), chromedp.WithPollingTimeout(hangGuard)))
	if err != nil {
		t.Fatalf("waiting for the host page's %q event: %v\nevents: %s", kind, err, hostEvents(ctx))
	}
	var ev appEvent
	if err := json.Unmarshal([]byte(out), &ev); err != nil {
		t.Fatalf("event %s: %v", out, err)
	}
	if ev.Kind != kind {
		t.Fatalf("waiting for %q, the host page recorded %s %s", kind, ev.Kind, ev.Detail)
	}
	return ev
}

// pollInterval is how often page state is polled; the bound is hangGuard.
const pollInterval = 50 * time.Millisecond

// hostEvents is the host page's record, for failure messages.
func hostEvents(ctx context.Context) string {
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	s, _ := chromedp.Run(c, chromedp.Evaluate[string](`JSON.stringify((window.mcpkitApp||{}).events)`))
	return s
}

// viewFrame returns the frame of the view: the srcdoc iframe inside the
// sandbox proxy, once it exists.
func viewFrame(t *testing.T, ctx context.Context) cdp.FrameID {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	id, err := chromedp.Run(wctx, func(ctx context.Context, tg *chromedp.Target) (cdp.FrameID, error) {
		for {
			res, err := cdp.Call(ctx, tg, page.GetFrameTree, cdp.Empty{})
			if err != nil {
				return "", err
			}
			if f := findFrame(res.FrameTree, "about:srcdoc"); f != "" {
				return f, nil
			}
			if err := waitTick(ctx); err != nil {
				b, _ := json.Marshal(res.FrameTree)
				return "", fmt.Errorf("%w; frames: %s", err, b)
			}
		}
	})
	if err != nil {
		t.Fatalf("finding the view's frame: %v\nevents: %s", err, hostEvents(ctx))
	}
	return id
}

func findFrame(tree *page.FrameTree, url string) cdp.FrameID {
	if tree == nil || tree.Frame == nil {
		return ""
	}
	if tree.Frame.URL == url {
		return tree.Frame.ID
	}
	for _, c := range tree.ChildFrames {
		if id := findFrame(c, url); id != "" {
			return id
		}
	}
	return ""
}

// evalInFrame evaluates js in an isolated world of frame (it sees the
// DOM, not the page's scripts) and returns its value as JSON.
func evalInFrame(ctx context.Context, tg *chromedp.Target, frame cdp.FrameID, js string) (json.RawMessage, error) {
	world, err := cdp.Call(ctx, tg, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: frame, WorldName: "mcpkit-test"})
	if err != nil {
		return nil, err
	}
	yes := true
	res, err := cdp.Call(ctx, tg, runtime.Evaluate, runtime.EvaluateParams{
		Expression: js, ContextID: world.ExecutionContextID, ReturnByValue: &yes, AwaitPromise: &yes,
	})
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil {
		return nil, fmt.Errorf("%s: %s", js, res.ExceptionDetails.Text)
	}
	if res.Result == nil || len(res.Result.Value) == 0 {
		return json.RawMessage("null"), nil
	}
	return json.RawMessage(res.Result.Value), nil
}

// inFrame evaluates js in the view's frame and decodes its value.
func inFrame(ctx context.Context, frame cdp.FrameID, js string, out any) error {
	v, err := chromedp.Run(ctx, func(ctx context.Context, tg *chromedp.Target) (json.RawMessage, error) {
		return evalInFrame(ctx, tg, frame, js)
	})
	if err != nil {
		return err
	}
	return json.Unmarshal(v, out)
}

// waitInFrame polls js (an expression that is false or null until done)
// in the view's frame, within hangGuard, and decodes its value.
func waitInFrame(t *testing.T, ctx context.Context, frame cdp.FrameID, js string, out any) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	v, err := chromedp.Run(wctx, func(ctx context.Context, tg *chromedp.Target) (json.RawMessage, error) {
		for {
			v, err := evalInFrame(ctx, tg, frame, js)
			if err != nil {
				return nil, err
			}
			if string(v) != "false" && string(v) != "null" {
				return v, nil
			}
			if err := waitTick(ctx); err != nil {
				return nil, err
			}
		}
	})
	if err == nil {
		err = json.Unmarshal(v, out)
	}
	if err != nil {
		t.Fatalf("waiting in the view for %s: %v\nevents: %s", js, err, hostEvents(ctx))
	}
}

// waitTick waits one polling interval, or returns the context's error.
func waitTick(ctx context.Context) error {
	timer := time.NewTimer(pollInterval)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
