package interop

// The reference everything server (@modelcontextprotocol/server-
// everything) driven by mcpkit's client over stdio, Streamable HTTP and
// its 2024-11-05 HTTP+SSE transport: every tool — echo, sums, annotated
// messages, images, resource links and references, structured content
// (validated against its output schema), a gzip resource, progress,
// simulated logging, resource subscriptions, roots, form and URL
// elicitation, sampling and the task-required research tool with its
// clarification — and the prompts, resources and completions.

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// everythingClient is a client with a handler for every request the
// everything server makes, recording what it was asked.
type everythingClient struct {
	*client.Client
	logs    chan *mcp.LoggingMessageParams
	updates chan string

	mu      sync.Mutex
	elicits []*mcp.ElicitParams
	samples int
	roots   int
}

func connectEverything(t *testing.T, tr transport.Conn) *everythingClient {
	t.Helper()
	ec := &everythingClient{logs: make(chan *mcp.LoggingMessageParams, 64), updates: make(chan string, 64)}
	c, err := client.Connect(testCtx(t), tr, &client.Options{
		Info: mcp.Implementation{Name: "mcpkit-interop", Version: "1"},
		ElicitHandler: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			ec.mu.Lock()
			ec.elicits = append(ec.elicits, p)
			ec.mu.Unlock()
			if p.EffectiveMode() == mcp.ElicitModeURL {
				return &mcp.ElicitResult{Action: mcp.ElicitActionAccept}, nil
			}
			if strings.Contains(string(p.RequestedSchema), "interpretation") {
				return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"interpretation": "technical"}}, nil
			}
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
		ElicitationURL:      true,
		ElicitationDefaults: true,
		CreateMessageHandler: func(_ context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			ec.mu.Lock()
			ec.samples++
			ec.mu.Unlock()
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "test-model",
				Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "sampled reply"})}, nil
		},
		ListRootsHandler: func(context.Context) (*mcp.ListRootsResult, error) {
			ec.mu.Lock()
			ec.roots++
			ec.mu.Unlock()
			return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///interop/root", Name: "interop"}}}, nil
		},
		OnLog: func(_ context.Context, p *mcp.LoggingMessageParams) {
			select {
			case ec.logs <- p:
			default:
			}
		},
		OnResourceUpdated: func(_ context.Context, uri string) {
			select {
			case ec.updates <- uri:
			default:
			}
		},
	})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	ec.Client = c
	return ec
}

// call calls a tool with JSON arguments and fails the test on an error
// or a tool error.
func (ec *everythingClient) call(t *testing.T, ctx context.Context, name, args string) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: name}
	if args != "" {
		p.Arguments = []byte(args)
	}
	res, err := ec.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %q", name, allText(res))
	}
	return res
}

func allText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
			b.WriteString("\n")
		}
	}
	return b.String()
}

func countOf[T any](res *mcp.CallToolResult) int {
	n := 0
	for _, c := range res.Content {
		if _, ok := c.(T); ok {
			n++
		}
	}
	return n
}

func wantText(t *testing.T, name string, res *mcp.CallToolResult, parts ...string) {
	t.Helper()
	text := allText(res)
	for _, p := range parts {
		if !strings.Contains(text, p) {
			t.Errorf("%s: text lacks %q:\n%s", name, p, text)
		}
	}
}

type weather struct {
	Temperature float64 `json:"temperature"`
	Conditions  string  `json:"conditions"`
	Humidity    float64 `json:"humidity"`
}

func exerciseEverything(t *testing.T, ec *everythingClient) {
	ctx := testCtx(t)

	var tools []string
	for tool, err := range ec.Tools(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tool.Name)
	}
	for _, want := range []string{"echo", "get-sum", "get-tiny-image", "trigger-elicitation-request", "trigger-sampling-request", "get-roots-list", "simulate-research-query"} {
		if !contains(tools, want) {
			t.Errorf("tools/list lacks %s (the client's capabilities decide some): %v", want, tools)
		}
	}

	wantText(t, "echo", ec.call(t, ctx, "echo", `{"message":"hi there"}`), "hi there")
	wantText(t, "get-sum", ec.call(t, ctx, "get-sum", `{"a":2,"b":40}`), "42")
	ec.call(t, ctx, "get-env", "")

	res := ec.call(t, ctx, "get-annotated-message", `{"messageType":"error","includeImage":true}`)
	if countOf[*mcp.ImageContent](res) != 1 {
		t.Errorf("get-annotated-message: no image in %+v", res.Content)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Annotations == nil {
		t.Errorf("get-annotated-message: the first block has no annotations: %+v", res.Content[0])
	}

	res = ec.call(t, ctx, "get-tiny-image", "")
	for _, c := range res.Content {
		if img, ok := c.(*mcp.ImageContent); ok && (img.MIMEType != "image/png" || len(img.Data) < 8 || string(img.Data[1:4]) != "PNG") {
			t.Errorf("get-tiny-image: %s of %d bytes", img.MIMEType, len(img.Data))
		}
	}
	if countOf[*mcp.ImageContent](res) != 1 {
		t.Errorf("get-tiny-image: %d images", countOf[*mcp.ImageContent](res))
	}

	res = ec.call(t, ctx, "get-resource-links", `{"count":3}`)
	if n := countOf[*mcp.ResourceLink](res); n != 3 {
		t.Errorf("get-resource-links: %d links, want 3", n)
	}
	for _, c := range res.Content {
		if link, ok := c.(*mcp.ResourceLink); ok {
			rr, err := ec.ReadResource(ctx, &mcp.ReadResourceParams{URI: link.URI})
			if err != nil || len(rr.Contents) == 0 {
				t.Errorf("reading the linked %s: %v", link.URI, err)
			}
			break
		}
	}
	res = ec.call(t, ctx, "get-resource-reference", `{"resourceType":"Text","resourceId":2}`)
	if countOf[*mcp.EmbeddedResource](res) != 1 {
		t.Errorf("get-resource-reference: no embedded resource in %+v", res.Content)
	}

	// Structured content, validated against the listed output schema.
	w, _, err := client.CallTool[weather](ctx, ec.Client, "get-structured-content", map[string]any{"location": "Chicago"})
	if err != nil || w.Conditions == "" {
		t.Errorf("get-structured-content: %+v, %v", w, err)
	}

	data := "data:text/plain;base64," + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("mcpkit ", 100)))
	res = ec.call(t, ctx, "gzip-file-as-resource", fmt.Sprintf(`{"name":"x.gz","data":%q,"outputType":"resource"}`, data))
	if countOf[*mcp.EmbeddedResource](res) != 1 {
		t.Errorf("gzip-file-as-resource: %+v", res.Content)
	}

	// Progress.
	var mu sync.Mutex
	var progress []float64
	pctx := client.WithProgress(ctx, func(p *mcp.ProgressParams) {
		mu.Lock()
		progress = append(progress, p.Progress)
		mu.Unlock()
	})
	res, err = ec.CallTool(pctx, &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: []byte(`{"duration":1,"steps":2}`)})
	if err != nil || res.IsError {
		t.Fatalf("trigger-long-running-operation: %v %v", res, err)
	}
	mu.Lock()
	if len(progress) != 2 {
		t.Errorf("progress %v, want 2 notifications", progress)
	}
	mu.Unlock()

	// Roots, form and URL elicitation, sampling.
	wantText(t, "get-roots-list", ec.call(t, ctx, "get-roots-list", ""), "file:///interop/root")
	wantText(t, "trigger-elicitation-request", ec.call(t, ctx, "trigger-elicitation-request", ""), "Ada")
	ec.call(t, ctx, "trigger-url-elicitation", `{"url":"https://example.com/consent"}`)
	wantText(t, "trigger-sampling-request", ec.call(t, ctx, "trigger-sampling-request", `{"prompt":"say hi","maxTokens":20}`), "sampled reply")
	ec.mu.Lock()
	modes := map[string]int{}
	for _, p := range ec.elicits {
		modes[p.EffectiveMode()]++
	}
	if modes[mcp.ElicitModeForm] < 1 || modes[mcp.ElicitModeURL] != 1 || ec.samples != 1 || ec.roots < 1 {
		t.Errorf("handlers asked: elicitation %v, sampling %d, roots %d", modes, ec.samples, ec.roots)
	}
	ec.mu.Unlock()

	// The tool that runs only as a task, with its clarification.
	var states []mcp.TaskStatus
	tctx := client.WithTaskStatus(ctx, func(task *client.Task) {
		mu.Lock()
		states = append(states, task.Status)
		mu.Unlock()
	})
	res, err = ec.CallTool(tctx, &mcp.CallToolParams{Name: "simulate-research-query", Arguments: []byte(`{"topic":"go","ambiguous":true}`)})
	if err != nil || res.IsError {
		t.Fatalf("simulate-research-query: %v %v", res, err)
	}
	wantText(t, "simulate-research-query", res, "Research Report: go", "technical")
	mu.Lock()
	if len(states) < 2 || states[len(states)-1] != mcp.TaskCompleted {
		t.Errorf("task states %v, want working … completed", states)
	}
	mu.Unlock()

	// Simulated logging: a log message arrives on its own.
	if err := ec.SetLoggingLevel(ctx, mcp.LevelDebug); err != nil {
		t.Fatal(err)
	}
	ec.call(t, ctx, "toggle-simulated-logging", "")
	select {
	case <-ec.logs:
	case <-ctx.Done():
		t.Error("no log message after toggle-simulated-logging")
	}
	ec.call(t, ctx, "toggle-simulated-logging", "")

	// Subscriptions: updates of a subscribed resource.
	var uri string
	for r, err := range ec.Resources(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		uri = r.URI
		break
	}
	if err := ec.Subscribe(ctx, uri); err != nil {
		t.Fatalf("resources/subscribe %s: %v", uri, err)
	}
	ec.call(t, ctx, "toggle-subscriber-updates", "")
	select {
	case got := <-ec.updates:
		if got != uri {
			t.Errorf("update of %s, want %s", got, uri)
		}
	case <-ctx.Done():
		t.Error("no notifications/resources/updated after toggle-subscriber-updates")
	}
	ec.call(t, ctx, "toggle-subscriber-updates", "")

	// Prompts and completion.
	pr, err := ec.GetPrompt(ctx, &mcp.GetPromptParams{Name: "args-prompt", Arguments: map[string]string{"city": "Paris"}})
	if err != nil || len(pr.Messages) == 0 {
		t.Errorf("prompts/get: %v, %v", pr, err)
	}
	cr, err := ec.Complete(ctx, &mcp.CompleteParams{Ref: mcp.CompleteReference{Type: mcp.RefPrompt, Name: "completable-prompt"},
		Argument: mcp.CompleteArgument{Name: "department", Value: "E"}})
	if err != nil || len(cr.Completion.Values) == 0 {
		t.Errorf("completion/complete: %v, %v", cr, err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestEverythingStdio(t *testing.T) {
	t.Parallel()
	ec := connectEverything(t, startStdio(t, peerCmd(t, "server-everything", "index.js", "stdio")))
	exerciseEverything(t, ec)
}

func TestEverythingStreamableHTTP(t *testing.T) {
	t.Parallel()
	base := startHTTP(t, peerCmd(t, "server-everything", "index.js", "streamableHttp"), "listening on port")
	tr := streamable.New(base+"/mcp", nil)
	ec := connectEverything(t, tr)
	if tr.Legacy() {
		t.Fatal("a Streamable HTTP server was taken for a 2024-11-05 one")
	}
	exerciseEverything(t, ec)
}

func TestEverythingHTTPSSE(t *testing.T) {
	t.Parallel()
	base := startHTTP(t, peerCmd(t, "server-everything", "index.js", "sse"), "running on port")
	tr := streamable.New(base+"/sse", nil)
	ec := connectEverything(t, tr)
	if !tr.Legacy() {
		t.Fatal("the transport did not fall back to the 2024-11-05 HTTP+SSE transport")
	}
	exerciseEverything(t, ec)
}
