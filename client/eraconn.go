package client

import (
	"context"
	"fmt"

	"github.com/mcpkit/mcpkit/mcp"
)

// eraConn is what differs between the two eras of a connection
// (docs/design/era.md, "The client"). Connect chooses one implementation
// once — legacyEra after initialize, modernEra on a modern answer to the
// probe or a pinned modern revision — and feature code asks it instead of
// testing the era. Each implementation is the Client itself under another
// type (a conversion, not an allocation), in its own file: era_legacy.go
// and era_modern.go. Until Connect has chosen, the client is in
// pendingEra (the probe and the handshake send directly).
type eraConn interface {
	// era is the era this implementation speaks (Client.Era).
	era() Era
	// lacks returns the error of method, a request or notification of
	// the other era only (ErrLegacy or ErrModern wrapped); nil when this
	// era has it.
	lacks(method string) error

	// send sends one request: legacy as a plain JSON-RPC call bounded
	// by Options.CallTimeout, modern with the envelope, its result
	// checked and an input-required result answered. It reports how many
	// times the multi round-trip driver repeated the request. sent, when
	// set, learns the id of each request written for the call, before
	// it is written (jsonrpc.CallOptions.Sent).
	send(ctx context.Context, method string, params any, meta *mcp.Meta, result any, sent func(mcp.ID)) (int, error)
	// notifyMeta prepares the params of an extension notification (the
	// modern envelope in its _meta).
	notifyMeta(ctx context.Context, p *extParams)

	// Identity, as each era learns it: initialize, or server/discover
	// and the results' _meta.
	protocolVersion() string
	serverInfo() mcp.Implementation
	serverCapabilities() mcp.ServerCapabilities
	instructions() string

	// resultCache is the result cache (nil: the era caches nothing).
	resultCache() *Cache
	// connected runs once Connect has chosen this era: the legacy GET
	// listening stream and keepalive start there.
	connected()
	// handlersChanged follows a Set…Handler: the modern envelope's
	// capabilities change, a legacy transport's listening stream starts.
	handlersChanged(next *inputHandlers)
	// listedTools keeps what a tools/list page tells for later calls and
	// returns the tools to report.
	listedTools(tools []mcp.Tool) []mcp.Tool
	// setLoggingLevel is SetLoggingLevel: logging/setLevel or the
	// envelope's logLevel.
	setLoggingLevel(ctx context.Context, level mcp.LoggingLevel) error

	// callTool is CallTool; sendToolCall sends one tools/call.
	callTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error)
	sendToolCall(ctx context.Context, p *mcp.CallToolParams, result any) error
	// How tasks travel: the 2025-11-25 core tasks (params.task,
	// tasks/result) or the 2026 extension (declared per request, tasks/get
	// polling, notifications/tasks on subscriptions/listen).
	startToolTask(ctx context.Context, p *mcp.CallToolParams) (*Task, error)
	// holdProgress keeps a progress function registered for as long as
	// a task runs; release ends it.
	holdProgress(ctx context.Context, p *mcp.CallToolParams) (_ context.Context, _ *mcp.CallToolParams, release func())
	// taskOver reports the end of task id, which TaskResult answered
	// with err, to fn (non-nil), when the era tells it no other way.
	taskOver(ctx context.Context, fn func(*Task), id string, err error)
	// taskCtx prepares ctx for a tasks/* request.
	taskCtx(ctx context.Context) context.Context
	// taskResult is TaskResult.
	taskResult(ctx context.Context, id string) (*mcp.CallToolResult, error)
}

// eraBox holds an eraConn for an atomic.Pointer.
type eraBox struct{ eraConn }

// mode returns the era the connection speaks.
func (c *Client) mode() eraConn { return c.seam.Load().eraConn }

// setMode makes the connection speak e (Connect only).
func (c *Client) setMode(e eraConn) { c.seam.Store(&eraBox{e}) }

// onlyModern and onlyLegacy name the requests and notifications of one
// era only, each with what its error says.
var (
	onlyModern = map[string]string{
		mcp.MethodServerDiscover:      mcp.MethodServerDiscover,
		mcp.MethodSubscriptionsListen: mcp.MethodSubscriptionsListen,
		mcp.MethodTasksUpdate:         mcp.MethodTasksUpdate,
	}
	onlyLegacy = map[string]string{
		mcp.MethodPing:                   mcp.MethodPing,
		mcp.MethodResourcesSubscribe:     mcp.MethodResourcesSubscribe + " (use Listen)",
		mcp.MethodResourcesUnsubscribe:   mcp.MethodResourcesUnsubscribe + " (close the Listen subscription)",
		mcp.NotificationRootsListChanged: mcp.NotificationRootsListChanged,
		mcp.MethodTasksList:              mcp.MethodTasksList,
	}
)

// lacks is eraConn.lacks for an era missing the methods of only.
func lacks(only map[string]string, sentinel error, method string) error {
	if what, ok := only[method]; ok {
		return fmt.Errorf("%w: %s", sentinel, what)
	}
	return nil
}
