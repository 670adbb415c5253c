package interop

// The mcpkit command against the reference servers, as a new user runs
// it: nothing but the command or the URL (acceptance of issue 20).

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

// TestMain removes the mcpkit binary the CLI tests build.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// mcpkitBin builds the mcpkit command of this repository, once.
func mcpkitBin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "mcpkit-interop-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "mcpkit")
		// Built in the parent module, with its own go.sum.
		build := exec.Command("go", "build", "-o", binPath, "./cmd/mcpkit")
		build.Dir = ".."
		out, err := build.CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("go build: %s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building mcpkit: %v", buildErr)
	}
	return binPath
}

// runCLI runs mcpkit with args and returns stdout and stderr; a non-zero
// exit fails the test.
func runCLI(t *testing.T, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, mcpkitBin(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcpkit %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String()
}

func wantIn(t *testing.T, what, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Errorf("%s lacks %q:\n%s", what, p, s)
		}
	}
}

func TestCLIEverything(t *testing.T) {
	t.Parallel()
	dir := peers(t)
	js := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	stdio := []string{"--", filepath.Join(dir, "node"), js, "stdio"}

	out, _ := runCLI(t, append([]string{"inspect"}, stdio...)...)
	wantIn(t, "inspect (stdio)", out, "server:       mcp-servers/everything", "simulate-research-query", "    task:   required")
	out, errOut := runCLI(t, append([]string{"call", "simulate-research-query", "topic=go"}, stdio...)...)
	wantIn(t, "call simulate-research-query (stdio)", out, "Research Report: go")
	wantIn(t, "its stderr", errOut, ": working", ": completed")
	out, _ = runCLI(t, append([]string{"call", "get-sum", "a=2", "b=40"}, stdio...)...)
	wantIn(t, "call get-sum", out, "42")

	for _, tc := range []struct{ transport, ready, path string }{
		{"streamableHttp", "listening on port", "/mcp"},
		{"sse", "running on port", "/sse"},
	} {
		url := startHTTP(t, peerCmd(t, "server-everything", "index.js", tc.transport), tc.ready) + tc.path
		out, _ := runCLI(t, "inspect", url)
		wantIn(t, "inspect "+tc.transport, out, "server:       mcp-servers/everything", "    task:   required")
		out, _ = runCLI(t, "call", url, "simulate-research-query", "topic=go")
		wantIn(t, "call simulate-research-query "+tc.transport, out, "Research Report: go")
		out, _ = runCLI(t, "call", url, "echo", "message=hello")
		wantIn(t, "call echo "+tc.transport, out, "hello")
	}
}

func TestCLIFilesystem(t *testing.T) {
	t.Parallel()
	dir := peers(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	// The server asks for the roots after initialization and applies
	// them on its own time; inspect needs none of them.
	out, _ := runCLI(t, "inspect", "--root", "file://"+root, "--", filepath.Join(dir, "node"), js)
	wantIn(t, "inspect (filesystem)", out, "server:       secure-filesystem-server", "list_allowed_directories")
	// A call, with the directory given on the server's command line.
	if err := os.WriteFile(filepath.Join(root, "note.txt"), []byte("from the CLI\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ = runCLI(t, "call", "read_text_file", "path="+filepath.Join(root, "note.txt"), "--", filepath.Join(dir, "node"), js, root)
	wantIn(t, "call read_text_file (filesystem)", out, "from the CLI")
}

// TestCLIGoSDKSSEServer: inspect and call reach go-sdk's 2024-11-05 SSE
// server (NewSSEHandler) with nothing but its URL.
func TestCLIGoSDKSSEServer(t *testing.T) {
	t.Parallel()
	srv := gomcp.NewServer(&gomcp.Implementation{Name: "gosdk-sse", Version: "1"}, nil)
	gomcp.AddTool(srv, &gomcp.Tool{Name: "add", Description: "adds"}, func(_ context.Context, _ *gomcp.CallToolRequest, in addArgs) (*gomcp.CallToolResult, any, error) {
		return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: fmt.Sprint(in.X + in.Y)}}}, nil, nil
	})
	ts := httptest.NewServer(gomcp.NewSSEHandler(func(*http.Request) *gomcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	out, _ := runCLI(t, "inspect", ts.URL)
	wantIn(t, "inspect", out, "server:       gosdk-sse 1", "  add: adds")
	out, _ = runCLI(t, "call", ts.URL, "add", "x=2", "y=40")
	wantIn(t, "call add", out, "42")
}
