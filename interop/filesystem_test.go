package interop

// The reference filesystem server (@modelcontextprotocol/server-
// filesystem), started with no directory: it asks the client for its
// roots with roots/list right after initialization — a server request
// outside any request of the client, which revisions up to 2025-11-25
// allow — and works in the directories the client's roots name.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

func TestFilesystemRootsFromClient(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from mcpkit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	asked := make(chan struct{}, 4)
	c, err := client.Connect(testCtx(t), startStdio(t, peerCmd(t, "server-filesystem", "index.js")), &client.Options{
		ListRootsHandler: func(context.Context) (*mcp.ListRootsResult, error) {
			asked <- struct{}{}
			return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file://" + dir, Name: "work"}}}, nil
		},
	})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer c.Close()
	ctx := testCtx(t)
	select {
	case <-asked:
	case <-ctx.Done():
		t.Fatal("the filesystem server never asked for the roots")
	}
	// The server applies the roots once our answer is in; until then it
	// says it has no allowed directory.
	for {
		res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "list_allowed_directories"})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(allText(res), dir) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the allowed directories never named the root %s: %s", dir, allText(res))
		case <-c.Done():
			t.Fatal("the connection ended")
		default:
		}
	}
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "list_directory", Arguments: []byte(`{"path":"` + dir + `"}`)})
	if err != nil || res.IsError || !strings.Contains(allText(res), "hello.txt") {
		t.Fatalf("list_directory: %v %v", res, err)
	}
	res, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: []byte(`{"path":"` + filepath.Join(dir, "hello.txt") + `"}`)})
	if err != nil || res.IsError || !strings.Contains(allText(res), "hello from mcpkit") {
		t.Fatalf("read_text_file: %v %v", res, err)
	}
	// Outside the roots: refused by the server.
	res, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: []byte(`{"path":"/etc/hostname"}`)})
	if err != nil || !res.IsError {
		t.Errorf("reading outside the roots: %v %v, want a tool error", res, err)
	}
}
