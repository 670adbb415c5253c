package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/streamhttp"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// TestServeShutdownStuckHandlers: on SIGINT (the context ending) the
// HTTP server stops within its grace even when handlers ignore
// cancellation: every session ends at once, its requests in flight are
// answered with an error, and serveHTTP returns while the handlers are
// still blocked.
func TestServeShutdownStuckHandlers(t *testing.T) {
	const sessions = 6 // one after another, 5 s each, Close took 30 s
	release := make(chan struct{})
	defer close(release)
	entered := make(chan struct{}, sessions)
	s := server.New(nil)
	s.AddRawTool(&mcp.Tool{Name: "stuck"}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		entered <- struct{}{}
		<-release // deaf to ctx
		return &mcp.CallToolResult{}, nil
	})
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	pr, pw := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- serveHTTP(ctx, s, "127.0.0.1:0", nil, &streamhttp.Options{}, pw); pw.Close() }()
	lines := bufio.NewScanner(pr)
	var url string
	for url == "" && lines.Scan() {
		if _, rest, ok := strings.Cut(lines.Text(), "serving MCP on "); ok {
			url, _, _ = strings.Cut(rest, " ")
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }() // the rest of the log
	post := func(sid, body string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		return http.DefaultClient.Do(req)
	}
	answers := make(chan string, sessions)
	for i := range sessions {
		resp, err := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp, err := post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err == nil {
			resp.Body.Close()
		}
		go func() {
			resp, err := post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"stuck"}}`, i+2))
			if err != nil {
				answers <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answers <- string(b)
		}()
	}
	guard := time.NewTimer(20 * time.Second) // a hang guard, never a synchronisation
	defer guard.Stop()
	for range sessions {
		select {
		case <-entered:
		case <-guard.C:
			t.Fatal("the handlers did not start")
		}
	}
	interrupt()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("serveHTTP: %v", err)
		}
	case <-guard.C:
		t.Fatal("serveHTTP did not return after the interrupt")
	}
	for range sessions {
		if a := <-answers; !strings.Contains(a, `"code":-32603`) {
			t.Errorf("a request in flight at shutdown got %q, want a -32603 error", a)
		}
	}
}
