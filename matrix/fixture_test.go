package matrix

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/ext/apps"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// The fixture server holds every capability the matrix tries, written with
// the public API in the style a user would (typed tools, the multi
// round-trip style that serves both eras). One fixture serves every cell
// of a topology at once: the cells run in parallel, so what a tool reports
// to the test (the server seeing a cancellation) is keyed by the cell's id,
// passed as an argument.

const (
	viewURI  = "ui://matrix/view"
	viewHTML = `<!doctype html><html><body><p id="matrix">matrix view</p></body></html>`
	urlToAsk = "https://example.com/connect"
	extID    = "com.example/matrix"
	extEcho  = "com.example/echo"
)

type addIn struct {
	A int `json:"a" jsonschema:"description=first addend"`
	B int `json:"b" jsonschema:"description=second addend"`
}

type addOut struct {
	Sum int `json:"sum"`
}

type idIn struct {
	ID string `json:"id"`
}

type uriIn struct {
	URI string `json:"uri"`
}

type nameForm struct {
	Name string `json:"name"`
}

type ageForm struct {
	Age int `json:"age"`
}

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Echo string `json:"echo"`
}

// probes are what the "wait" tool reports of each cell's call: that it
// started, and the cause that ended its context.
type probes struct {
	mu sync.Mutex
	m  map[string]*probe
}

type probe struct {
	started chan int // the instance the tool runs on
	ended   chan error
}

func (p *probes) get(id string) *probe {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]*probe{}
	}
	pr, ok := p.m[id]
	if !ok {
		pr = &probe{started: make(chan int, 4), ended: make(chan error, 4)}
		p.m[id] = pr
	}
	return pr
}

// send delivers v without blocking: a tool never hangs on a test's absence.
func send[T any](ch chan T, v T) {
	select {
	case ch <- v:
	default:
	}
}

// fixture is one server of every capability and the probes of its cells.
// Instances of a cluster share their probes and their group: what a cell
// changes (the tools list) it changes on every instance, as a deployment
// would.
type fixture struct {
	srv      *server.Server
	probes   *probes
	instance int
	group    *group
}

// group is the servers of one deployment (one, or a cluster's instances).
type group struct {
	mu   sync.Mutex
	srvs []*server.Server
}

func (g *group) add(s *server.Server) {
	g.mu.Lock()
	g.srvs = append(g.srvs, s)
	g.mu.Unlock()
}

func (g *group) all() []*server.Server {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.srvs)
}

// newFixture builds the fixture; subs name the cells that subscribe to a
// resource: each gets a listed resource of its own, test://sub/<id> (the
// gateway subscribes upstream only to resources it lists).
func newFixture(subs []string) (*fixture, error) {
	return newInstance(subs, &probes{}, &group{}, 0, nil)
}

// newInstance builds one instance of the fixture with the server options
// opts (a cluster's shared stores), sharing probes and group.
func newInstance(subs []string, pr *probes, g *group, instance int, opts *server.Options) (*fixture, error) {
	f := &fixture{probes: pr, instance: instance, group: g}
	o := server.Options{}
	if opts != nil {
		o = *opts
	}
	o.Info = mcp.Implementation{Name: "matrix-fixture", Version: "1.0.0"}
	o.Logging = true
	s := server.New(&o)
	f.srv = s
	g.add(s)
	var errs []error
	add := func(err error) { errs = append(errs, err) }

	add(server.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two integers."},
		func(ctx context.Context, req *server.CallToolRequest, in addIn) (addOut, error) {
			return addOut{Sum: in.A + in.B}, nil
		}))
	add(s.AddRawTool(&mcp.Tool{Name: "echo_raw", InputSchema: jsontext.Value(`{"type":"object"}`)},
		func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "raw " + string(req.Params.Arguments)}}}, nil
		}))
	add(server.AddTool(s, &mcp.Tool{Name: "progress"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			for i := 1; i <= 3; i++ {
				if err := req.Progress(ctx, float64(i), 3, fmt.Sprintf("step %d", i)); err != nil {
					return "", err
				}
			}
			return "progressed", nil
		}))
	add(server.AddTool(s, &mcp.Tool{Name: "log"},
		func(ctx context.Context, req *server.CallToolRequest, in idIn) (string, error) {
			if err := req.Log(ctx, mcp.LevelInfo, "matrix", "hello "+in.ID); err != nil {
				return "", err
			}
			if err := req.Log(ctx, mcp.LevelDebug, "matrix", "below the level "+in.ID); err != nil {
				return "", err
			}
			return "logged", nil
		}))
	add(server.AddTool(s, &mcp.Tool{Name: "wait"},
		func(ctx context.Context, req *server.CallToolRequest, in idIn) (string, error) {
			p := f.probes.get(in.ID)
			send(p.started, f.instance)
			<-ctx.Done()
			send(p.ended, context.Cause(ctx))
			return "", ctx.Err()
		}))
	add(server.AddTool(s, &mcp.Tool{Name: "ask"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			ans, err := server.Ask[nameForm](req.Request, "name", "Your name?")
			if err != nil {
				return "", err
			}
			return "hello " + ans.Name, nil
		}))
	add(server.AddTool(s, &mcp.Tool{Name: "ask_url"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			ans, ok, err := req.ElicitResult("connect")
			if err != nil {
				return "", err
			}
			if !ok {
				return "", server.NeedInput().Elicit("connect", &mcp.ElicitParams{
					Mode: mcp.ElicitModeURL, Message: "Sign in", URL: urlToAsk, ElicitationID: "matrix-connect"})
			}
			return "url " + ans.Action, nil
		}))
	add(server.AddTool(s, &mcp.Tool{Name: "sample"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			res, ok, err := req.CreateMessageResult("capital")
			if err != nil {
				return "", err
			}
			if !ok {
				return "", server.NeedInput().CreateMessage("capital", &mcp.CreateMessageParams{
					Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "capital of France?"})}},
					MaxTokens: 50,
				})
			}
			return "model " + res.Model, nil
		}))
	add(server.AddTool(s, &mcp.Tool{Name: "roots"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			res, ok, err := req.ListRootsResult("roots")
			if err != nil {
				return "", err
			}
			if !ok {
				return "", server.NeedInput().ListRoots("roots")
			}
			uris := make([]string, len(res.Roots))
			for i, r := range res.Roots {
				uris[i] = r.URI
			}
			return "roots " + strings.Join(uris, ","), nil
		}))
	// mrtr asks twice and reports progress between the rounds.
	add(server.AddTool(s, &mcp.Tool{Name: "mrtr"},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			name, err := server.Ask[nameForm](req.Request, "name", "Your name?")
			if err != nil {
				return "", err
			}
			if err := req.Progress(ctx, 1, 2, "named"); err != nil {
				return "", err
			}
			age, err := server.Ask[ageForm](req.Request, "age", "Your age?")
			if err != nil {
				return "", err
			}
			if err := req.Progress(ctx, 2, 2, "aged"); err != nil {
				return "", err
			}
			return fmt.Sprintf("%s is %d", name.Name, age.Age), nil
		}))
	// job asks for a confirmation in the request, then runs as a task that
	// reports progress.
	add(server.AddTool(s, &mcp.Tool{Name: "job", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (*mcp.CallToolResult, error) {
			ans, ok, err := req.ElicitResult("confirm")
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, server.NeedInput().Elicit("confirm", &mcp.ElicitParams{Message: "Run the job?",
					RequestedSchema: jsontext.Value(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)})
			}
			confirmed := ans.Action == mcp.ElicitActionAccept && ans.Content["confirm"] == true
			return nil, server.ContinueAsTask(func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
				for i := 1; i <= 2; i++ {
					if err := req.Progress(ctx, float64(i), 2, "working"); err != nil {
						return nil, err
					}
				}
				return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: fmt.Sprintf("job done, confirmed %v", confirmed)}}}, nil
			})
		}, server.TaskOnDemand()))
	// touch adds a tool named after the cell: the tools list changes.
	add(server.AddTool(s, &mcp.Tool{Name: "touch"},
		func(ctx context.Context, req *server.CallToolRequest, in idIn) (string, error) {
			for _, srv := range f.group.all() {
				err := server.AddTool(srv, &mcp.Tool{Name: "tmp_" + in.ID},
					func(context.Context, *server.CallToolRequest, struct{}) (string, error) { return "tmp", nil })
				if err != nil {
					return "", err
				}
			}
			return "touched", nil
		}))
	// bump announces that a resource changed.
	add(server.AddTool(s, &mcp.Tool{Name: "bump"},
		func(ctx context.Context, req *server.CallToolRequest, in uriIn) (string, error) {
			s.ResourceUpdated(in.URI)
			return "bumped", nil
		}))

	add(s.AddPrompt(&mcp.Prompt{Name: "topic", Arguments: []mcp.PromptArgument{{Name: "topic", Required: true}}},
		func(ctx context.Context, req *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser,
				Content: &mcp.TextContent{Text: "about " + req.Params.Arguments["topic"]}}}}, nil
		}))
	add(s.AddResource(&mcp.Resource{URI: "test://text", Name: "text", MIMEType: "text/plain"},
		func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "some text"}}}, nil
		}))
	for _, id := range subs {
		add(s.AddResource(&mcp.Resource{URI: "test://sub/" + id, Name: "sub " + id},
			func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: "sub"}}}, nil
			}))
	}
	add(s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item"},
		func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: "item " + req.Vars["id"]}}}, nil
		}))
	s.SetCompletionHandler(func(ctx context.Context, req *server.CompleteRequest) (*mcp.CompleteResult, error) {
		var out []string
		for _, v := range []string{"python", "pytorch", "go", "rust"} {
			if strings.HasPrefix(v, req.Params.Argument.Value) {
				out = append(out, v)
			}
		}
		return &mcp.CompleteResult{Completion: mcp.Completion{Values: out}}, nil
	})

	add(s.AddExtension(extID, map[string]any{}))
	add(server.AddMethod(s, extEcho, func(ctx context.Context, req *server.Request, in echoIn) (echoOut, error) {
		return echoOut{Echo: "echo " + in.Text}, nil
	}))

	add(apps.AddResource(s, &apps.Resource{URI: viewURI, Name: "matrix view", HTML: viewHTML,
		Meta: apps.ResourceMeta{CSP: &apps.CSP{ResourceDomains: []string{"https://cdn.example.com"}}}}))
	viewTool := &mcp.Tool{Name: "viewed"}
	add(apps.Link(viewTool, viewURI))
	add(server.AddTool(s, viewTool, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
		if apps.ClientSupports(req.Request) {
			return "data for the view", nil
		}
		return "text without a view", nil
	}))
	return f, errors.Join(errs...)
}
