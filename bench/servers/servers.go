// Package servers builds the four servers compared by the benchmark: the
// same typed "echo" tool (input {"text":string}, output {"text":string})
// over Streamable HTTP, on mcpkit, the official go-sdk, mark3labs/mcp-go,
// and a raw net/http handler with no SDK (the ceiling).
//
// Every server exposes two endpoints:
//
//   - /mcp: the session-less configuration, serving 2026-07-28 ("modern")
//     requests and session-less 2025-11-25 ("legacy") requests (W1, W2);
//   - /mcp-session: the sessionful configuration, where a legacy client
//     sends initialize and then calls on its Mcp-Session-Id (W3).
//
// All answer with JSON bodies (no SSE) and log nothing.
package servers

import (
	"context"
	"fmt"
	"net/http"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

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

// Names lists the servers New knows, in the benchmark's default order.
var Names = []string{"mcpkit", "gosdk", "mcpgo", "raw"}

// Paths of the two endpoints.
const (
	PathStateless = "/mcp"
	PathSession   = "/mcp-session"
)

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
		closeFn = func() { sl.Close(); ss.Close() }
	case "gosdk":
		sl, ss := GoSDK()
		mux.Handle(PathStateless, sl)
		mux.Handle(PathSession, ss)
	case "mcpgo":
		sl, ss := MCPGo()
		mux.Handle(PathStateless, sl)
		mux.Handle(PathSession, ss)
	case "raw":
		mux.Handle(PathStateless, Raw())
	default:
		return nil, nil, fmt.Errorf("unknown server %q (want one of %v)", name, Names)
	}
	return mux, closeFn, nil
}

// MCPKit returns mcpkit's session-less handler (one endpoint, both eras)
// and its default, sessionful handler.
func MCPKit() (stateless, session *server.HTTPHandler) {
	build := func() *server.Server {
		s := server.New(&server.Options{Info: mcp.Implementation{Name: "bench-mcpkit", Version: "1.0.0"}})
		server.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text"},
			func(ctx context.Context, req *server.CallToolRequest, in EchoIn) (EchoOut, error) {
				return EchoOut(in), nil
			})
		return s
	}
	return server.NewHTTPHandler(build(), &server.HTTPOptions{Stateless: true}),
		server.NewHTTPHandler(build(), nil)
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
	get := func(*http.Request) *gosdk.Server { return s }
	return gosdk.NewStreamableHTTPHandler(get, &gosdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true}),
		gosdk.NewStreamableHTTPHandler(get, &gosdk.StreamableHTTPOptions{JSONResponse: true})
}

// MCPGo returns mcp-go v1.2.1's stateless streamable server and its
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
		return s
	}
	return mcpgoserver.NewStreamableHTTPServer(build(), mcpgoserver.WithStateLess(true), mcpgoserver.WithDisableStreaming(true)),
		mcpgoserver.NewStreamableHTTPServer(build(), mcpgoserver.WithStateful(true), mcpgoserver.WithDisableStreaming(true))
}
