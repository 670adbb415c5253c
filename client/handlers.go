package client

import (
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// inputHandlers are the handlers that answer a server's requests (legacy)
// and the input requests of input-required results (modern). Connect
// takes them from Options; the Set…Handler methods replace them while the
// client runs, so they are read through an atomic pointer.
type inputHandlers struct {
	elicit ElicitHandler
	sample CreateMessageHandler
	roots  ListRootsHandler
}

func (h *inputHandlers) any() bool {
	return h.elicit != nil || h.sample != nil || h.roots != nil
}

// handlers returns the current input handlers (never nil): those of
// Options, stored by Connect, until a Set…Handler method changes them.
func (c *Client) handlers() *inputHandlers { return c.hs.Load() }

// SetElicitHandler sets, replaces or (nil) removes the handler that
// answers elicitation/create; see SetListRootsHandler for what changes.
func (c *Client) SetElicitHandler(h ElicitHandler) {
	c.setHandlers(func(hs *inputHandlers) { hs.elicit = h })
}

// SetCreateMessageHandler sets, replaces or (nil) removes the handler
// that answers sampling/createMessage; see SetListRootsHandler for what
// changes.
func (c *Client) SetCreateMessageHandler(h CreateMessageHandler) {
	c.setHandlers(func(hs *inputHandlers) { hs.sample = h })
}

// SetListRootsHandler sets, replaces or (nil) removes the handler that
// answers roots/list after Connect. The next request of the server, and
// the next input request of a modern result, goes to the new handler.
//
// What the client declares follows on a modern connection, where every
// request carries the client capabilities: a set handler declares its
// capability from the next request on, a removed one no longer does. A
// legacy connection declared its capabilities once, in initialize: they
// stay as they were, so a server that honours them asks only for what
// Options declared at Connect (set the handler there to declare it).
//
// On a legacy connection whose transport has a listening stream (the
// Streamable HTTP transport's GET stream), setting the first handler
// starts it, as Connect does when Options has one: a server's requests
// that belong to no request of ours travel there.
func (c *Client) SetListRootsHandler(h ListRootsHandler) {
	c.setHandlers(func(hs *inputHandlers) { hs.roots = h })
}

func (c *Client) setHandlers(change func(*inputHandlers)) {
	c.mu.Lock()
	next := *c.handlers()
	change(&next)
	c.hs.Store(&next)
	if c.Era() == EraModern {
		c.caps = c.capabilities(&next)
		// Encoding the capabilities cannot fail: they are made of
		// fixed types and Options.Info, which Connect encoded already.
		_ = c.encodeCaps()
	}
	c.mu.Unlock()
	if c.Era() == EraLegacy && next.any() {
		c.listen()
	}
}

// listen starts the transport's listening stream, if it has one (Listen
// is idempotent).
func (c *Client) listen() {
	if l, ok := c.t.(interface{ Listen() }); ok {
		l.Listen()
	}
}

// associated decides whether a server's elicitation, sampling or roots
// request that arrived while the client waits for nothing of its own is
// served. SEP-2260 (2026-07-28) forbids such requests; the revisions up
// to 2025-11-25 allow them, and real servers send them (the reference
// filesystem server asks for roots/list right after initialization). So
// on a legacy connection they go to the handler, unless
// Options.StrictServerRequests enforces SEP-2260 there too; on a modern
// connection, and with the option, they are answered -32602
// (docs/design/server-requests.md).
func (c *Client) associated(method string) error {
	if c.lenient.Load() || c.conn.Outstanding() > 0 {
		return nil
	}
	return jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: %s arrived with no client request in progress (SEP-2260)", method)
}

// declared returns the capabilities the client declares.
func (c *Client) declared() mcp.ClientCapabilities {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.caps
}
