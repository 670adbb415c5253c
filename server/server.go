package server

import (
	"context"

	"github.com/mcpkit/mcpkit/internal/workers"
	"github.com/mcpkit/mcpkit/store"

	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/taskrun"
	"github.com/mcpkit/mcpkit/transport"
)

// DefaultPageSize is how many entries one page of a list result holds
// when Options.PageSize is zero.
const DefaultPageSize = 100

// notifyTimeout bounds the delivery of one list_changed or
// resources/updated notification to one session, so that a client that
// stopped reading cannot stall a registration.
const notifyTimeout = 5 * time.Second

// Options configures a Server. The zero value is usable: it serves
// whatever is registered, with the defaults below.
type Options struct {
	// Info identifies the server to clients (serverInfo). An empty name
	// is sent as "mcpkit".
	Info mcp.Implementation
	// Instructions tell the model how to use the server.
	Instructions string
	// Logger receives the server's own diagnostics. Nil discards them.
	Logger *slog.Logger
	// MaxRegistrationErrors bounds how many failed registrations the
	// server keeps for Err (a gateway re-registers what its upstreams
	// list, so a faulty upstream could otherwise grow the list without
	// end); later ones are counted, and logged like the others. Zero
	// or less: DefaultMaxRegistrationErrors.
	MaxRegistrationErrors int
	// PageSize is the number of entries per page of tools/list,
	// prompts/list, resources/list and resources/templates/list.
	// Default DefaultPageSize.
	PageSize int
	// Logging declares the logging capability, which lets handlers send
	// log messages to the client (Request.Log). Off by default.
	Logging bool
	// Limits bound each incoming message on stream transports.
	Limits jsonrpc.Limits
	// MaxInFlight bounds the requests one session handles at once.
	// Default jsonrpc.DefaultMaxInFlight. ping and initialize take no
	// slot: they are answered at once, however busy the session.
	MaxInFlight int
	// MaxQueued bounds the requests of one session that wait for a slot
	// while the session goes on reading (answers to the server's own
	// requests, cancellations and pings still get through); beyond it,
	// reading pauses. Default jsonrpc.DefaultMaxQueued; negative: none.
	MaxQueued int
	// DrainTimeout bounds the end of a stdio session: when the client
	// closes the server's input, the requests already read run to their
	// answers, at most this long (then they are answered with an error)
	// and Serve returns. Default jsonrpc.DefaultDrainTimeout; negative:
	// Serve returns at once, answering nothing more.
	DrainTimeout time.Duration
	// CallTimeout bounds each server→client request (elicitation,
	// sampling, roots, ping) whose context has no deadline. Zero: only
	// the handler's context bounds it — an elicitation waits for a human.
	CallTimeout time.Duration
	// CacheTTL and CacheScope are the cache hints of cacheable 2026
	// results (server/discover, the lists, resources/read) when the
	// handler sets none (SEP-2549). Defaults: 0 (revalidate every time)
	// and "private".
	CacheTTL   time.Duration
	CacheScope mcp.CacheScope
	// RequestStateKeys are the AES-256 keys (RequestStateKeySize bytes
	// each) that seal the requestState of input-required results: the
	// first seals, all open, so a key can be rotated out after
	// RequestStateTTL. Give every instance of a multi-instance deployment
	// the same keys (ParseRequestStateKey reads one from configuration).
	// Empty: one random key, made by New (one instance). An all-zero key
	// is an unset one: New skips it and logs an error.
	RequestStateKeys []RequestStateKey
	// RequestStateTTL is how long a sealed requestState is accepted.
	// Default DefaultRequestStateTTL.
	RequestStateTTL time.Duration
	// MaxRequestStateBytes caps what a sealed requestState may carry (the
	// handler's state, the forms asked and the answers kept from earlier
	// rounds), before encryption and encoding; a round that would exceed
	// it fails with -32603 naming the cause, instead of handing the
	// client a state its retry could not send back within a body limit.
	// Default DefaultMaxRequestStateBytes.
	MaxRequestStateBytes int
	// DisableLegacyShim stops the server from fulfilling input-required
	// answers on legacy sessions itself; such requests then fail (-32603).
	DisableLegacyShim bool
	// ShimRounds caps the input rounds the legacy shim runs for one
	// request. Default DefaultShimRounds.
	ShimRounds int
	// TaskStore keeps the tasks of task-supporting tools. Default: a
	// MemoryTaskStore.
	TaskStore store.TaskStore
	// TaskTTL is the longest a task is kept (a 2025-11-25 client may ask
	// for less). Default DefaultTaskTTL.
	TaskTTL time.Duration
	// Visibility, when set, hides tools, prompts, resources and resource
	// templates from the callers it refuses: in lists, in calls (a hidden
	// item is answered exactly as an unknown one) and in change
	// notifications. Lists are then "private" on the modern wire
	// (cacheScope), whatever CacheScope says. auth.Visibility builds one
	// from the per-tool scopes. Nil: every caller sees everything.
	Visibility VisibilityFunc
	// KeepAlive, when positive, is how often the server pings the client
	// of a legacy session it serves over a connection (Serve, Connect:
	// stdio and other stream transports); a ping not answered within
	// KeepAliveTimeout ends the session. Zero: no pings. Sessions of the
	// Streamable HTTP server end by their idle TTL instead.
	KeepAlive time.Duration
	// KeepAliveTimeout bounds each keepalive ping. Default
	// DefaultKeepAliveTimeout.
	KeepAliveTimeout time.Duration
	// tick is the clock of the keepalive (tests; nil: the wall clock).
	tick tickFunc
	// Interceptors wrap the handling of every request and notification
	// the server receives, and of every message it sends, in both eras
	// (package intercept; docs/design/interceptors.md). The first is the
	// outermost. intercept.Recover always runs outside them.
	Interceptors []intercept.Interceptor
	// MaxTasks bounds the tasks this server runs at once; a tools/call
	// that would start one more is refused with -32603 ("too many tasks
	// running"). Default DefaultMaxTasks.
	MaxTasks int
	// TaskLease is how long a task survives its owner's silence: the
	// server renews the lease of each task it runs every TaskLease/3,
	// and any instance sharing the TaskStore fails a task whose lease ran
	// out (its owner died). Keep it well above the clock skew between
	// instances. Default DefaultTaskLease.
	TaskLease time.Duration
	// TaskNotificationQueue bounds the notifications (progress, log
	// messages) a 2025-11-25 task holds for its client while no
	// tasks/result request is in flight to carry them; past it the
	// oldest is dropped. Default DefaultTaskNotificationQueue.
	TaskNotificationQueue int
	// SettledTasks bounds the terminal task records (completed, failed,
	// cancelled) this server keeps in memory, oldest dropped first, to
	// answer tasks/get and tasks/result without a TaskStore read: a
	// terminal record never changes, so the copy answers as the store
	// would until the task's TTL (on a shared store such as Redis, the
	// owner of a task serves the poll that finds it completed, and its
	// tasks/result, with no round trip). Default DefaultSettledTasks;
	// negative: none kept.
	SettledTasks int
	// SettledTaskBytes bounds the bytes of those records (their results
	// and errors); a larger record is not kept. Default
	// DefaultSettledTaskBytes.
	SettledTaskBytes int
	// Observe, when set, sees every message a session reads (in=true) and
	// writes. It must not retain msg. Tests use it to check the wire.
	Observe func(in bool, msg []byte)
	// MaxToolResultBytes caps the size of a tool's result, measured on
	// its JSON encoding (content, structuredContent and _meta, before the
	// server adds its own _meta), for typed and raw tools, in both eras,
	// and for the result of a task. A larger result is replaced by a tool
	// error (isError, naming the size and the cap), which the model sees
	// and can act on, and logged at Warn level. Zero:
	// DefaultMaxToolResultBytes; negative: no cap.
	MaxToolResultBytes int
	// ProtocolVersions narrows the protocol revisions the server serves
	// to those listed (mcp.Version20260728, mcp.Version20251125, …); nil
	// or empty: every revision this package serves. A revision not
	// served is refused as its era prescribes: initialize offers the
	// newest legacy revision served instead, or, when no legacy revision
	// is served, fails with -32602 naming the revisions served; a 2026
	// request claiming one fails with -32022 (HTTP 400) and
	// data.supported; server/discover advertises only the modern ones
	// served; on Streamable HTTP a legacy request whose
	// MCP-Protocol-Version is not served is answered 400. A listed
	// revision this package does not know is a configuration error:
	// ignored, and reported by Err (docs/design/revisions.md).
	ProtocolVersions []string
	// Declare names capabilities the server declares even while nothing
	// of theirs is registered: Tools, Prompts and Resources set here (any
	// non-nil value) are declared, with listChanged (and subscribe), and
	// their lists answered, empty when they are. A server whose items
	// come and go (a gateway whose upstreams connect later) sets them, so
	// that a client that initialized meanwhile still lists them later.
	// Other fields are ignored.
	Declare mcp.ServerCapabilities
}

// Server is an MCP server. Register what it offers, then serve it with
// Serve (one connection) or a transport's handler. All methods are safe
// for concurrent use, and registrations may change while sessions run:
// each change notifies the sessions that can hear it.
type Server struct {
	opts Options
	log  *slog.Logger

	tools     registry[*toolEntry]
	prompts   registry[*promptEntry]
	resources registry[*resourceEntry]
	templates registry[*templateEntry]

	extMethods       registry[*extMethod]       // AddMethod
	extNotifications registry[*extNotification] // AddNotification

	serverInfoJSON jsontext.Value // opts.Info, encoded once for result _meta
	serverInfoMeta mcp.Meta       // {serverInfo: opts.Info}, shared by results without _meta
	sealer         *sealer        // seals the requestState of input-required results

	mu         sync.Mutex
	completion CompletionHandler
	extensions map[string]jsontext.Value // AddExtension
	sessions   map[*Session]struct{}
	listeners  map[*listener]struct{}
	relays     map[int]func(method, uri string) // see addRelay
	relayN     int

	batch batchState // Batch

	regErrs registrationErrors // Err

	served served // Options.ProtocolVersions (versions.go)

	tasks *taskrun.Manager // the task machinery (task.go)

	// The interceptor chains (intercept.go): userChain is
	// Options.Interceptors composed (nil: none); inboundChain serves
	// every inbound request.
	userChain    intercept.Interceptor
	inboundChain intercept.Handler
}

// New returns a Server with the given options; opts may be nil.
func New(opts *Options) *Server {
	s := &Server{sessions: make(map[*Session]struct{})}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Info.Name == "" {
		s.opts.Info.Name = "mcpkit"
	}
	if s.opts.Info.Version == "" {
		s.opts.Info.Version = "0.0.0"
	}
	if s.opts.PageSize <= 0 {
		s.opts.PageSize = DefaultPageSize
	}
	// Invalid UTF-8 in a name becomes U+FFFD: New has nothing to fail on.
	info, _ := json.Marshal(s.opts.Info, jsontext.AllowInvalidUTF8(true))
	s.serverInfoJSON = info
	s.serverInfoMeta = mcp.Meta{mcp.MetaKeyServerInfo: s.serverInfoJSON}
	var zeroKeys []int
	s.sealer, zeroKeys = newSealer(s.opts.RequestStateKeys, s.opts.RequestStateTTL)
	if s.sealer.max = s.opts.MaxRequestStateBytes; s.sealer.max <= 0 {
		s.sealer.max = DefaultMaxRequestStateBytes
	}
	if s.opts.TaskStore == nil {
		s.opts.TaskStore = store.NewMemoryTaskStore(nil)
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	var verrs []error
	s.served, verrs = servedVersions(s.opts.ProtocolVersions)
	for _, err := range verrs {
		_ = s.noteRegistration(err)
	}
	s.tasks = s.newTasks()
	for _, i := range zeroKeys {
		s.log.Error("server: Options.RequestStateKeys holds an all-zero key; it is ignored", "index", i)
	}
	s.buildChains()
	return s
}

// Capabilities returns what the server offers now: each capability
// follows what is registered.
func (s *Server) Capabilities() mcp.ServerCapabilities {
	var c mcp.ServerCapabilities
	if hasTools(s) {
		c.Tools = &mcp.ToolsCapability{ListChanged: true}
	}
	if hasPrompts(s) {
		c.Prompts = &mcp.PromptsCapability{ListChanged: true}
	}
	if hasResources(s) {
		c.Resources = &mcp.ResourcesCapability{Subscribe: true, ListChanged: true}
	}
	s.mu.Lock()
	if s.completion != nil {
		c.Completions = &struct{}{}
	}
	s.mu.Unlock()
	if s.opts.Logging {
		c.Logging = &struct{}{}
	}
	c.Extensions = s.extensionsCopy()
	if s.hasTaskTools() {
		c.Tasks = &mcp.TasksCapability{List: &struct{}{}, Cancel: &struct{}{},
			Requests: map[string]map[string]struct{}{"tools": {"call": {}}}}
	}
	return c
}

// modernCapabilities is what server/discover advertises: the 2026 view,
// where tasks are the io.modelcontextprotocol/tasks extension.
func (s *Server) modernCapabilities() mcp.ServerCapabilities {
	c := s.Capabilities()
	if c.Tasks != nil {
		c.Tasks = nil
		if c.Extensions == nil {
			c.Extensions = make(map[string]jsontext.Value, 1)
		}
		c.Extensions[mcp.ExtensionTasks] = jsontext.Value("{}")
	}
	return c
}

// Serve runs one session over t until the client closes the connection
// (a clean end returns nil), ctx ends, or an error occurs. It is what a
// stdio server's main calls. When the client ends the input (closes
// standard input: the stdio shutdown), Serve returns once the requests
// already read are answered, within Options.DrainTimeout. A principal in
// ctx (WithPrincipal) is the session's: its tasks and sealed request
// state are bound to it.
func (s *Server) Serve(ctx context.Context, t transport.Conn) error {
	ss := s.connect(t, principalFrom(ctx))
	stop := context.AfterFunc(ctx, func() { ss.Close() })
	defer stop()
	err := ss.Wait()
	s.removeSession(ss) // now, not when connect's goroutine gets to it
	if errors.Is(err, jsonrpc.ErrClosed) && ctx.Err() != nil {
		return ctx.Err()
	}
	if err == nil || jsonrpc.IsEOF(err) || errors.Is(err, jsonrpc.ErrClosed) {
		return nil
	}
	return err
}

// connIdleWorkers bounds the idle goroutines each session over a
// connection keeps warm for its handlers (beside its reader goroutine).
const connIdleWorkers = 2

// Connect starts a session over t and returns at once; the session runs
// until the client goes away or Close is called.
func (s *Server) Connect(t transport.Conn) *Session { return s.connect(t, "") }

// connect starts a session whose requests act for principal (see
// WithPrincipal) unless their own context names one.
func (s *Server) connect(t transport.Conn, principal string) *Session {
	s.startServing()
	ss := newSession(s)
	ss.principal = principal
	// The connection's handlers run on warm goroutines, as HTTP sessions'
	// do (docs/design/streamable-http.md): at most connIdleWorkers wait,
	// so that many connections hold few stacks; the pool ends with the
	// session.
	pool := workers.New(connIdleWorkers)
	ss.conn = jsonrpc.NewConn(t, &jsonrpc.ConnOptions{
		Handler:      (*sessionHandler)(ss),
		Limits:       s.opts.Limits,
		MaxInFlight:  s.opts.MaxInFlight,
		MaxQueued:    s.opts.MaxQueued,
		CallTimeout:  s.opts.CallTimeout,
		DrainTimeout: s.opts.DrainTimeout,
		InputEnded:   ss.inputEnded,
		Logger:       s.log,
		Observe:      s.opts.Observe,
		Go:           pool.Go,
	})
	s.addSession(ss)
	ss.conn.Start()
	s.keepAlive(ss)
	go func() { // owned by the session: ends when its connection ends
		<-ss.conn.Done()
		pool.Close()
		s.removeSession(ss)
	}()
	return ss
}

func (s *Server) addSession(ss *Session) {
	s.mu.Lock()
	s.sessions[ss] = struct{}{}
	s.mu.Unlock()
}

func (s *Server) removeSession(ss *Session) {
	s.mu.Lock()
	delete(s.sessions, ss)
	s.mu.Unlock()
}

// Sessions returns the sessions open now.
func (s *Server) Sessions() []*Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Session, 0, len(s.sessions))
	for ss := range s.sessions {
		out = append(out, ss)
	}
	return out
}

// announce delivers a list change (uri "") or a resource update to this
// server's sessions and listen streams, and hands it to the relays that
// carry it to other instances of the deployment.
func (s *Server) announce(method, uri string) {
	s.deliverChange(method, uri)
	s.mu.Lock()
	relays := make([]func(string, string), 0, len(s.relays))
	for _, fn := range s.relays {
		relays = append(relays, fn)
	}
	s.mu.Unlock()
	for _, fn := range relays {
		fn(method, uri)
	}
}

// deliverChange sends a list change or resource update to every open
// listen stream and every initialized session that can hear it. It does
// not wait for a session's client (changes.go): one that does not read
// cannot delay the caller or the other sessions.
func (s *Server) deliverChange(method, uri string) {
	var items []Item // the items a list change names (nil: unnamed)
	if method != mcp.NotificationResourcesUpdated {
		items = s.changedItems(method, uri)
	}
	s.notifyListeners(method, uri, items)
	for _, ss := range s.Sessions() {
		// A session that has not answered initialize hears nothing (and
		// its visibility is not asked); deliverWhenReady holds a change
		// for one that waits for notifications/initialized.
		if !ss.initializedOrReady() || (method == mcp.NotificationResourcesUpdated && !ss.isSubscribed(uri)) {
			continue
		}
		if !s.hears(ss.viewContext(), Caller{Principal: ss.principalOf(), Session: ss}, method, uri, items) {
			continue
		}
		ss.deliverWhenReady(method, uri)
	}
}

// addRelay registers fn to be told of every change announced here; the
// returned function removes it.
func (s *Server) addRelay(fn func(method, uri string)) (remove func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.relays == nil {
		s.relays = make(map[int]func(string, string))
	}
	s.relayN++
	n := s.relayN
	s.relays[n] = fn
	return func() {
		s.mu.Lock()
		delete(s.relays, n)
		s.mu.Unlock()
	}
}

// pageSize returns the configured page size.
func (s *Server) pageSize() int { return s.opts.PageSize }
