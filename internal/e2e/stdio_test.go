package e2e

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport/command"
)

// TestStdioChild drives the fixture in a real child process over its
// stdin and stdout, then shuts it down by closing its input: it must exit
// by itself, without a signal.
func TestStdioChild(t *testing.T) {
	t.Parallel()
	conn := startChild(t, 0)
	w := newWire(t, mcp.LatestLegacy)
	asked := make(chan *mcp.ElicitParams, 1)
	c, err := client.Connect(testCtx(t), conn, &client.Options{
		ProtocolVersion: mcp.LatestLegacy, // the legacy path; see modern_test.go
		Observe:         w.clientSide,
		ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			asked <- p
			return answerName(ctx, p)
		},
		ElicitationDefaults: true,
	})
	if err != nil {
		t.Fatalf("Connect to the child: %v", err)
	}
	ctx := testCtx(t)
	if c.ServerInfo().Name != "fixture" || c.ProtocolVersion() != mcp.LatestLegacy {
		t.Errorf("child server %+v speaks %s", c.ServerInfo(), c.ProtocolVersion())
	}

	var names []string
	for tool, err := range c.Tools(ctx) {
		if err != nil {
			t.Fatalf("Tools: %v", err)
		}
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, fixtureTools) {
		t.Errorf("child tools %v, want %v", names, fixtureTools)
	}

	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: []byte(`{"a":40,"b":2}`)})
	if err != nil || res.IsError || string(res.StructuredContent) != `{"sum":42}` {
		t.Fatalf("add over stdio: %+v, %v", res, err)
	}

	// Elicitation: a server→client request over the pipe, inside the call.
	res, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "ask"})
	if err != nil || res.IsError {
		t.Fatalf("ask over stdio: %+v, %v", res, err)
	}
	var out askOut
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil || out.Action != "accept" || out.Content["name"] != "Ada" || out.Content["age"] != float64(30) {
		t.Errorf("ask over stdio: %s (%v)", res.StructuredContent, err)
	}
	if p := recv(t, asked, "the elicitation"); p.Message != "Your name?" {
		t.Errorf("elicitation %+v", p)
	}

	var mu sync.Mutex
	var progress []float64
	pctx := client.WithProgress(ctx, func(p *mcp.ProgressParams) {
		mu.Lock()
		progress = append(progress, p.Progress)
		mu.Unlock()
	})
	if res, err := c.CallTool(pctx, &mcp.CallToolParams{Name: "progress"}); err != nil || text(res) != "done" {
		t.Fatalf("progress over stdio: %+v, %v", res, err)
	}
	mu.Lock()
	if !slices.Equal(progress, []float64{1, 2, 3}) {
		t.Errorf("progress over stdio %v, want [1 2 3] before the result", progress)
	}
	mu.Unlock()

	if err := c.Close(); err != nil {
		t.Errorf("client Close = %v, want nil (the child exits on stdin EOF)", err)
	}
	select {
	case <-conn.Exited():
	default:
		t.Errorf("the child is still running after Close")
	}
	// Close is idempotent and reports how the child ended.
	if err := conn.Close(); err != nil {
		t.Errorf("the child did not exit cleanly on its own: %v", err)
	}
}

// TestStdioOversizedLine: a line over the child's cap is drained and
// answered with an error under the request's id (read from the line's
// first bytes); the next request is served.
func TestStdioOversizedLine(t *testing.T) {
	t.Parallel()
	const limit = 1024
	conn := startChild(t, limit)
	p := rawPeer{t, conn}
	checker := wirecheck.For(t, mcp.LatestLegacy)
	p.initialize()

	for _, size := range []int{limit + 1, 4 * limit, 200 * limit} {
		big := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"` +
			strings.Repeat("x", size) + `"}}}`
		p.send(big)
		r := p.wantError(mcp.CodeInvalidRequest, "2")
		checkErrorReply(t, checker, r)
		if !strings.Contains(r.Error.Message, "1024") {
			t.Errorf("the error %q does not state the limit", r.Error.Message)
		}
		p.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
		if r := p.read(); string(r.ID) != "3" || r.Error != nil {
			t.Fatalf("ping after a %d-byte line: %s", len(big), r.raw)
		}
	}
	// A message just under the cap still goes through.
	prefix := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"greet","arguments":{"name":"`
	suffix := `"}}}`
	name := strings.Repeat("y", limit-len(prefix)-len(suffix))
	p.send(prefix + name + suffix)
	r := p.read()
	if string(r.ID) != "4" || r.Error != nil || !strings.Contains(string(r.Result), "hello "+name) {
		t.Errorf("a %d-byte message: %.200s", limit, r.raw)
	}

	if err := conn.Close(); err != nil {
		t.Errorf("the child did not exit cleanly on stdin EOF: %v", err)
	}
}

// TestStdioChildNeedsSignal: a server that does not exit when its input
// ends is terminated, and Client.Close says so.
func TestStdioChildNeedsSignal(t *testing.T) {
	t.Parallel()
	// ExitWait is the shutdown step under test, not a synchronisation.
	conn := startChildWith(t, command.Options{ExitWait: 100 * time.Millisecond}, childStubbornEnv+"=1")
	w := newWire(t, mcp.LatestLegacy)
	c, err := client.Connect(testCtx(t), conn, &client.Options{ProtocolVersion: mcp.LatestLegacy, Observe: w.clientSide})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	err = c.Close()
	if err == nil || !strings.Contains(err.Error(), "SIGTERM") {
		t.Errorf("client Close = %v, want the transport's report that the server needed SIGTERM", err)
	}
	if err2 := c.Close(); err2 != err {
		t.Errorf("second Close = %v, want %v again", err2, err)
	}
	select {
	case <-conn.Exited():
	default:
		t.Errorf("the child is still running after Close")
	}
}
