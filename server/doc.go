// Package server is the MCP server: it registers tools, prompts,
// resources, resource templates and a completion handler, computes the
// capabilities they imply, and serves them to clients.
//
// A stdio server in a few lines (the runnable programs are in examples/,
// the guide in docs/guide):
//
//	s := server.New(&server.Options{Info: mcp.Implementation{Name: "calc", Version: "1.0.0"}})
//	err := server.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers."},
//		func(ctx context.Context, req *server.CallToolRequest, in AddIn) (AddOut, error) {
//			return AddOut{Sum: in.A + in.B}, nil
//		})
//	if err != nil { … }
//	err = s.Serve(ctx, stdio.New(nil)) // or streamhttp.NewHandler(s, nil) for HTTP
//
// Handlers are plain functions that take a context and a typed request
// and return a typed result. Typed tools (AddTool) infer their input and
// output schemas from Go types, validate arguments before the handler
// runs, and turn a returned Go error into an isError result.
//
// Registration never panics: AddTool, AddRawTool, AddPrompt, AddResource
// and AddResourceTemplate return an error (starting with "server: " and
// naming the tool, prompt or resource, and for a struct tag the Go field)
// for a missing name, a nil handler, a malformed `jsonschema` tag or a
// schema that does not compile, and nothing is registered. The error is
// the caller's to handle; one the caller ignored still surfaces: Err
// returns every registration error, and the server logs each at Error
// level (Options.Logger) when it starts serving.
//
// On a legacy session (protocol revisions 2025-11-25 and older, entered
// through initialize) a handler may ask the client for input — elicitation,
// sampling, roots — through its Request; such requests belong to the
// request being handled and are refused once the handler has returned
// (SEP-2260). Progress and log notifications likewise travel with the
// request.
//
// Extensions (SEP-2133): AddExtension advertises one in
// capabilities.extensions (initialize and server/discover); AddMethod and
// AddNotification register the typed handlers of an extension's requests
// and notifications, served in both eras; Request.Notify and
// Session.Notify send its notifications; Request.ClientExtension reads
// what the client declared (docs/design/extensions.md). MCP Apps is built
// on these, in package ext/apps.
//
// Visibility: Options.Visibility hides tools, prompts and resources per
// caller — in lists, in calls (hidden answers as unknown) and in change
// notifications (docs/design/visibility.md); auth.Visibility derives one
// from the per-tool scopes.
//
// The server serves stdio and other byte-stream transports itself
// (Serve, Connect); the Streamable HTTP transport lives in
// server/streamhttp, which reaches the server through the internal seam
// (server/internal/seam). The deployment seams several instances share
// (session, event and task stores, the broker) are in package store.
// Tasks are handed off here (task.go: a tools/call that becomes a
// task; task_methods.go: the tasks/* methods) and run below this
// package, by the Manager of server/internal/taskrun that each Server
// owns; their rules that need no server — which tasks/* methods an era
// has, eligibility, rendering, ids, the messages between instances —
// are in server/internal/tasks.
//
// Options.Interceptors wrap every request and notification the server
// receives and every message it sends, in both eras (package intercept;
// docs/design/interceptors.md); intercept.Recover, outermost, turns a
// panic into -32603. NewLogHandler is a slog.Handler that sends records
// to the client at the level it set. Options.KeepAlive pings the client
// of a connection-based legacy session and ends it when a ping goes
// unanswered.
//
// Package server imports mcp, jsonrpc, transport, store, intercept and
// internal packages. It must not import client, net/http or any concrete
// transport: transports plug in through transport.Conn, and HTTP through
// the seam.
package server
