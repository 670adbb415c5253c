package gateway

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/apps"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
)

func TestResourceUpdatesPassThrough(t *testing.T) {
	eraPairs(t, func(t *testing.T, up, down client.Era) {
		s := upstreamServer(t, "r")
		mu := newMemUpstream(t, s)
		g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "r", Prefix: "r", Connect: mu.connect, ProtocolVersion: version(up), HealthInterval: -1}}})
		<-mu.connected
		updates := make(chan string, 16)
		p := mcptest.NewPair(t, g.Server(), &mcptest.Options{Era: down, Client: &client.Options{
			OnResourceUpdated: func(_ context.Context, uri string) {
				select { // the loop below may cause more than it reads: never block the client
				case updates <- uri:
				default:
				}
			},
		}})
		const uri = "r+file:///a.txt"
		if down == client.EraModern {
			sub, err := p.Client.Listen(p.Context(), mcp.SubscriptionFilter{ResourceSubscriptions: []string{uri}})
			must(t, err)
			t.Cleanup(func() { sub.Close() })
		} else {
			must(t, p.Client.Subscribe(p.Context(), uri))
		}
		// The gateway answers once its upstream subscription is in place
		// (TestSubscribeWaitsForUpstream holds that to one update); this
		// test repeats the update until one arrives (each is an event,
		// not a wait on time).
		ctx := p.Context()
		for {
			s.ResourceUpdated("file:///a.txt")
			select {
			case got := <-updates:
				if got != uri {
					t.Fatalf("update for %q", got)
				}
				return
			default:
			}
			// Wait for the upstream to have the subscription: a round trip
			// through the gateway orders it after the subscribe.
			if _, err := p.Client.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil {
				t.Fatal(err)
			}
			if ctx.Err() != nil {
				t.Fatal("no update")
			}
			if h := g.Health()[0]; h.Connects != 1 {
				t.Fatalf("the upstream reconnected: %+v", h)
			}
		}
	})
}

func TestCompletionRoutes(t *testing.T) {
	s := upstreamServer(t, "c")
	s.SetCompletionHandler(func(ctx context.Context, req *server.CompleteRequest) (*mcp.CompleteResult, error) {
		return &mcp.CompleteResult{Completion: mcp.Completion{Values: []string{req.Params.Ref.Type + ":" + req.Params.Ref.Name + req.Params.Ref.URI + ":" + req.Params.Argument.Value}}}, nil
	})
	must(t, s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "file:///{name}", Name: "files"}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: "file " + req.Vars["name"]}}}, nil
	}))
	plain := newMemUpstream(t, upstreamServer(t, "n"))
	mu := newMemUpstream(t, s)
	for _, up := range mcptest.Eras() {
		t.Run(up.String(), func(t *testing.T) {
			g := newGateway(t, &Options{Upstreams: []Upstream{
				{Name: "c", Prefix: "c", Connect: mu.connect, ProtocolVersion: version(up), HealthInterval: -1},
				{Name: "n", Prefix: "n", Connect: plain.connect, ProtocolVersion: version(up), HealthInterval: -1},
			}})
			if g.Server().Capabilities().Completions == nil {
				t.Fatal("completions not declared")
			}
			p := mcptest.NewPair(t, g.Server(), nil)
			res, err := p.Client.Complete(p.Context(), &mcp.CompleteParams{Ref: mcp.CompleteReference{Type: mcp.RefPrompt, Name: "c_hello"}, Argument: mcp.CompleteArgument{Name: "who", Value: "A"}})
			must(t, err)
			if v := res.Completion.Values; len(v) != 1 || v[0] != "ref/prompt:hello:A" {
				t.Fatalf("prompt completion = %v", v)
			}
			res, err = p.Client.Complete(p.Context(), &mcp.CompleteParams{Ref: mcp.CompleteReference{Type: mcp.RefResource, URI: "c+file:///{name}"}, Argument: mcp.CompleteArgument{Name: "name", Value: "x"}})
			must(t, err)
			if v := res.Completion.Values; len(v) != 1 || v[0] != "ref/resource:file:///{name}:x" {
				t.Fatalf("template completion = %v", v)
			}
			// An upstream without completion answers nothing.
			res, err = p.Client.Complete(p.Context(), &mcp.CompleteParams{Ref: mcp.CompleteReference{Type: mcp.RefPrompt, Name: "n_hello"}, Argument: mcp.CompleteArgument{Name: "who", Value: "A"}})
			must(t, err)
			if len(res.Completion.Values) != 0 {
				t.Fatalf("plain completion = %v", res.Completion.Values)
			}
			rr, err := p.Client.ReadResource(p.Context(), &mcp.ReadResourceParams{URI: "c+file:///zed"})
			must(t, err)
			if c := rr.Contents[0].(*mcp.TextResourceContents); c.Text != "file zed" || c.URI != "c+file:///zed" {
				t.Fatalf("template read = %+v", c)
			}
		})
	}
}

// An MCP Apps view passes through with its ui:// scheme, the prefix as its
// first segment, and the tool's link to it rewritten.
func TestAppsViewPassesThrough(t *testing.T) {
	for _, up := range mcptest.Eras() {
		t.Run(up.String(), func(t *testing.T) {
			s := server.New(nil)
			must(t, apps.Enable(s))
			must(t, apps.AddResource(s, &apps.Resource{URI: "ui://board/main.html", Name: "board", HTML: "<!doctype html><title>b</title>"}))
			tool := &mcp.Tool{Name: "show"}
			must(t, apps.Link(tool, "ui://board/main.html"))
			must(t, s.AddRawTool(tool, func(context.Context, *server.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			}))
			mu := newMemUpstream(t, s)
			g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "a", Prefix: "app", Connect: mu.connect, ProtocolVersion: version(up), HealthInterval: -1}}})
			co := &client.Options{}
			apps.Declare(co)
			p := mcptest.NewPair(t, g.Server(), &mcptest.Options{Client: co})
			if _, err := p.Client.Discover(p.Context()); err != nil {
				t.Fatal(err)
			}
			if !apps.Supported(p.Client) {
				t.Fatal("the gateway does not advertise MCP Apps")
			}
			var show *mcp.Tool
			for tl, err := range p.Client.Tools(p.Context()) {
				must(t, err)
				if tl.Name == "app_show" {
					show = &tl
				}
			}
			if show == nil {
				t.Fatal("no app_show")
			}
			ui, err := apps.FetchUI(p.Context(), p.Client, show)
			must(t, err)
			if ui.URI != "ui://app/board/main.html" || !strings.Contains(ui.HTML, "<title>b</title>") {
				t.Fatalf("view = %s %q", ui.URI, ui.HTML)
			}
		})
	}
}

// The upstream judges the calling client's capabilities, not the
// gateway's: a tool that needs sampling refuses a client without it
// (-32021 on the 2026 wire), and an input request the client cannot
// answer is refused before it is asked.
func TestClientCapabilitiesReachTheUpstream(t *testing.T) {
	s := server.New(nil)
	must(t, s.AddRawTool(&mcp.Tool{Name: "needs_sampling"}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := req.Require(mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "sampled"}}}, nil
	}))
	must(t, s.AddRawTool(&mcp.Tool{Name: "asks_sampling"}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, server.NeedInput().CreateMessage("s", &mcp.CreateMessageParams{MaxTokens: 5, Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "hi"})}}})
	}))
	for _, up := range mcptest.Eras() {
		t.Run(up.String(), func(t *testing.T) {
			mu := newMemUpstream(t, s)
			g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "u", Connect: mu.connect, ProtocolVersion: version(up), HealthInterval: -1}}})
			p := mcptest.NewPair(t, g.Server(), nil) // declares nothing
			_, err := p.Client.CallTool(p.Context(), &mcp.CallToolParams{Name: "asks_sampling"})
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != mcp.CodeMissingRequiredClientCapability {
				t.Fatalf("asks_sampling: %v", err)
			}
			if up == client.EraModern {
				_, err = p.Client.CallTool(p.Context(), &mcp.CallToolParams{Name: "needs_sampling"})
				if !errors.As(err, &je) || je.Code != mcp.CodeMissingRequiredClientCapability {
					t.Fatalf("needs_sampling: %v", err)
				}
			}
		})
	}
}

// A 2026 upstream's tool that gathers input, then continues as a task:
// through the gateway, the input rounds are relayed and the gateway's own
// task is made at the round the upstream made its own, and ends with it.
func TestTaskEscalationPassesThrough(t *testing.T) {
	s := server.New(nil)
	release := make(chan struct{})
	must(t, server.AddTool(s, &mcp.Tool{Name: "job", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (*mcp.CallToolResult, error) {
			f, err := server.Ask[nameForm](req.Request, "who", "For whom?")
			if err != nil {
				return nil, err
			}
			return nil, server.ContinueAsTask(func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "job for " + f.Name}}}, nil
			})
		}, server.TaskOnDemand()))
	mu := newMemUpstream(t, s)
	g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "u", Connect: mu.connect, ProtocolVersion: mcp.Version20260728, HealthInterval: -1}}})
	script := (&mcptest.Script{}).Elicit(mcptest.Accept(map[string]any{"name": "Eve"}))
	p := mcptest.NewPair(t, g.Server(), &mcptest.Options{Script: script})
	task, err := p.Client.StartToolTask(p.Context(), &mcp.CallToolParams{Name: "job"})
	must(t, err)
	if task.ID == "" || task.Status != mcp.TaskWorking {
		t.Fatalf("task = %+v", task)
	}
	if len(script.ElicitRequests()) != 1 {
		t.Fatalf("elicitations = %d", len(script.ElicitRequests()))
	}
	close(release)
	res, err := p.Client.TaskResult(p.Context(), task.ID)
	must(t, err)
	if txt := res.Content[0].(*mcp.TextContent).Text; txt != "job for Eve" {
		t.Fatalf("result = %q", txt)
	}
}
