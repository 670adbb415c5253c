package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/revisions"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/seam"
)

var (
	// ErrRequestEnded is returned when a handler's Request is used to
	// reach the client after the handler returned: elicitation, sampling
	// and roots requests must belong to a request in progress (SEP-2260).
	ErrRequestEnded = errors.New("server: the request has already been answered")
	// ErrClientCapability is wrapped by the errors returned when the
	// client did not declare what a server→client request needs.
	ErrClientCapability = errors.New("server: the client did not declare the capability")
	// ErrNoSession is returned for server→client requests on a request
	// that has no legacy session to carry them.
	ErrNoSession = errors.New("server: no session: server-to-client requests need a legacy session")
	// ErrModernRequest is returned for server→client requests made while
	// handling a 2026-07-28 request: that revision has none (SEP-2575);
	// handlers ask for input with an input-required result instead.
	ErrModernRequest = errors.New("server: 2026-07-28 requests cannot carry server-to-client requests; return an input-required result")
)

// ClientError is the error a client answered a server→client request
// with (for example -1 when the user rejected a sampling request). It is
// deliberately not a *jsonrpc.Error: a tool handler that passes it on
// produces an isError result, not a JSON-RPC error of its own.
type ClientError struct {
	Method  string
	Code    int64
	Message string
}

func (e *ClientError) Error() string {
	return fmt.Sprintf("the client answered %s with error %d: %s", e.Method, e.Code, e.Message)
}

// clientCall sends a server→client request, turning the client's
// JSON-RPC error into a *ClientError.
func (r *Request) clientCall(ctx context.Context, method string, params, result any) error {
	err := r.out.Call(ctx, r.id, method, params, result)
	if e, ok := jsonrpc.AsError(err); ok {
		return &ClientError{Method: method, Code: e.Code, Message: e.Message}
	}
	return err
}

// checkedCall is clientCall for elicitation, sampling and roots: the
// client's result is checked as the legacy shim checks it (checkAnswer;
// form is the elicitation's requestedSchema or urlForm) before it is
// decoded into result, and a malformed one is a -32602 *jsonrpc.Error,
// which fails the request if the handler passes it on.
func (r *Request) checkedCall(ctx context.Context, method string, params any, form jsontext.Value, result any) error {
	var raw jsontext.Value
	if err := r.clientCall(ctx, method, params, &raw); err != nil {
		return err
	}
	if bad := checkAnswer(method, form, raw); bad != nil {
		return legAnswerError(method, bad)
	}
	return json.Unmarshal(raw, result)
}

// outbound is the channel a request's server→client traffic takes: on
// stdio, the session's connection; on Streamable HTTP, the request's own
// SSE stream. Each message names the request it is sent on behalf of
// (Request.id), whatever context the handler passes (seam.Outbound).
type outbound = seam.Outbound

// Request is what every handler receives besides its params: who is
// asking, under which protocol revision, with which capabilities, and the
// way back to the client for this request's progress, log messages and
// (on legacy sessions) elicitation, sampling and roots requests. It is
// valid only while the handler runs.
type Request struct {
	srv     *Server
	session *Session
	id      mcp.ID // the request's id on its session
	version string
	caps    *mcp.ClientCapabilities
	info    *mcp.Implementation
	meta    mcp.Meta
	out     outbound
	ended   atomic.Bool
	// eraID is the request's protocol era (era.go, Request.era): what
	// differs between legacy and 2026-07-28 requests. logLevel is a 2026
	// envelope's level ("" sends no log notifications).
	eraID    eraID
	logLevel mcp.LoggingLevel
	header   map[string][]string // the HTTP request's headers (modern HTTP requests), for Mcp-Param-*

	// Multi round-trip state (mrtr.go): this round's answers, the
	// handler's own state, and what the sealed state is bound to (with
	// the answers kept from rounds before: mrtrCall.kept).
	inputs mcp.InputResponses
	state  string
	call   *mrtrCall
	retry  bool // a modern retry of an input-required exchange
	// preset marks a run whose answers were set in process, so the
	// wire's are not read again (Server.upfront).
	preset bool
	// progressSent and runReported (under progressMu, below) sit with
	// the other flags: an inbound request (intercept.go) then fits 512
	// bytes.
	progressSent bool
	runReported  bool

	// ic is the request as the interceptors see it (intercept.go); nil
	// for requests that do not come from the client (a task's run).
	ic *inbound

	// Progress (Request.Progress): lastProgress is the highest value
	// sent to the client for this request, by any run of its handler
	// (progressSent); runProgress the last value this run reported
	// (runReported), reset when the handler runs again (newRun).
	progressMu   sync.Mutex
	lastProgress float64
	runProgress  float64
}

// Session returns the legacy session the request arrived on.
func (r *Request) Session() *Session { return r.session }

// ProtocolVersion returns the protocol revision of the request.
func (r *Request) ProtocolVersion() string { return r.version }

// ClientCapabilities returns what the client declared (on a legacy
// session, in initialize; on a 2026-07-28 request, in its _meta): the
// zero value when it declared nothing. It is a deep copy, like
// Session.ClientCapabilities: changing it changes nothing in the server.
func (r *Request) ClientCapabilities() mcp.ClientCapabilities {
	return r.clientCaps().Clone()
}

// noCaps is what a request without declared capabilities reads.
var noCaps mcp.ClientCapabilities

// clientCaps is the SDK's own read-only view of the declared
// capabilities (no copy).
func (r *Request) clientCaps() *mcp.ClientCapabilities {
	if r.caps == nil {
		return &noCaps
	}
	return r.caps
}

// ClientInfo returns the client's self-description: the zero value when
// it sent none.
func (r *Request) ClientInfo() mcp.Implementation {
	if r.info == nil {
		return mcp.Implementation{}
	}
	return r.info.Clone()
}

// Meta returns the request's _meta, less the members of the 2026-07-28
// envelope (protocolVersion, clientCapabilities, clientInfo, logLevel),
// which the Request reports itself (ProtocolVersion, ClientCapabilities,
// ClientInfo, LogLevel): mcp.Meta's accessors of those keys find nothing
// in it. Nil when nothing else was sent.
func (r *Request) Meta() mcp.Meta { return r.meta }

// LogLevel returns the lowest level of the log messages the client takes
// with this request, the one Log checks: a 2026-07-28 request's envelope
// logLevel, or a legacy session's (logging/setLevel; info before any).
// "" when the request takes none (a 2026-07-28 request without logLevel).
func (r *Request) LogLevel() mcp.LoggingLevel {
	level, ok := r.era().logThreshold(r)
	if !ok {
		return ""
	}
	return level
}

func (r *Request) end() { r.ended.Store(true) }

// newRun starts another run of the handler on r, after a round of input:
// its progress steps start again from nothing, and those at or below
// what the earlier runs sent are dropped (Progress).
func (r *Request) newRun() {
	r.progressMu.Lock()
	r.runReported, r.runProgress = false, 0
	r.progressMu.Unlock()
}

// sentProgress returns the highest progress sent for r (ok false when
// none was).
func (r *Request) sentProgress() (float64, bool) {
	r.progressMu.Lock()
	defer r.progressMu.Unlock()
	return r.lastProgress, r.progressSent
}

// resumeProgress records that an earlier request of the same exchange (a
// 2026 retry's predecessors) sent progress up to last.
func (r *Request) resumeProgress(last float64) {
	r.progressMu.Lock()
	r.progressSent, r.lastProgress = true, last
	r.progressMu.Unlock()
}

// Progress reports progress on this request, when the client asked for
// it with a progress token (otherwise it does nothing). progress must
// increase from one call to the next within a run of the handler; total
// is optional (0: unknown).
//
// A handler that asks for input runs again once answered (the legacy
// shim, a 2026-07-28 retry, a task's next round), and repeats the steps
// it reported before asking. The client sees each step once: a step at
// or below the highest one already sent for this request, by an earlier
// run, is dropped without error, and the run's later steps go on from
// there. On the 2026 wire the highest step sent travels sealed in the
// requestState, so a retry on another instance drops them too.
func (r *Request) Progress(ctx context.Context, progress, total float64, message string) error {
	token, ok := r.meta.ProgressToken()
	if _, task := r.out.(modernTaskOut); !ok && !task {
		return nil // a 2026 task's progress is its statusMessage, for every poller
	}
	if r.ended.Load() {
		return ErrRequestEnded
	}
	r.progressMu.Lock()
	if r.runReported && progress <= r.runProgress {
		r.progressMu.Unlock()
		return fmt.Errorf("server: progress must increase (%v after %v)", progress, r.runProgress)
	}
	r.runReported, r.runProgress = true, progress
	if r.progressSent && progress <= r.lastProgress {
		r.progressMu.Unlock()
		return nil // sent by an earlier run of the handler
	}
	r.progressSent, r.lastProgress = true, progress
	r.progressMu.Unlock()
	p := mcp.ProgressParams{ProgressToken: token, Progress: progress, Message: message}
	if total > 0 {
		p.Total = &total
	}
	return r.out.Notify(ctx, r.id, mcp.NotificationProgress, p)
}

// Log sends a log message to the client with this request, when the
// server declared logging (Options.Logging) and the client's level lets
// it through; otherwise it does nothing.
func (r *Request) Log(ctx context.Context, level mcp.LoggingLevel, logger string, data any) error {
	if !r.srv.opts.Logging {
		return nil
	}
	if !level.Valid() {
		return fmt.Errorf("server: invalid logging level %q", level)
	}
	threshold, ok := r.era().logThreshold(r)
	if !ok || !level.AtLeast(threshold) {
		return nil
	}
	if r.ended.Load() {
		return ErrRequestEnded
	}
	return r.out.Notify(ctx, r.id, mcp.NotificationMessage, mcp.LoggingMessageParams{Level: level, Logger: logger, Data: data})
}

// Elicit asks the client's user for input (elicitation/create), in form
// mode or URL mode, and waits for the answer. It needs a legacy session
// whose client declared the mode; a URL-mode request without an
// ElicitationID gets a fresh random one.
func (r *Request) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if err := r.canCall(); err != nil {
		return nil, err
	}
	if !revisions.HasElicitation(r.version) {
		return nil, fmt.Errorf("%w: elicitation needs revision 2025-06-18 or later, the session speaks %s", ErrClientCapability, r.version)
	}
	ec := r.clientCaps().Elicitation
	params := *p
	switch params.EffectiveMode() {
	case mcp.ElicitModeURL:
		if !revisions.HasURLElicitation(r.version) {
			return nil, fmt.Errorf("%w: URL-mode elicitation needs revision 2025-11-25 or later, the session speaks %s", ErrClientCapability, r.version)
		}
		if !ec.SupportsURL() {
			return nil, fmt.Errorf("%w: elicitation.url", ErrClientCapability)
		}
		if params.ElicitationID == "" {
			params.ElicitationID = rand.Text()
		}
	default:
		if !ec.SupportsForm() {
			return nil, fmt.Errorf("%w: elicitation.form", ErrClientCapability)
		}
	}
	form := formOf(params.Mode, params.RequestedSchema)
	if err := checkForm(form); err != nil {
		return nil, fmt.Errorf("server: elicitation/create: %w", err)
	}
	var res mcp.ElicitResult
	if err := r.checkedCall(ctx, mcp.MethodElicitationCreate, &params, form, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// CreateMessage asks the client to sample its language model
// (sampling/createMessage) and waits for the answer. It needs a legacy
// session whose client declared sampling (and sampling.tools when tools
// or a tool choice are given, sampling.context when includeContext is
// other than "none").
func (r *Request) CreateMessage(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if err := r.canCall(); err != nil {
		return nil, err
	}
	sc := r.clientCaps().Sampling
	switch {
	case sc == nil:
		return nil, fmt.Errorf("%w: sampling", ErrClientCapability)
	case (len(p.Tools) > 0 || p.ToolChoice != nil) && sc.Tools == nil:
		return nil, fmt.Errorf("%w: sampling.tools", ErrClientCapability)
	case p.IncludeContext != "" && p.IncludeContext != mcp.IncludeContextNone && sc.Context == nil:
		return nil, fmt.Errorf("%w: sampling.context", ErrClientCapability)
	}
	var res mcp.CreateMessageResult
	if err := r.checkedCall(ctx, mcp.MethodSamplingCreateMessage, p, nil, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ListRoots asks the client for its roots (roots/list). It needs a legacy
// session whose client declared roots.
func (r *Request) ListRoots(ctx context.Context) (*mcp.ListRootsResult, error) {
	if err := r.canCall(); err != nil {
		return nil, err
	}
	if r.clientCaps().Roots == nil {
		return nil, fmt.Errorf("%w: roots", ErrClientCapability)
	}
	var res mcp.ListRootsResult
	if err := r.checkedCall(ctx, mcp.MethodRootsList, nil, nil, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// CloseStream ends the connection that carries this request's SSE
// stream, telling the client (with retry:) when to resume it; messages
// sent meanwhile wait in the event store and the client collects them
// with GET and Last-Event-ID (SEP-1699). It does nothing on transports
// that cannot resume a stream (stdio, session-less HTTP).
func (r *Request) CloseStream() {
	if r.session != nil && r.session.closeStream != nil && !r.ended.Load() {
		r.session.closeStream(r.id)
	}
}

// canCall enforces SEP-2260: server→client requests only from inside the
// handler of a request on a legacy session (and never in an era that has
// none: era.canCall).
func (r *Request) canCall() error {
	if err := r.era().canCall(); err != nil {
		return err
	}
	if r.session == nil || r.out == nil {
		return ErrNoSession
	}
	if r.ended.Load() {
		return ErrRequestEnded
	}
	return nil
}

// era returns the request's era.
func (r *Request) era() era { return eras[r.eraID] }
