package e2e

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

func TestPrompts(t *testing.T) {
	t.Parallel()
	s := newFixture(nil).connect(t, "", nil)
	ctx := testCtx(t)

	first, err := s.c.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Prompts) != 2 || first.NextCursor == nil {
		t.Fatalf("first page %+v, want 2 prompts and a cursor", first)
	}
	second, err := s.c.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: first.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Prompts) != 1 || second.NextCursor != nil {
		t.Fatalf("second page %+v, want 1 prompt and no cursor", second)
	}
	var names []string
	for p, err := range s.c.Prompts(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, p.Name)
		if p.Name == "with_args" && (len(p.Arguments) != 2 || !p.Arguments[0].Required || p.Arguments[1].Required) {
			t.Errorf("with_args arguments %+v", p.Arguments)
		}
	}
	if want := []string{"plain", "summary", "with_args"}; !slices.Equal(names, want) {
		t.Errorf("Prompts yielded %v, want %v", names, want)
	}

	plain, err := s.c.GetPrompt(ctx, &mcp.GetPromptParams{Name: "plain"})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Messages) != 1 || plain.Messages[0].Role != mcp.RoleUser || plain.Messages[0].Content.(*mcp.TextContent).Text != "hi" {
		t.Errorf("plain = %+v", plain)
	}
	args, err := s.c.GetPrompt(ctx, &mcp.GetPromptParams{Name: "with_args", Arguments: map[string]string{"topic": "go", "tone": "dry"}})
	if err != nil {
		t.Fatal(err)
	}
	if args.Description != "args" || args.Messages[0].Content.(*mcp.TextContent).Text != "about go" {
		t.Errorf("with_args = %+v", args)
	}

	_, err = s.c.GetPrompt(ctx, &mcp.GetPromptParams{Name: "with_args", Arguments: map[string]string{"tone": "dry"}})
	wantCode(t, err, mcp.CodeInvalidParams)
	_, err = s.c.GetPrompt(ctx, &mcp.GetPromptParams{Name: "nope"})
	wantCode(t, err, mcp.CodeInvalidParams)
}

func TestResources(t *testing.T) {
	t.Parallel()
	s := newFixture(nil).connect(t, "", nil)
	ctx := testCtx(t)

	var uris []string
	for r, err := range s.c.Resources(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	if want := []string{"test://blob", "test://gone", "test://text"}; !slices.Equal(uris, want) {
		t.Errorf("Resources yielded %v, want %v", uris, want)
	}
	tpls, err := s.c.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tpls.ResourceTemplates) != 1 || tpls.ResourceTemplates[0].URITemplate != "test://items/{id}" || tpls.ResourceTemplates[0].Name != "item" {
		t.Errorf("templates %+v", tpls)
	}

	read := func(uri string) mcp.ResourceContents {
		t.Helper()
		res, err := s.c.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if len(res.Contents) != 1 || res.Contents[0].ResourceURI() != uri {
			t.Fatalf("read %s: %+v", uri, res.Contents)
		}
		return res.Contents[0]
	}
	if tc, ok := read("test://text").(*mcp.TextResourceContents); !ok || tc.Text != "some text" || tc.MIMEType != "text/plain" {
		t.Errorf("text resource %+v", tc)
	}
	if bc, ok := read("test://blob").(*mcp.BlobResourceContents); !ok || !bytes.Equal(bc.Blob, []byte{0, 1, 2, 255}) {
		t.Errorf("blob resource %+v", bc)
	}
	if tc, ok := read("test://items/42").(*mcp.TextResourceContents); !ok || tc.Text != "item 42" {
		t.Errorf("template resource %+v", tc)
	}

	for _, uri := range []string{"test://unknown", "test://gone"} {
		_, err := s.c.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		e := wantCode(t, err, mcp.CodeResourceNotFound)
		if !errors.Is(err, mcp.ErrResourceNotFound) {
			t.Errorf("errors.Is(%v, mcp.ErrResourceNotFound) = false", err)
		}
		if !bytes.Contains(e.Data, []byte(uri)) {
			t.Errorf("not-found data %s does not name %s", e.Data, uri)
		}
	}
}

// TestSubscriptions: updates reach subscribers only. Absence is proven by
// order: notifications arrive in order, so after unsubscribing A, an
// update of A then of B must be followed by B alone.
func TestSubscriptions(t *testing.T) {
	t.Parallel()
	updated := make(chan string, 16)
	f := newFixture(nil)
	s := f.connect(t, "", &client.Options{
		OnResourceUpdated: func(ctx context.Context, uri string) { updated <- uri },
	})
	ctx := testCtx(t)
	const a, b = "test://text", "test://blob"

	// Before subscribing, nothing; the first subscription makes B the
	// next notification.
	f.srv.ResourceUpdated(a)
	if err := s.c.Subscribe(ctx, b); err != nil {
		t.Fatal(err)
	}
	f.srv.ResourceUpdated(b)
	if got := recv(t, updated, "an update"); got != b {
		t.Fatalf("got update %q, want %q (no update before subscribing)", got, b)
	}
	if err := s.c.Subscribe(ctx, a); err != nil {
		t.Fatal(err)
	}
	f.srv.ResourceUpdated(a)
	if got := recv(t, updated, "an update"); got != a {
		t.Fatalf("got update %q, want %q", got, a)
	}
	if err := s.c.Unsubscribe(ctx, a); err != nil {
		t.Fatal(err)
	}
	f.srv.ResourceUpdated(a)
	f.srv.ResourceUpdated(b)
	if got := recv(t, updated, "an update"); got != b {
		t.Fatalf("got update %q after unsubscribing it, want %q", got, b)
	}
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	s := newFixture(nil).connect(t, "", nil)
	ctx := testCtx(t)
	res, err := s.c.Complete(ctx, &mcp.CompleteParams{
		Ref:      mcp.CompleteReference{Type: mcp.RefPrompt, Name: "with_args"},
		Argument: mcp.CompleteArgument{Name: "topic", Value: "py"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"python", "pytorch"}; !slices.Equal(res.Completion.Values, want) {
		t.Errorf("completion of py = %v, want %v", res.Completion.Values, want)
	}
	res, err = s.c.Complete(ctx, &mcp.CompleteParams{
		Ref:      mcp.CompleteReference{Type: mcp.RefResource, URI: "test://items/{id}"},
		Argument: mcp.CompleteArgument{Name: "id", Value: "zz"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Completion.Values == nil || len(res.Completion.Values) != 0 {
		t.Errorf("no match = %#v, want an empty list", res.Completion.Values)
	}
	_, err = s.c.Complete(ctx, &mcp.CompleteParams{
		Ref:      mcp.CompleteReference{Type: mcp.RefPrompt, Name: "nope"},
		Argument: mcp.CompleteArgument{Name: "topic", Value: "py"},
	})
	wantCode(t, err, mcp.CodeInvalidParams)
	// A resource reference names a registered resource or template.
	_, err = s.c.Complete(ctx, &mcp.CompleteParams{
		Ref:      mcp.CompleteReference{Type: mcp.RefResource, URI: "test://nope/{id}"},
		Argument: mcp.CompleteArgument{Name: "id", Value: "zz"},
	})
	wantCode(t, err, mcp.CodeInvalidParams)
}

func TestListChanged(t *testing.T) {
	t.Parallel()
	changed := make(chan string, 16)
	f := newFixture(nil)
	s := f.connect(t, "", &client.Options{
		OnToolsListChanged:     func(ctx context.Context) { changed <- "tools" },
		OnPromptsListChanged:   func(ctx context.Context) { changed <- "prompts" },
		OnResourcesListChanged: func(ctx context.Context) { changed <- "resources" },
	})
	// The ping's answer proves the server has read notifications/initialized
	// (it reads in order), so the session is ready for notifications.
	if err := s.c.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	server.AddTool(f.srv, &mcp.Tool{Name: "late"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
		return "late", nil
	})
	if got := recv(t, changed, "tools/list_changed"); got != "tools" {
		t.Errorf("got %s list_changed, want tools", got)
	}
	s.wantText(t, "late", nil, "late")
	f.srv.AddPrompt(&mcp.Prompt{Name: "late"}, func(ctx context.Context, req *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "late"}}}}, nil
	})
	if got := recv(t, changed, "prompts/list_changed"); got != "prompts" {
		t.Errorf("got %s list_changed, want prompts", got)
	}
	f.srv.AddResource(&mcp.Resource{URI: "test://late", Name: "late"}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: "late"}}}, nil
	})
	if got := recv(t, changed, "resources/list_changed"); got != "resources" {
		t.Errorf("got %s list_changed, want resources", got)
	}
	f.srv.RemoveTools("late")
	if got := recv(t, changed, "tools/list_changed"); got != "tools" {
		t.Errorf("got %s list_changed, want tools", got)
	}
	// Removing what does not exist changes nothing and says nothing: the
	// next notification is the resource removal.
	f.srv.RemovePrompts("never-registered")
	f.srv.RemoveResources("test://late")
	if got := recv(t, changed, "resources/list_changed"); got != "resources" {
		t.Errorf("got %s list_changed, want resources", got)
	}
}
