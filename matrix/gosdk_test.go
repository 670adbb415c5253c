//lint:file-ignore SA1019 the matrix tries go-sdk's roots, sampling and logging, deprecated by 2026-07-28 (SEP-2577) but still part of both eras the matrix covers

package matrix

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/mcp"
)

// The go-sdk client's driver (github.com/modelcontextprotocol/go-sdk, a
// peer nobody here wrote): one client per cell with the handlers a user
// of that SDK would set, and a check for each capability it supports.
// Tasks, extensions and MCP Apps have no check: go-sdk's client offers
// no API for them, so their cells are blank in its rows.

// gosdkCell is what a go-sdk check gets.
type gosdkCell struct {
	cs   *gomcp.ClientSession
	id   string
	cell cell
	fx   *fixture
	obs  *seen
	prog progressRecorder
}

func gosdkText(res *gomcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*gomcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func (x *gosdkCell) call(ctx context.Context, name string, args any) (*gomcp.CallToolResult, error) {
	if args == nil {
		args = map[string]any{}
	}
	res, err := x.cs.CallTool(ctx, &gomcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("tools/call %s: %w", name, err)
	}
	return res, nil
}

func (x *gosdkCell) wantText(ctx context.Context, name string, args any, want string) error {
	res, err := x.call(ctx, name, args)
	if err != nil {
		return err
	}
	if res.IsError || gosdkText(res) != want {
		return fmt.Errorf("%s = %q (isError %v), want %q", name, gosdkText(res), res.IsError, want)
	}
	return nil
}

var gosdkChecks = map[string]func(ctx context.Context, x *gosdkCell) error{
	capToolTyped: func(ctx context.Context, x *gosdkCell) error {
		res, err := x.call(ctx, "add", map[string]any{"a": 2, "b": 3})
		if err != nil {
			return err
		}
		sc, ok := res.StructuredContent.(map[string]any)
		if !ok || sc["sum"] != float64(5) {
			return fmt.Errorf("add structured content %#v, want sum 5", res.StructuredContent)
		}
		return nil
	},
	capToolRaw: func(ctx context.Context, x *gosdkCell) error {
		return x.wantText(ctx, "echo_raw", map[string]int{"x": 1}, `raw {"x":1}`)
	},
	capProgress: func(ctx context.Context, x *gosdkCell) error {
		p := &gomcp.CallToolParams{Name: "progress", Arguments: map[string]any{}}
		p.SetProgressToken("p-" + x.id)
		res, err := x.cs.CallTool(ctx, p)
		if err != nil {
			return err
		}
		if gosdkText(res) != "progressed" {
			return fmt.Errorf("progress = %q", gosdkText(res))
		}
		return x.prog.exactly(ctx, 1, 2, 3)
	},
	capLogging: func(ctx context.Context, x *gosdkCell) error {
		// 2026-07-28 has no logging/setLevel: each request names its
		// level in _meta. Without a session there is no setLevel either,
		// and the server sends at its own level.
		stateless := x.cell.Era.Stateless
		p := &gomcp.CallToolParams{Name: "log", Arguments: idIn{ID: x.id}}
		switch {
		case x.cell.Era.modern():
			p.Meta = gomcp.Meta{mcp.MetaKeyLogLevel: "info"}
		case !stateless:
			if err := x.cs.SetLoggingLevel(ctx, &gomcp.SetLoggingLevelParams{Level: "info"}); err != nil {
				return fmt.Errorf("set level: %w", err)
			}
		}
		res, err := x.cs.CallTool(ctx, p)
		if err != nil {
			return err
		}
		if gosdkText(res) != "logged" {
			return fmt.Errorf("log = %q", gosdkText(res))
		}
		m, err := recv(ctx, x.obs.logs, "a log message")
		if err != nil {
			return err
		}
		if stateless && m.Level == mcp.LevelDebug {
			if m, err = recv(ctx, x.obs.logs, "the info log message"); err != nil {
				return err
			}
		}
		data, _ := m.Data.(string)
		if m.Level != mcp.LevelInfo || data != "hello "+x.id {
			return fmt.Errorf("log message %s %v, want info %q", m.Level, m.Data, "hello "+x.id)
		}
		return nil
	},
	capCancel: func(ctx context.Context, x *gosdkCell) error {
		pr := x.fx.probes.get(x.id)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := x.call(cctx, "wait", idIn{ID: x.id})
			done <- err
		}()
		if _, err := recv(ctx, pr.started, "the tool to start"); err != nil {
			return err
		}
		cancel()
		err, rerr := recv(ctx, done, "the cancelled call to return")
		if rerr != nil {
			return rerr
		}
		if err == nil {
			return errors.New("the cancelled call succeeded")
		}
		if _, err := recv(ctx, pr.ended, "the server to see the cancellation"); err != nil {
			return err
		}
		return nil
	},
	capElicitForm: func(ctx context.Context, x *gosdkCell) error {
		if err := x.wantText(ctx, "ask", nil, "hello Ada"); err != nil {
			return err
		}
		if got := x.obs.askedList(); !slices.Equal(got, []string{"Your name?"}) {
			return fmt.Errorf("the elicitation handler was asked %q, want once %q", got, "Your name?")
		}
		return nil
	},
	capElicitURL: func(ctx context.Context, x *gosdkCell) error {
		return x.wantText(ctx, "ask_url", nil, "url accept")
	},
	capSampling: func(ctx context.Context, x *gosdkCell) error {
		return x.wantText(ctx, "sample", nil, "model matrix-model")
	},
	capRoots: func(ctx context.Context, x *gosdkCell) error {
		return x.wantText(ctx, "roots", nil, "roots file:///matrix/a")
	},
	capResourceRead: func(ctx context.Context, x *gosdkCell) error {
		return gosdkResource(ctx, x.cs, "test://text", "some text")
	},
	capResourceTemplate: func(ctx context.Context, x *gosdkCell) error {
		res, err := x.cs.ListResourceTemplates(ctx, nil)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(res.ResourceTemplates, func(t *gomcp.ResourceTemplate) bool { return t.URITemplate == "test://items/{id}" }) {
			return errors.New("the templates lack test://items/{id}")
		}
		return gosdkResource(ctx, x.cs, "test://items/7", "item 7")
	},
	capSubscribe: func(ctx context.Context, x *gosdkCell) error {
		uri := "test://sub/" + x.id
		if err := x.cs.Subscribe(ctx, &gomcp.SubscribeParams{URI: uri}); err != nil {
			return fmt.Errorf("subscribe: %w", err)
		}
		if err := x.wantText(ctx, "bump", uriIn{URI: uri}, "bumped"); err != nil {
			return err
		}
		for {
			got, err := recv(ctx, x.obs.updated, "notifications/resources/updated for "+uri)
			if err != nil {
				return err
			}
			if got == uri {
				return nil
			}
		}
	},
	capPrompt: func(ctx context.Context, x *gosdkCell) error {
		res, err := x.cs.GetPrompt(ctx, &gomcp.GetPromptParams{Name: "topic", Arguments: map[string]string{"topic": "go"}})
		if err != nil {
			return err
		}
		if len(res.Messages) != 1 {
			return fmt.Errorf("prompt messages %+v", res.Messages)
		}
		if tc, ok := res.Messages[0].Content.(*gomcp.TextContent); !ok || tc.Text != "about go" {
			return fmt.Errorf("prompt content %+v, want about go", res.Messages[0].Content)
		}
		return nil
	},
	capCompletion: func(ctx context.Context, x *gosdkCell) error {
		res, err := x.cs.Complete(ctx, &gomcp.CompleteParams{
			Ref:      &gomcp.CompleteReference{Type: "ref/prompt", Name: "topic"},
			Argument: gomcp.CompleteParamsArgument{Name: "topic", Value: "py"},
		})
		if err != nil {
			return err
		}
		if want := []string{"python", "pytorch"}; !slices.Equal(res.Completion.Values, want) {
			return fmt.Errorf("completion %v, want %v", res.Completion.Values, want)
		}
		return nil
	},
	capListChanged: func(ctx context.Context, x *gosdkCell) error {
		name := "tmp_" + x.id
		if err := x.wantText(ctx, "touch", idIn{ID: x.id}, "touched"); err != nil {
			return err
		}
		for {
			if _, err := recv(ctx, x.obs.tools, "notifications/tools/list_changed"); err != nil {
				return err
			}
			for tool, err := range x.cs.Tools(ctx, nil) {
				if err != nil {
					return err
				}
				if tool.Name == name {
					return nil
				}
			}
		}
	},
	capMRTR: func(ctx context.Context, x *gosdkCell) error {
		p := &gomcp.CallToolParams{Name: "mrtr", Arguments: map[string]any{}}
		p.SetProgressToken("m-" + x.id)
		res, err := x.cs.CallTool(ctx, p)
		if err != nil {
			return err
		}
		if res.IsError || gosdkText(res) != "Ada is 36" {
			return fmt.Errorf("mrtr = %q (isError %v)", gosdkText(res), res.IsError)
		}
		if err := x.prog.exactly(ctx, 1, 2); err != nil {
			return err
		}
		if got := x.obs.askedList(); !slices.Equal(got, []string{"Your name?", "Your age?"}) {
			return fmt.Errorf("the elicitation handler was asked %q, want each question once", got)
		}
		return nil
	},
}

func gosdkResource(ctx context.Context, cs *gomcp.ClientSession, uri, want string) error {
	res, err := cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: uri})
	if err != nil {
		return err
	}
	if len(res.Contents) != 1 || res.Contents[0].Text != want {
		return fmt.Errorf("read %s = %+v, want %q", uri, res.Contents, want)
	}
	return nil
}

// runGosdk runs one cell with go-sdk's client.
func runGosdk(ctx context.Context, b *built, c cell, id string) error {
	check, ok := gosdkChecks[c.Cap]
	if !ok {
		return fmt.Errorf("no go-sdk check for %s", c.Cap)
	}
	obs := newSeen()
	prog := make(progressRecorder, 32)
	opts := &gomcp.ClientOptions{
		Capabilities: &gomcp.ClientCapabilities{
			RootsV2:     &gomcp.RootCapabilities{},
			Sampling:    &gomcp.SamplingCapabilities{},
			Elicitation: &gomcp.ElicitationCapabilities{Form: &gomcp.FormElicitationCapabilities{}, URL: &gomcp.URLElicitationCapabilities{}},
		},
		ElicitationHandler: func(ctx context.Context, req *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
			p := req.Params
			obs.ask(p.Message)
			if p.Mode == "url" {
				if p.URL != urlToAsk {
					return &gomcp.ElicitResult{Action: "decline"}, nil
				}
				return &gomcp.ElicitResult{Action: "accept"}, nil
			}
			switch p.Message {
			case "Your name?":
				return &gomcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
			case "Your age?":
				return &gomcp.ElicitResult{Action: "accept", Content: map[string]any{"age": 36}}, nil
			}
			return &gomcp.ElicitResult{Action: "decline"}, nil
		},
		CreateMessageHandler: func(ctx context.Context, req *gomcp.CreateMessageRequest) (*gomcp.CreateMessageResult, error) {
			return &gomcp.CreateMessageResult{Role: "assistant", Model: "matrix-model", Content: &gomcp.TextContent{Text: "Paris"}}, nil
		},
		LoggingMessageHandler: func(ctx context.Context, req *gomcp.LoggingMessageRequest) {
			send(obs.logs, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(req.Params.Level), Data: req.Params.Data})
		},
		ProgressNotificationHandler: func(ctx context.Context, req *gomcp.ProgressNotificationClientRequest) {
			send(prog, req.Params.Progress)
		},
		ToolListChangedHandler: func(ctx context.Context, req *gomcp.ToolListChangedRequest) { send(obs.tools, struct{}{}) },
		ResourceUpdatedHandler: func(ctx context.Context, req *gomcp.ResourceUpdatedNotificationRequest) {
			send(obs.updated, req.Params.URI)
		},
	}
	cl := gomcp.NewClient(&gomcp.Implementation{Name: "matrix-" + id, Version: "1"}, opts)
	cl.AddRoots(&gomcp.Root{URI: "file:///matrix/a", Name: "a"})
	var tr gomcp.Transport
	switch c.Carrier {
	case stdioT:
		r, w := b.ep.pipes()
		tr = &gomcp.IOTransport{Reader: r, Writer: w}
	case sse2024:
		tr = &gomcp.SSEClientTransport{Endpoint: b.ep.urls[urlKey(sse2024, false)]}
	default:
		tr = &gomcp.StreamableClientTransport{Endpoint: b.ep.urls[urlKey(c.Carrier, c.Era.Stateless)], MaxRetries: -1}
	}
	cs, err := cl.Connect(ctx, tr, &gomcp.ClientSessionOptions{ProtocolVersion: c.Era.Version})
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; got != c.Era.Version {
		return fmt.Errorf("the client speaks %s, want %s", got, c.Era.Version)
	}
	return check(ctx, &gosdkCell{cs: cs, id: id, cell: c, fx: b.fx, obs: obs, prog: prog})
}
