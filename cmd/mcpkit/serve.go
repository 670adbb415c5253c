package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

func runServe(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcpkit serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("http", "", "serve Streamable HTTP at `ADDR` (endpoint /mcp)")
	useStdio := fs.Bool("stdio", false, "serve over stdin/stdout")
	withAuth := fs.Bool("auth", false, "require OAuth on --http, with a built-in demo authorization server")
	authCfg := authConfig{}
	fs.StringVar(&authCfg.tokens, "auth-tokens", tokensJWT, "with --auth, the access tokens: jwt (checked against the JWK Set) or opaque (checked by introspection)")
	fs.StringVar(&authCfg.dpop, "dpop", dpopOptional, "with --auth, DPoP-bound tokens (RFC 9449): off, optional or required")
	var hosts, origins listFlag
	fs.Var(&hosts, "allow-host", "accept this Host `NAME` (host or host:port; repeatable) instead of loopback names only, or any name beyond loopback")
	fs.Var(&origins, "allow-origin", "accept browser requests from this `ORIGIN` (such as https://app.example.com; repeatable)")
	var corsOrigins listFlag
	fs.Var(&corsOrigins, "cors-origin", "let web pages of this `ORIGIN` call the endpoint from a browser (CORS; * for any origin, without cookies; repeatable)")
	pos, command, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || command != nil {
		return usageErr("serve takes no arguments")
	}
	if (*addr == "") == !*useStdio {
		return usageErr("serve needs exactly one of --http ADDR and --stdio")
	}
	if *withAuth && *useStdio {
		return usageErr("--auth applies to --http only")
	}
	var protect *authConfig
	authOnly := false
	fs.Visit(func(f *flag.Flag) { authOnly = authOnly || f.Name == "auth-tokens" || f.Name == "dpop" })
	if authOnly && !*withAuth {
		return usageErr("--auth-tokens and --dpop apply to --auth only")
	}
	if *withAuth {
		if err := authCfg.check(); err != nil {
			return usageErr("%v", err)
		}
		protect = &authCfg
	}
	if *useStdio && len(hosts)+len(origins)+len(corsOrigins) > 0 {
		return usageErr("--allow-host, --allow-origin and --cors-origin apply to --http only")
	}
	cors, err := corsOptions(corsOrigins)
	if err != nil {
		return usageErr("%v", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := newDemoServer(logger)
	if err != nil {
		return err
	}
	if *useStdio {
		if err := s.Serve(ctx, stdio.New(nil)); err != nil && ctx.Err() == nil {
			return err
		}
		return nil
	}
	return serveHTTP(ctx, s, *addr, protect, &streamhttp.Options{AllowedHosts: hosts, AllowedOrigins: origins, CORS: cors, LegacySSE: true}, stderr)
}

// shutdownGrace bounds the shutdown of mcpkit serve --http after SIGINT.
const shutdownGrace = 3 * time.Second

func serveHTTP(ctx context.Context, s *server.Server, addr string, withAuth *authConfig, opts *streamhttp.Options, stderr io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &exitError{code: exitConn, err: err}
	}
	origin := "http://" + ln.Addr().String()
	if ta, ok := ln.Addr().(*net.TCPAddr); ok && ta.IP.IsUnspecified() {
		// Listening on every interface: name the loopback one (with
		// --auth, the resource clients must use).
		origin = fmt.Sprintf("http://127.0.0.1:%d", ta.Port)
	}
	if withAuth != nil {
		if err := demoAuthAddr(ln.Addr()); err != nil {
			ln.Close()
			return usageErr("%v", err)
		}
	}
	h := streamhttp.NewHandler(s, opts)
	mux := http.NewServeMux()
	if withAuth != nil {
		// The demo authorization server shares the origin; the MCP
		// endpoint takes only the tokens it issued for that endpoint.
		resource := origin + "/mcp"
		as, err := newDemoAS(origin, stderr, *withAuth)
		if err == nil {
			as.mount(mux)
			err = auth.MountProtectedResource(mux, as.metadata(resource))
		}
		var ph http.Handler
		if err == nil {
			ph, err = as.protect(resource, h)
		}
		if err != nil {
			ln.Close()
			return err
		}
		mux.Handle("/mcp", h.CORS(ph)) // preflights carry no token
		fmt.Fprintf(stderr, "mcpkit: OAuth required (%s tokens, DPoP %s); authorization server %s (approves every request)\n",
			withAuth.tokens, withAuth.dpop, origin)
	} else {
		mux.Handle("/mcp", h)
	}
	srv := newHTTPServer(mux)
	fmt.Fprintf(stderr, "mcpkit: serving MCP on %s/mcp (Ctrl-C to stop)\n", origin)
	for _, line := range append(accessLines(ln.Addr(), opts.AllowedHosts, opts.AllowedOrigins), corsLines(opts.CORS)...) {
		fmt.Fprintln(stderr, line)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		h.Close()
		return &exitError{code: exitConn, err: err}
	case <-ctx.Done():
	}
	fmt.Fprintln(stderr, "mcpkit: shutting down")
	// End the sessions first — their requests in flight are answered,
	// their long-lived streams end — then drain the connections; both
	// within shutdownGrace, so that a handler that ignores cancellation
	// does not hold the process: past it the connections are cut.
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := h.Shutdown(sctx); err != nil {
		fmt.Fprintln(stderr, "mcpkit: some handlers did not stop in time")
	}
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type addIn struct {
	A float64 `json:"a" jsonschema:"description=first addend"`
	B float64 `json:"b" jsonschema:"description=second addend"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

type researchIn struct {
	Topic string `json:"topic,omitempty" jsonschema:"what to research"`
}

type countIn struct {
	To int `json:"to,omitzero" jsonschema:"description=how far to count (default 5)"`
}

type failIn struct {
	Message string `json:"message,omitzero" jsonschema:"description=the error to report"`
}

type signupOut struct {
	Welcome string `json:"welcome"`
}

type addToolIn struct {
	Name string `json:"name,omitzero" jsonschema:"description=name of the new tool (default echoN)"`
}

type touchIn struct {
	URI string `json:"uri,omitzero" jsonschema:"description=resource to report as updated (default demo://clock)"`
}

// signupForm is the form of the signup tool (server.Ask).
type signupForm struct {
	Name  string `json:"name" jsonschema:"title=Name,default=guest,description=What should we call you?"`
	Plan  string `json:"plan,omitzero" jsonschema:"title=Plan,enum=free|pro,default=free"`
	Seats int    `json:"seats,omitzero" jsonschema:"title=Seats,minimum=1,maximum=100,default=1"`
}

var (
	styles = []string{"casual", "formal", "pirate"}
	names  = []string{"Ada", "Alan", "Barbara", "Grace", "Linus"}
)

// newDemoServer builds the server of "mcpkit serve": the same handlers
// serve both eras.
func newDemoServer(logger *slog.Logger) (*server.Server, error) {
	s := server.New(&server.Options{
		Info:         mcp.Implementation{Name: "mcpkit-demo", Version: "1.0.0"},
		Instructions: "A demo server: try the add, count, signup and add_tool tools, roll (an MCP App with the ui://mcpkit-demo/dice view), the greet prompt, the demo:// resources and the skill skill://mcpkit-demo/SKILL.md.",
		Logging:      true,
		Logger:       logger,
	})
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	add(addDemoApp(s))
	add(addDemoSkill(s))
	add(server.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers."},
		func(ctx context.Context, req *server.CallToolRequest, in addIn) (addOut, error) {
			return addOut{Sum: in.A + in.B}, nil
		}))
	add(server.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails with a tool error (isError)."},
		func(ctx context.Context, req *server.CallToolRequest, in failIn) (string, error) {
			if in.Message == "" {
				in.Message = "this tool always fails"
			}
			return "", errors.New(in.Message)
		}))
	add(server.AddTool(s, &mcp.Tool{Name: "research", Description: "Researches a topic as a task (it runs only as one), reporting progress.",
		Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}},
		func(ctx context.Context, req *server.CallToolRequest, in researchIn) (string, error) {
			if in.Topic == "" {
				in.Topic = "everything"
			}
			for i, step := range []string{"gathering", "reading", "writing"} {
				if err := req.Progress(ctx, float64(i+1), 3, step); err != nil {
					return "", err
				}
			}
			return "a report on " + in.Topic, nil
		}))
	add(server.AddTool(s, &mcp.Tool{Name: "count", Description: "Counts, reporting progress and logging each step (as a task with --task).",
		Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
		func(ctx context.Context, req *server.CallToolRequest, in countIn) (string, error) {
			if in.To <= 0 {
				in.To = 5
			}
			for i := 1; i <= in.To; i++ {
				if err := req.Progress(ctx, float64(i), float64(in.To), fmt.Sprintf("counted %d", i)); err != nil {
					return "", err
				}
				_ = req.Log(ctx, mcp.LevelInfo, "count", fmt.Sprintf("step %d of %d", i, in.To))
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-time.After(100 * time.Millisecond):
				}
			}
			return fmt.Sprintf("counted to %d", in.To), nil
		}))
	add(server.AddTool(s, &mcp.Tool{Name: "signup", Description: "Asks for a name, plan and seats (elicitation), then welcomes you."},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (signupOut, error) {
			// Written once for both eras: a modern client answers the
			// input-required result and calls again; for a legacy client
			// the server's shim asks it and runs the handler again. A
			// declined or canceled form is a tool error.
			form, err := server.Ask[signupForm](req.Request, "signup", "Sign up for the demo")
			if err != nil {
				return signupOut{}, err
			}
			return signupOut{Welcome: fmt.Sprintf("Welcome, %s (%s plan, %d seats)!", form.Name, form.Plan, form.Seats)}, nil
		}))
	add(server.AddTool(s, &mcp.Tool{Name: "docs", Description: "Asks you to open a web page (URL elicitation)."},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			res, ok, err := req.ElicitResult("docs")
			if err != nil {
				return "", err
			}
			if !ok {
				return "", server.NeedInput().Elicit("docs", &mcp.ElicitParams{
					Mode:          mcp.ElicitModeURL,
					Message:       "Read the MCP specification",
					URL:           "https://modelcontextprotocol.io/specification",
					ElicitationID: "docs-1",
				})
			}
			return "you chose to " + res.Action + " the page", nil
		}))
	add(server.AddTool(s, &mcp.Tool{Name: "summarize", Description: "Asks the client's model for a summary (sampling)."},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			res, ok, err := req.CreateMessageResult("summary")
			if err != nil {
				return "", err
			}
			if !ok {
				return "", server.NeedInput().CreateMessage("summary", &mcp.CreateMessageParams{
					Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser,
						Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "Summarize MCP in one line."})}},
					MaxTokens: 100,
				})
			}
			var text []string
			for _, b := range res.Content.Blocks {
				if t, ok := b.(*mcp.TextContent); ok {
					text = append(text, t.Text)
				}
			}
			return "the model said: " + strings.Join(text, " "), nil
		}))
	add(server.AddTool(s, &mcp.Tool{Name: "roots", Description: "Lists the client's roots."},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			res, ok, err := req.ListRootsResult("roots")
			if err != nil {
				return "", err
			}
			if !ok {
				return "", server.NeedInput().ListRoots("roots")
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return fmt.Sprintf("%d roots: %s", len(uris), strings.Join(uris, " ")), nil
		}))
	var added atomic.Int64
	add(server.AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Adds a tool that echoes its text (tools list_changed)."},
		func(ctx context.Context, req *server.CallToolRequest, in addToolIn) (string, error) {
			if in.Name == "" {
				in.Name = fmt.Sprintf("echo%d", added.Add(1))
			}
			err := server.AddTool(s, &mcp.Tool{Name: in.Name, Description: "Echoes its text (added by add_tool)."},
				func(ctx context.Context, req *server.CallToolRequest, in struct {
					Text string `json:"text"`
				}) (string, error) {
					return in.Text, nil
				})
			if err != nil {
				return "", err
			}
			return "added tool " + in.Name, nil
		}))
	add(server.AddTool(s, &mcp.Tool{Name: "touch", Description: "Reports a resource as updated (resources/updated)."},
		func(ctx context.Context, req *server.CallToolRequest, in touchIn) (string, error) {
			if in.URI == "" {
				in.URI = "demo://clock"
			}
			s.ResourceUpdated(in.URI)
			return "updated " + in.URI, nil
		}))
	add(s.AddResource(&mcp.Resource{URI: "demo://readme", Name: "readme", Description: "About this server.", MIMEType: "text/plain"},
		func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return textResource(req.Params.URI, "mcpkit speaks MCP, both eras, one endpoint."), nil
		}))
	add(s.AddResource(&mcp.Resource{URI: "demo://clock", Name: "clock", Description: "The server's time.", MIMEType: "text/plain"},
		func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return textResource(req.Params.URI, time.Now().UTC().Format(time.RFC3339)), nil
		}))
	add(s.AddResource(&mcp.Resource{URI: "demo://pixel", Name: "pixel", Description: "A one-pixel PNG (binary contents).", MIMEType: "image/png"},
		func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
				&mcp.BlobResourceContents{URI: req.Params.URI, MIMEType: "image/png", Blob: pixelPNG},
			}}, nil
		}))
	add(s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "demo://greeting/{name}", Name: "greeting", Description: "A greeting for anyone.", MIMEType: "text/plain"},
		func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return textResource(req.Params.URI, "Hello, "+req.Vars["name"]+"!"), nil
		}))
	add(s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greets someone in a style.", Arguments: []mcp.PromptArgument{
		{Name: "name", Description: "who to greet", Required: true},
		{Name: "style", Description: "casual, formal or pirate"},
	}}, func(ctx context.Context, req *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
		name, style := req.Params.Arguments["name"], req.Params.Arguments["style"]
		if style == "" {
			style = "casual"
		}
		return &mcp.GetPromptResult{Description: "a " + style + " greeting", Messages: []mcp.PromptMessage{
			{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: fmt.Sprintf("Greet %s in a %s style.", name, style)}},
		}}, nil
	}))
	s.SetCompletionHandler(func(ctx context.Context, req *server.CompleteRequest) (*mcp.CompleteResult, error) {
		var pool []string
		switch p := req.Params; {
		case p.Ref.Type == mcp.RefPrompt && p.Ref.Name == "greet" && p.Argument.Name == "style":
			pool = styles
		case p.Ref.Type == mcp.RefPrompt && p.Ref.Name == "greet" && p.Argument.Name == "name",
			p.Ref.Type == mcp.RefResource && p.Ref.URI == "demo://greeting/{name}" && p.Argument.Name == "name":
			pool = names
		}
		values := []string{}
		for _, v := range pool {
			if strings.HasPrefix(strings.ToLower(v), strings.ToLower(req.Params.Argument.Value)) {
				values = append(values, v)
			}
		}
		slices.Sort(values)
		return &mcp.CompleteResult{Completion: mcp.Completion{Values: values}}, nil
	})
	return s, errors.Join(errs...)
}

func textResource(uri, text string) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{
		&mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: text},
	}}
}

// pixelPNG is a 1x1 transparent PNG.
var pixelPNG = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
	0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
	0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
	0x42, 0x60, 0x82,
}
