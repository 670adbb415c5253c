package interop

// CORS in a real browser (issue 38): a page served from one loopback
// origin calls `mcpkit serve --http --cors-origin` on another port with
// fetch(), as a browser MCP client would: a legacy session (initialize,
// the Mcp-Session-Id read from the answer, tools/call in the session)
// and a stateless 2026-07-28 tools/call with its SEP-2243 headers. A page
// of an origin not allowed is refused at the preflight.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
)

// corsPage is the page of the test: it runs the calls against the
// endpoint in its query string and leaves what happened, as JSON, in
// window.corsResult.
const corsPage = `<!doctype html><meta charset="utf-8"><title>cors</title><script>
const endpoint = new URLSearchParams(location.search).get("endpoint");
const accept = "application/json, text/event-stream";

// The JSON-RPC answer of a response, a JSON body or an event stream.
async function answer(resp) {
  const text = await resp.text();
  if (!(resp.headers.get("Content-Type") || "").startsWith("text/event-stream")) return JSON.parse(text);
  for (const line of text.split("\n")) {
    if (line.startsWith("data:")) {
      const msg = JSON.parse(line.slice(5));
      if ("result" in msg || "error" in msg) return msg;
    }
  }
  throw new Error("no answer in the stream: " + text);
}

async function legacy() {
  let resp = await fetch(endpoint, {method: "POST", headers: {"Content-Type": "application/json", "Accept": accept},
    body: JSON.stringify({jsonrpc: "2.0", id: 1, method: "initialize", params: {protocolVersion: "2025-11-25",
      capabilities: {}, clientInfo: {name: "browser", version: "1"}}})});
  const init = await answer(resp);
  const sid = resp.headers.get("Mcp-Session-Id");
  const version = init.result.protocolVersion;
  const h = {"Content-Type": "application/json", "Accept": accept, "Mcp-Session-Id": sid, "MCP-Protocol-Version": version};
  resp = await fetch(endpoint, {method: "POST", headers: h, body: JSON.stringify({jsonrpc: "2.0", method: "notifications/initialized"})});
  const initialized = resp.status;
  resp = await fetch(endpoint, {method: "POST", headers: h,
    body: JSON.stringify({jsonrpc: "2.0", id: 2, method: "tools/call", params: {name: "add", arguments: {a: 2, b: 3}}})});
  const call = await answer(resp);
  resp = await fetch(endpoint, {method: "DELETE", headers: {"Mcp-Session-Id": sid, "MCP-Protocol-Version": version}});
  return {sid, version, initialized, call: call.result && call.result.structuredContent, deleted: resp.status};
}

async function modern() {
  const resp = await fetch(endpoint, {method: "POST", headers: {"Content-Type": "application/json", "Accept": accept,
      "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "add"},
    body: JSON.stringify({jsonrpc: "2.0", id: 1, method: "tools/call", params: {name: "add", arguments: {a: 20, b: 22},
      _meta: {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {name: "browser", version: "1"}}}})});
  const call = await answer(resp);
  return {status: resp.status, call: call.result && call.result.structuredContent, error: call.error};
}

(async () => {
  const out = {};
  for (const [name, run] of [["legacy", legacy], ["modern", modern]]) {
    try { out[name] = await run(); } catch (e) { out[name] = {failed: String(e)}; }
  }
  window.corsResult = JSON.stringify(out);
})();
</script>`

// corsPageServer serves page on its own loopback origin.
func corsPageServer(t *testing.T, page string) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(ts.Close)
	return ts
}

type corsOutcome struct {
	Legacy struct {
		SID, Version, Failed string
		Initialized, Deleted int
		Call                 struct{ Sum float64 }
	}
	Modern struct {
		Status int
		Failed string
		Call   struct{ Sum float64 }
		Error  json.RawMessage
	}
}

// runCORSPage opens the page at pageURL against endpoint in a fresh
// headless Chromium and returns what its calls gave.
func runCORSPage(t *testing.T, pageURL, endpoint string) corsOutcome {
	t.Helper()
	var res corsOutcome
	pageResult(t, pageURL, endpoint, &res)
	return res
}

// pageResult opens the page at pageURL against endpoint in a fresh
// headless Chromium and decodes window.corsResult into res.
func pageResult(t *testing.T, pageURL, endpoint string, res any) {
	t.Helper()
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL+"/?endpoint="+endpoint)); err != nil {
		t.Fatalf("opening %s: %v", pageURL, err)
	}
	out, err := chromedp.Run(ctx, chromedp.Poll[string](`window.corsResult || false`,
		chromedp.WithPollingInterval(pollInterval), chromedp.WithPollingTimeout(hangGuard)))
	if err != nil {
		t.Fatalf("waiting for the page's calls: %v", err)
	}
	t.Logf("page at %s: %s", pageURL, out)
	if err := json.Unmarshal([]byte(out), res); err != nil {
		t.Fatalf("page result %s: %v", out, err)
	}
}

// TestCORSBrowser: with --cors-origin naming the page's origin, the
// page's fetch() calls reach the server in both eras and read the
// headers they need; a page of another origin gets nothing through.
func TestCORSBrowser(t *testing.T) {
	t.Parallel()
	chromium(t)
	allowed, other := corsPageServer(t, corsPage), corsPageServer(t, corsPage)
	endpoint := serveHTTPCLI(t, "--cors-origin", allowed.URL)
	if !strings.HasPrefix(endpoint, "http://127.0.0.1:") || strings.HasPrefix(endpoint, allowed.URL+"/") {
		t.Fatalf("endpoint %s: want another loopback origin than the page's %s", endpoint, allowed.URL)
	}

	t.Run("allowed", func(t *testing.T) {
		res := runCORSPage(t, allowed.URL, endpoint)
		l := res.Legacy
		if l.Failed != "" || l.SID == "" || l.Version == "" || l.Initialized != http.StatusAccepted || l.Call.Sum != 5 || l.Deleted != http.StatusNoContent && l.Deleted != http.StatusOK {
			t.Errorf("legacy session from the page: %+v", l)
		}
		m := res.Modern
		if m.Failed != "" || m.Status != http.StatusOK || m.Call.Sum != 42 {
			t.Errorf("2026-07-28 tools/call from the page: %+v (error %s)", m, m.Error)
		}
	})
	t.Run("other origin", func(t *testing.T) {
		res := runCORSPage(t, other.URL, endpoint)
		if !strings.Contains(res.Legacy.Failed, "TypeError") || !strings.Contains(res.Modern.Failed, "TypeError") {
			t.Errorf("calls from %s, an origin not allowed: %+v, want both refused (a TypeError of fetch)", other.URL, res)
		}
	})
}

// corsParamPage calls, from the browser, a 2026-07-28 tool one of whose
// arguments is mirrored in a header (x-mcp-header, SEP-2243), first
// without a token (reading the 401's WWW-Authenticate), then with one.
const corsParamPage = `<!doctype html><meta charset="utf-8"><title>cors</title><script>
const endpoint = new URLSearchParams(location.search).get("endpoint");
(async () => {
  const out = {};
  const call = (token) => {
    const h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
      "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "where", "Mcp-Param-Region": "eu-west"};
    if (token) h["Authorization"] = "Bearer " + token;
    return fetch(endpoint, {method: "POST", headers: h,
      body: JSON.stringify({jsonrpc: "2.0", id: 1, method: "tools/call", params: {name: "where", arguments: {region: "eu-west"},
        _meta: {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
          "io.modelcontextprotocol/clientInfo": {name: "browser", version: "1"}}}})});
  };
  try {
    let resp = await call("");
    out.unauthorized = resp.status;
    out.challenge = resp.headers.get("WWW-Authenticate");
    resp = await call("letmein");
    out.status = resp.status;
    out.text = (await resp.json()).result.content[0].text;
  } catch (e) { out.failed = String(e); }
  window.corsResult = JSON.stringify(out);
})();
</script>`

// TestCORSBrowserParamHeader: a page calls, with fetch(), a tool whose
// argument travels in Mcp-Param-Region on an in-process handler behind
// bearer middleware wrapped in Handler.CORS: the preflight allows the
// tool's own header and passes the middleware, and the page reads the
// middleware's 401 challenge before calling with a token.
func TestCORSBrowserParamHeader(t *testing.T) {
	t.Parallel()
	chromium(t)
	page := corsPageServer(t, corsParamPage)
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "cors", Version: "1"}})
	s.AddRawTool(&mcp.Tool{Name: "where", InputSchema: []byte(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)},
		func(_ context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "served " + string(req.Params.Arguments)}}}, nil
		})
	h := streamhttp.NewHandler(s, &streamhttp.Options{CORS: &streamhttp.CORSOptions{AllowedOrigins: []string{page.URL}}})
	t.Cleanup(func() { _ = h.Close() })
	bearer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer letmein" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"`)
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	ts := httptest.NewServer(h.CORS(bearer))
	t.Cleanup(ts.Close)

	var res struct {
		Unauthorized, Status    int
		Challenge, Text, Failed string
	}
	pageResult(t, page.URL, ts.URL, &res)
	if res.Failed != "" || res.Unauthorized != http.StatusUnauthorized || !strings.HasPrefix(res.Challenge, "Bearer resource_metadata=") ||
		res.Status != http.StatusOK || !strings.Contains(res.Text, "eu-west") {
		t.Errorf("calls from the page: %+v", res)
	}
}
