// Package servers builds the four servers compared by the benchmark: the
// same typed "echo" tool (input {"text":string}, output {"text":string})
// over Streamable HTTP, on mcpkit, the official go-sdk, mark3labs/mcp-go,
// and a raw net/http handler with no SDK (the ceiling).
//
// Every server exposes these endpoints:
//
//   - /mcp: the session-less configuration, serving 2026-07-28 ("modern")
//     requests and session-less 2025-11-25 ("legacy") requests (W1, W2);
//   - /mcp-session: the sessionful configuration, where a legacy client
//     sends initialize and then calls on its Mcp-Session-Id (W3, W4, W9);
//   - /mcp-nested: session-less, the validated nested input of W5
//     (nested.go);
//   - /mcp-tools, /mcp-sse and /mcp-mrtr: W7, W6p and W8;
//   - /mcp-soak (mcpkit only): the soak command's server (soak.go).
//
// All answer with JSON bodies (no SSE) and log nothing.
package servers

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpkit/mcpkit/server/streamhttp"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// EchoIn is the echo tool's input.
type EchoIn struct {
	Text string `json:"text"`
}

// EchoOut is the echo tool's output.
type EchoOut struct {
	Text string `json:"text"`
}

// Blob is the W6 tool: its text repeated to 64 KB (workload.BlobText
// for the benchmark's input).
func Blob(in EchoIn) EchoOut {
	if in.Text == "" {
		return EchoOut{}
	}
	return EchoOut{Text: strings.Repeat(in.Text, 65536/len(in.Text))}
}

// Names lists the servers New knows, in the benchmark's default order.
var Names = []string{"mcpkit", "gosdk", "mcpgo", "raw"}

// Paths of the two endpoints.
const (
	PathStateless = "/mcp"
	PathSession   = "/mcp-session"
	PathList      = "/mcp-tools"
	PathSSE       = "/mcp-sse"
	PathMRTR      = "/mcp-mrtr"
)

// Progresses is how many notifications/progress the W6p "progress" tool
// sends before its result; the /mcp-sse endpoint is session-less and may
// answer with an event stream.
const Progresses = 10

// W7: the /mcp-tools endpoint is a session-less server with ListTools
// typed tools (echo's schemas), ListPageSize to a page.
const (
	ListTools    = 200
	ListPageSize = 50
)

func toolName(i int) string { return fmt.Sprintf("tool%03d", i) }

// New returns the named server's handler (both endpoints) and a function
// releasing it.
func New(name string) (http.Handler, func(), error) {
	mux := http.NewServeMux()
	closeFn := func() {}
	switch name {
	case "mcpkit":
		sl, ss := MCPKit()
		mux.Handle(PathStateless, sl)
		mux.Handle(PathSession, ss)
		lh := MCPKitList()
		mux.Handle(PathList, lh)
		sh := MCPKitSSE()
		mux.Handle(PathSSE, sh)
		mh := MCPKitMRTR()
		mux.Handle(PathMRTR, mh)
		nh := MCPKitNested()
		mux.Handle(PathNested, nh)
		kh := MCPKitSoak()
		mux.Handle(PathSoak, kh)
		closeFn = func() {
			sl.Close()
			ss.Close()
			lh.Close()
			sh.Close()
			mh.Close()
			nh.Close()
			kh.Close()
		}
	case "gosdk":
		sl, ss := GoSDK()
		mux.Handle(PathStateless, sl)
		mux.Handle(PathSession, ss)
		mux.Handle(PathList, GoSDKList())
		mux.Handle(PathSSE, GoSDKSSE())
		mux.Handle(PathNested, GoSDKNested())
	case "mcpgo":
		sl, ss := MCPGo()
		mux.Handle(PathStateless, sl)
		mux.Handle(PathSession, ss)
		mux.Handle(PathList, MCPGoList())
		mux.Handle(PathSSE, MCPGoSSE())
		mux.Handle(PathNested, MCPGoNested())
	case "mcpkit-noop", "mcpkit-otel":
		sl, ss, release, err := variant(name)
		if err != nil {
			return nil, nil, err
		}
		mux.Handle(PathStateless, sl)
		mux.Handle(PathSession, ss)
		closeFn = func() {
			sl.Close()
			ss.Close()
			release()
		}
	case "raw":
		mux.Handle(PathStateless, Raw())
		mux.Handle(PathNested, RawNested())
	case "clientraw": // the client benchmarks' server (W1c…W8c)
		mux.Handle("/", ClientServer())
	default:
		return nil, nil, fmt.Errorf("unknown server %q (want one of %v or %v)", name, Names, Variants)
	}
	return mux, closeFn, nil
}

// MCPKit returns mcpkit's session-less handler (one endpoint, both eras)
// and its default, sessionful handler.
func MCPKit() (stateless, session *streamhttp.Handler) { return MCPKitWith() }

// MCPKitWith is MCPKit with interceptors (Variants).
func MCPKitWith(ics ...intercept.Interceptor) (stateless, session *streamhttp.Handler) {
	build := func() *server.Server {
		s := server.New(&server.Options{Info: mcp.Implementation{Name: "bench-mcpkit", Version: "1.0.0"}, Interceptors: ics})
		server.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text"},
			func(ctx context.Context, req *server.CallToolRequest, in EchoIn) (EchoOut, error) {
				return EchoOut(in), nil
			})
		server.AddTool(s, &mcp.Tool{Name: "blob", Description: "Returns its text repeated to 64 KB"},
			func(ctx context.Context, req *server.CallToolRequest, in EchoIn) (EchoOut, error) {
				return Blob(in), nil
			})
		return s
	}
	return streamhttp.NewHandler(build(), &streamhttp.Options{Stateless: true}),
		streamhttp.NewHandler(build(), nil)
}

// GoSDK returns go-sdk v1.8.0's stateless handler (the only one that
// accepts 2026-07-28 requests) and its sessionful one, both answering
// with JSON.
func GoSDK() (stateless, session http.Handler) {
	s := gosdk.NewServer(&gosdk.Implementation{Name: "bench-gosdk", Version: "1.0.0"}, nil)
	gosdk.AddTool(s, &gosdk.Tool{Name: "echo", Description: "Echoes its text"},
		func(ctx context.Context, req *gosdk.CallToolRequest, in EchoIn) (*gosdk.CallToolResult, EchoOut, error) {
			return nil, EchoOut(in), nil
		})
	gosdk.AddTool(s, &gosdk.Tool{Name: "blob", Description: "Returns its text repeated to 64 KB"},
		func(ctx context.Context, req *gosdk.CallToolRequest, in EchoIn) (*gosdk.CallToolResult, EchoOut, error) {
			return nil, Blob(in), nil
		})
	get := func(*http.Request) *gosdk.Server { return s }
	return gosdk.NewStreamableHTTPHandler(get, &gosdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true}),
		gosdk.NewStreamableHTTPHandler(get, &gosdk.StreamableHTTPOptions{JSONResponse: true})
}

// MCPGo returns mcp-go v1.6.0's stateless streamable server and its
// stateful one.
func MCPGo() (stateless, session http.Handler) {
	build := func() *mcpgoserver.MCPServer {
		s := mcpgoserver.NewMCPServer("bench-mcpgo", "1.0.0", mcpgoserver.WithToolCapabilities(false))
		tool := mcpgo.NewTool("echo",
			mcpgo.WithDescription("Echoes its text"),
			mcpgo.WithInputSchema[EchoIn](),
			mcpgo.WithOutputSchema[EchoOut]())
		s.AddTool(tool, mcpgo.NewStructuredToolHandler(func(ctx context.Context, req mcpgo.CallToolRequest, in EchoIn) (EchoOut, error) {
			return EchoOut(in), nil
		}))
		blob := mcpgo.NewTool("blob",
			mcpgo.WithDescription("Returns its text repeated to 64 KB"),
			mcpgo.WithInputSchema[EchoIn](),
			mcpgo.WithOutputSchema[EchoOut]())
		s.AddTool(blob, mcpgo.NewStructuredToolHandler(func(ctx context.Context, req mcpgo.CallToolRequest, in EchoIn) (EchoOut, error) {
			return Blob(in), nil
		}))
		return s
	}
	return mcpgoserver.NewStreamableHTTPServer(build(), mcpgoserver.WithStateLess(true), mcpgoserver.WithDisableStreaming(true)),
		mcpgoserver.NewStreamableHTTPServer(build(), mcpgoserver.WithStateful(true), mcpgoserver.WithDisableStreaming(true))
}

// MCPKitList is mcpkit's W7 server: session-less, ListTools tools.
func MCPKitList() *streamhttp.Handler {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "bench-mcpkit", Version: "1.0.0"}, PageSize: ListPageSize})
	for i := range ListTools {
		server.AddTool(s, &mcp.Tool{Name: toolName(i), Description: "Echoes its text"},
			func(ctx context.Context, req *server.CallToolRequest, in EchoIn) (EchoOut, error) {
				return EchoOut(in), nil
			})
	}
	return streamhttp.NewHandler(s, &streamhttp.Options{Stateless: true})
}

// GoSDKList is go-sdk's W7 server.
func GoSDKList() http.Handler {
	s := gosdk.NewServer(&gosdk.Implementation{Name: "bench-gosdk", Version: "1.0.0"}, &gosdk.ServerOptions{PageSize: ListPageSize})
	for i := range ListTools {
		gosdk.AddTool(s, &gosdk.Tool{Name: toolName(i), Description: "Echoes its text"},
			func(ctx context.Context, req *gosdk.CallToolRequest, in EchoIn) (*gosdk.CallToolResult, EchoOut, error) {
				return nil, EchoOut(in), nil
			})
	}
	return gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s },
		&gosdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}

// MCPGoList is mcp-go's W7 server.
func MCPGoList() http.Handler {
	s := mcpgoserver.NewMCPServer("bench-mcpgo", "1.0.0", mcpgoserver.WithToolCapabilities(false), mcpgoserver.WithPaginationLimit(ListPageSize))
	for i := range ListTools {
		tool := mcpgo.NewTool(toolName(i),
			mcpgo.WithDescription("Echoes its text"),
			mcpgo.WithInputSchema[EchoIn](),
			mcpgo.WithOutputSchema[EchoOut]())
		s.AddTool(tool, mcpgo.NewStructuredToolHandler(func(ctx context.Context, req mcpgo.CallToolRequest, in EchoIn) (EchoOut, error) {
			return EchoOut(in), nil
		}))
	}
	return mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithStateLess(true), mcpgoserver.WithDisableStreaming(true))
}

// MCPKitSSE is mcpkit's W6p server: session-less, with the "progress" tool.
func MCPKitSSE() *streamhttp.Handler {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "bench-mcpkit", Version: "1.0.0"}})
	server.AddTool(s, &mcp.Tool{Name: "progress", Description: "Reports progress, then echoes its text"},
		func(ctx context.Context, req *server.CallToolRequest, in EchoIn) (EchoOut, error) {
			for i := 1; i <= Progresses; i++ {
				if err := req.Progress(ctx, float64(i), Progresses, ""); err != nil {
					return EchoOut{}, err
				}
			}
			return EchoOut(in), nil
		})
	return streamhttp.NewHandler(s, &streamhttp.Options{Stateless: true})
}

// GoSDKSSE is go-sdk's W6p server: stateless, streaming (no JSONResponse).
func GoSDKSSE() http.Handler {
	s := gosdk.NewServer(&gosdk.Implementation{Name: "bench-gosdk", Version: "1.0.0"}, nil)
	gosdk.AddTool(s, &gosdk.Tool{Name: "progress", Description: "Reports progress, then echoes its text"},
		func(ctx context.Context, req *gosdk.CallToolRequest, in EchoIn) (*gosdk.CallToolResult, EchoOut, error) {
			token := req.Params.GetProgressToken()
			for i := 1; i <= Progresses; i++ {
				if err := req.Session.NotifyProgress(ctx, &gosdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: Progresses}); err != nil {
					return nil, EchoOut{}, err
				}
			}
			return nil, EchoOut(in), nil
		})
	return gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s },
		&gosdk.StreamableHTTPOptions{Stateless: true})
}

// MCPGoSSE is mcp-go's W6p server: stateless, streaming allowed.
func MCPGoSSE() http.Handler {
	s := mcpgoserver.NewMCPServer("bench-mcpgo", "1.0.0", mcpgoserver.WithToolCapabilities(false))
	tool := mcpgo.NewTool("progress",
		mcpgo.WithDescription("Reports progress, then echoes its text"),
		mcpgo.WithInputSchema[EchoIn](),
		mcpgo.WithOutputSchema[EchoOut]())
	s.AddTool(tool, mcpgo.NewStructuredToolHandler(func(ctx context.Context, req mcpgo.CallToolRequest, in EchoIn) (EchoOut, error) {
		var token mcpgo.ProgressToken
		if req.Params.Meta != nil {
			token = req.Params.Meta.ProgressToken
		}
		srv := mcpgoserver.ServerFromContext(ctx)
		for i := 1; i <= Progresses; i++ {
			if err := srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{"progressToken": token, "progress": i, "total": Progresses}); err != nil {
				return EchoOut{}, err
			}
		}
		return EchoOut(in), nil
	}))
	return mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithStateLess(true))
}

// MCPKitMRTR is mcpkit's W8 server: session-less, with the "confirm" tool,
// which asks for an elicitation "ok" with a sealed requestState, and
// echoes its text once it has both back. (go-sdk v1.8.0 and mcp-go
// v1.6.0 have no 2026-07-28 Multi Round-Trip Requests: W8 is n/a there.)
func MCPKitMRTR() *streamhttp.Handler {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "bench-mcpkit", Version: "1.0.0"}})
	server.AddTool(s, &mcp.Tool{Name: "confirm", Description: "Asks for confirmation, then echoes its text"},
		func(ctx context.Context, req *server.CallToolRequest, in EchoIn) (EchoOut, error) {
			ans, ok, err := req.ElicitResult("ok")
			if err != nil {
				return EchoOut{}, err
			}
			if !ok {
				return EchoOut{}, server.NeedInput().Elicit("ok", &mcp.ElicitParams{
					Message:         "Echo " + in.Text + "?",
					RequestedSchema: []byte(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`),
				}).State("round-1:" + in.Text)
			}
			if ans.Action != mcp.ElicitActionAccept || req.RequestState() != "round-1:"+in.Text {
				return EchoOut{}, fmt.Errorf("unexpected answer %q or state %q", ans.Action, req.RequestState())
			}
			return EchoOut(in), nil
		})
	return streamhttp.NewHandler(s, &streamhttp.Options{Stateless: true})
}
