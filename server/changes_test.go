package server_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/internal/httpenv"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// stuckOut is the output of a stdio client that reads two messages and
// then nothing: later writes block until release (or the end of the
// test), as writes to a pipe nobody drains do.
type stuckOut struct {
	read    chan struct{} // one signal per message that went through
	gate    chan struct{}
	once    sync.Once
	mu      sync.Mutex
	lines   int
	blocked chan struct{} // one signal: a write is blocked
}

func (o *stuckOut) Write(p []byte) (int, error) {
	o.mu.Lock()
	through := o.lines < 2
	if through {
		o.lines += bytes.Count(p, []byte("\n"))
	}
	n := o.lines
	o.mu.Unlock()
	if through {
		for range min(n, 2) {
			select {
			case o.read <- struct{}{}:
			default:
			}
		}
		return len(p), nil
	}
	select {
	case o.blocked <- struct{}{}:
	default:
	}
	<-o.gate
	return 0, errors.New("the client went away")
}

func (o *stuckOut) release() { o.once.Do(func() { close(o.gate) }) }

// TestStuckSessionsDoNotDelayChanges (issue 32, item 5): sessions whose
// clients stopped reading (stdio pipes nobody drains) do not delay a
// change: AddTool returns within 100 ms with six of them (it took
// 6 × notifyTimeout before), and a healthy session hears the change at
// once, while the stuck ones are still blocked on theirs.
func TestStuckSessionsDoNotDelayChanges(t *testing.T) {
	const stuck = 6
	s := server.New(nil)
	heard := make(chan struct{}, 10)
	p := mcptest.NewPair(t, s, &mcptest.Options{Era: client.EraLegacy, Client: &client.Options{
		OnToolsListChanged: func(context.Context) { heard <- struct{}{} },
	}})
	if err := p.Client.Ping(p.Context()); err != nil {
		t.Fatal(err)
	}
	var outs []*stuckOut
	for i := range stuck {
		inR, inW := io.Pipe()
		out := &stuckOut{read: make(chan struct{}, 2), gate: make(chan struct{}), blocked: make(chan struct{}, 1)}
		outs = append(outs, out)
		served := make(chan error, 1)
		go func() { served <- s.Serve(context.Background(), stdio.NewConn(inR, out, nil)) }()
		t.Cleanup(func() {
			out.release()
			inW.Close()
			<-served
		})
		// initialize, initialized, then a ping: its answer shows the
		// session has read initialized, so it hears changes.
		msgs := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stuck","version":"1"}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
		go func() { _, _ = io.WriteString(inW, msgs) }() // ends when the server has read it, or at cleanup
		for range 2 {
			httpenv.RecvT(t, out.read, fmt.Sprint("an answer of stuck session ", i))
		}
	}
	start := time.Now()
	err := server.AddTool(s, &mcp.Tool{Name: "late"}, func(context.Context, *server.CallToolRequest, struct{}) (string, error) {
		return "", nil
	})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if took > 100*time.Millisecond {
		t.Errorf("AddTool took %v with %d stuck sessions, want at most 100ms", took, stuck)
	}
	httpenv.RecvT(t, heard, "the healthy session's tools list_changed")
	for _, out := range outs {
		httpenv.RecvT(t, out.blocked, "a stuck session's notification write")
	}
}

// TestChangeBeforeInitializedIsHeld: a list change made after the
// server answered initialize but before it read notifications/initialized
// reaches the client once it is ready. It used to be dropped, so a
// client that listed tools in that window kept a stale list with nothing
// to say so. The tools change must come before a prompts change made
// after the session was ready (changes keep their order).
func TestChangeBeforeInitializedIsHeld(t *testing.T) {
	s := server.New(nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- s.Serve(context.Background(), stdio.NewConn(inR, outW, nil)) }()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		<-served
	})
	lines := make(chan string, 16)
	go func() { // ends when outR is closed at cleanup
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	write := func(msg string) {
		t.Helper()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next := func(what string) string {
		t.Helper()
		line := httpenv.RecvT(t, lines, what)
		if line == "" {
			t.Fatalf("the server closed its output before %s", what)
		}
		return line
	}
	write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"early","version":"1"}}}`)
	if line := next("the answer to initialize"); !strings.Contains(line, `"id":1`) {
		t.Fatalf("first line %s, want the answer to initialize", line)
	}
	noop := func(context.Context, *server.CallToolRequest, struct{}) (string, error) { return "", nil }
	if err := server.AddTool(s, &mcp.Tool{Name: "early"}, noop); err != nil {
		t.Fatal(err)
	}
	write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	write(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	var got []string
	for !slices.Contains(got, "ping") {
		line := next("the answer to ping")
		switch {
		case strings.Contains(line, `"id":2`):
			got = append(got, "ping")
		case strings.Contains(line, mcp.NotificationToolsListChanged):
			got = append(got, "tools")
		}
	}
	if err := s.AddPrompt(&mcp.Prompt{Name: "later"}, func(context.Context, *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	for !slices.Contains(got, "prompts") {
		line := next("prompts/list_changed")
		switch {
		case strings.Contains(line, mcp.NotificationToolsListChanged):
			got = append(got, "tools")
		case strings.Contains(line, mcp.NotificationPromptsListChanged):
			got = append(got, "prompts")
		}
	}
	if i := slices.Index(got, "tools"); i < 0 || i > slices.Index(got, "prompts") {
		t.Fatalf("notifications %v: want tools/list_changed, held until initialized, before prompts/list_changed", got)
	}
}
