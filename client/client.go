package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// Handlers for the requests a server may send. Each registered handler
// declares the matching client capability: in initialize (legacy), and in
// the io.modelcontextprotocol/clientCapabilities of every modern request.
type (
	// ElicitHandler answers elicitation/create: it asks the user and
	// returns accept (with content, in form mode), decline or cancel.
	ElicitHandler func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// CreateMessageHandler answers sampling/createMessage. To refuse with a
	// specific code (such as -1 for "user rejected"), return a
	// *jsonrpc.Error with that code.
	CreateMessageHandler func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	// ListRootsHandler answers roots/list.
	ListRootsHandler func(ctx context.Context) (*mcp.ListRootsResult, error)
)

// Options configures a Client. The zero value is usable: it detects the
// server's era (see ProtocolVersion) and declares no capabilities.
type Options struct {
	// Info identifies the client (clientInfo in initialize, and
	// io.modelcontextprotocol/clientInfo in every 2026-07-28 request). An
	// empty name is sent as "mcpkit".
	Info mcp.Implementation
	// ProtocolVersion selects the era and the revision:
	//
	//   - "" (the default): automatic. Connect probes with server/discover
	//     in the newest modern revision this client speaks (ModernVersions)
	//     before anything else. A DiscoverResult, or a recognized modern
	//     error (-32022 with data.supported naming a revision we speak,
	//     -32020, -32021), makes the connection modern; any other error,
	//     no answer within DiscoverTimeout, or (Streamable HTTP) an HTTP
	//     error without a recognized modern error body makes it legacy:
	//     initialize offering mcp.LatestLegacy, on the same connection. If
	//     the connection ends during the probe (some legacy stdio servers
	//     exit on an unknown request), Connect fails with ErrProbeClosed:
	//     relaunch the server and connect again with a legacy revision
	//     here.
	//   - a legacy revision (such as mcp.LatestLegacy): initialize offering
	//     it, with no probe. The client accepts any legacy revision the
	//     server answers with and refuses others.
	//   - a modern revision (mcp.Version20260728): modern, with no probe
	//     and no handshake; Discover asks for the server's capabilities.
	//
	// Era and ProtocolVersion tell what was chosen. Nothing is remembered
	// across Connect calls.
	ProtocolVersion string
	// DiscoverTimeout bounds the server/discover probe of automatic era
	// selection. Default DefaultDiscoverTimeout.
	DiscoverTimeout time.Duration
	// Logger receives the client's own diagnostics. Nil discards them.
	Logger *slog.Logger
	// CallTimeout bounds each request whose context has no deadline,
	// except subscriptions/listen (Listen), which lasts as long as its
	// context, and a legacy server's tasks/result (TaskResult), which
	// lasts as long as the task. A call the multi round-trip driver
	// repeats is several requests: each is bounded, the handlers' time
	// between them is not.
	// Zero: only the caller's context bounds it.
	CallTimeout time.Duration
	// Cache keeps the cacheable results of a modern server (tools/list,
	// prompts/list, resources/list, resources/templates/list and
	// resources/read) for the ttlMs the server gave them (see Cache).
	// Nil: a cache of the client's own. A Cache may be shared by clients
	// of the same server: results the server marked "public" are then
	// shared, "private" ones stay with the client that fetched them.
	Cache *Cache
	// NoCache turns the cache off: every call goes to the server.
	NoCache bool
	// Limits bound each incoming message.
	Limits jsonrpc.Limits
	// MaxInFlight bounds the server requests handled at once.
	MaxInFlight int
	// KeepAlive, when positive, is how often the client pings a legacy
	// server; a ping not answered within KeepAliveTimeout closes the
	// connection (Wait then returns ErrKeepAlive). Zero: no pings. Modern
	// connections are never pinged (2026-07-28 has no ping).
	KeepAlive time.Duration
	// KeepAliveTimeout bounds each keepalive ping. Default
	// DefaultKeepAliveTimeout.
	KeepAliveTimeout time.Duration
	// tick is the clock of the keepalive (tests; nil: the wall clock).
	tick tickFunc
	// Interceptors wrap every request and notification the client sends
	// and receives, in both eras, and the answers to the input requests
	// of input-required results (package intercept;
	// docs/design/interceptors.md). The first is the outermost.
	Interceptors []intercept.Interceptor
	// Observe, when set, sees every message read (in=true) and written.
	Observe func(in bool, msg []byte)

	// ElicitHandler answers elicitation/create and declares elicitation
	// (form mode, plus URL mode when ElicitationURL is set).
	ElicitHandler ElicitHandler
	// ElicitationURL declares URL-mode elicitation as well.
	ElicitationURL bool
	// ElicitationDefaults fills the requested schema's defaults into the
	// omitted fields of an accepted form response (SEP-1034) and declares
	// elicitation.form.applyDefaults.
	ElicitationDefaults bool
	// CreateMessageHandler answers sampling/createMessage and declares sampling.
	CreateMessageHandler CreateMessageHandler
	// SamplingTools declares sampling.tools (tool use in sampling).
	SamplingTools bool
	// ListRootsHandler answers roots/list and declares roots (with listChanged:
	// call RootsChanged when they change).
	ListRootsHandler ListRootsHandler

	// ManualInput turns off the multi round-trip driver (SEP-2322). By
	// default, when a modern server answers tools/call, prompts/get or
	// resources/read with an input-required result and at least one of
	// Elicitation, Sampling and Roots is set, the client answers the
	// result's input requests with those same handlers (the ones that
	// answer a legacy server's requests; SEP-1034 defaults included) and
	// repeats the call itself: a new request with a new JSON-RPC id, the
	// original params and _meta with a fresh envelope, this round's
	// answers as inputResponses and the server's requestState byte for
	// byte (none when the server sent none); a result with a requestState
	// and no input requests is repeated after a pause of 50 ms, doubling
	// up to 250 ms. The input requests of one round are answered one at
	// a time, in the order the server listed them (as the legacy shim of
	// this module's server asks them): a person sees one question at a
	// time, and a handler error ends the call with that error before the
	// next one is asked. Every input request is checked before any is
	// asked: one this client has no handler for ends the call with an
	// *InputRequiredError wrapping ErrNoInputHandler.
	//
	// With ManualInput set (or no handler registered) the call returns
	// the *InputRequiredError instead, carrying the input requests, the
	// requestState and the raw result; repeat it with InputResponses and
	// RequestState set in the params. The capabilities a request declares
	// still come from the registered handlers.
	ManualInput bool
	// Tasks opts into tasks (long-running tool calls; see StartToolTask).
	// On a 2026-07-28 connection every request then declares the tasks
	// extension (io.modelcontextprotocol/tasks) in its client
	// capabilities, so the server may answer any tools/call with a task
	// (resultType "task") instead of its result; CallTool then waits for
	// the task (see TaskResult) and returns its result as if the call had
	// answered at once. On a legacy connection it changes nothing: there
	// the client asks for a task explicitly (StartToolTask). Without it,
	// only the requests of StartToolTask, RunToolTask and the tasks
	// methods declare the extension.
	Tasks bool
	// TaskPollInterval is how often TaskResult asks a 2026-07-28 server
	// for a task's state when the server suggests no interval
	// (pollIntervalMs). Zero or less: DefaultTaskPollInterval (1 s).
	TaskPollInterval time.Duration
	// TaskRetryBackoff is how long TaskResult (and RunToolTask, CallTool
	// with a task) waits before it sends tasks/result (2025-11-25) or
	// tasks/get (2026-07-28) again after a transient failure: a broken
	// connection, an HTTP 5xx, 408, 425 or 429 (a proxy, or an instance
	// restarting behind it), a stream the transport lost, or the server's
	// "try again later" (jsonrpc.ErrUnavailable). Each further retry
	// waits twice as long, up to TaskRetryMaxBackoff; the retries go on
	// until the caller's context ends, and the error is then returned as
	// an error, never as the task's failure. Zero or less:
	// DefaultTaskRetryBackoff (250 ms).
	TaskRetryBackoff time.Duration
	// TaskRetryMaxBackoff is the longest wait between two such retries.
	// Zero or less: DefaultTaskRetryMaxBackoff (5 s).
	TaskRetryMaxBackoff time.Duration
	// wait is the clock of those retries (tests; nil: a timer).
	wait func(ctx context.Context, d time.Duration) error

	// MaxInputRounds bounds how many times the driver repeats one call;
	// past it the call fails with an *InputRequiredError wrapping
	// ErrTooManyInputRounds. Zero or less: DefaultMaxInputRounds (10).
	MaxInputRounds int

	// Notification handlers. They run one at a time, in arrival order, on
	// a goroutine the client owns; they may call the client.
	OnLog                  func(ctx context.Context, p *mcp.LoggingMessageParams)
	OnToolsListChanged     func(ctx context.Context)
	OnPromptsListChanged   func(ctx context.Context)
	OnResourcesListChanged func(ctx context.Context)
	OnResourceUpdated      func(ctx context.Context, uri string)
	OnElicitationComplete  func(ctx context.Context, elicitationID string)
	// OnNotification receives every other notification.
	OnNotification func(ctx context.Context, method string, params jsontext.Value)
	// Extensions are the extensions this client supports, by id (such
	// as "io.modelcontextprotocol/ui"), each with its settings (any value
	// that encodes as a JSON object; nil: {}). They are declared in
	// capabilities.extensions: in initialize (legacy) and in every
	// 2026-07-28 request's envelope. A value that is not an object fails
	// Connect.
	Extensions map[string]any
	// StrictServerRequests enforces SEP-2260 on legacy connections too:
	// an elicitation, sampling or roots request that arrives while the
	// client has no request of its own in flight is answered -32602
	// instead of going to its handler. SEP-2260 belongs to 2026-07-28;
	// the revisions up to 2025-11-25 allow such requests and real servers
	// send them, so by default a legacy connection serves them
	// (docs/design/server-requests.md).
	StrictServerRequests bool
	// Resume continues a stored legacy session (SessionState, from
	// Client.SessionState) instead of opening one with initialize, when
	// the transport has sessions (transport/streamable) and
	// ProtocolVersion is not modern: Connect gives the transport the
	// session id and revision and pings the server. When the server
	// answers, the session goes on (Resumed reports true) with the
	// capabilities and identity of the state; when it refuses (404: the
	// session is gone, or any other error answer), Connect forgets the
	// session and goes on as if Resume were nil (initialize, or the era
	// detection), and Resumed reports false. A state that cannot be a
	// legacy session fails Connect with ErrBadSessionState.
	// docs/design/client-resume.md.
	Resume *SessionState
	// Listen starts the legacy Streamable HTTP transport's GET listening
	// stream even when no server-request handler is set, so that the
	// notifications a server sends outside any request (list changes,
	// resource updates) reach the handlers above. With Elicitation,
	// Sampling or Roots set it starts anyway, and so does setting the
	// first of them after Connect (SetListRootsHandler).
	Listen bool
}

// notificationQueue bounds notifications waiting for their handler; when
// it is full, reading from the server pauses.
const notificationQueue = 256

// Client is a connection to one MCP server. All methods are safe for
// concurrent use.
type Client struct {
	opts Options
	log  *slog.Logger
	conn *jsonrpc.Conn
	caps mcp.ClientCapabilities // declared; modern: guarded by mu after Connect

	hs      atomic.Pointer[inputHandlers] // see handlers
	lenient atomic.Bool                   // serve unsolicited server requests (see associated)

	// seam is the era the connection speaks (eraConn, see mode):
	// pendingEra until Connect chooses, then legacyEra or modernEra.
	// Written only by Connect, read by the reader goroutine too (the
	// interceptors' Call.Era of a message that arrives meanwhile).
	seam atomic.Pointer[eraBox]
	init mcp.InitializeResult // legacy: the initialize result

	// Modern state (modernEra).
	exts     map[string]jsontext.Value // Options.Extensions, encoded once
	capsJSON jsontext.Value            // the 2026 clientCapabilities of every request
	infoJSON jsontext.Value            // Options.Info, encoded once
	cache    *Cache                    // nil: no caching
	mu       sync.Mutex
	version  string              // the modern revision of the next request
	logLevel mcp.LoggingLevel    // sent as io.modelcontextprotocol/logLevel ("" none)
	discover *mcp.DiscoverResult // the last server/discover result
	tools    map[string]toolHeaders
	// outputs are the output schemas of listed tools (both eras), for
	// the typed CallTool; listedAll: every page has been listed once.
	outputs   map[string]*outputSchema
	listedAll bool
	subs      map[mcp.ID]*Subscription
	nsubs     atomic.Int32 // len(subs), read without mu by the reader

	// capsTasksJSON is capsJSON declaring the tasks extension: the
	// capabilities of the task requests (see tasksExt).
	capsTasksJSON jsontext.Value

	// identity is the server's serverInfo, which results need not
	// repeat; resultOpts decode a modern result with decodeResultMeta,
	// and resultMetaFn (resultMeta) is the same for the fast decode of a
	// tools/call result (wire.DecodeToolResult).
	identity     atomic.Pointer[identity]
	resultOpts   json.Options
	resultMetaFn func([]byte, *mcp.Meta) error

	chain intercept.Interceptor // Options.Interceptors composed; nil: none
	// keepAliveErr is why the keepalive closed the connection.
	keepAliveErr atomic.Pointer[error]

	progress sync.Map // progress token (mcp.ID) → func(*mcp.ProgressParams)

	// taskRequired: listed tools whose execution.taskSupport is
	// "required" (legacy; guarded by mu). taskWatch: task id →
	// func(*Task), the WithTaskStatus of a call waiting for it.
	taskRequired map[string]bool
	taskWatch    sync.Map

	notes     chan *jsonrpc.Message
	notesDone chan struct{}
	stop      context.CancelFunc
	closeOnce sync.Once
	t         transport.Conn
	closeErr  error
	resumed   bool // Connect continued Options.Resume's session
}

// ErrUnsupportedVersion is returned by Connect when the server answers
// with a protocol revision the client does not speak, or when
// Options.ProtocolVersion names a modern revision it does not speak.
var ErrUnsupportedVersion = errors.New("client: the server chose a protocol version this client does not support")

// Connect connects to the server over t in the era Options.ProtocolVersion
// selects (automatic by default: see there).
//
// Legacy: it sends initialize, checks the revision the server chose, and
// sends notifications/initialized. When t has a listening stream for
// server messages that belong to no request (it implements interface{
// Listen() }, as the Streamable HTTP transport does with its GET stream)
// and the client can answer server requests (Elicitation, Sampling or
// Roots is set) or Options.Listen asks for it, Connect calls Listen once
// the session is up. Listen must
// not block: Connect does not wait for the stream.
//
// Modern (2026-07-28): there is no handshake and no session; every
// request carries the envelope (protocolVersion, clientCapabilities,
// clientInfo) in params._meta, and the GET listening stream is not used
// (see Listen for change notifications).
//
// On failure the connection is closed.
func Connect(ctx context.Context, t transport.Conn, opts *Options) (*Client, error) {
	c := &Client{t: t, notes: make(chan *jsonrpc.Message, notificationQueue), notesDone: make(chan struct{})}
	c.setMode(pendingEra{(*legacyEra)(c)})
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.Info.Name == "" {
		c.opts.Info.Name = "mcpkit"
	}
	if c.opts.Info.Version == "" {
		c.opts.Info.Version = "0.0.0"
	}
	if c.opts.DiscoverTimeout <= 0 {
		c.opts.DiscoverTimeout = DefaultDiscoverTimeout
	}
	c.log = c.opts.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	exts, err := encodeExtensions(c.opts.Extensions)
	if err != nil {
		_ = t.Close()
		return nil, err
	}
	c.exts = exts
	c.hs.Store(&inputHandlers{elicit: c.opts.ElicitHandler, sample: c.opts.CreateMessageHandler, roots: c.opts.ListRootsHandler})
	c.caps = c.capabilities(c.handlers())
	c.chain = intercept.Chain(c.opts.Interceptors...)
	if err := c.prepareModern(); err != nil {
		_ = t.Close()
		return nil, err
	}
	v := c.opts.ProtocolVersion
	if mcp.IsModern(v) && !slices.Contains(modernVersions, v) {
		_ = t.Close()
		return nil, fmt.Errorf("%w: Options.ProtocolVersion %q", ErrUnsupportedVersion, v)
	}
	c.conn = jsonrpc.NewConn(&tap{Conn: t, c: c}, &jsonrpc.ConnOptions{
		Handler:     (*handler)(c),
		Limits:      c.opts.Limits,
		MaxInFlight: c.opts.MaxInFlight,
		// CallTimeout is applied by the client (see withTimeout), which
		// exempts subscriptions/listen.
		Logger:  c.log,
		Observe: c.opts.Observe,
	})
	notesCtx, stop := context.WithCancel(context.Background())
	c.stop = stop
	go c.runNotifications(notesCtx) // owned by c: ends at Close
	c.conn.Start()
	resumed := false
	if c.opts.Resume != nil && !mcp.IsModern(v) {
		resumed, err = c.resume(ctx)
	}
	switch {
	case err != nil || resumed:
	case v == "":
		err = c.detect(ctx)
	case mcp.IsModern(v):
		c.setModern(v, nil)
	default:
		err = c.initialize(ctx, v)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	c.mode().connected()
	return c, nil
}

// capabilities are what the client declares with handlers hs.
func (c *Client) capabilities(hs *inputHandlers) mcp.ClientCapabilities {
	var caps mcp.ClientCapabilities
	if hs.elicit != nil {
		caps.Elicitation = &mcp.ElicitationCapability{Form: &mcp.FormElicitationCapability{ApplyDefaults: c.opts.ElicitationDefaults}}
		if c.opts.ElicitationURL {
			caps.Elicitation.URL = &struct{}{}
		}
	}
	if hs.sample != nil {
		caps.Sampling = &mcp.SamplingCapability{}
		if c.opts.SamplingTools {
			caps.Sampling.Tools = &struct{}{}
		}
	}
	if hs.roots != nil {
		caps.Roots = &mcp.RootsCapability{ListChanged: true}
	}
	caps.Extensions = c.exts
	return caps
}

// initialize runs the legacy handshake offering version.
func (c *Client) initialize(ctx context.Context, version string) error {
	params := &mcp.InitializeParams{
		ProtocolVersion: version,
		Capabilities:    c.caps,
		ClientInfo:      c.opts.Info,
	}
	cctx, cancel := c.withTimeout(ctx, mcp.MethodInitialize)
	defer cancel()
	if err := c.rpc(cctx, mcp.MethodInitialize, params, &c.init, jsonrpc.CallOptions{}, 0); err != nil {
		return fmt.Errorf("client: initialize: %w", err)
	}
	if !slices.Contains(mcp.LegacyVersions(), c.init.ProtocolVersion) {
		return fmt.Errorf("%w: %q", ErrUnsupportedVersion, c.init.ProtocolVersion)
	}
	// Every legacy revision allows requests outside ours; set before
	// notifications/initialized, after which a server may send them.
	c.lenient.Store(!c.opts.StrictServerRequests)
	if err := c.notifyOut(ctx, mcp.NotificationInitialized, nil); err != nil {
		return fmt.Errorf("client: notifications/initialized: %w", err)
	}
	c.setMode((*legacyEra)(c))
	return nil
}

// Era reports the era of the connection: EraLegacy (initialize) or
// EraModern (2026-07-28, per-request envelope).
func (c *Client) Era() Era { return c.mode().era() }

// ProtocolVersion returns the revision in use: the negotiated one
// (legacy), or the one the next request carries (modern; it changes only
// when the server answers -32022 and names another revision this client
// speaks); "" while Connect has not settled the era (an interceptor may
// see a message then).
func (c *Client) ProtocolVersion() string { return c.mode().protocolVersion() }

// ServerInfo returns what the server said about itself: the initialize
// result (legacy), or the io.modelcontextprotocol/serverInfo of the last
// server/discover result (modern), or, before one, the identity the
// server's results carry (see "Result Meta" in the package documentation);
// zero if neither is known.
func (c *Client) ServerInfo() mcp.Implementation { return c.mode().serverInfo() }

// ServerCapabilities returns what the server offers: from initialize
// (legacy) or from the last server/discover result (modern; zero before
// one, see Discover).
func (c *Client) ServerCapabilities() mcp.ServerCapabilities { return c.mode().serverCapabilities() }

// Instructions returns the server's instructions for the model (modern:
// from the last server/discover result).
func (c *Client) Instructions() string { return c.mode().instructions() }

// Close ends the connection, fails calls in flight, and stops the
// notification goroutine. It returns what the transport reported.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.conn.Close()
		c.stop()
		<-c.notesDone
		if c.cache != nil {
			c.cache.forget(c)
		}
		// The connection closed the transport and discarded the result;
		// Close is idempotent, and transports that remember how they ended
		// (transport/command: how the server process exited) report it
		// again.
		c.closeErr = c.t.Close()
	})
	return c.closeErr
}

// Wait blocks until the connection ends and returns why (io.EOF when the
// server closed it).
func (c *Client) Wait() error {
	err := c.conn.Wait()
	if ka := c.keepAliveErr.Load(); ka != nil {
		return *ka
	}
	return err
}

// Done is closed when the connection has ended.
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }

// call sends a request, attaching a progress token when ctx carries a
// progress function (see WithProgress). On a modern connection the
// request carries the envelope, its result is checked, and an
// input-required result is answered (callModern). meta points at the
// Meta of params, a copy the caller owns.
func (c *Client) call(ctx context.Context, method string, params any, meta *mcp.Meta, result any) error {
	_, err := c.send(ctx, method, params, meta, result, nil)
	return err
}

// send is call, reporting how many times the multi round-trip driver
// repeated the request; sent, when set, learns the id of each request
// written for the call before it is written (jsonrpc.CallOptions.Sent).
func (c *Client) send(ctx context.Context, method string, params any, meta *mcp.Meta, result any, sent func(mcp.ID)) (int, error) {
	if fn := progressFunc(ctx); fn != nil && meta != nil {
		token := mcp.StringID(randToken())
		m := make(mcp.Meta, len(*meta)+1)
		for k, v := range *meta {
			m[k] = v
		}
		m[mcp.MetaKeyProgressToken] = token
		*meta = m
		c.progress.Store(token, fn)
		defer c.progress.Delete(token)
	}
	return c.mode().send(ctx, method, params, meta, result, sent)
}

// withTimeout applies Options.CallTimeout to a context without a
// deadline, except for subscriptions/listen, which lasts as long as the
// caller wants, and tasks/result, which lasts as long as the task.
func (c *Client) withTimeout(ctx context.Context, method string) (context.Context, context.CancelFunc) {
	if c.opts.CallTimeout <= 0 || method == mcp.MethodSubscriptionsListen || method == mcp.MethodTasksResult {
		return ctx, func() {}
	}
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.opts.CallTimeout)
}
