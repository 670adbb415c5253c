package e2e

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/store"
)

// Paths by which a hidden item could still be told from an unknown one:
// completion on a resource reference, a URI a hidden and a visible
// template both match, and resources/updated on a session whose stream
// is held by an instance that saw none of its requests.

// TestVisibilityCompletion: completion/complete on a ref/resource naming
// a hidden resource or template is answered exactly as one naming
// nothing registered, and the completion handler is not called for it.
func TestVisibilityCompletion(t *testing.T) {
	for _, era := range []string{mcp.LatestLegacy, mcp.Version20260728} {
		for _, carrier := range []string{"memory", "http"} {
			t.Run(era+"/"+carrier, func(t *testing.T) {
				t.Parallel()
				srv := visibilityServer(t, secretsForAdmin)
				var secretCalls atomic.Int32
				srv.SetCompletionHandler(func(_ context.Context, req *server.CompleteRequest) (*mcp.CompleteResult, error) {
					if strings.Contains(req.Params.Ref.URI, "secret") {
						secretCalls.Add(1)
					}
					return &mcp.CompleteResult{Completion: mcp.Completion{Values: []string{"v:" + req.Params.Ref.URI}}}, nil
				})
				connect := func(principal string) *client.Client {
					c, err := client.Connect(testCtx(t), dialAs(t, carrier, srv, principal), &client.Options{ProtocolVersion: era, NoCache: true})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { c.Close() })
					return c
				}
				bob, admin := connect("bob"), connect("admin")
				ctx := testCtx(t)
				complete := func(c *client.Client, uri string) (*mcp.CompleteResult, error) {
					return c.Complete(ctx, &mcp.CompleteParams{
						Ref:      mcp.CompleteReference{Type: mcp.RefResource, URI: uri},
						Argument: mcp.CompleteArgument{Name: "id", Value: "1"},
					})
				}
				for _, pair := range [][2]string{{"tpl://secret/{id}", "tpl://nosuch/{id}"}, {"res://secret", "res://nosuch"}} {
					_, e1 := complete(bob, pair[0])
					_, e2 := complete(bob, pair[1])
					sameAsUnknown(t, "completion/complete "+pair[0], e1, e2, pair[0], pair[1])
				}
				if n := secretCalls.Load(); n != 0 {
					t.Fatalf("the completion handler ran %d times for bob's hidden references", n)
				}
				for _, uri := range []string{"tpl://public/{id}", "res://public"} {
					if res, err := complete(bob, uri); err != nil || len(res.Completion.Values) != 1 || res.Completion.Values[0] != "v:"+uri {
						t.Fatalf("bob's completion of visible %s: %+v %v", uri, res, err)
					}
				}
				if res, err := complete(admin, "tpl://secret/{id}"); err != nil || len(res.Completion.Values) != 1 || res.Completion.Values[0] != "v:tpl://secret/{id}" {
					t.Fatalf("admin's completion: %+v %v", res, err)
				}
			})
		}
	}
}

// overlapServer registers, for each of a hidden resource and a hidden
// template, a visible template that also matches its URIs; each handler
// answers with its own name.
func overlapServer(t testing.TB) *server.Server {
	srv := server.New(&server.Options{Visibility: secretsForAdmin})
	serve := func(name string) server.ResourceHandler {
		return func(_ context.Context, r *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: r.Params.URI, Text: name}}}, nil
		}
	}
	if err := srv.AddResource(&mcp.Resource{URI: "res://secret", Name: "secret"}, serve("secret resource")); err != nil {
		t.Fatal(err)
	}
	// Templates are tried in key order: the hidden one comes first.
	for _, tpl := range []struct{ uri, name string }{
		{"res://{name}", "any resource"},
		{"tpl://secret/{id}", "secret template"},
		{"tpl://{kind}/{id}", "any template"},
	} {
		if err := srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: tpl.uri, Name: tpl.name}, serve(tpl.name)); err != nil {
			t.Fatal(err)
		}
	}
	return srv
}

// TestVisibilityOverlap: a URI that a hidden resource or template and a
// visible template both match is served to a caller who cannot see the
// hidden one by the visible template, as it would be were the hidden one
// not registered; and that caller hears of its updates.
func TestVisibilityOverlap(t *testing.T) {
	for _, era := range []string{mcp.LatestLegacy, mcp.Version20260728} {
		for _, carrier := range []string{"memory", "http"} {
			t.Run(era+"/"+carrier, func(t *testing.T) {
				t.Parallel()
				srv := overlapServer(t)
				updated := make(chan string, 8)
				connect := func(principal string, opts *client.Options) *client.Client {
					opts.ProtocolVersion, opts.NoCache = era, true
					c, err := client.Connect(testCtx(t), dialAs(t, carrier, srv, principal), opts)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { c.Close() })
					return c
				}
				bob := connect("bob", &client.Options{OnResourceUpdated: func(_ context.Context, uri string) { updated <- uri }})
				admin := connect("admin", &client.Options{})
				ctx := testCtx(t)
				read := func(c *client.Client, uri string) string {
					t.Helper()
					res, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
					if err != nil {
						t.Fatalf("read %s: %v", uri, err)
					}
					tc, ok := res.Contents[0].(*mcp.TextResourceContents)
					if !ok {
						t.Fatalf("read %s: %+v", uri, res.Contents)
					}
					return tc.Text
				}
				for _, c := range []struct {
					who      *client.Client
					uri      string
					servedBy string
				}{
					{bob, "res://secret", "any resource"},
					{bob, "tpl://secret/1", "any template"},
					{admin, "res://secret", "secret resource"},
					{admin, "tpl://secret/1", "secret template"},
				} {
					if got := read(c.who, c.uri); got != c.servedBy {
						t.Errorf("%s served by %q, want %q", c.uri, got, c.servedBy)
					}
				}

				// Updates: on memory every message of a session (or listen
				// stream) travels in order, so the last update arriving
				// means the earlier ones were sent or dropped.
				if carrier != "memory" {
					return
				}
				uris := []string{"res://secret", "tpl://secret/1", "tpl://public/1"}
				if era == mcp.Version20260728 {
					sub, err := bob.Listen(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: uris})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { sub.Close() })
				} else {
					for _, uri := range uris {
						if err := bob.Subscribe(ctx, uri); err != nil {
							t.Fatal(err)
						}
					}
				}
				for _, uri := range uris {
					srv.ResourceUpdated(uri)
				}
				for _, want := range uris {
					if got := recv(t, updated, "an update"); got != want {
						t.Fatalf("bob heard of %s, want %s (each is served to him by a visible template)", got, want)
					}
				}
			})
		}
	}
}

// TestVisibilityUpdatesElsewhere: a legacy HTTP session whose GET stream
// is held by an instance that served none of its POSTs (so has no
// request context to judge with) hears resources/updated only for the
// URIs its principal may see; a subscription to a hidden URI is accepted
// exactly as one to an unknown URI is. Legacy only: 2026-07-28 has no
// sessions, and a listen stream is judged with its own request.
func TestVisibilityUpdatesElsewhere(t *testing.T) {
	t.Parallel()
	sessions := store.NewMemorySessionStore()
	const principalHeader = "X-Test-Principal"
	instance := func() (*server.Server, string) {
		srv := visibilityServer(t, secretsForAdmin)
		h := streamhttp.NewHandler(srv, &streamhttp.Options{SessionStore: sessions})
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(server.WithPrincipal(r.Context(), r.Header.Get(principalHeader))))
		}))
		t.Cleanup(func() {
			h.Close()
			ts.Close()
		})
		return srv, ts.URL
	}
	_, a := instance()
	srvB, b := instance()
	ctx := testCtx(t)
	send := func(method, url, principal, sid, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(principalHeader, principal)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", mcp.LatestLegacy)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %s", method, body, resp.Status)
		}
		return resp
	}
	post := func(principal, sid, body string) (string, string) {
		t.Helper()
		resp := send(http.MethodPost, a, principal, sid, body)
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.Header.Get("Mcp-Session-Id"), string(out)
	}
	// heard opens a session on A as principal, subscribes it to uris
	// there, holds its GET stream on B, has B announce an update of each
	// uri and returns those the session hears, up to the last one's.
	heard := func(principal string, uris []string) []string {
		sid, _ := post(principal, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+mcp.LatestLegacy+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		if sid == "" {
			t.Fatal("no session id")
		}
		post(principal, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		for i, uri := range uris {
			if _, out := post(principal, sid, `{"jsonrpc":"2.0","id":`+strconv.Itoa(2+i)+`,"method":"resources/subscribe","params":{"uri":"`+uri+`"}}`); !strings.Contains(out, `"result":{}`) {
				t.Fatalf("subscribe %s: %s", uri, out)
			}
		}
		get := send(http.MethodGet, b, principal, sid, "")
		defer get.Body.Close()
		for _, uri := range uris {
			srvB.ResourceUpdated(uri)
		}
		last := uris[len(uris)-1]
		var got []string
		events := sse.NewReader(get.Body, 0)
		for {
			ev, err := events.Next()
			if err != nil {
				t.Fatalf("GET stream on B: %v (heard %v)", err, got)
			}
			var msg struct {
				Method string                                `json:"method"`
				Params mcp.ResourceUpdatedNotificationParams `json:"params"`
			}
			if len(ev.Data) == 0 || json.Unmarshal(ev.Data, &msg, json.RejectUnknownMembers(false)) != nil || msg.Method != mcp.NotificationResourcesUpdated {
				continue
			}
			got = append(got, msg.Params.URI)
			if msg.Params.URI == last {
				return got
			}
		}
	}
	uris := []string{"res://secret", "res://nosuch", "res://public"}
	if got := strings.Join(heard("bob", uris), " "); got != "res://nosuch res://public" {
		t.Errorf("bob heard of %s, want res://nosuch res://public", got)
	}
	if got := strings.Join(heard("admin", uris), " "); got != "res://secret res://nosuch res://public" {
		t.Errorf("admin heard of %s, want all three", got)
	}
}
