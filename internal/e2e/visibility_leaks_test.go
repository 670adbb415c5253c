package e2e

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
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
