package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// The fixture server: one of everything, written with the public API.

type addIn struct {
	A int `json:"a" jsonschema:"description=first addend"`
	B int `json:"b" jsonschema:"description=second addend"`
}

type addOut struct {
	Sum int `json:"sum"`
}

type greetIn struct {
	Name string `json:"name,omitzero" jsonschema:"default=world"`
}

type askOut struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// defsSchema uses 2020-12 keywords that must survive the trip (SEP-2106).
const defsSchema = `{"type":"object","$defs":{"pos":{"$anchor":"pos","type":"integer","minimum":0}},` +
	`"properties":{"n":{"$ref":"#pos"},"mode":{"type":"string"}},` +
	`"allOf":[{"required":["n"]}],"if":{"properties":{"mode":{"const":"strict"}}},"then":{"required":["mode"]},"else":{}}`

// fixture is one test's server and the channels through which its tools
// report what happened inside them. Each test builds its own, so tests run
// in parallel and with -count=N.
type fixture struct {
	srv *server.Server
	// waitStarted receives once each time the "wait" tool starts.
	waitStarted chan struct{}
	// waitEnded receives the cause of the end of the "wait" tool's context.
	waitEnded chan error
	// captured receives the Request of each call of the "capture" tool,
	// which the test then uses after the handler has returned.
	captured chan *server.CallToolRequest
}

// notify sends v on ch without blocking: the channels are buffered for
// what a test expects, and a tool must never hang on a test's absence.
func notify[T any](ch chan T, v T) {
	select {
	case ch <- v:
	default:
	}
}

type logIn struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

// newFixture builds the fixture server. opts may set what a test needs to
// observe or bound (Limits, MaxInFlight, Observe); the rest is fixed.
func newFixture(opts *server.Options) *fixture {
	f := &fixture{
		waitStarted: make(chan struct{}, 8),
		waitEnded:   make(chan error, 8),
		captured:    make(chan *server.CallToolRequest, 8),
	}
	o := server.Options{
		Info:         mcp.Implementation{Name: "fixture", Version: "1.0.0"},
		Instructions: "Use the tools.",
		Logging:      true,
		PageSize:     2,
	}
	if opts != nil {
		o.Limits, o.MaxInFlight, o.Observe = opts.Limits, opts.MaxInFlight, opts.Observe
	}
	s := server.New(&o)
	f.srv = s
	server.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two integers."},
		func(ctx context.Context, req *server.CallToolRequest, in addIn) (addOut, error) {
			return addOut{Sum: in.A + in.B}, nil
		})
	server.AddTool(s, &mcp.Tool{Name: "greet"},
		func(ctx context.Context, req *server.CallToolRequest, in greetIn) (string, error) {
			return "hello " + in.Name, nil
		})
	server.AddTool(s, &mcp.Tool{Name: "fail"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			return "", errors.New("the tool failed on purpose")
		})
	server.AddTool(s, &mcp.Tool{Name: "protocol_error"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			return "", jsonrpc.NewError(-32099, "custom protocol error")
		})
	server.AddTool(s, &mcp.Tool{Name: "panic"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			panic("boom")
		})
	s.AddRawTool(&mcp.Tool{Name: "defs", InputSchema: jsontext.Value(defsSchema)},
		func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	server.AddTool(s, &mcp.Tool{Name: "progress"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			for i := 1; i <= 3; i++ {
				if err := req.Progress(ctx, float64(i), 3, fmt.Sprintf("step %d", i)); err != nil {
					return "", err
				}
			}
			if err := req.Log(ctx, mcp.LevelInfo, "fixture", map[string]any{"msg": "done"}); err != nil {
				return "", err
			}
			if err := req.Log(ctx, mcp.LevelDebug, "fixture", "debug detail"); err != nil {
				return "", err
			}
			return "done", nil
		})
	server.AddTool(s, &mcp.Tool{Name: "ask"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (askOut, error) {
			res, err := req.Elicit(ctx, &mcp.ElicitParams{
				Message:         "Your name?",
				RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","default":30}},"required":["name"]}`),
			})
			if err != nil {
				return askOut{}, err
			}
			return askOut{Action: res.Action, Content: res.Content}, nil
		})
	server.AddTool(s, &mcp.Tool{Name: "ask_url"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			res, err := req.Elicit(ctx, &mcp.ElicitParams{Mode: mcp.ElicitModeURL, Message: "Sign in", URL: "https://example.com/connect"})
			if err != nil {
				return "", err
			}
			return res.Action, nil
		})
	server.AddTool(s, &mcp.Tool{Name: "sample"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			res, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{
				Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "capital of France?"})}},
				MaxTokens: 50,
			})
			if ce, ok := errors.AsType[*server.ClientError](err); ok {
				// Say exactly what reached the server, so the test can tell
				// a *server.ClientError from any other failure.
				return "", fmt.Errorf("ClientError method=%s code=%d message=%q", ce.Method, ce.Code, ce.Message)
			}
			if err != nil {
				return "", err
			}
			return res.Model, nil
		})
	server.AddTool(s, &mcp.Tool{Name: "roots"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			res, err := req.ListRoots(ctx)
			if err != nil {
				return "", err
			}
			uris := make([]string, len(res.Roots))
			for i, r := range res.Roots {
				uris[i] = r.URI
			}
			return strings.Join(uris, ","), nil
		})
	server.AddTool(s, &mcp.Tool{Name: "wait"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			notify(f.waitStarted, struct{}{})
			<-ctx.Done()
			notify(f.waitEnded, context.Cause(ctx))
			return "", ctx.Err()
		})
	server.AddTool(s, &mcp.Tool{Name: "capture"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			notify(f.captured, req)
			return "captured", nil
		})
	server.AddTool(s, &mcp.Tool{Name: "log"},
		func(ctx context.Context, req *server.CallToolRequest, in logIn) (string, error) {
			if err := req.Log(ctx, mcp.LoggingLevel(in.Level), "fixture", in.Message); err != nil {
				return "", err
			}
			return "logged", nil
		})

	s.AddPrompt(&mcp.Prompt{Name: "plain", Description: "No arguments."},
		func(ctx context.Context, req *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "hi"}}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "with_args", Arguments: []mcp.PromptArgument{{Name: "topic", Required: true}, {Name: "tone"}}},
		func(ctx context.Context, req *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
			text := "about " + req.Params.Arguments["topic"]
			return &mcp.GetPromptResult{Description: "args", Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: text}}}}, nil
		})

	s.AddPrompt(&mcp.Prompt{Name: "summary", Description: "A third prompt, so that prompts/list has two pages."},
		func(ctx context.Context, req *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleAssistant, Content: &mcp.TextContent{Text: "summary"}}}}, nil
		})

	s.AddResource(&mcp.Resource{URI: "test://text", Name: "text", MIMEType: "text/plain"},
		func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "some text"}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://blob", Name: "blob", MIMEType: "application/octet-stream"},
		func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.BlobResourceContents{URI: req.Params.URI, Blob: []byte{0, 1, 2, 255}}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://gone", Name: "gone"},
		func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return nil, mcp.ErrResourceNotFound
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item"},
		func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: "item " + req.Vars["id"]}}}, nil
		})
	s.SetCompletionHandler(func(ctx context.Context, req *server.CompleteRequest) (*mcp.CompleteResult, error) {
		var out []string
		for _, v := range []string{"python", "pytorch", "go", "rust"} {
			if strings.HasPrefix(v, req.Params.Argument.Value) {
				out = append(out, v)
			}
		}
		return &mcp.CompleteResult{Completion: mcp.Completion{Values: out}}, nil
	})
	return f
}
