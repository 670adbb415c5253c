package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestPageKept: a filtered list fills every page with visible entries
// and names a next page only while a visible entry remains.
func TestPageKept(t *testing.T) {
	var r registry[string]
	entries := map[string]string{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		entries[k] = k
	}
	r.put(entries)
	visible := func(k string) bool { return k != "b" && k != "c" && k != "g" && k != "h" } // a d e f
	var got [][]string
	var cursor *string
	for range 10 {
		page, next, err := r.page(cursor, 2, visible)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page)
		if next == nil {
			break
		}
		cursor = next
	}
	if want := [][]string{{"a", "d"}, {"e", "f"}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("pages %v, want %v", got, want)
	}
	page, next, err := r.page(nil, 10, func(string) bool { return false })
	if err != nil || len(page) != 0 || next != nil {
		t.Fatalf("everything hidden: %v %v %v", page, next, err)
	}
}

// TestVisibilityRelayedNames: a list change relayed to another instance
// names its items, so that instance filters it the same way (it need
// not have the item registered).
func TestVisibilityRelayedNames(t *testing.T) {
	filter := func(_ context.Context, c Caller, it Item) bool {
		return !strings.Contains(it.Name, "secret") || c.Principal == "admin"
	}
	a, b := New(&Options{Visibility: filter}), New(&Options{Visibility: filter})
	relayed := make(chan [2]string, 4)
	remove := a.addRelay(func(method, uri string) { relayed <- [2]string{method, uri} })
	defer remove()
	h := func(context.Context, *CallToolRequest, struct{}) (string, error) { return "", nil }
	if err := AddTool(a, &mcp.Tool{Name: "secret"}, h); err != nil {
		t.Fatal(err)
	}
	change := <-relayed
	items := b.changedItems(change[0], change[1])
	if len(items) != 1 || items[0].Kind != KindTool || items[0].Name != "secret" {
		t.Fatalf("relayed %q: items %+v", change, items)
	}
	ctx := context.Background()
	if b.hears(ctx, Caller{Principal: "bob"}, change[0], change[1], items) {
		t.Error("bob hears of a hidden tool's change on the other instance")
	}
	if !b.hears(ctx, Caller{Principal: "admin"}, change[0], change[1], items) {
		t.Error("admin does not hear of it")
	}
	// Without a filter nothing is encoded: older instances see "".
	c := New(nil)
	remove2 := c.addRelay(func(method, uri string) { relayed <- [2]string{method, uri} })
	defer remove2()
	if err := AddTool(c, &mcp.Tool{Name: "secret"}, h); err != nil {
		t.Fatal(err)
	}
	if change := <-relayed; change[1] != "" {
		t.Errorf("unfiltered server relayed %q", change)
	}
}

// TestVisibilityUpdateWithoutView: a resources/updated for a session that
// made no request here is judged with a context carrying only the
// session's principal, so a filter that needs more from the request
// (auth's token) refuses it: the update, which names its URI, is not sent
// unfiltered. A list change, which names nothing, still is.
func TestVisibilityUpdateWithoutView(t *testing.T) {
	type tokenKey struct{}
	var sawPrincipal []string
	filter := func(ctx context.Context, c Caller, it Item) bool {
		sawPrincipal = append(sawPrincipal, principalFrom(ctx)+"/"+c.Principal)
		return !strings.Contains(it.Name, "secret") || ctx.Value(tokenKey{}) == "admin"
	}
	s := New(&Options{Visibility: filter})
	read := func(context.Context, *ReadResourceRequest) (*mcp.ReadResourceResult, error) { return nil, nil }
	if err := s.AddResource(&mcp.Resource{URI: "res://secret", Name: "secret"}, read); err != nil {
		t.Fatal(err)
	}
	noView := newSession(s).viewContext() // nil: no request seen
	c := Caller{Principal: "admin"}
	if s.hears(noView, c, mcp.NotificationResourcesUpdated, "res://secret", nil) {
		t.Error("an update of a hidden resource is sent to a session without a request context")
	}
	if want := []string{"admin/admin"}; !slices.Equal(sawPrincipal, want) {
		t.Errorf("the filter saw principals (context/caller) %v, want %v", sawPrincipal, want)
	}
	if !s.hears(noView, c, mcp.NotificationResourcesUpdated, "res://public", nil) {
		t.Error("an update of a visible resource is not sent")
	}
	if !s.hears(context.WithValue(context.Background(), tokenKey{}, "admin"), c, mcp.NotificationResourcesUpdated, "res://secret", nil) {
		t.Error("with its request context, the admin does not hear of the update")
	}
	if !s.hears(noView, c, mcp.NotificationResourcesListChanged, "", []Item{{Kind: KindResource, Name: "res://secret"}}) {
		t.Error("a list change is not sent to a session without a request context")
	}
}

// BenchmarkVisibility measures a legacy tools/call and a 100-tool
// tools/list with and without a visibility filter (one that hides a
// tenth of the tools from the caller).
func BenchmarkVisibility(b *testing.B) {
	filter := func(_ context.Context, c Caller, it Item) bool {
		return !strings.HasSuffix(it.Name, "0") || c.Principal == "admin"
	}
	for _, bc := range []struct {
		name   string
		filter VisibilityFunc
	}{{"none", nil}, {"filter", filter}} {
		s := New(&Options{Visibility: bc.filter})
		h := func(context.Context, *CallToolRequest, struct{}) (string, error) { return "ok", nil }
		for i := range 100 {
			if err := AddTool(s, &mcp.Tool{Name: fmt.Sprintf("tool-%02d", i)}, h); err != nil {
				b.Fatal(err)
			}
		}
		ss := newSession(s)
		ss.state, ss.version, ss.principal = stateReady, mcp.LatestLegacy, "bob"
		ctx := context.Background()
		for _, req := range []struct{ name, msg string }{
			{"call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tool-01"}}`},
			{"list", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		} {
			b.Run(req.name+"/"+bc.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					msg, derr := wire.Decode([]byte(req.msg), jsonrpc.Limits{})
					if derr != nil {
						b.Fatal(derr)
					}
					if _, err := ss.handleRequest(ctx, msg); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
