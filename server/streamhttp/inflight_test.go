package streamhttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestShutdownCancelsSessionless: Shutdown ends the context of every
// session-less request in flight, modern or legacy, with the cause
// ErrServerClosing, and each still gets its answer: the shutdown's -32603
// error, as a legacy session's requests do, never the handler's reaction
// to its cancellation (a tool result "context canceled", which would read
// as the tool's own failure; found by the combination matrix, its cell
// cluster(redis,2)/2026-07-28/http-json/restart-mid-call).
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
				_, b, err := postToolCall(ts, c.body, c.version, "block")
				if err != nil {
					answered <- err.Error()
					return
				}
				answered <- string(b)
			}()
			<-started
			if err := h.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := <-cause; !errors.Is(err, server.ErrServerClosing) {
				t.Errorf("cause %v, want ErrServerClosing", err)
			}
			b := <-answered
			if !strings.Contains(b, `"id":3`) || !strings.Contains(b, `"code":-32603`) || !strings.Contains(b, "shutting down") {
				t.Errorf("answer %q, want the -32603 error of a server shutting down", b)
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

// testOwner counts what the watcher and close tell a flight.
type testOwner struct {
	silents, closings atomic.Int32
	silenced          chan struct{} // closed at the first silent, if set
}

func (o *testOwner) silent() {
	if o.silents.Add(1) == 1 && o.silenced != nil {
		close(o.silenced)
	}
}

func (o *testOwner) cancelClosing() { o.closings.Add(1) }

// TestInflightWatcherStops: a flight held past SSEAfter is told it is
// silent, once; the watcher runs only while flights are in flight, and
// many joining and leaving at once leave none behind.
func TestInflightWatcherStops(t *testing.T) {
	var in inflight
	in.init(4 * time.Millisecond) // wakes every millisecond
	defer in.close()

	held := &testOwner{silenced: make(chan struct{})}
	f := &flight{owner: held}
	in.join(f)
	<-held.silenced // the watcher's event
	in.leave(f)

	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 200 {
				f := &flight{owner: &testOwner{}}
				in.join(f)
				in.leave(f)
			}
		}()
	}
	for range 8 {
		<-done
	}
	if n := in.count(); n != 0 {
		t.Fatalf("%d in flight", n)
	}
	if n := held.silents.Load(); n != 1 {
		t.Errorf("told silent %d times, want once", n)
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

// panicky is a _meta value whose encoding panics.
type panicky struct{}

func (panicky) MarshalJSON() ([]byte, error) { panic("encoding panicked") }

// TestAnswerPanicSessionless: a result whose encoding panics is answered
// -32603, modern or legacy, and leaves nothing in flight for the
// watcher to act on later (it would serve a finished response).
func TestAnswerPanicSessionless(t *testing.T) {
	modern := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"bad","arguments":{}}}`
	legacy := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bad","arguments":{}}}`
	for _, c := range []struct{ name, body, version string }{
		{"modern", modern, mcp.Version20260728},
		{"legacy stateless", legacy, mcp.Version20251125},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := server.New(&server.Options{Info: mcp.Implementation{Name: "panicky", Version: "1"}})
			s.AddRawTool(&mcp.Tool{Name: "bad"}, func(context.Context, *server.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Meta: mcp.Meta{"k": panicky{}}}, nil
			})
			h := NewHandler(s, &Options{Stateless: true, SSEAfter: 20 * time.Millisecond})
			defer h.Close()
			ts := httptest.NewServer(h)
			defer ts.Close()
			status, b, err := postToolCall(ts, c.body, c.version, "bad")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), `"code":-32603`) || !strings.Contains(string(b), `"id":3`) {
				t.Errorf("answer %d %s, want -32603 for id 3", status, b)
			}
			if n := h.inflight.count(); n != 0 {
				t.Errorf("%d requests left in flight", n)
			}
		})
	}
}

// postToolCall POSTs a tools/call body of tool name with the headers of
// its revision, and returns the answer's status and body.
func postToolCall(ts *httptest.Server, body, version, name string) (int, []byte, error) {
	r, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", version)
	r.Header.Set("Mcp-Method", "tools/call")
	r.Header.Set("Mcp-Name", name)
	resp, err := ts.Client().Do(r)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}
