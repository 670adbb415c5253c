package auth

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/streamhttp"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// mcpEnv is an MCP server behind Require with a JWTVerifier, its PRM
// mounted next to it, and an authorization server on loopback.
type mcpEnv struct {
	as    *testAS
	key   *testKey
	clock *clock
	srv   *httptest.Server
	runs  atomic.Int32
}

func newMCPEnv(t *testing.T) *mcpEnv {
	t.Helper()
	e := &mcpEnv{key: newRSAKey(t, "k1", 0), clock: newClock()}
	e.as = newTestAS(t, e.key)
	// The verifier's clock is the real one here: the server's sealer
	// uses real time too.
	e.clock.t = time.Now()
	v := e.as.verifier(t, e.clock, func(o *JWTOptions) { o.now = nil })
	s := server.New(nil)
	type cityIn struct {
		City string `json:"city,omitzero"`
	}
	server.AddTool(s, &mcp.Tool{Name: "weather"}, func(ctx context.Context, req *server.CallToolRequest, in cityIn) (string, error) {
		e.runs.Add(1)
		ti := TokenInfoFrom(ctx)
		if ti == nil {
			return "", fmt.Errorf("no token info in the handler")
		}
		if st := req.RequestState(); st != "" {
			return st + " for " + ti.Subject, nil
		}
		return "", server.NeedInput().State("state-of-" + ti.Subject)
	})
	server.AddTool(s, &mcp.Tool{Name: "admin"}, func(ctx context.Context, req *server.CallToolRequest, in cityIn) (string, error) {
		return "done", nil
	})
	h := streamhttp.NewHandler(s, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mustRequire(v, &Options{
		Resource:   testResource,
		Scopes:     []string{"mcp:read"},
		ToolScopes: map[string][]string{"admin": {"mcp:admin"}},
	})(h))
	if err := MountProtectedResource(mux, ProtectedResourceMetadata{
		Resource:             testResource,
		AuthorizationServers: []string{e.as.srv.URL},
		ScopesSupported:      []string{"mcp:read", "mcp:admin"},
	}); err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		_ = h.Close()
		e.srv.Close()
	})
	return e
}

func (e *mcpEnv) token(t *testing.T, sub, scope string) string {
	return e.key.sign(t, e.as.claims(e.clock, map[string]any{"sub": sub, "scope": scope}))
}

type rpcAnswer struct {
	status int
	www    string
	Result jsontext.Value `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call POSTs a 2026 tools/call of tool, with a requestState when set.
func (e *mcpEnv) call(t *testing.T, token, tool, state string) *rpcAnswer {
	t.Helper()
	meta := map[string]any{
		mcp.MetaKeyProtocolVersion:    mcp.Version20260728,
		mcp.MetaKeyClientCapabilities: map[string]any{},
		mcp.MetaKeyClientInfo:         map[string]any{"name": "t", "version": "1"},
	}
	params := map[string]any{"_meta": meta, "name": tool, "arguments": map[string]any{"city": "Paris"}}
	if state != "" {
		params["requestState"] = state
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+"/mcp", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", mcp.Version20260728)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	a := &rpcAnswer{status: resp.StatusCode, www: resp.Header.Get("WWW-Authenticate")}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(data, a); err != nil {
			t.Fatalf("answer %s: %v", data, err)
		}
	}
	return a
}

// TestEndToEndPrincipalBinding: a real streamhttp.NewHandler behind
// Require with real JWTs. The handler sees the token info; sealed MRTR
// state minted for alice completes for alice and is refused (-32602,
// handler not run) for bob, even with identical arguments.
func TestEndToEndPrincipalBinding(t *testing.T) {
	e := newMCPEnv(t)
	alice, bob := e.token(t, "alice", "mcp:read"), e.token(t, "bob", "mcp:read")

	first := e.call(t, alice, "weather", "")
	if first.status != 200 || first.Error != nil {
		t.Fatalf("first call: %d %+v", first.status, first.Error)
	}
	var ir struct {
		ResultType   string `json:"resultType"`
		RequestState string `json:"requestState"`
	}
	if err := json.Unmarshal(first.Result, &ir); err != nil || ir.ResultType != string(mcp.ResultInputRequired) || ir.RequestState == "" {
		t.Fatalf("first call result %s", first.Result)
	}
	runs := e.runs.Load()
	stolen := e.call(t, bob, "weather", ir.RequestState)
	if stolen.Error == nil || stolen.Error.Code != mcp.CodeInvalidParams {
		t.Errorf("alice's state replayed by bob: %d %s %+v, want -32602", stolen.status, stolen.Result, stolen.Error)
	}
	if e.runs.Load() != runs {
		t.Error("bob's replay reached the handler")
	}
	own := e.call(t, alice, "weather", ir.RequestState)
	if own.Error != nil || !strings.Contains(string(own.Result), "state-of-alice for alice") {
		t.Errorf("alice's retry: %s %+v", own.Result, own.Error)
	}
}

// TestEndToEndChallenges: over real HTTP, the 401 names the PRM URL, the
// PRM is served, and a tool needing more scope answers 403 with the full
// set; after step-up the call succeeds.
func TestEndToEndChallenges(t *testing.T) {
	e := newMCPEnv(t)
	meta, _ := ResourceMetadataURL(testResource)
	if a := e.call(t, "", "weather", ""); a.status != 401 || a.www != `Bearer resource_metadata="`+meta+`", scope="mcp:read"` {
		t.Errorf("no token: %d %q", a.status, a.www)
	}
	wrongAud := e.key.sign(t, e.as.claims(e.clock, map[string]any{"aud": "https://other.example/mcp"}))
	if a := e.call(t, wrongAud, "weather", ""); a.status != 401 || !strings.HasPrefix(a.www, `Bearer error="invalid_token"`) {
		t.Errorf("token for another resource: %d %q", a.status, a.www)
	}
	if a := e.call(t, e.token(t, "alice", "mcp:read"), "admin", ""); a.status != 403 ||
		a.www != `Bearer error="insufficient_scope", resource_metadata="`+meta+`", scope="mcp:read mcp:admin"` {
		t.Errorf("admin without scope: %d %q", a.status, a.www)
	}
	if a := e.call(t, e.token(t, "alice", "mcp:read mcp:admin"), "admin", ""); a.status != 200 || a.Error != nil {
		t.Errorf("admin after step-up: %d %+v", a.status, a.Error)
	}
	resp, err := e.srv.Client().Get(e.srv.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var prm ProtectedResourceMetadata
	if err := json.UnmarshalRead(resp.Body, &prm); err != nil || prm.Resource != testResource || len(prm.AuthorizationServers) != 1 {
		t.Errorf("PRM: %v %+v", err, prm)
	}
}

// TestEndToEndLegacySessionSeesToken: on a legacy (2025-11-25) session the
// handler runs on the session's connection, not on the HTTP request's
// goroutine; it still sees the token info of the request that carried
// the call.
func TestEndToEndLegacySessionSeesToken(t *testing.T) {
	e := newMCPEnv(t)
	tok := e.token(t, "carol", "mcp:read")
	post := func(sid, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+tok)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp, string(data)
	}
	resp, body := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %s %s", resp.Status, body)
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// The weather tool asks for input through the shim on a legacy
	// session; with no client capabilities it fails — but only after it
	// ran and found the token (otherwise its error names the token).
	_, body = post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"weather","arguments":{"city":"Paris"}}}`)
	if strings.Contains(body, "no token info") {
		t.Fatalf("the legacy handler did not see the token: %s", body)
	}
	if e.runs.Load() == 0 {
		t.Fatalf("the handler never ran: %s", body)
	}
}
