package streamhttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestShutdownCancelsSessionless: Shutdown ends the context of every
// session-less request in flight, modern or legacy, with the cause
// ErrServerClosing, and each still gets its answer.
func TestShutdownCancelsSessionless(t *testing.T) {
	modern := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"block","arguments":{}}}`
	legacy := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"block","arguments":{}}}`
	for _, c := range []struct {
		name, body, version string
		opts                Options
	}{
		{"modern", modern, mcp.Version20260728, Options{}},
		{"modern always SSE", modern, mcp.Version20260728, Options{AlwaysSSE: true}},
		{"legacy stateless", legacy, mcp.Version20251125, Options{Stateless: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := server.New(&server.Options{Info: mcp.Implementation{Name: "inflight", Version: "1"}})
			started := make(chan struct{})
			cause := make(chan error, 1)
			server.AddTool(s, &mcp.Tool{Name: "block"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
				close(started)
				<-ctx.Done()
				cause <- context.Cause(ctx)
				return "", ctx.Err()
			})
			h := NewHandler(s, &c.opts)
			ts := httptest.NewServer(h)
			defer ts.Close()
			answered := make(chan string, 1)
			go func() {
				r, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(c.body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Accept", "application/json, text/event-stream")
				r.Header.Set("MCP-Protocol-Version", c.version)
				r.Header.Set("Mcp-Method", "tools/call")
				r.Header.Set("Mcp-Name", "block")
				resp, err := ts.Client().Do(r)
				if err != nil {
					answered <- err.Error()
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				answered <- string(b)
			}()
			<-started
			if err := h.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := <-cause; !errors.Is(err, server.ErrServerClosing) {
				t.Errorf("cause %v, want ErrServerClosing", err)
			}
			if b := <-answered; !strings.Contains(b, `"id":3`) {
				t.Errorf("answer %q", b)
			}
		})
	}
}

// TestInflightJoinAfterClose: a request that joins once closing has
// begun is cancelled as it joins; leaving empties the shard.
func TestInflightJoinAfterClose(t *testing.T) {
	var in inflight
	in.init(time.Hour)
	in.close()
	is := &inlineServe{}
	is.ctx.parent = context.Background()
	ctx := &is.ctx
	is.flight.owner = is
	in.join(&is.flight)
	if !errors.Is(context.Cause(ctx), server.ErrServerClosing) {
		t.Errorf("cause %v, want ErrServerClosing", context.Cause(ctx))
	}
	if in.watching.Load() {
		t.Error("a watcher started after close")
	}
	in.leave(&is.flight)
	if n := in.count(); n != 0 {
		t.Errorf("%d in flight after leave", n)
	}
}

// TestInflightWatcherStops: the watcher runs only while requests are in
// flight, and many requests joining and leaving at once leave none
// behind.
func TestInflightWatcherStops(t *testing.T) {
	var in inflight
	in.init(4 * time.Millisecond) // wakes every millisecond
	defer in.close()
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 200 {
				is := &inlineServe{}
				is.ctx.parent = context.Background()
				is.flight.owner, is.flight.watched = is, true
				in.join(&is.flight)
				in.leave(&is.flight)
				is.ctx.release()
			}
		}()
	}
	for range 8 {
		<-done
	}
	if n := in.count(); n != 0 {
		t.Fatalf("%d in flight", n)
	}
	// The watcher notices at one of its next wake-ups (an event; the
	// bound only keeps a broken watcher from hanging the test).
	deadline := time.Now().Add(30 * time.Second)
	for in.watching.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the watcher still runs with nothing in flight")
		}
		time.Sleep(time.Millisecond)
	}
}
