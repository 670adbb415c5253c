package interop

// OAuth discovery from a browser page on another origin (issue 38):
// `mcpkit serve --http --auth --cors-origin` lets the page read the 401
// challenge of the MCP endpoint, the protected resource metadata, the
// demo authorization server's metadata, register a client and read the
// token endpoint's answer, all with fetch(). A page of another origin
// cannot read the metadata.

import (
	"net/http"
	"strings"
	"testing"
)

// corsAuthPage walks OAuth discovery from the endpoint in its query
// string, leaving each step's outcome in window.corsResult.
const corsAuthPage = `<!doctype html><meta charset="utf-8"><title>cors</title><script>
const endpoint = new URLSearchParams(location.search).get("endpoint");
const v = {"MCP-Protocol-Version": "2025-11-25"};
(async () => {
  const out = {};
  try {
    // The metadata URL by RFC 9728's rule, without the 401 first, so
    // that a page of an origin the endpoint refuses still tries it.
    const u = new URL(endpoint);
    out.step = "resource metadata";
    let resp = await fetch(u.origin + "/.well-known/oauth-protected-resource" + u.pathname, {headers: v});
    const prm = await resp.json();
    out.resource = prm.resource;
    out.step = "401";
    resp = await fetch(endpoint, {method: "POST", headers: {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", ...v},
      body: JSON.stringify({jsonrpc: "2.0", id: 1, method: "initialize", params: {protocolVersion: "2025-11-25",
        capabilities: {}, clientInfo: {name: "browser", version: "1"}}})});
    out.unauthorized = resp.status;
    out.challenge = resp.headers.get("WWW-Authenticate");
    out.step = "AS metadata";
    resp = await fetch(prm.authorization_servers[0] + "/.well-known/oauth-authorization-server", {headers: v});
    const asm = await resp.json();
    out.step = "registration";
    resp = await fetch(asm.registration_endpoint, {method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({client_name: "browser", redirect_uris: [location.origin + "/callback"]})});
    out.registered = resp.status;
    const reg = await resp.json();
    out.step = "token";
    resp = await fetch(asm.token_endpoint, {method: "POST", body: new URLSearchParams({grant_type: "authorization_code",
      code: "not-issued", client_id: reg.client_id, code_verifier: "x".repeat(43), redirect_uri: location.origin + "/callback"})});
    out.tokenStatus = resp.status;
    out.tokenError = (await resp.json()).error;
    out.step = "done";
  } catch (e) { out.failed = String(e); }
  window.corsResult = JSON.stringify(out);
})();
</script>`

// TestCORSBrowserAuthDiscovery: a page on the --cors-origin origin reads
// every discovery answer it needs; a page of another origin fails at
// the first read, the protected resource metadata.
func TestCORSBrowserAuthDiscovery(t *testing.T) {
	t.Parallel()
	chromium(t)
	allowed, other := corsPageServer(t, corsAuthPage), corsPageServer(t, corsAuthPage)
	endpoint := serveHTTPCLI(t, "--auth", "--cors-origin", allowed.URL)

	type outcome struct {
		Step, Resource, Challenge, TokenError, Failed string
		Unauthorized, Registered, TokenStatus         int
	}
	t.Run("allowed", func(t *testing.T) {
		var res outcome
		pageResult(t, allowed.URL, endpoint, &res)
		if res.Failed != "" || res.Step != "done" || res.Resource != endpoint || res.Unauthorized != http.StatusUnauthorized ||
			!strings.Contains(res.Challenge, "resource_metadata=") || res.Registered != http.StatusCreated ||
			res.TokenStatus != http.StatusBadRequest || res.TokenError == "" {
			t.Errorf("discovery from %s: %+v", allowed.URL, res)
		}
	})
	t.Run("other origin", func(t *testing.T) {
		var res outcome
		pageResult(t, other.URL, endpoint, &res)
		if res.Step != "resource metadata" || !strings.Contains(res.Failed, "TypeError") {
			t.Errorf("discovery from %s, an origin not allowed: %+v, want a TypeError reading the metadata", other.URL, res)
		}
	})
}
