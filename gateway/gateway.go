package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/store"
	"github.com/mcpkit/mcpkit/transport"
)

// The defaults of Options and Upstream.
const (
	// DefaultInputTimeout is how long a pending upstream call waits for
	// the client's answer to one of its input requests.
	DefaultInputTimeout = 10 * time.Minute
	// DefaultMaxPending bounds the upstream calls held open for the
	// client's answers at once, over all upstreams.
	DefaultMaxPending = 1000
	// DefaultRestartMin and DefaultRestartMax bound the pause before an
	// upstream is connected again; it doubles after each failure.
	DefaultRestartMin = 500 * time.Millisecond
	DefaultRestartMax = 30 * time.Second
	// DefaultConnectTimeout bounds one attempt to connect to an upstream
	// (launch or first request, handshake and the first listing).
	DefaultConnectTimeout = 30 * time.Second
	// DefaultCallTimeout bounds each request to an upstream, the time its
	// input requests wait for the client included.
	DefaultCallTimeout = 15 * time.Minute
	// DefaultMaxInFlight bounds the calls to one upstream at once; more
	// wait for a slot as long as their context lets them.
	DefaultMaxInFlight = 64
	// DefaultMaxPendingPerClient bounds the upstream calls of one client
	// (Options.ClientKey) held open for its answers at once, over all
	// upstreams.
	DefaultMaxPendingPerClient = 16
	// DefaultMaxInFlightPerClient bounds the calls of one client to one
	// upstream at once (waiting for a connection, running, or waiting for
	// the client's answer); it is also never more than half the
	// upstream's MaxInFlight or MaxConnections (at least one).
	DefaultMaxInFlightPerClient = 8
	// DefaultMaxCommandConnections is the default MaxConnections of a
	// Command upstream: each connection is a process of its own, started
	// when a call needs it.
	DefaultMaxCommandConnections = 16
	// DefaultQueueTimeout bounds the wait of a call for a free slot or
	// connection of its upstream.
	DefaultQueueTimeout = 30 * time.Second
	// DefaultHealthInterval is how often a connected upstream is checked
	// (ping on a legacy connection, server/discover on a modern one).
	DefaultHealthInterval = 30 * time.Second
)

// Options configures a Gateway. The zero value of each field is its
// default.
type Options struct {
	// Upstreams are the servers the gateway fronts. At least one.
	Upstreams []Upstream
	// Server configures the gateway's own server (its identity,
	// instructions, interceptors, visibility, request-state keys, …).
	// Logging is always on: the upstreams' log messages pass through.
	Server *server.Options
	// Interceptors wrap every request and notification of the gateway's
	// clients of its upstreams (such as an OpenTelemetry client
	// interceptor: the upstream call's span is a child of the client
	// call's, whose context it runs in).
	Interceptors []intercept.Interceptor
	// InputTimeout bounds the wait of a pending upstream call (see the
	// package documentation) for each answer of the client. Default
	// DefaultInputTimeout.
	InputTimeout time.Duration
	// MaxPending bounds the pending upstream calls at once; a call that
	// would exceed it fails with -32603. Default DefaultMaxPending.
	MaxPending int
	// MaxPendingPerClient bounds the pending upstream calls of one client
	// (see ClientKey) at once, over all upstreams; a call that would
	// exceed it fails with -32603 and the client's other calls, and other
	// clients, are served as before. Default DefaultMaxPendingPerClient.
	MaxPendingPerClient int
	// MaxInFlightPerClient bounds the calls of one client to one upstream
	// at once: waiting for a slot or connection, running, or pending.
	// A call past it fails at once with -32603. It is also never more
	// than half of the upstream's MaxInFlight and MaxConnections (at
	// least one), so that one client never holds all of them. Default
	// DefaultMaxInFlightPerClient.
	MaxInFlightPerClient int
	// ClientKey names the client a request comes from, for the
	// per-client limits. Default DefaultClientKey: the principal, else
	// the legacy session, else the key WithClientKey set (such as
	// ClientAddressKeys' remote address), else "" (anonymous stateless
	// clients share one count).
	ClientKey func(ctx context.Context, req *server.Request) string
	// RestartMin and RestartMax bound the pause between connection
	// attempts to an upstream. Defaults DefaultRestartMin and
	// DefaultRestartMax.
	RestartMin, RestartMax time.Duration
	// Broker, when set, connects the gateway instances of one deployment
	// (a store.Broker of the gateway's own, not the one its HTTP handler
	// uses: a Broker serves one receiver), so that a 2026 client's retry
	// of a call held pending for a legacy upstream's input request may
	// reach any instance: the instance that holds the call serves the
	// round. Without one, such a retry must reach the instance that
	// answered the previous round (or it fails with -32602).
	Broker store.Broker
	// TokenCacheSize bounds the tokens obtained by exchange for the
	// upstreams whose Identity is IdentityExchange (one per caller token
	// and upstream); past it the least recently used is dropped. Default
	// DefaultTokenCacheSize.
	TokenCacheSize int
	// TokenExpiryMargin is how long before its expiry an exchanged token
	// is exchanged again. Default DefaultTokenExpiryMargin.
	TokenExpiryMargin time.Duration
	// Logger receives the gateway's diagnostics: upstream state changes,
	// name collisions, log messages of upstreams that no call claims (at
	// the slog level matching their MCP level: a warning at Warn).
	// Nil discards them.
	Logger *slog.Logger
}

// Upstream is one server behind the gateway. Exactly one of Command, URL
// and Connect says how to reach it.
type Upstream struct {
	// Name identifies the upstream in Health and the log: letters,
	// digits, '-', '_' and '.'; unique.
	Name string
	// Prefix is prepended to the upstream's tool and prompt names
	// ("<Prefix>_<name>") and resource URIs and templates
	// ("<Prefix>+<uri>"). A letter, then letters, digits, '-' and '.';
	// unique among the upstreams. Empty: names and URIs pass unchanged,
	// and a name two upstreams list belongs to the one listed first in
	// Options.Upstreams: the other's item is left out and reported in
	// Health.Conflicts, even while the first is down or no longer lists
	// the name (the name is then withdrawn, never handed over).
	Prefix string

	// Command launches a stdio server: the program and its arguments.
	Command []string
	// Env and Dir are the command's environment (added to the gateway's
	// own) and working directory.
	Env []string
	Dir string
	// Stderr receives the command's standard error. Nil discards it.
	Stderr io.Writer

	// URL is a Streamable HTTP endpoint, or a 2024-11-05 HTTP+SSE one
	// (the client falls back to it when the server refuses a POST).
	URL string
	// Header is sent with every HTTP request (such as Authorization).
	Header http.Header
	// HTTPClient sends the HTTP requests. Default: one of the upstream's
	// own, on a clone of http.DefaultTransport keeping MaxInFlight idle
	// connections.
	HTTPClient *http.Client

	// Connect, when set, opens the upstream's connection itself (any
	// transport: tests use an in-memory pair).
	Connect func(ctx context.Context) (transport.Conn, error)

	// ProtocolVersion pins the revision spoken to the upstream; empty
	// detects its era (client.Options.ProtocolVersion). A command that
	// exits on the modern probe is launched again and spoken to in the
	// latest legacy revision.
	ProtocolVersion string
	// Roots answer the upstream's roots/list requests that belong to no
	// client call, or to the call of a client that declared no roots
	// (file:// URIs a filesystem server may serve). The gateway declares
	// roots to every upstream; a roots/list made during a client's call
	// is passed to that client when it declared roots (a 2026 upstream's
	// roots input request always is).
	Roots []mcp.Root
	// CallTimeout bounds each request to the upstream. Default
	// DefaultCallTimeout.
	CallTimeout time.Duration
	// MaxInFlight bounds the calls to the upstream running at once (a
	// pending call waiting for its client's answer holds none). Default
	// DefaultMaxInFlight.
	MaxInFlight int
	// MaxConnections bounds the upstream's call connections: each call
	// holds one alone for its whole upstream run, pending rounds
	// included, so that what the upstream sends on it belongs to that
	// call with certainty (docs/design/gateway.md, Attribution). They are
	// opened when calls need them and kept idle for the next; one of a
	// call the gateway stopped waiting for is closed. A Command upstream's
	// connection is a process: set 1 for a server whose state its calls
	// must share (calls then run one at a time). Besides them the
	// upstream has its control connection (lists, subscriptions, health).
	// Default: MaxInFlight for URL and Connect upstreams,
	// DefaultMaxCommandConnections for Command ones.
	MaxConnections int
	// QueueTimeout bounds the wait of a call for a free MaxInFlight slot
	// or connection; past it the call fails with -32603 saying the
	// upstream is busy. A call that found no connection idle and opened one
	// for the pool waits for that one (or the first given back) as long as
	// ConnectTimeout lets it; QueueTimeout then bounds any further wait for
	// a connection. Default DefaultQueueTimeout.
	QueueTimeout time.Duration
	// ConnectTimeout bounds each connection attempt (the handshake and
	// the first listing). Default DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Identity says whose identity the upstream's calls carry: the
	// gateway's (Header, the default), the caller's own token, or one
	// exchanged for the caller (RFC 8693). A caller's identity needs a
	// URL upstream and callers authenticated in front of the gateway
	// (CallerTokens outside the auth middleware); the call connections
	// are then each bound to one caller (docs/design/gateway-identity.md).
	Identity Identity
	// HealthInterval is how often the connected upstream is checked.
	// Default DefaultHealthInterval; negative: never.
	HealthInterval time.Duration
}

var (
	nameRE   = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	prefixRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9.-]{0,31}$`)
)

// ErrUnavailable is wrapped by the error of a call whose upstream is not
// connected.
var ErrUnavailable = errors.New("gateway: the upstream is not connected")

// Gateway fronts the upstreams with one server. Create it with New, start
// it with Start, serve Server() on any carrier, and Close it.
type Gateway struct {
	opts Options
	srv  *server.Server
	info mcp.Implementation // the gateway's identity, to servers and clients
	log  *slog.Logger
	ups  []*upstream

	// after is the clock of restart pauses and health checks (tests
	// replace it).
	after func(d time.Duration) <-chan time.Time
	// queueAfter is the clock of QueueTimeout (tests replace it).
	queueAfter func(d time.Duration) <-chan time.Time
	// afterFunc runs f after d unless the returned stop is called first
	// (the input timeout of parked calls; tests replace it).
	afterFunc func(d time.Duration, f func()) (stop func() bool)

	// stateHook, when set (tests), sees every upstream state change.
	stateHook func(upstream string, s State)
	// syncHook, when set (tests), sees the end of every upstream's sync.
	syncHook func(upstream string)
	// callEndHook, when set (tests), sees the end of every legacy
	// upstream call, once its lease is released and it is forgotten.
	callEndHook func()
	// settleHook, when set (tests), sees the end of every abandoned 2026
	// call's count (modern.go, settle).
	settleHook func()

	// now is the clock of the exchanged tokens' expiry (tests replace it).
	now    func() time.Time
	tokens *tokenCache

	pending *pendingTable
	peers   *peers
	names   *nameTable
	regMu   sync.Mutex // serializes the registrations of all upstreams

	// skillsOnce registers the skills methods when an upstream first
	// declares the extension; skillsDirRead (under mu) is whether one
	// declared directoryRead (skills.go).
	skillsOnce    sync.Once
	skillsDirRead bool

	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	start   bool
	closing bool // Close was called
}

// New checks the options and builds the gateway and its server. Nothing is
// connected before Start.
func New(opts *Options) (*Gateway, error) {
	if opts == nil || len(opts.Upstreams) == 0 {
		return nil, errors.New("gateway: no upstream")
	}
	o := *opts
	if o.InputTimeout <= 0 {
		o.InputTimeout = DefaultInputTimeout
	}
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.MaxPendingPerClient <= 0 {
		o.MaxPendingPerClient = DefaultMaxPendingPerClient
	}
	if o.MaxInFlightPerClient <= 0 {
		o.MaxInFlightPerClient = DefaultMaxInFlightPerClient
	}
	if o.RestartMin <= 0 {
		o.RestartMin = DefaultRestartMin
	}
	if o.RestartMax <= 0 {
		o.RestartMax = DefaultRestartMax
	}
	o.RestartMax = max(o.RestartMax, o.RestartMin)
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var so server.Options
	if o.Server != nil {
		so = *o.Server
	}
	so.Logging = true
	// Upstreams connect after clients may have initialized: the lists
	// exist from the start, empty until then.
	so.Declare.Tools = &mcp.ToolsCapability{ListChanged: true}
	so.Declare.Prompts = &mcp.PromptsCapability{ListChanged: true}
	so.Declare.Resources = &mcp.ResourcesCapability{Subscribe: true, ListChanged: true}
	if so.Info.Name == "" {
		so.Info = mcp.Implementation{Name: "mcpkit-gateway", Version: "0.1.0"}
	}
	g := &Gateway{
		opts:       o,
		info:       so.Info,
		log:        log,
		after:      time.After,
		queueAfter: time.After,
		afterFunc: func(d time.Duration, f func()) func() bool {
			return time.AfterFunc(d, f).Stop
		},
		names: newNameTable(),
		now:   time.Now,
	}
	g.tokens = newTokenCache(o.TokenCacheSize, o.TokenExpiryMargin, func() time.Time { return g.now() })
	g.pending = newPendingTable(o.MaxPending, o.MaxPendingPerClient, o.InputTimeout, g)
	g.peers = newPeers(g, o.Broker)
	// Innermost: a request the user's interceptors (auth, rate limits)
	// refuse subscribes to nothing.
	so.Interceptors = append(slices.Clone(so.Interceptors), g.subscriptions)
	g.srv = server.New(&so)
	// Declared from the start, like the lists: an upstream that offers
	// completion may connect after a client initialized. A reference to an
	// upstream without it is answered with no values.
	g.srv.SetCompletionHandler(g.complete)
	seenName := map[string]bool{}
	seenPrefix := map[string]bool{}
	for i := range o.Upstreams {
		u := o.Upstreams[i]
		if !nameRE.MatchString(u.Name) {
			return nil, fmt.Errorf("gateway: upstream %d: name %q: want 1 to 64 letters, digits, '-', '_' or '.'", i, u.Name)
		}
		if seenName[u.Name] {
			return nil, fmt.Errorf("gateway: upstream %q: the name is used twice", u.Name)
		}
		seenName[u.Name] = true
		if u.Prefix != "" {
			if !prefixRE.MatchString(u.Prefix) {
				return nil, fmt.Errorf("gateway: upstream %q: prefix %q: want a letter, then up to 31 letters, digits, '-' or '.'", u.Name, u.Prefix)
			}
			if seenPrefix[u.Prefix] {
				return nil, fmt.Errorf("gateway: upstream %q: prefix %q is used by another upstream", u.Name, u.Prefix)
			}
			seenPrefix[u.Prefix] = true
		}
		n := 0
		for _, set := range []bool{len(u.Command) > 0, u.URL != "", u.Connect != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			return nil, fmt.Errorf("gateway: upstream %q: set exactly one of Command, URL and Connect", u.Name)
		}
		if err := checkIdentity(&u); err != nil {
			return nil, err
		}
		if u.CallTimeout <= 0 {
			u.CallTimeout = DefaultCallTimeout
		}
		if u.MaxInFlight <= 0 {
			u.MaxInFlight = DefaultMaxInFlight
		}
		if u.MaxConnections <= 0 {
			u.MaxConnections = u.MaxInFlight
			if len(u.Command) > 0 {
				u.MaxConnections = DefaultMaxCommandConnections
			}
		}
		if u.QueueTimeout <= 0 {
			u.QueueTimeout = DefaultQueueTimeout
		}
		if u.ConnectTimeout <= 0 {
			u.ConnectTimeout = DefaultConnectTimeout
		}
		if u.HealthInterval == 0 {
			u.HealthInterval = DefaultHealthInterval
		}
		g.ups = append(g.ups, newUpstream(g, u, i))
	}
	return g, nil
}

// Server is the gateway's server: serve it on stdio (Serve) or HTTP
// (streamhttp.NewHandler).
func (g *Gateway) Server() *server.Server { return g.srv }

// Start connects every upstream and returns once each has been tried
// once (connected and listed, or failed), or ctx ends. Upstreams that
// failed are retried in the background, like those that die later; Start
// reports none of their errors (see Health). Calling Start twice is an
// error.
func (g *Gateway) Start(ctx context.Context) error {
	g.mu.Lock()
	if g.start {
		g.mu.Unlock()
		return errors.New("gateway: Start called twice")
	}
	g.start = true
	g.ctx, g.cancel = context.WithCancel(context.Background())
	if g.opts.Broker != nil {
		g.opts.Broker.Receive(g.peers.receive)
	}
	for _, u := range g.ups {
		g.wg.Add(1) // under g.mu: a Close after this waits for them
		go func() {
			defer g.wg.Done()
			u.run(g.ctx)
		}()
	}
	g.mu.Unlock()
	for _, u := range g.ups {
		select {
		case <-u.tried:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Close disconnects every upstream, fails the pending calls and waits for
// the gateway's goroutines (each is bounded by an upstream's shutdown:
// transport/command's exit waits for a command). The server's carriers
// are closed separately.
func (g *Gateway) Close() error {
	g.mu.Lock()
	cancel := g.cancel
	g.start = true
	g.closing = true
	g.mu.Unlock()
	if g.opts.Broker != nil {
		g.opts.Broker.Receive(nil)
	}
	if cancel != nil {
		cancel()
	}
	g.pending.closeAll()
	g.wg.Wait()
	return nil
}

// Health reports the state of every upstream, in configuration order.
func (g *Gateway) Health() []Health {
	out := make([]Health, len(g.ups))
	for i, u := range g.ups {
		out[i] = u.health()
	}
	return out
}

// State is an upstream's connection state.
type State string

const (
	StateConnecting State = "connecting" // first attempt or reconnecting
	StateReady      State = "ready"      // connected, items registered
	StateDown       State = "down"       // the last attempt failed or the connection died; retrying
	StateClosed     State = "closed"     // the gateway was closed
)

// Health is the state of one upstream.
type Health struct {
	Name  string `json:"name"`
	State State  `json:"state"`
	// Since is when State last changed.
	Since time.Time `json:"since"`
	// Err is why the upstream is down ("" otherwise).
	Err string `json:"error,omitempty"`
	// Era and ProtocolVersion of the connection ("" when not connected).
	Era             string `json:"era,omitempty"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	Server          string `json:"server,omitempty"`
	// Connects counts successful connections (so Connects-1 restarts).
	Connects int `json:"connects"`
	// Tools, Prompts, Resources and Templates count the items registered.
	Tools     int `json:"tools"`
	Prompts   int `json:"prompts"`
	Resources int `json:"resources"`
	Templates int `json:"templates"`
	// Conflicts names the upstream's items left out because an upstream
	// listed before it in Options.Upstreams has listed the same name or
	// URI (whether or not it is connected and lists it now).
	Conflicts []string `json:"conflicts,omitempty"`
	// Skipped names the items the gateway's server refused (a schema that
	// does not compile), with the reason.
	Skipped []string `json:"skipped,omitempty"`
	// Pending counts the calls waiting for the client's input.
	Pending int `json:"pending"`
	// InFlight counts the calls running (each holds one of MaxInFlight
	// slots); Connections the call connections open, Leased those held
	// by a call (running or pending), of at most MaxConnections.
	InFlight       int `json:"inFlight"`
	MaxInFlight    int `json:"maxInFlight"`
	Connections    int `json:"connections"`
	Leased         int `json:"leased"`
	MaxConnections int `json:"maxConnections"`
	// Exhausted says every slot or every connection is taken: a new call
	// waits (at most QueueTimeout) for one to come free.
	Exhausted bool `json:"exhausted,omitempty"`
}
