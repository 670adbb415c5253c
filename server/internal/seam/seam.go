// Package seam is the boundary between the protocol server (package
// server) and the carriers that serve it over a network (package
// server/streamhttp). The protocol server implements Protocol and
// Session; a carrier drives them and never sees dispatch, registries,
// the legacy shim or the era rules. Nothing here is public API: the
// package is internal to server/.
//
// Concurrency: every method of Protocol and Session is safe for
// concurrent use, unless its comment says otherwise.
//
// Package seam imports jsonrpc, mcp, store and transport; never server.
package seam

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store"
	"github.com/mcpkit/mcpkit/transport"
)

// ListenGrace bounds how long closing a session waits for its open
// subscriptions/listen requests to answer with their result.
const ListenGrace = time.Second

// Protocol is the protocol server as a carrier sees it.
type Protocol interface {
	// Logger is the server's logger.
	Logger() *slog.Logger
	// Limits are the server's message limits (size, nesting depth).
	Limits() jsonrpc.Limits
	// Classify decodes the params of a client request once and reads its
	// era claim (SEP-2575: _meta's io.modelcontextprotocol/protocolVersion).
	// A request whose params are not an object fails with -32602.
	Classify(msg *jsonrpc.Message) (Call, *jsonrpc.Error)
	// ServeModern answers one 2026-07-28 request: stateless, no session.
	// out carries the request's own notifications. header holds the
	// carrier's per-request headers (Streamable HTTP: the Mcp-Param-*
	// checks of SEP-2243), nil when it has none.
	ServeModern(ctx context.Context, c Call, out Outbound, header map[string][]string) (any, error)
	// ServeNotification hands a 2026-07-28 client notification (one
	// that carries a modern claim) to its extension handler, if any.
	ServeNotification(ctx context.Context, c Call)
	// ServeStateless answers one legacy request without a session, as a
	// client that declared no capabilities, under version.
	ServeStateless(ctx context.Context, version string, c Call, out Outbound) (any, error)
	// ServesLegacy reports whether revision v is one this server serves
	// through initialize (the MCP-Protocol-Version of a legacy request).
	ServesLegacy(v string) bool
	// ModernStatus is the HTTP status of a 2026-07-28 error answer.
	ModernStatus(e *jsonrpc.Error) int
	// NewSession creates a legacy session whose connection writes to
	// cfg.Conn and is fed by the carrier (Session.Process) instead of a
	// read loop.
	NewSession(cfg SessionConfig) Session
	// AddRelay registers fn to be told of every list change or resource
	// update announced on this server, in order; remove unregisters it.
	AddRelay(fn func(method, uri string)) (remove func())
	// DeliverChange delivers a change announced elsewhere to this
	// server's sessions and listen streams, without relaying it again.
	DeliverChange(method, uri string)
	// PrincipalFrom returns the principal WithPrincipal put in ctx.
	PrincipalFrom(ctx context.Context) string
	// AttachPeers makes the server one instance of a deployment whose
	// other instances p reaches: the ids of its tasks name p.ID(), and
	// task requests for another instance's tasks go there. The carrier
	// hands the peers' messages to the returned PeerHandler; detach ends
	// the attachment (before the carrier stops delivering).
	AttachPeers(p Peers) (h PeerHandler, detach func())
}

// Peers are the other instances of a deployment, as the protocol server
// reaches them through its carrier (server/streamhttp: over the
// store.Broker). Messages are opaque to the carrier.
type Peers interface {
	// ID names this instance (store.Broker.ID).
	ID() string
	// Call delivers msg to instance to, whose PeerHandler.Serve answers
	// it, and returns that answer. ok is false when the instance is gone
	// (it was not there to receive msg, or left before answering); err is
	// a failure of the carrier (the broker unreachable) or of ctx.
	Call(ctx context.Context, to string, msg []byte) (reply []byte, ok bool, err error)
	// Broadcast delivers msg to every other instance's PeerHandler.Deliver,
	// at most once (it may be lost).
	Broadcast(ctx context.Context, msg []byte) error
}

// CastPeers is Peers whose broadcasts a TaskStore may publish itself,
// in the same round trip as a write (the Redis TaskStore's UpdateCast):
// CastTarget names where the broadcasts go (an opaque value of the
// broker's; nil when it has none), Frame turns msg into what Broadcast
// would publish.
type CastPeers interface {
	Peers
	CastTarget() any
	Frame(msg []byte) ([]byte, error)
}

// SessionPeers is Peers that can put a notification on the standalone
// stream of a legacy session this instance holds: a broadcast that every
// instance receives (a settled task's status, which carries the record)
// then takes the place of the carrier forwarding the session's
// notification to the holder of its stream.
type SessionPeers interface {
	Peers
	// PushSession sends the notification method(params.NotifyParams())
	// on session sid's standalone stream when this instance holds it, and
	// reports whether it did; NotifyParams is called only then. It never
	// forwards the notification, never holds it for a stream opened
	// later, and does not wait (it may be called on the carrier's
	// delivery goroutine).
	PushSession(sid, method string, params NotifyParams) bool
}

// NotifyParams builds a notification's params when they are needed
// (SessionPeers.PushSession). A pointer-shaped implementation passes
// without an allocation, where a closure over its data would escape.
type NotifyParams interface {
	NotifyParams() any
}

// PeerHandler receives the messages of the other instances.
type PeerHandler struct {
	// Serve answers a Call; ctx ends when the carrier closes. It runs on
	// a goroutine of its own and may wait.
	Serve func(ctx context.Context, msg []byte) []byte
	// Deliver takes a Broadcast. It runs on the carrier's delivery
	// goroutine and must return quickly.
	Deliver func(msg []byte)
}

// Call is a client request with its params decoded once.
type Call struct {
	Msg *jsonrpc.Message
	// Claimed: the params carry a modern claim (_meta protocolVersion).
	Claimed bool
	// Version is the claimed revision ("" when unclaimed or malformed).
	Version string
	// Err is a claim's malformed envelope (-32602) or unserved revision
	// (-32022); Version is still set for the latter.
	Err *jsonrpc.Error
	// Name, URI and TaskID are params.name, params.uri and params.taskId,
	// which the SEP-2243 Mcp-Name header mirrors.
	Name, URI, TaskID string
	// Params and Envelope are the protocol server's decoded forms of the
	// params and of the modern envelope; opaque to carriers.
	Params, Envelope any
}

// Outbound is the way back to the client for one request's messages.
// related is the id of the request a message is sent on behalf of,
// whatever context the handler passes: on an HTTP session it puts the
// message on that request's stream (transport.Message.Related); the zero
// ID relates it to none.
type Outbound interface {
	// Call sends a server→client request and waits for its answer.
	Call(ctx context.Context, related mcp.ID, method string, params, result any) error
	// Notify sends a notification.
	Notify(ctx context.Context, related mcp.ID, method string, params any) error
}

// SessionConfig says how a carrier serves a legacy session.
type SessionConfig struct {
	// Conn is where the session's connection writes: each message with
	// the request it belongs to (transport.Message). Its Read is never
	// called.
	Conn transport.Conn
	// Handler runs the session's requests and notifications; the carrier
	// wraps Session.HandleRequest to count them.
	Handler jsonrpc.Handler
	// IDPrefix prefixes the ids of server→client requests (the instance,
	// in a cluster).
	IDPrefix string
	// CloseStream ends the connection that carries a request's stream
	// (Request.CloseStream, SEP-1699); nil when the carrier cannot.
	CloseStream func(mcp.ID)
	// ID names the session: empty for a new random id; a copy of a
	// session another instance created takes that session's id.
	ID string
	// Principal is the authenticated principal that opens the session.
	Principal string
	// OnChange, when set, is called after each change of the session's
	// state (initialize, initialized, log level, subscriptions); its error
	// fails the request that made the change, and the change is undone.
	OnChange func() error
	// Go starts the goroutines of the session's handlers
	// (jsonrpc.ConnOptions.Go); nil: the go statement.
	Go func(fn func())
	// WriteNeverWaits declares that Conn.Write never waits for the peer
	// (it queues the message or drops it at once): the server then writes
	// change notifications to the session from the goroutine that made
	// the change, in order, one per change. Otherwise a goroutine of the
	// session sends them, so that a peer that does not read cannot hold
	// up the change or the other sessions.
	WriteNeverWaits bool
}

// Session is one legacy session as its carrier sees it.
type Session interface {
	// ID is the session's identifier.
	ID() string
	// Principal is the principal that opened the session.
	Principal() string
	// HandleRequest and HandleNotification serve one message of the
	// session (the lifecycle, then dispatch).
	HandleRequest(ctx context.Context, msg *jsonrpc.Message) (any, error)
	HandleNotification(ctx context.Context, msg *jsonrpc.Message)
	// Process hands the session's connection a message from the client
	// (jsonrpc.Conn.Process); ProcessContext does the same for a message
	// that came with its own context (an HTTP request's), whose values its
	// handler sees.
	Process(msg *jsonrpc.Message)
	ProcessContext(vals context.Context, msg *jsonrpc.Message)
	// Initialized records notifications/initialized; an error means the
	// change could not be saved (ErrStoreUnavailable).
	Initialized() error
	// Initializing reports whether initialize has not been answered yet.
	Initializing() bool
	// Snapshot returns the session's state as a new revision.
	Snapshot() *store.SessionState
	// State returns the session's current state without making a new
	// revision (Revision is the one held).
	State() *store.SessionState
	// Restore applies a stored state unless it is older than the held one.
	Restore(st *store.SessionState)
	// Unrecord takes back revision rev when the store refused it.
	Unrecord(rev uint64)
	// Close ends the session: open listens answer first (ListenGrace),
	// then its connection closes.
	Close() error
	// Remove forgets the session on the server.
	Remove()
}

// ErrStoreUnavailable fails a request whose change of session state the
// SessionStore did not take: -32603, which the carrier answers with 503,
// so that the client knows the change did not happen and may try again.
var ErrStoreUnavailable = jsonrpc.NewError(mcp.CodeInternalError, "Service Unavailable: the session store is unreachable; the session's state was not saved")

// opener holds the one func(S) Protocol that Install was given, for
// S = *server.Server. It is the only value of this package kept as an
// interface: seam cannot name *server.Server (server imports seam), so
// the function's type is known here only through Install's and Of's type
// parameter, which both ends spell out by their arguments.
var opener any

// Install registers open, the conversion of a server to its Protocol. It
// is called once, by package server's init, with a func(*Server) Protocol.
func Install[S any](open func(srv S) Protocol) { opener = open }

// Of returns the Protocol of srv, a *server.Server: the function Install
// was given, called with srv. S must be the type Install was given (a
// carrier passes the *server.Server it is handed); any other type is a
// bug in server/... and panics with a message saying so.
func Of[S any](srv S) Protocol {
	open, ok := opener.(func(S) Protocol)
	if !ok {
		panic(fmt.Sprintf("seam: Of(%T): no conversion installed for that type (have %T)", srv, opener))
	}
	return open(srv)
}

// HeaderMismatch is the -32020 error (HTTP 400) of SEP-2243: a request
// header that does not mirror the body.
func HeaderMismatch(format string, args ...any) *jsonrpc.Error {
	return jsonrpc.Errorf(mcp.CodeHeaderMismatch, "Header mismatch: "+format, args...)
}

// TrimOWS drops the optional whitespace around a header value (RFC 9110
// OWS: not part of the value). net/http already does it for what it
// parses; other embeddings may not.
func TrimOWS(v string) string { return strings.Trim(v, " \t") }

// ShortErr is the text of err, cut to 300 bytes: enough to say what went
// wrong without echoing a whole input back.
func ShortErr(err error) string {
	s := err.Error()
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// ToRPCError is err as a JSON-RPC error: itself when it is one, else
// -32603 with its short text.
func ToRPCError(err error) *jsonrpc.Error {
	if e, ok := jsonrpc.AsError(err); ok {
		return e
	}
	return jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: %s", ShortErr(err))
}
