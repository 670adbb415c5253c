package interop

// The view's Content Security Policy and permissions, as Chromium
// enforces them in `mcpkit app`: a view whose CSP does not list an origin
// cannot fetch from it (the browser reports a connect-src violation and
// the origin sees no request), the same view with the origin in
// connectDomains reaches it, and only a view that asks for the camera is
// granted it.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mcpkit/mcpkit/ext/apps"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
)

// probeView fetches target and shows what happened, the CSP violations
// the browser reported, and whether the camera is allowed.
const probeView = `<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body>
<div id="result">pending</div><div id="violations"></div><div id="camera"></div>
<script>
const violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  violations.push(e.violatedDirective);
  document.getElementById("violations").textContent = violations.join(" ");
});
const fp = document.featurePolicy;
document.getElementById("camera").textContent = fp ? String(fp.allowsFeature("camera")) : "unknown";
fetch(%q).then((r) => r.text()).then(
  (t) => { document.getElementById("result").textContent = "reached " + t; },
  (e) => { document.getElementById("result").textContent = "blocked " + e.name; });
</script></body></html>`

// probeServer is an MCP server (Streamable HTTP on loopback) with three
// tools, each with a probe view fetching target: under the restrictive
// default CSP, with target's origin in connectDomains, and asking for the
// camera.
func probeServer(t *testing.T, target string) string {
	t.Helper()
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "csp-probe", Version: "1"}})
	for _, v := range []struct {
		name string
		meta apps.ResourceMeta
	}{
		{"denied", apps.ResourceMeta{}},
		{"allowed", apps.ResourceMeta{CSP: &apps.CSP{ConnectDomains: []string{target}}}},
		{"camera", apps.ResourceMeta{Permissions: &apps.Permissions{Camera: true}}},
	} {
		uri := "ui://csp-probe/" + v.name
		err := apps.AddResource(s, &apps.Resource{URI: uri, Name: v.name,
			HTML: fmt.Sprintf(probeView, target+"/hit?view="+v.name), Meta: v.meta})
		if err != nil {
			t.Fatal(err)
		}
		tool := &mcp.Tool{Name: v.name, Description: "probe " + v.name}
		if err := apps.Link(tool, uri); err != nil {
			t.Fatal(err)
		}
		if err := server.AddTool(s, tool, func(context.Context, *server.CallToolRequest, struct{}) (string, error) {
			return "probe", nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	h := streamhttp.NewHandler(s, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.Close() })
	return ts.URL
}

func TestAppBrowserCSP(t *testing.T) {
	t.Parallel()
	chromium(t)
	var mu sync.Mutex
	hits := map[string]int{}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Query().Get("view")]++
		mu.Unlock()
		w.Header().Set("Access-Control-Allow-Origin", "*") // the view's origin is opaque ("null")
		fmt.Fprint(w, "target")
	}))
	t.Cleanup(target.Close)
	hitsOf := func(view string) int {
		mu.Lock()
		defer mu.Unlock()
		return hits[view]
	}

	appURL := startApp(t, probeServer(t, target.URL))
	ctx := browser(t)

	type probe struct {
		Result, Violations, Camera string
		// Origin is the view's (opaque: "null"); Parent, whether it could
		// read its parent's (the proxy's) document.
		Origin, Parent string
	}
	const done = `(() => { const r = document.getElementById("result").textContent;
		let parentDoc = "blocked";
		try { parentDoc = String(parent.document.title); } catch (e) { parentDoc = "blocked"; }
		return r === "pending" ? false : {result: r, violations: document.getElementById("violations").textContent,
			camera: document.getElementById("camera").textContent, origin: self.origin, parent: parentDoc} })()`
	run := func(tool string) probe {
		t.Helper()
		openApp(t, ctx, appURL, tool, `{}`)
		view := waitEvent(t, ctx, "view", 1)
		if tool == "denied" && !strings.Contains(string(view.Detail), `connect-src 'none'`) {
			t.Errorf("the denied view's policy: %s", view.Detail)
		}
		if tool == "allowed" && !strings.Contains(string(view.Detail), "connect-src "+target.URL) {
			t.Errorf("the allowed view's policy: %s", view.Detail)
		}
		var p probe
		waitInFrame(t, ctx, viewFrame(t, ctx), done, &p)
		return p
	}

	p := run("denied")
	if p.Origin != "null" || p.Parent != "blocked" {
		t.Errorf("the view runs in origin %q and reads its parent's document: %q", p.Origin, p.Parent)
	}
	if p.Result != "blocked TypeError" || !strings.Contains(p.Violations, "connect-src") || hitsOf("denied") != 0 {
		t.Errorf("a view without connectDomains: %+v, %d requests reached the origin", p, hitsOf("denied"))
	}
	if p.Camera != "false" {
		t.Errorf("a view that did not ask for the camera: camera allowed %q", p.Camera)
	}
	p = run("allowed")
	if p.Result != "reached target" || p.Violations != "" || hitsOf("allowed") != 1 {
		t.Errorf("a view with the origin in connectDomains: %+v, %d requests", p, hitsOf("allowed"))
	}
	p = run("camera")
	if p.Camera != "true" || p.Result != "blocked TypeError" {
		t.Errorf("a view that asked for the camera: %+v", p)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
}
