package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/auth/oauth"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// fakeAS is a token endpoint exchanging "tok-<name>" for "up-<name>-<n>"
// (RFC 8693); "tok-bad" is refused with invalid_grant.
type fakeAS struct {
	srv *httptest.Server

	mu        sync.Mutex
	n         int
	exchanges map[string]int // per subject token
	valid     map[string]string
	lastForm  map[string]string
	expiresIn int
	dead      bool // issued tokens are not valid at the upstream
	// arrived, when set, hears of each exchange request, which then
	// waits for gate.
	arrived chan struct{}
	gate    chan struct{}
}

func newFakeAS(t *testing.T) *fakeAS {
	a := &fakeAS{exchanges: map[string]int{}, valid: map[string]string{}, expiresIn: 3600}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		id, secret, ok := r.BasicAuth()
		if err := r.ParseForm(); err != nil || !ok || id != "gw" || secret != "s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"invalid_client"}`)
			return
		}
		f := r.PostForm
		if a.arrived != nil {
			a.arrived <- struct{}{}
			<-a.gate
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		a.lastForm = map[string]string{}
		for k := range f {
			a.lastForm[k] = f.Get(k)
		}
		sub := f.Get("subject_token")
		a.exchanges[sub]++
		name, ok := strings.CutPrefix(sub, "tok-")
		if f.Get("grant_type") != oauth.GrantTypeTokenExchange || !ok || name == "bad" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid_grant","error_description":"subject token not accepted"}`)
			return
		}
		a.n++
		tok := fmt.Sprintf("up-%s-%d", name, a.n)
		if !a.dead {
			a.valid[tok] = name
		}
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":%d,"issued_token_type":%q}`, tok, a.expiresIn, oauth.TokenTypeAccessToken)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *fakeAS) count(sub string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.exchanges[sub]
}

// revokeAll makes every token issued so far invalid at the upstream.
func (a *fakeAS) revokeAll() {
	a.mu.Lock()
	clear(a.valid)
	a.mu.Unlock()
}

// identityUpstream is an upstream over HTTP whose tool whoami answers the
// principal its bearer token names: "up-<name>-<n>" tokens valid at as
// (exchange), or "tok-<name>" (pass-through). Tokens of any other form,
// or revoked, get 401. A token for "carol" gets 403 insufficient_scope.
type identityUpstream struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string // every Authorization received
}

func newIdentityUpstream(t *testing.T, as *fakeAS, era client.Era) *identityUpstream {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "up", Version: "1"}})
	must(t, server.AddTool(s, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (echoOut, error) {
		return echoOut{Text: server.CallerOf(ctx, req.Request).Principal}, nil
	}))
	// A task of the upstream's answers to the caller who started it
	// (TestIdentityTaskFollowUps).
	must(t, server.AddTool(s, &mcp.Tool{Name: "taskwho", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (*mcp.CallToolResult, error) {
			who := server.CallerOf(ctx, req.Request).Principal
			return nil, server.ContinueAsTask(func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: who}}}, nil
			})
		}))
	u := &identityUpstream{}
	h := streamhttp.NewHandler(s, nil)
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authz := r.Header.Get("Authorization")
		u.mu.Lock()
		u.seen = append(u.seen, authz)
		u.mu.Unlock()
		tok, _ := strings.CutPrefix(authz, "Bearer ")
		var who string
		if tok == "gw-control" { // the gateway's own, on its control connection
			who = "gateway"
		} else if name, ok := strings.CutPrefix(tok, "tok-"); ok && as == nil {
			who = name
		} else if as != nil {
			as.mu.Lock()
			who = as.valid[tok]
			as.mu.Unlock()
		}
		switch who {
		case "":
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		case "carol":
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="admin"`)
			w.WriteHeader(http.StatusForbidden)
			return
		}
		r.Header.Del("Authorization")
		h.ServeHTTP(w, r.WithContext(server.WithPrincipal(r.Context(), who)))
	}))
	t.Cleanup(u.srv.Close)
	_ = era
	return u
}

func (u *identityUpstream) saw() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen...)
}

// serveIdentityGateway serves g over HTTP behind CallerTokens and a stand-in for
// auth.Require: "tok-<name>" authenticates principal <name>.
func serveIdentityGateway(t *testing.T, g *Gateway) string {
	h := streamhttp.NewHandler(g.Server(), nil)
	srv := httptest.NewServer(CallerTokens(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok, ok := bearerToken(r.Header); ok {
			name, _ := strings.CutPrefix(tok, "tok-")
			r = r.WithContext(server.WithPrincipal(r.Context(), name))
		}
		r.Header.Del("Authorization") // as auth.Require does
		h.ServeHTTP(w, r)
	})))
	t.Cleanup(srv.Close)
	return srv.URL
}

// dialAs connects a client of era to the gateway at url with token.
func dialAs(t *testing.T, url, token string, era client.Era) *client.Client {
	t.Helper()
	hdr := http.Header{}
	if token != "" {
		hdr.Set("Authorization", "Bearer "+token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, streamable.New(url, &streamable.Options{Header: hdr}), &client.Options{ProtocolVersion: version(era)})
	must(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func whoami(t *testing.T, c *client.Client) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		return "", err
	}
	var out echoOut
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
		return "", fmt.Errorf("whoami: %v (%+v)", err, res)
	}
	return out.Text, nil
}

func exchangeUpstream(as *fakeAS, url string, era client.Era) Upstream {
	return Upstream{Name: "u", URL: url, ProtocolVersion: version(era), HealthInterval: -1,
		Header:   http.Header{"Authorization": {"Bearer gw-control"}},
		Identity: Identity{Mode: IdentityExchange, TokenEndpoint: as.srv.URL, ClientID: "gw", ClientSecret: "s3cret", Scopes: []string{"read", "write"}}}
}

// identityError checks that err is the gateway's IdentityError answer
// with status and code, and that it holds no token.
func identityError(t *testing.T, err error, status int, code string) {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != mcp.CodeInternalError {
		t.Fatalf("error %v; want a JSON-RPC -32603", err)
	}
	var data struct {
		Status int    `json:"status"`
		Error  string `json:"error"`
	}
	if err := json.Unmarshal(je.Data, &data); err != nil || data.Status != status || data.Error != code {
		t.Fatalf("error data %s (%v); want status %d, error %q", je.Data, err, status, code)
	}
	if strings.Contains(je.Message, "tok-") || strings.Contains(je.Message, "up-") || strings.Contains(string(je.Data), "tok-") {
		t.Fatalf("the error shows a token: %s %s", je.Message, je.Data)
	}
}

func eachEra(t *testing.T, f func(t *testing.T, up, down client.Era)) {
	eraPairs(t, f)
}

// TestIdentityExchangePerCaller: two callers, each call reaching the
// upstream with the caller's own exchanged token (audience and resource
// the upstream, the configured scopes), one exchange per caller while the
// token is fresh, and the calls kept apart on connections of their own.
func TestIdentityExchangePerCaller(t *testing.T) {
	eachEra(t, func(t *testing.T, up, down client.Era) {
		as := newFakeAS(t)
		us := newIdentityUpstream(t, as, up)
		g := newGateway(t, &Options{Upstreams: []Upstream{exchangeUpstream(as, us.srv.URL, up)}})
		url := serveIdentityGateway(t, g)
		alice, bob := dialAs(t, url, "tok-alice", down), dialAs(t, url, "tok-bob", down)
		for range 2 {
			for name, c := range map[string]*client.Client{"alice": alice, "bob": bob} {
				got, err := whoami(t, c)
				must(t, err)
				if got != name {
					t.Fatalf("%s's call reached the upstream as %q", name, got)
				}
			}
		}
		if a, b := as.count("tok-alice"), as.count("tok-bob"); a != 1 || b != 1 {
			t.Fatalf("exchanges: alice %d, bob %d; want one each (cached)", a, b)
		}
		as.mu.Lock()
		f := as.lastForm
		as.mu.Unlock()
		if f["audience"] != us.srv.URL || f["resource"] != us.srv.URL || f["scope"] != "read write" || f["subject_token_type"] != oauth.TokenTypeAccessToken {
			t.Fatalf("exchange form %v", f)
		}
		if h := g.Health()[0]; h.Connections != 2 {
			t.Fatalf("%d call connections; want 2, one per caller", h.Connections)
		}
	})
}

// TestIdentityOneConnection: with MaxConnections 1, callers take turns
// on it: the connection of one is closed for the other, never lent.
func TestIdentityOneConnection(t *testing.T) {
	as := newFakeAS(t)
	us := newIdentityUpstream(t, as, client.EraLegacy)
	up := exchangeUpstream(as, us.srv.URL, client.EraLegacy)
	up.MaxConnections = 1
	g := newGateway(t, &Options{Upstreams: []Upstream{up}})
	url := serveIdentityGateway(t, g)
	alice, bob := dialAs(t, url, "tok-alice", client.EraModern), dialAs(t, url, "tok-bob", client.EraModern)
	for _, c := range []struct {
		c    *client.Client
		name string
	}{{alice, "alice"}, {bob, "bob"}, {alice, "alice"}} {
		got, err := whoami(t, c.c)
		must(t, err)
		if got != c.name {
			t.Fatalf("%s's call reached the upstream as %q", c.name, got)
		}
	}
	if h := g.Health()[0]; h.Connections > 1 {
		t.Fatalf("%d call connections open; want at most 1", h.Connections)
	}
}

// TestIdentityExchangeExpiry: a cached token is exchanged again once
// within TokenExpiryMargin of its expiry (the injected clock).
func TestIdentityExchangeExpiry(t *testing.T) {
	as := newFakeAS(t)
	as.expiresIn = 120
	us := newIdentityUpstream(t, as, client.EraModern)
	g, err := New(&Options{Upstreams: []Upstream{exchangeUpstream(as, us.srv.URL, client.EraModern)}, TokenExpiryMargin: time.Minute})
	must(t, err)
	var mu sync.Mutex
	now := time.Unix(1_000_000, 0)
	g.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	must(t, g.Start(t.Context()))
	t.Cleanup(func() { g.Close() })
	alice := dialAs(t, serveIdentityGateway(t, g), "tok-alice", client.EraModern)
	if _, err := whoami(t, alice); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(59 * time.Second) // 61 s left: still used
	mu.Unlock()
	if _, err := whoami(t, alice); err != nil {
		t.Fatal(err)
	}
	if n := as.count("tok-alice"); n != 1 {
		t.Fatalf("%d exchanges before the margin; want 1", n)
	}
	mu.Lock()
	now = now.Add(2 * time.Second) // 59 s left: within the margin
	mu.Unlock()
	if _, err := whoami(t, alice); err != nil {
		t.Fatal(err)
	}
	if n := as.count("tok-alice"); n != 2 {
		t.Fatalf("%d exchanges after the margin; want 2", n)
	}
}

// TestIdentityExchangeRefused: a caller whose token the authorization
// server will not exchange gets a clear error (401 invalid_grant), with
// no token in it, and the upstream sees nothing of the call.
func TestIdentityExchangeRefused(t *testing.T) {
	eachEra(t, func(t *testing.T, up, down client.Era) {
		as := newFakeAS(t)
		us := newIdentityUpstream(t, as, up)
		g := newGateway(t, &Options{Upstreams: []Upstream{exchangeUpstream(as, us.srv.URL, up)}})
		url := serveIdentityGateway(t, g)
		before := len(us.saw())
		_, err := whoami(t, dialAs(t, url, "tok-bad", down))
		identityError(t, err, http.StatusUnauthorized, "invalid_grant")
		for _, a := range us.saw()[before:] {
			if a != "" && a != "Bearer gw-control" {
				t.Fatalf("the upstream was sent %q for a refused caller", a)
			}
		}
		// Without a token at all: refused before any exchange.
		_, err = whoami(t, dialAs(t, url, "", down))
		identityError(t, err, http.StatusUnauthorized, "invalid_token")
	})
}

// TestIdentityUpstreamRejectsExchanged: the upstream rejecting the
// exchanged token (401) makes the gateway drop it and exchange once more;
// a second rejection is a clear error, and a 403 carries the scope.
func TestIdentityUpstreamRejectsExchanged(t *testing.T) {
	for _, up := range []client.Era{client.EraLegacy, client.EraModern} {
		t.Run(up.String(), func(t *testing.T) {
			as := newFakeAS(t)
			us := newIdentityUpstream(t, as, up)
			g := newGateway(t, &Options{Upstreams: []Upstream{exchangeUpstream(as, us.srv.URL, up)}})
			url := serveIdentityGateway(t, g)
			alice := dialAs(t, url, "tok-alice", client.EraModern)
			if _, err := whoami(t, alice); err != nil {
				t.Fatal(err)
			}
			// A token the upstream finds short of scope: 403 with the scope.
			_, err := whoami(t, dialAs(t, url, "tok-carol", client.EraModern))
			identityError(t, err, http.StatusForbidden, "insufficient_scope")
			as.revokeAll() // the cached token is now rejected
			if got, err := whoami(t, alice); err != nil || got != "alice" {
				t.Fatalf("after the revocation: %q, %v; want a fresh exchange and the call served", got, err)
			}
			if n := as.count("tok-alice"); n != 2 {
				t.Fatalf("%d exchanges; want 2", n)
			}
			// An upstream that rejects every token: one retry, then an error.
			as.mu.Lock()
			clear(as.valid)
			as.dead = true
			as.mu.Unlock()
			_, err = whoami(t, alice)
			identityError(t, err, http.StatusUnauthorized, "invalid_token")
			if n := as.count("tok-alice"); n != 3 {
				t.Fatalf("%d exchanges after a rejected call; want 3 (one retry)", n)
			}
		})
	}
}

// TestIdentityPassThrough: the caller's own token reaches the upstream,
// each caller's on its own calls; a redirect to another origin is not
// followed, and that origin never sees the token.
func TestIdentityPassThrough(t *testing.T) {
	us := newIdentityUpstream(t, nil, client.EraModern)
	up := Upstream{Name: "u", URL: us.srv.URL, ProtocolVersion: mcp.Version20260728, HealthInterval: -1,
		Header: http.Header{"Authorization": {"Bearer gw-control"}}, Identity: Identity{Mode: IdentityPassThrough}}
	g := newGateway(t, &Options{Upstreams: []Upstream{up}})
	url := serveIdentityGateway(t, g)
	for _, name := range []string{"alice", "bob"} {
		got, err := whoami(t, dialAs(t, url, "tok-"+name, client.EraModern))
		must(t, err)
		if got != name {
			t.Fatalf("%s's call reached the upstream as %q", name, got)
		}
	}

	// An upstream that redirects its calls to another origin.
	var other sync.Mutex
	var leaked []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.Lock()
		leaked = append(leaked, r.Header.Get("Authorization"))
		other.Unlock()
		w.WriteHeader(http.StatusNotFound)
	}))
	t.Cleanup(elsewhere.Close)
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer tok-alice" {
			http.Redirect(w, r, elsewhere.URL+"/mcp", http.StatusTemporaryRedirect)
			return
		}
		us.srv.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(redirecting.Close)
	up2 := Upstream{Name: "r", URL: redirecting.URL, ProtocolVersion: mcp.Version20260728, HealthInterval: -1,
		Header:   http.Header{"Authorization": {"Bearer gw-control"}}, // the control connection's
		Identity: Identity{Mode: IdentityPassThrough}}
	g2 := newGateway(t, &Options{Upstreams: []Upstream{up2}})
	url2 := serveIdentityGateway(t, g2)
	if got, err := whoami(t, dialAs(t, url2, "tok-bob", client.EraModern)); err != nil || got != "bob" {
		t.Fatalf("bob through the redirecting upstream: %q, %v", got, err)
	}
	_, err := whoami(t, dialAs(t, url2, "tok-alice", client.EraModern))
	var je *jsonrpc.Error
	if !errors.As(err, &je) || !strings.Contains(je.Message, "another origin") {
		t.Fatalf("a call redirected to another origin: %v; want it refused, saying so", err)
	}
	other.Lock()
	defer other.Unlock()
	if len(leaked) != 0 {
		t.Fatalf("the other origin was reached %d times (%q)", len(leaked), leaked)
	}
}

// TestTokenCacheBounded: past TokenCacheSize the least recently used
// token is dropped.
func TestTokenCacheBounded(t *testing.T) {
	as := newFakeAS(t)
	g, err := New(&Options{TokenCacheSize: 2, Upstreams: []Upstream{exchangeUpstream(as, "http://127.0.0.1:1/mcp", client.EraModern)}})
	must(t, err)
	u := g.ups[0]
	ctx := t.Context()
	for _, s := range []string{"tok-a", "tok-b", "tok-a", "tok-c"} {
		if _, err := g.tokens.get(ctx, u, s); err != nil {
			t.Fatal(err)
		}
	}
	if n := g.tokens.len(); n != 2 {
		t.Fatalf("%d tokens cached; want 2", n)
	}
	// b was the least recently used: exchanged again; a was kept.
	must(t, func() error { _, err := g.tokens.get(ctx, u, "tok-a"); return err }())
	must(t, func() error { _, err := g.tokens.get(ctx, u, "tok-b"); return err }())
	if a, b := as.count("tok-a"), as.count("tok-b"); a != 1 || b != 2 {
		t.Fatalf("exchanges a %d, b %d; want 1 and 2", a, b)
	}
}

// TestIdentityOptionsChecked: New refuses identity settings it cannot use.
func TestIdentityOptionsChecked(t *testing.T) {
	for _, c := range []struct {
		up   Upstream
		want string
	}{
		{Upstream{Name: "u", Command: []string{"x"}, Identity: Identity{Mode: IdentityPassThrough}}, "needs an upstream reached by URL"},
		{Upstream{Name: "u", URL: "http://127.0.0.1/mcp", Identity: Identity{Mode: "sometimes"}}, "identity mode"},
		{Upstream{Name: "u", URL: "http://127.0.0.1/mcp", Identity: Identity{Mode: IdentityExchange}}, "token endpoint"},
		{Upstream{Name: "u", URL: "http://127.0.0.1/mcp", Identity: Identity{Mode: IdentityExchange, TokenEndpoint: "http://as.example/token"}}, "https"},
		{Upstream{Name: "u", URL: "http://127.0.0.1/mcp", Identity: Identity{Mode: IdentityExchange, TokenEndpoint: "https://user@as.example/token"}}, "user information"},
		{Upstream{Name: "u", URL: "http://127.0.0.1/mcp", Identity: Identity{Mode: IdentityExchange, TokenEndpoint: "https://as.example/token#x"}}, "fragment"},
		{Upstream{Name: "u", URL: "http://127.0.0.1/mcp", Identity: Identity{Mode: IdentityExchange, TokenEndpoint: "https://as.example/token", Scopes: []string{"a b"}}}, "scope"},
	} {
		_, err := New(&Options{Upstreams: []Upstream{c.up}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want an error saying %q", c.up.Identity, err, c.want)
		}
	}
}

// TestTokenCacheDefaults: zero TokenCacheSize and TokenExpiryMargin are
// the defaults.
func TestTokenCacheDefaults(t *testing.T) {
	g, err := New(&Options{Upstreams: []Upstream{{Name: "u", URL: "http://127.0.0.1:1/mcp"}}})
	must(t, err)
	if g.tokens.max != DefaultTokenCacheSize || g.tokens.margin != DefaultTokenExpiryMargin {
		t.Fatalf("cache %d, margin %s; want the defaults", g.tokens.max, g.tokens.margin)
	}
}

// TestTokenExchangeSingleFlight: concurrent requests needing the same
// caller's token wait for one exchange.
func TestTokenExchangeSingleFlight(t *testing.T) {
	as := newFakeAS(t)
	as.arrived, as.gate = make(chan struct{}, 4), make(chan struct{})
	var open sync.Once
	release := func() { open.Do(func() { close(as.gate) }) }
	t.Cleanup(release) // before the server's Close, which waits for its handlers
	g, err := New(&Options{Upstreams: []Upstream{exchangeUpstream(as, "http://127.0.0.1:1/mcp", client.EraModern)}})
	must(t, err)
	u := g.ups[0]
	const n = 4
	joined := make(chan struct{}, n)
	g.tokens.joinHook = func() { joined <- struct{}{} }
	toks := make(chan string, n)
	for range n {
		go func() {
			tok, err := g.tokens.get(t.Context(), u, "tok-alice")
			if err != nil {
				tok = err.Error()
			}
			toks <- tok
		}()
	}
	waitFor(t, as.arrived, "the exchange")
	for range n - 1 {
		waitFor(t, joined, "a request joining the exchange")
	}
	release()
	first := waitFor(t, toks, "a token")
	for range n - 1 {
		if tok := waitFor(t, toks, "a token"); tok != first {
			t.Fatalf("tokens %q and %q; want one exchange's", first, tok)
		}
	}
	if c := as.count("tok-alice"); c != 1 {
		t.Fatalf("%d exchanges; want 1", c)
	}
}

// TestIdentityConcurrentCallers: three callers calling at once, more
// than the connections: every call reaches the upstream as its caller.
func TestIdentityConcurrentCallers(t *testing.T) {
	for _, up := range []client.Era{client.EraLegacy, client.EraModern} {
		t.Run(up.String(), func(t *testing.T) {
			as := newFakeAS(t)
			us := newIdentityUpstream(t, as, up)
			cfg := exchangeUpstream(as, us.srv.URL, up)
			cfg.MaxConnections = 4 // two calls per caller at once
			g := newGateway(t, &Options{Upstreams: []Upstream{cfg}})
			url := serveIdentityGateway(t, g)
			names := []string{"alice", "bob", "dave"}
			type answer struct{ want, got string }
			answers := make(chan answer, 3*len(names)*2)
			var wg sync.WaitGroup
			for _, name := range names {
				c := dialAs(t, url, "tok-"+name, client.EraModern)
				for range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range 3 {
							got, err := whoami(t, c)
							if err != nil {
								got = err.Error()
							}
							answers <- answer{name, got}
						}
					}()
				}
			}
			wg.Wait()
			close(answers)
			for a := range answers {
				if a.got != a.want {
					t.Errorf("%s's call reached the upstream as %q", a.want, a.got)
				}
			}
			if h := g.Health()[0]; h.Connections > 4 {
				t.Fatalf("%d call connections; want at most 4", h.Connections)
			}
		})
	}
}

// TestIdentityNoSharedCookies: the callers' connections keep no cookie
// jar, even when the upstream's HTTP client has one: what the upstream
// sets for one caller never reaches it with another's requests.
func TestIdentityNoSharedCookies(t *testing.T) {
	cookies := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cookies <- r.Header.Get("Cookie")
		http.SetCookie(w, &http.Cookie{Name: "who", Value: r.Header.Get("Authorization")})
	}))
	t.Cleanup(srv.Close)
	jar, err := cookiejar.New(nil)
	must(t, err)
	g, err := New(&Options{Upstreams: []Upstream{{Name: "u", URL: srv.URL, HTTPClient: &http.Client{Jar: jar},
		Identity: Identity{Mode: IdentityPassThrough}}}})
	must(t, err)
	u := g.ups[0]
	for _, name := range []string{"alice", "bob", "bob"} {
		resp, err := u.identityClient(newConnIdentity(&caller{key: name, token: "tok-" + name})).Get(srv.URL)
		must(t, err)
		resp.Body.Close()
		if c := waitFor(t, cookies, "a request"); c != "" {
			t.Fatalf("%s's request carried the cookie %q", name, c)
		}
	}
}

// TestIdentityTaskFollowUps: a task a caller starts on an upstream called
// with each caller's identity is followed (its status and result) with
// that caller's identity too: the upstream binds a task to the requestor
// that made it, and answers another "unknown task". The gateway used to
// follow every upstream task on its control connection, as itself.
func TestIdentityTaskFollowUps(t *testing.T) {
	for _, down := range mcptest.Eras() {
		t.Run(down.String(), func(t *testing.T) {
			as := newFakeAS(t)
			us := newIdentityUpstream(t, as, client.EraModern)
			g := newGateway(t, &Options{Upstreams: []Upstream{exchangeUpstream(as, us.srv.URL, client.EraModern)}})
			alice := dialAs(t, serveIdentityGateway(t, g), "tok-alice", down)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			task, err := alice.StartToolTask(ctx, &mcp.CallToolParams{Name: "taskwho"})
			must(t, err)
			if task.ID == "" {
				t.Fatalf("no task: %+v", task)
			}
			res, err := alice.TaskResult(ctx, task.ID)
			must(t, err)
			if got := res.Content[0].(*mcp.TextContent).Text; got != "alice" {
				t.Fatalf("the task answered %q", got)
			}
		})
	}
}

// TestTokenExchangeLeaderCancelled: requests joining an exchange do not
// fail because the request that started it gave up (its caller went
// away): they exchange again under their own context and get a token.
func TestTokenExchangeLeaderCancelled(t *testing.T) {
	as := newFakeAS(t)
	as.arrived, as.gate = make(chan struct{}, 4), make(chan struct{})
	var open sync.Once
	release := func() { open.Do(func() { close(as.gate) }) }
	t.Cleanup(release)
	g, err := New(&Options{Upstreams: []Upstream{exchangeUpstream(as, "http://127.0.0.1:1/mcp", client.EraModern)}})
	must(t, err)
	u := g.ups[0]
	joined := make(chan struct{}, 1)
	g.tokens.joinHook = func() { joined <- struct{}{} }
	leaderCtx, cancelLeader := context.WithCancel(t.Context())
	leader := make(chan error, 1)
	go func() {
		_, err := g.tokens.get(leaderCtx, u, "tok-alice")
		leader <- err
	}()
	waitFor(t, as.arrived, "the leader's exchange")
	waiter := make(chan string, 1)
	go func() {
		tok, err := g.tokens.get(t.Context(), u, "tok-alice")
		if err != nil {
			tok = "error: " + err.Error()
		}
		waiter <- tok
	}()
	waitFor(t, joined, "the waiter joining the exchange")
	cancelLeader()
	if err := waitFor(t, leader, "the leader's end"); !errors.Is(err, context.Canceled) {
		t.Fatalf("leader: %v, want its own context's end", err)
	}
	release() // the waiter's own exchange goes through
	if tok := waitFor(t, waiter, "the waiter's token"); !strings.HasPrefix(tok, "up-alice-") {
		t.Fatalf("waiter got %q; want a token of its own exchange", tok)
	}
}
