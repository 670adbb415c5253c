package main

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/auth/oauth"
)

// TestServeAuthDPoP: the whole flow in two commands — "mcpkit serve
// --auth" with JWT or opaque (introspected) tokens and DPoP optional or
// required, and "mcpkit call --dpop", in both eras. The token stored is
// a DPoP token, bound to the key kept in dpop.pem.
func TestServeAuthDPoP(t *testing.T) {
	for _, tokens := range []string{tokensJWT, tokensOpaque} {
		for _, mode := range []string{dpopOptional, dpopRequired} {
			t.Run(tokens+"/"+mode, func(t *testing.T) {
				t.Parallel()
				u := startHTTP(t, "--auth", "--auth-tokens", tokens, "--dpop", mode)
				dir := t.TempDir()
				env := []string{"MCPKIT_CONFIG_DIR=" + dir, headlessEnv + "=1"}
				for _, era := range []string{"legacy", "modern"} {
					expect(t, mcpkitEnv(t, env, "call", "--dpop", "--era", era, u, "add", "a=2", "b=40"), 0, `{"sum":42}`)
				}
				var sf storeFile
				b, _ := os.ReadFile(filepath.Join(dir, "oauth.json"))
				if err := json.Unmarshal(b, &sf, json.RejectUnknownMembers(false)); err != nil {
					t.Fatal(err)
				}
				var tok oauth.Token
				for _, byRes := range sf.Tokens {
					tok = byRes[u]
				}
				if tok.TokenType != "DPoP" || tok.AccessToken == "" {
					t.Fatalf("stored token %+v, want a DPoP token", tok)
				}
				fi, err := os.Stat(filepath.Join(dir, "dpop.pem"))
				if err != nil || fi.Mode().Perm() != 0o600 {
					t.Fatalf("dpop.pem: %v %v", fi, err)
				}
				// The stolen token alone is refused.
				req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
				req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					t.Fatalf("bearer use of the DPoP token: %s", resp.Status)
				}
				// A client without DPoP: refused when DPoP is required (the
				// token endpoint issues bound tokens only), served otherwise.
				env2 := []string{"MCPKIT_CONFIG_DIR=" + t.TempDir(), headlessEnv + "=1"}
				want, out := 0, `{"sum":3}`
				if mode == dpopRequired {
					want, out = exitConn, ""
				}
				expect(t, mcpkitEnv(t, env2, "call", u, "add", "a=1", "b=2"), want, out)
			})
		}
	}
	expect(t, mcpkit(t, "serve", "--http", "127.0.0.1:0", "--dpop", "required"), exitUsage)
	expect(t, mcpkit(t, "serve", "--http", "127.0.0.1:0", "--auth", "--auth-tokens", "paseto"), exitUsage)
	expect(t, mcpkit(t, "serve", "--http", "127.0.0.1:0", "--auth", "--dpop", "maybe"), exitUsage)
}

// TestDemoASEndpoints: the demo token endpoint refuses a bad proof and,
// with DPoP required, a request without one; its introspection endpoint
// answers the resource server only.
func TestDemoASEndpoints(t *testing.T) {
	a := startAS(t, authConfig{tokens: tokensOpaque, dpop: dpopRequired})
	post := func(path string, form url.Values, hdr map[string]string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, a.issuer+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.UnmarshalRead(resp.Body, &body)
		return resp.StatusCode, body
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {"x"}, "code_verifier": {"y"}}
	if st, body := post("/token", form, nil); st != 400 || body["error"] != "invalid_dpop_proof" {
		t.Errorf("no proof: %d %v", st, body)
	}
	key, _ := oauth.NewDPoPKey()
	wrongURL, _ := key.Proof("POST", a.issuer+"/other", "")
	if st, body := post("/token", form, map[string]string{"DPoP": wrongURL}); st != 400 || body["error"] != "invalid_dpop_proof" {
		t.Errorf("proof for another URL: %d %v", st, body)
	}
	good, _ := key.Proof("POST", a.issuer+"/token", "")
	if st, body := post("/token", form, map[string]string{"DPoP": good}); st != 400 || body["error"] != "invalid_grant" {
		t.Errorf("good proof, bad code: %d %v", st, body)
	}
	if st, _ := post("/introspect", url.Values{"token": {"t"}}, nil); st != 401 {
		t.Errorf("introspection without credentials: %d", st)
	}
	req := map[string]string{"Authorization": "Basic " + basic(demoRSClient, "wrong")}
	if st, _ := post("/introspect", url.Values{"token": {"t"}}, req); st != 401 {
		t.Errorf("introspection with a wrong secret: %d", st)
	}
	req["Authorization"] = "Basic " + basic(demoRSClient, a.rsSecret)
	if st, body := post("/introspect", url.Values{"token": {"t"}}, req); st != 200 || body["active"] != false {
		t.Errorf("unknown token: %d %v", st, body)
	}
}

func basic(id, secret string) string {
	r, _ := http.NewRequest("GET", "http://x", nil)
	r.SetBasicAuth(id, secret)
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
}
