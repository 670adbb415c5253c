package e2e

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// Per-caller visibility (server.Options.Visibility) end to end, in both
// eras: lists, calls (hidden is exactly unknown), change notifications,
// and cacheScope "private" on the modern wire.

// secretsForAdmin hides every item whose name mentions "secret" from
// everyone but the principal "admin".
func secretsForAdmin(_ context.Context, c server.Caller, it server.Item) bool {
	return !strings.Contains(it.Name, "secret") || c.Principal == "admin"
}

func visibilityServer(t testing.TB, filter server.VisibilityFunc) *server.Server {
	srv := server.New(&server.Options{Visibility: filter, CacheScope: mcp.CachePublic})
	tool := func(context.Context, *server.CallToolRequest, struct{}) (string, error) { return "ran", nil }
	prompt := func(context.Context, *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "p"}}}}, nil
	}
	read := func(_ context.Context, r *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: r.Params.URI, Text: "x"}}}, nil
	}
	for _, name := range []string{"public", "secret"} {
		if err := server.AddTool(srv, &mcp.Tool{Name: name}, tool); err != nil {
			t.Fatal(err)
		}
		if err := srv.AddPrompt(&mcp.Prompt{Name: "p-" + name}, prompt); err != nil {
			t.Fatal(err)
		}
		if err := srv.AddResource(&mcp.Resource{URI: "res://" + name, Name: name}, read); err != nil {
			t.Fatal(err)
		}
		if err := srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "tpl://" + name + "/{id}", Name: name}, read); err != nil {
			t.Fatal(err)
		}
	}
	return srv
}

// dialAs connects to srv as principal over memory (a stdio-like
// session) or HTTP (the principal set by a middleware, as auth does).
func dialAs(t testing.TB, carrier string, srv *server.Server, principal string) transport.Conn {
	switch carrier {
	case "memory":
		a, b := memory.NewPair()
		done := make(chan struct{})
		ctx, cancel := context.WithCancel(server.WithPrincipal(context.Background(), principal))
		go func() { // ends when the test cancels ctx or the client closes
			defer close(done)
			_ = srv.Serve(ctx, b)
		}()
		t.Cleanup(func() {
			cancel()
			<-done
		})
		return a
	default:
		h := streamhttp.NewHandler(srv, nil)
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(server.WithPrincipal(r.Context(), principal)))
		}))
		t.Cleanup(func() {
			h.Close()
			ts.Close()
		})
		return streamable.New(ts.URL, nil)
	}
}

// listChanged counts the tools/list_changed notifications a client reads
// and passes every list change (tools and prompts) to ch, so that a test
// waits for each one instead of relying on the order of writes: a stdio
// session hears its changes from a goroutine of its own (server's
// changes.go), after the caller of AddTool has returned.
type listChanged struct {
	n  atomic.Int32
	ch chan string
}

func newListChanged() *listChanged { return &listChanged{ch: make(chan string, 64)} }

func (l *listChanged) observe(in bool, msg []byte) {
	var env struct {
		Method string `json:"method"`
	}
	if !in || json.Unmarshal(msg, &env) != nil {
		return
	}
	switch env.Method {
	case mcp.NotificationToolsListChanged:
		l.n.Add(1)
	case mcp.NotificationPromptsListChanged:
	default:
		return
	}
	select {
	case l.ch <- env.Method:
	default: // the test reads every one it causes; more is its failure
	}
}

// wait reads list changes until one of method arrives.
func (l *listChanged) wait(ctx context.Context, t testing.TB, who, method string) {
	t.Helper()
	for {
		select {
		case m := <-l.ch:
			if m == method {
				return
			}
		case <-ctx.Done():
			t.Fatalf("%s never heard %s", who, method)
		}
	}
}

func TestVisibility(t *testing.T) {
	for _, era := range []string{mcp.LatestLegacy, mcp.Version20260728} {
		for _, carrier := range []string{"memory", "http"} {
			t.Run(era+"/"+carrier, func(t *testing.T) {
				t.Parallel()
				srv := visibilityServer(t, secretsForAdmin)
				connect := func(principal string, seen *listChanged) *client.Client {
					c, err := client.Connect(testCtx(t), dialAs(t, carrier, srv, principal), &client.Options{
						ProtocolVersion: era, NoCache: true, Observe: seen.observe,
					})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { c.Close() })
					return c
				}
				bobSeen, adminSeen := newListChanged(), newListChanged()
				bob, admin := connect("bob", bobSeen), connect("admin", adminSeen)
				ctx := testCtx(t)
				modern := era == mcp.Version20260728

				names := func(c *client.Client) []string {
					res, err := c.ListTools(ctx, nil)
					if err != nil {
						t.Fatal(err)
					}
					if modern && res.CacheScope != mcp.CachePrivate {
						t.Errorf("filtered tools/list cacheScope %q, want private", res.CacheScope)
					}
					var out []string
					for _, tool := range res.Tools {
						out = append(out, tool.Name)
					}
					return out
				}
				if got := names(bob); !slices.Equal(got, []string{"public"}) {
					t.Fatalf("bob sees tools %v", got)
				}
				if got := names(admin); !slices.Equal(got, []string{"public", "secret"}) {
					t.Fatalf("admin sees tools %v", got)
				}
				prompts, err := bob.ListPrompts(ctx, nil)
				if err != nil || len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "p-public" {
					t.Fatalf("bob's prompts %+v %v", prompts, err)
				}
				resources, err := bob.ListResources(ctx, nil)
				if err != nil || len(resources.Resources) != 1 || resources.Resources[0].URI != "res://public" {
					t.Fatalf("bob's resources %+v %v", resources, err)
				}
				templates, err := bob.ListResourceTemplates(ctx, nil)
				if err != nil || len(templates.ResourceTemplates) != 1 {
					t.Fatalf("bob's templates %+v %v", templates, err)
				}

				// A hidden item is answered exactly as an unknown one.
				same := func(what string, hidden, unknown error, hiddenName, unknownName string) {
					t.Helper()
					sameAsUnknown(t, what, hidden, unknown, hiddenName, unknownName)
				}
				_, e1 := bob.CallTool(ctx, &mcp.CallToolParams{Name: "secret"})
				_, e2 := bob.CallTool(ctx, &mcp.CallToolParams{Name: "nosuch"})
				same("tools/call", e1, e2, "secret", "nosuch")
				_, e1 = bob.GetPrompt(ctx, &mcp.GetPromptParams{Name: "p-secret"})
				_, e2 = bob.GetPrompt(ctx, &mcp.GetPromptParams{Name: "p-nosuch"})
				same("prompts/get", e1, e2, "p-secret", "p-nosuch")
				_, e1 = bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: "res://secret"})
				_, e2 = bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: "res://nosuch"})
				same("resources/read", e1, e2, "res://secret", "res://nosuch")
				_, e1 = bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tpl://secret/1"})
				_, e2 = bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tpl://nosuch/1"})
				same("resources/read (template)", e1, e2, "tpl://secret/1", "tpl://nosuch/1")
				if res, err := admin.CallTool(ctx, &mcp.CallToolParams{Name: "secret"}); err != nil || text(res) != "ran" {
					t.Fatalf("admin's call: %+v %v", res, err)
				}
				if _, err := admin.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tpl://secret/1"}); err != nil {
					t.Fatalf("admin's read: %v", err)
				}

				// Change notifications, each waited for. A change bob may not
				// hear is followed by a barrier he may (a new public prompt):
				// a session hears its changes in order, so once bob has the
				// barrier, a leaked tools change would have reached him first.
				if carrier != "memory" {
					return
				}
				if modern {
					for _, c := range []*client.Client{bob, admin} {
						sub, err := c.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true})
						if err != nil {
							t.Fatal(err)
						}
						t.Cleanup(func() { sub.Close() })
					}
				}
				toolsChanged, promptsChanged := mcp.NotificationToolsListChanged, mcp.NotificationPromptsListChanged
				barrier := func(name string) {
					t.Helper()
					if err := srv.AddPrompt(&mcp.Prompt{Name: name}, func(context.Context, *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
						return &mcp.GetPromptResult{}, nil
					}); err != nil {
						t.Fatal(err)
					}
					bobSeen.wait(ctx, t, "bob", promptsChanged)
					adminSeen.wait(ctx, t, "admin", promptsChanged)
				}
				tool := func(context.Context, *server.CallToolRequest, struct{}) (string, error) { return "", nil }
				if err := server.AddTool(srv, &mcp.Tool{Name: "secret-2"}, tool); err != nil {
					t.Fatal(err)
				}
				adminSeen.wait(ctx, t, "admin", toolsChanged)
				barrier("p-barrier-1")
				if err := server.AddTool(srv, &mcp.Tool{Name: "public-2"}, tool); err != nil {
					t.Fatal(err)
				}
				bobSeen.wait(ctx, t, "bob", toolsChanged)
				adminSeen.wait(ctx, t, "admin", toolsChanged)
				srv.RemoveTools("secret-2")
				adminSeen.wait(ctx, t, "admin", toolsChanged)
				barrier("p-barrier-2")
				names(bob)
				names(admin)
				if b, a := bobSeen.n.Load(), adminSeen.n.Load(); b != 1 || a != 3 {
					t.Fatalf("tools/list_changed: bob heard %d (want 1), admin %d (want 3)", b, a)
				}
			})
		}
	}
}

// sameAsUnknown fails the test unless hidden and unknown are the same
// JSON-RPC error: same code, same message once the names are set aside.
func sameAsUnknown(t testing.TB, what string, hidden, unknown error, hiddenName, unknownName string) {
	t.Helper()
	h, ok1 := jsonrpc.AsError(hidden)
	u, ok2 := jsonrpc.AsError(unknown)
	if !ok1 || !ok2 {
		t.Fatalf("%s: errors %v / %v, want JSON-RPC errors", what, hidden, unknown)
	}
	if h.Code != u.Code || strings.ReplaceAll(h.Message, hiddenName, "X") != strings.ReplaceAll(u.Message, unknownName, "X") {
		t.Fatalf("%s: hidden %d %q, unknown %d %q", what, h.Code, h.Message, u.Code, u.Message)
	}
}

// TestVisibilityAuth: auth.Visibility hides the tools whose per-tool
// scopes (auth.Options.ToolScopes) the caller's token lacks, the same
// table Require enforces on calls; over HTTP in both eras.
func TestVisibilityAuth(t *testing.T) {
	opts := &auth.Options{
		ToolScopes: map[string][]string{"secret": {"admin"}},
		Implies:    func(granted, needed string) bool { return granted == needed || granted == "root" },
	}
	for _, era := range []string{mcp.LatestLegacy, mcp.Version20260728} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			srv := visibilityServer(t, auth.Visibility(opts))
			h := streamhttp.NewHandler(srv, nil)
			verifier := auth.VerifierFunc(func(_ context.Context, token string) (*auth.TokenInfo, error) {
				switch token {
				case "user":
					return &auth.TokenInfo{Subject: "u", Scopes: []string{"mcp"}}, nil
				case "admin":
					return &auth.TokenInfo{Subject: "a", Scopes: []string{"admin"}}, nil
				case "root":
					return &auth.TokenInfo{Subject: "r", Scopes: []string{"root"}}, nil
				}
				return nil, errors.New("unknown token")
			})
			o := *opts
			o.ResourceMetadataURL = "https://example.test/.well-known/oauth-protected-resource"
			mw, err := auth.Require(verifier, &o)
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(mw(h))
			t.Cleanup(func() {
				h.Close()
				ts.Close()
			})
			for token, want := range map[string][]string{"user": {"public"}, "admin": {"public", "secret"}, "root": {"public", "secret"}} {
				hc := &http.Client{Transport: bearer{token}}
				c, err := client.Connect(testCtx(t), streamable.New(ts.URL, &streamable.Options{HTTPClient: hc}), &client.Options{ProtocolVersion: era, NoCache: true})
				if err != nil {
					t.Fatal(err)
				}
				res, err := c.ListTools(testCtx(t), nil)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, tool := range res.Tools {
					got = append(got, tool.Name)
				}
				if !slices.Equal(got, want) {
					t.Errorf("token %q sees %v, want %v", token, got, want)
				}
				c.Close()
			}
		})
	}
}

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}
