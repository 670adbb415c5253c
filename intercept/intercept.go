package intercept

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Side says which peer runs an interceptor.
type Side uint8

const (
	// Server: the interceptor is a server's (server.Options.Interceptors).
	Server Side = iota + 1
	// Client: the interceptor is a client's (client.Options.Interceptors).
	Client
)

func (s Side) String() string {
	switch s {
	case Server:
		return "server"
	case Client:
		return "client"
	}
	return "unknown"
}

// Era is the protocol era of a message: legacy (initialize, sessions,
// revisions 2025-11-25 and older) or modern (2026-07-28, the per-request
// _meta envelope).
type Era uint8

const (
	// EraLegacy: revisions entered through initialize.
	EraLegacy Era = iota + 1
	// EraModern: 2026-07-28 and later, stateless.
	EraModern
)

func (e Era) String() string {
	switch e {
	case EraLegacy:
		return "legacy"
	case EraModern:
		return "modern"
	}
	return "unknown"
}

// Call is one message on its way through the interceptors. The SDK fills
// it in; interceptors read it and may change Method, Params and Meta
// before they call next (see the package documentation). A Call is valid
// only while the Handler it was passed to runs.
type Call struct {
	// Side is the peer that runs the chain.
	Side Side
	// Inbound is true for a message received from the peer, false for
	// one being sent to it.
	Inbound bool
	// Notification is true for a notification, false for a request.
	Notification bool
	// Method is the JSON-RPC method.
	Method string
	// ID is the JSON-RPC id of an inbound request (the zero ID for
	// notifications and for outbound requests, whose id the connection
	// assigns when it sends them).
	ID mcp.ID
	// Related is, on a server's outbound messages, the id of the inbound
	// request they are sent on behalf of (the zero ID for messages of no
	// request, such as list changes).
	Related mcp.ID
	// Era and Version are the protocol era and revision of the message
	// (Version may be empty before a legacy session is initialized).
	Era     Era
	Version string
	// SessionID is the legacy session's id on a server ("" for modern and
	// session-less requests). On a client it is empty.
	SessionID string
	// Principal is the authenticated principal of a server's request
	// (server.WithPrincipal), "" when none.
	Principal string
	// Name is what the request is about: the tool or prompt name of
	// tools/call and prompts/get, the URI of resources/read, subscribe
	// and unsubscribe, the task id of tasks/*; "" otherwise.
	Name string
	// Meta is the params' _meta. Inbound: as received, less a server's
	// 2026-07-28 envelope members (protocolVersion, clientCapabilities,
	// clientInfo, logLevel: the server decodes them itself; Raw has them).
	// Outbound: it
	// starts empty, and the keys the chain sets with SetMeta are added to
	// the _meta of the params sent (ParamsWithMeta). Read it freely;
	// change it only with SetMeta, which copies it first (the map may be
	// shared with the wire).
	Meta mcp.Meta
	// Raw are the params of an inbound message as received (nil when
	// absent). An interceptor may replace them; the SDK then decodes the
	// new bytes instead.
	Raw jsontext.Value
	// Params are the params of an outbound message: the value about to
	// be encoded (an *mcp.…Params, a jsontext.Value, or nil). An
	// interceptor may replace them with another value that encodes to
	// the params it wants.
	Params any
	// Round is the multi round-trip round of the message (SEP-2322): 0
	// for a first request; on a client, the driver's n-th repetition of
	// a call and the input requests it answers for it; on a server, 1 for
	// a 2026-07-28 retry that carries a requestState, and the legacy
	// shim's round for its server→client requests.
	Round int
	// Request is the SDK's object for the request being served, for
	// interceptors that need more than the fields above: on a server the
	// *server.Request (inbound requests and what their handlers send);
	// nil otherwise. The SDK reads it back: pass it on unchanged.
	Request any

	metaOwned bool
}

// SetMeta sets key in Meta to value, copying Meta first the first time,
// so that a map shared with the caller or the wire is never written.
func (c *Call) SetMeta(key string, value any) {
	if !c.metaOwned {
		m := make(mcp.Meta, len(c.Meta)+1)
		maps.Copy(m, c.Meta)
		c.Meta, c.metaOwned = m, true
	}
	c.Meta[key] = value
}

// ParamsWithMeta returns Params with the keys set by SetMeta added to
// their _meta (encoded as a JSON object), or Params unchanged when
// SetMeta was not called. The SDK sends what it returns.
func (c *Call) ParamsWithMeta() (any, error) {
	if !c.metaOwned || len(c.Meta) == 0 {
		return c.Params, nil
	}
	var raw []byte
	switch p := c.Params.(type) {
	case nil:
	case jsontext.Value:
		raw = p
	default:
		b, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("intercept: encoding the params of %s: %w", c.Method, err)
		}
		raw = b
	}
	obj := map[string]jsontext.Value{}
	if len(raw) > 0 && jsontext.Value(raw).Kind() != 'n' {
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("intercept: the params of %s are not an object: %w", c.Method, err)
		}
	}
	meta := mcp.Meta{}
	if m, ok := obj["_meta"]; ok {
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, fmt.Errorf("intercept: the _meta of %s: %w", c.Method, err)
		}
	}
	maps.Copy(meta, c.Meta)
	mb, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("intercept: encoding the _meta of %s: %w", c.Method, err)
	}
	obj["_meta"] = mb
	out, err := json.Marshal(obj, json.Deterministic(true))
	if err != nil {
		return nil, fmt.Errorf("intercept: encoding the params of %s: %w", c.Method, err)
	}
	return jsontext.Value(out), nil
}

// MetaString returns Meta[key] when it is a JSON string (as decoded from
// the wire, or set as a Go string).
func (c *Call) MetaString(key string) (string, bool) {
	if c.Meta == nil {
		return "", false
	}
	if s, ok := c.Meta[key].(string); ok {
		return s, true
	}
	var s string
	ok, err := c.Meta.Get(key, &s)
	return s, ok && err == nil
}

// Handler handles one Call: the SDK's own handling at the end of the
// chain, or the next interceptor. For a request it returns the result
// or the error to answer with; for a notification the result is ignored.
type Handler func(ctx context.Context, c *Call) (any, error)

// Interceptor wraps a Handler. It is called once per chain (when a
// server or client is built, or per outbound message): the work per
// message happens in the Handler it returns.
type Interceptor func(next Handler) Handler

// Chain composes interceptors into one: the first is the outermost.
// Nil entries are skipped; Chain of none returns nil.
func Chain(interceptors ...Interceptor) Interceptor {
	var list []Interceptor
	for _, ic := range interceptors {
		if ic != nil {
			list = append(list, ic)
		}
	}
	switch len(list) {
	case 0:
		return nil
	case 1:
		return list[0]
	}
	return func(next Handler) Handler {
		for i := len(list) - 1; i >= 0; i-- {
			next = list[i](next)
		}
		return next
	}
}

// Recover turns a panic in next into a -32603 error answer naming the
// method, and logs the panic and its stack at Error level on log (nil:
// discarded). A server puts it outside its users' interceptors.
func Recover(log *slog.Logger) Interceptor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(next Handler) Handler {
		return func(ctx context.Context, c *Call) (res any, err error) {
			defer func() {
				if p := recover(); p != nil {
					log.Error("intercept: handler panic", "method", c.Method, "panic", p, "stack", string(debug.Stack()))
					res, err = nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: handler for %s panicked", c.Method)
				}
			}()
			return next(ctx, c)
		}
	}
}
