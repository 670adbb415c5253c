package interop

// Real upstreams of other kinds behind the gateway, each driven through
// it by mcpkit's client in both eras: the reference filesystem server
// over stdio with the gateway's roots, go-sdk's 2024-11-05 HTTP+SSE
// server reached by URL alone (the gateway's client falls back to the
// old transport), and two upstreams at once under their prefixes.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
)

// lineWatcher is a command's stderr: it signals ready once a line
// contains want.
type lineWatcher struct {
	want  string
	ready chan struct{}
	mu    sync.Mutex
	buf   bytes.Buffer
	seen  bool
}

func newLineWatcher(want string) *lineWatcher {
	return &lineWatcher{want: want, ready: make(chan struct{})}
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil { // a partial line: keep it for the next write
			w.buf.Reset()
			w.buf.WriteString(line)
			return len(p), nil
		}
		if !w.seen && strings.Contains(line, w.want) {
			w.seen = true
			close(w.ready)
		}
	}
}

func (w *lineWatcher) wait(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-w.ready:
	case <-ctx.Done():
		t.Fatalf("the upstream never wrote %q on its stderr", w.want)
	}
}

// filesystemUpstream is the reference filesystem server over stdio, given
// dir as its one root by the gateway; its stderr says when it applied it.
func filesystemUpstream(t *testing.T, name, prefix string) (gateway.Upstream, string, *lineWatcher) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello through the gateway\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := newLineWatcher("Updated allowed directories from MCP roots")
	return gateway.Upstream{
		Name:    name,
		Prefix:  prefix,
		Command: peerCmd(t, "server-filesystem", "index.js").Args,
		Roots:   []mcp.Root{{URI: "file://" + dir, Name: "work"}},
		Stderr:  w,
		// The server applies its roots asynchronously after initialize:
		// a process the gateway started for a call could answer it
		// before (docs/guide/gateway.md, Many clients, one upstream).
		// One connection: w sees the one process apply them.
		MaxConnections: 1,
	}, dir, w
}

// exerciseFilesystem lists and reads the root through the gateway, and
// is refused outside it.
func exerciseFilesystem(t *testing.T, c *client.Client, prefix, dir string) {
	t.Helper()
	ctx := testCtx(t)
	if got := callText(t, ctx, c, prefix+"_list_allowed_directories", ""); !strings.Contains(got, dir) {
		t.Errorf("%s_list_allowed_directories = %q, want the gateway's root %s", prefix, got, dir)
	}
	got := callText(t, ctx, c, prefix+"_list_directory", fmt.Sprintf(`{"path":%q}`, dir))
	if !strings.Contains(got, "[FILE] hello.txt") || !strings.Contains(got, "[DIR] sub") {
		t.Errorf("%s_list_directory = %q", prefix, got)
	}
	if got := callText(t, ctx, c, prefix+"_read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "hello.txt"))); !strings.Contains(got, "hello through the gateway") {
		t.Errorf("%s_read_text_file = %q", prefix, got)
	}
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: prefix + "_read_text_file", Arguments: []byte(`{"path":"/etc/hostname"}`)})
	if err != nil || !res.IsError {
		t.Errorf("reading outside the root: %v, %v: want a tool error", res, err)
	}
}

func TestGatewayFilesystemRoots(t *testing.T) {
	t.Parallel()
	up, dir, w := filesystemUpstream(t, "files", "fs")
	tg := startGateway(t, &gateway.Options{Upstreams: []gateway.Upstream{up}})
	tg.requireReady(t)
	// The server asks the gateway for its roots after initialization and
	// applies them on its own time.
	w.wait(t, testCtx(t))
	for _, e := range clientEras {
		t.Run(e.name, func(t *testing.T) {
			gc := connectGateway(t, tg.URL, e.version)
			names := toolNames(t, testCtx(t), gc.Client)
			if !slices.Contains(names, "fs_list_directory") || len(withPrefix(names, "fs_")) != len(names) {
				t.Errorf("tools through the gateway: %v", names)
			}
			exerciseFilesystem(t, gc.Client, "fs", dir)
		})
	}
}

// goSDKSSEServer is go-sdk's server on its 2024-11-05 HTTP+SSE handler:
// add, a tool that elicits, and one that reports progress and logs
// before it answers.
func goSDKSSEServer(t *testing.T) string {
	srv := gomcp.NewServer(&gomcp.Implementation{Name: "gosdk-sse-upstream", Version: "1"}, nil)
	gomcp.AddTool(srv, &gomcp.Tool{Name: "add", Description: "adds"}, func(_ context.Context, _ *gomcp.CallToolRequest, in addArgs) (*gomcp.CallToolResult, any, error) {
		return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: fmt.Sprint(in.X + in.Y)}}}, nil, nil
	})
	gomcp.AddTool(srv, &gomcp.Tool{Name: "ask", Description: "asks a name"}, func(ctx context.Context, req *gomcp.CallToolRequest, _ struct{}) (*gomcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &gomcp.ElicitParams{Message: "Your name?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, nil, err
		}
		return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: fmt.Sprintf("%s %v", res.Action, res.Content["name"])}}}, nil, nil
	})
	gomcp.AddTool(srv, &gomcp.Tool{Name: "work", Description: "reports progress and logs"}, func(ctx context.Context, req *gomcp.CallToolRequest, _ struct{}) (*gomcp.CallToolResult, any, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			for i := 1; i <= 3; i++ {
				if err := req.Session.NotifyProgress(ctx, &gomcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3}); err != nil {
					return nil, nil, err
				}
			}
		}
		//lint:ignore SA1019 a legacy server's log messages are what passes through the gateway here
		if err := req.Session.Log(ctx, &gomcp.LoggingMessageParams{Level: "warning", Logger: "work", Data: "working hard"}); err != nil {
			return nil, nil, err
		}
		return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "done"}}}, nil, nil
	})
	ts := httptest.NewServer(gomcp.NewSSEHandler(func(*http.Request) *gomcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestGatewayGoSDKSSEUpstream(t *testing.T) {
	t.Parallel()
	tg := startGateway(t, &gateway.Options{Upstreams: []gateway.Upstream{{Name: "gosdk", Prefix: "gs", URL: goSDKSSEServer(t)}}})
	tg.requireReady(t)
	if h := tg.Health()[0]; h.Era != client.EraLegacy.String() || h.Server != "gosdk-sse-upstream" || h.Tools != 3 {
		t.Fatalf("health of the go-sdk upstream: %+v", h)
	}
	for _, e := range clientEras {
		t.Run(e.name, func(t *testing.T) {
			gc := connectGateway(t, tg.URL, e.version)
			ctx := testCtx(t)
			if names := toolNames(t, ctx, gc.Client); fmt.Sprint(names) != "[gs_add gs_ask gs_work]" {
				t.Errorf("tools through the gateway: %v", names)
			}
			if got := callText(t, ctx, gc.Client, "gs_add", `{"x":2,"y":40}`); got != "42\n" {
				t.Errorf("gs_add = %q", got)
			}
			if got := callText(t, ctx, gc.Client, "gs_ask", ""); got != "accept Ada\n" {
				t.Errorf("gs_ask = %q, want the client's answer", got)
			}
			gc.mu.Lock()
			if len(gc.elicits) != 1 || gc.elicits[0].Message != "Your name?" {
				t.Errorf("the client was asked %+v", gc.elicits)
			}
			gc.mu.Unlock()

			if err := gc.SetLoggingLevel(ctx, mcp.LevelInfo); err != nil {
				t.Fatal(err)
			}
			var (
				pmu      sync.Mutex // the callback runs on the client's goroutine
				progress []float64
			)
			pctx := client.WithProgress(ctx, func(p *mcp.ProgressParams) {
				pmu.Lock()
				progress = append(progress, p.Progress)
				pmu.Unlock()
			})
			if got := callText(t, pctx, gc.Client, "gs_work", ""); got != "done\n" {
				t.Errorf("gs_work = %q", got)
			}
			pmu.Lock()
			got := fmt.Sprint(progress)
			pmu.Unlock()
			if got != "[1 2 3]" {
				t.Errorf("progress through the gateway %v, want [1 2 3]", got)
			}
			select {
			case p := <-gc.logs:
				if p.Level != mcp.LevelWarning || p.Logger != "work" || p.Data != "working hard" {
					t.Errorf("log message %+v", p)
				}
			case <-ctx.Done():
				t.Error("the upstream's log message during the call never reached the client")
			}
		})
	}
}

func TestGatewayTwoUpstreams(t *testing.T) {
	t.Parallel()
	fs, dir, w := filesystemUpstream(t, "files", "fs")
	tg := startGateway(t, &gateway.Options{Upstreams: []gateway.Upstream{everythingUpstream(t, "everything", "ev"), fs}})
	tg.requireReady(t)
	w.wait(t, testCtx(t))
	hs := tg.Health()
	if hs[0].Name != "everything" || hs[0].Prompts == 0 || hs[1].Name != "files" || hs[1].Prompts != 0 || hs[1].Tools == 0 {
		t.Fatalf("health: %+v", hs)
	}
	for _, e := range clientEras {
		t.Run(e.name, func(t *testing.T) {
			gc := connectGateway(t, tg.URL, e.version)
			ctx := testCtx(t)
			// The gateway offers what either upstream does: tools from
			// both, prompts and resources from the everything server.
			caps := gc.ServerCapabilities()
			if caps.Tools == nil || caps.Prompts == nil || caps.Resources == nil {
				t.Errorf("merged capabilities %+v: want tools, prompts and resources", caps)
			}
			names := toolNames(t, ctx, gc.Client)
			ev, fsn := withPrefix(names, "ev_"), withPrefix(names, "fs_")
			if len(ev) != hs[0].Tools || len(fsn) != hs[1].Tools || len(ev)+len(fsn) != len(names) {
				t.Errorf("tools: %d ev_, %d fs_ of %d; health says %d and %d: %v", len(ev), len(fsn), len(names), hs[0].Tools, hs[1].Tools, names)
			}
			for p, err := range gc.Prompts(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(p.Name, "ev_") {
					t.Errorf("prompt %s is not the everything server's", p.Name)
				}
			}
			if got := callText(t, ctx, gc.Client, "ev_echo", `{"message":"both"}`); !strings.Contains(got, "Echo: both") {
				t.Errorf("ev_echo = %q", got)
			}
			exerciseFilesystem(t, gc.Client, "fs", dir)
		})
	}
}
