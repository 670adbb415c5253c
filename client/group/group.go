package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// Defaults of Options.
const (
	// DefaultSeparator joins a server's prefix and a name.
	DefaultSeparator = "_"
	// DefaultConnectTimeout bounds one attempt to connect a server
	// (opening the transport and the client's handshake or probe).
	DefaultConnectTimeout = 30 * time.Second
	// DefaultRetryMin is the wait before connecting again a server whose
	// attempt failed; it doubles after each failure up to DefaultRetryMax.
	DefaultRetryMin = 500 * time.Millisecond
	// DefaultRetryMax caps the wait between attempts.
	DefaultRetryMax = 30 * time.Second
)

// Errors.
var (
	// ErrServerDown reports a server that is not connected and whose next
	// attempt is not due yet (see Options.RetryMin); the ServerError wraps
	// the last failure too.
	ErrServerDown = errors.New("group: server is down")
	// ErrUnknownName reports a namespaced name or URI that carries no
	// prefix of the group.
	ErrUnknownName = errors.New("group: no server for this name")
	// ErrClosed reports a use of a closed Group.
	ErrClosed = errors.New("group: closed")
)

// Server is one server of a group.
type Server struct {
	// Name identifies the server in the group (Servers, Change,
	// ServerError, Split). Required, unique.
	Name string
	// Prefix starts the namespaced names of the server's tools, prompts,
	// resources and templates; empty means Name. It must be unique, must
	// not contain the group's separator and must not end with the start of
	// it (with the separator "__", a prefix may not end with "_").
	Prefix string
	// Connect opens a new transport to the server; it is called again for
	// each reconnection. Required. The Group closes what it returns.
	Connect func(ctx context.Context) (transport.Conn, error)
	// Client are the options of this server's client (copied; nil means
	// the zero Options). Its list-changed handlers still run, before the
	// group's Options.OnListChanged.
	Client *client.Options
}

// Kind is the kind of list that changed.
type Kind string

// Kinds of list.
const (
	KindTools     Kind = "tools"
	KindPrompts   Kind = "prompts"
	KindResources Kind = "resources"
)

// Change is a list change one server announced.
type Change struct {
	Server string // the server's Name
	Kind   Kind
}

// Options configure a Group. The zero value is usable.
type Options struct {
	// Separator joins a server's prefix and an original name; empty means
	// DefaultSeparator. Choose characters your consumers accept in a tool
	// name ("_" suits every LLM provider's function names).
	Separator string
	// ConnectTimeout bounds each attempt to connect a server; zero means
	// DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// RetryMin is the first wait after a failed attempt before the server
	// is tried again (on its next use); zero means DefaultRetryMin. A
	// server whose connection ended after it was ready is tried again at
	// its next use without waiting.
	RetryMin time.Duration
	// RetryMax caps the doubling wait; zero means DefaultRetryMax.
	RetryMax time.Duration
	// OnListChanged receives the list changes of every server. It runs on
	// that server's notification goroutine: keep it short (list again from
	// another goroutine).
	OnListChanged func(ctx context.Context, ch Change)
	// Logger receives what the group cannot report otherwise (a modern
	// server refusing the list-change subscription); nil discards.
	Logger *slog.Logger
	// Now is the clock of retry times; nil means time.Now.
	Now func() time.Time
}

// State is a server's connection state.
type State string

// States.
const (
	StateConnecting State = "connecting"
	StateReady      State = "ready"
	StateDown       State = "down"
	StateClosed     State = "closed"
)

// Status describes one server of a group (Servers).
type Status struct {
	Name   string
	Prefix string
	State  State
	// Err is the last failure: why the server is down, or why its last
	// connection ended.
	Err error
	// Era and ProtocolVersion are the ones negotiated, while ready.
	Era             client.Era
	ProtocolVersion string
	// Connects counts successful connections.
	Connects int
	// Since is when the server entered its state.
	Since time.Time
	// NextRetry is when a down server may be tried again.
	NextRetry time.Time
}

// ServerError is a failure of one server of a group.
type ServerError struct {
	Server string
	Err    error
}

func (e *ServerError) Error() string { return "group: server " + e.Server + ": " + e.Err.Error() }
func (e *ServerError) Unwrap() error { return e.Err }

// Group is a client for several servers. Its methods are safe for
// concurrent use.
type Group struct {
	opts     Options
	members  []*member
	byPrefix map[string]*member
	byName   map[string]*member
	ctx      context.Context // ends at Close: bounds connects and subscriptions
	cancel   context.CancelFunc
	wg       sync.WaitGroup // connects in flight and subscription drains
	closing  sync.Once
	closeErr error
}

// Connect validates servers and connects to all of them at once, each
// attempt bounded by ctx and Options.ConnectTimeout. It returns an error
// only for a bad configuration: a server that cannot be reached is
// reported by Servers and by the calls that need it, and is tried again
// later (see Options.RetryMin).
func Connect(ctx context.Context, servers []Server, opts *Options) (*Group, error) {
	g := &Group{byPrefix: map[string]*member{}, byName: map[string]*member{}}
	if opts != nil {
		g.opts = *opts
	}
	g.defaults()
	for i := range servers {
		m, err := g.newMember(&servers[i])
		if err != nil {
			return nil, err
		}
		g.members = append(g.members, m)
		g.byName[m.name] = m
		g.byPrefix[m.prefix] = m
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, m := range g.members {
		wg.Go(func() { _, _ = m.get(ctx) }) // the outcome is the member's state
	}
	wg.Wait()
	return g, nil
}

func (g *Group) defaults() {
	if g.opts.Separator == "" {
		g.opts.Separator = DefaultSeparator
	}
	if g.opts.ConnectTimeout <= 0 {
		g.opts.ConnectTimeout = DefaultConnectTimeout
	}
	if g.opts.RetryMin <= 0 {
		g.opts.RetryMin = DefaultRetryMin
	}
	if g.opts.RetryMax <= 0 {
		g.opts.RetryMax = DefaultRetryMax
	}
	g.opts.RetryMax = max(g.opts.RetryMax, g.opts.RetryMin)
	if g.opts.Now == nil {
		g.opts.Now = time.Now
	}
	if g.opts.Logger == nil {
		g.opts.Logger = slog.New(slog.DiscardHandler)
	}
}

// checkPrefix reports why prefix could make two namespaced names equal:
// the first occurrence of the separator in prefix+sep+name must be the one
// after the prefix, so the prefix may neither contain the separator nor
// end with a proper start of it.
func checkPrefix(prefix, sep string) error {
	if prefix == "" {
		return errors.New("is empty")
	}
	if strings.Contains(prefix, sep) {
		return fmt.Errorf("contains the separator %q", sep)
	}
	for j := 1; j < len(sep); j++ {
		if strings.HasSuffix(prefix, sep[:j]) {
			return fmt.Errorf("ends with %q, the start of the separator %q", sep[:j], sep)
		}
	}
	return nil
}

func (g *Group) newMember(s *Server) (*member, error) {
	if s.Name == "" {
		return nil, errors.New("group: a server has no Name")
	}
	if _, dup := g.byName[s.Name]; dup {
		return nil, fmt.Errorf("group: two servers are named %q", s.Name)
	}
	if s.Connect == nil {
		return nil, fmt.Errorf("group: server %q has no Connect function", s.Name)
	}
	prefix := s.Prefix
	if prefix == "" {
		prefix = s.Name
	}
	if err := checkPrefix(prefix, g.opts.Separator); err != nil {
		return nil, fmt.Errorf("group: server %q: prefix %q %w", s.Name, prefix, err)
	}
	if other, dup := g.byPrefix[prefix]; dup {
		return nil, fmt.Errorf("group: servers %q and %q share the prefix %q", other.name, s.Name, prefix)
	}
	m := &member{g: g, name: s.Name, prefix: prefix, dial: s.Connect, state: StateConnecting, since: g.opts.Now()}
	if s.Client != nil {
		m.opts = *s.Client
	}
	m.opts.OnToolsListChanged = g.relay(m.opts.OnToolsListChanged, s.Name, KindTools)
	m.opts.OnPromptsListChanged = g.relay(m.opts.OnPromptsListChanged, s.Name, KindPrompts)
	m.opts.OnResourcesListChanged = g.relay(m.opts.OnResourcesListChanged, s.Name, KindResources)
	return m, nil
}

// relay runs the server's own handler, then the group's.
func (g *Group) relay(own func(context.Context), server string, kind Kind) func(context.Context) {
	if own == nil && g.opts.OnListChanged == nil {
		return nil
	}
	return func(ctx context.Context) {
		if own != nil {
			own(ctx)
		}
		if g.opts.OnListChanged != nil {
			g.opts.OnListChanged(ctx, Change{Server: server, Kind: kind})
		}
	}
}

// Name returns the namespaced form of a server's original name (or URI).
func (g *Group) Name(server, original string) (string, error) {
	m, ok := g.byName[server]
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrUnknownName, server)
	}
	return m.join(original), nil
}

// Split recovers the server's Name and the original name (or URI) from a
// namespaced one; ok is false when it carries no prefix of the group.
func (g *Group) Split(namespaced string) (server, original string, ok bool) {
	m, original, ok := g.split(namespaced)
	if !ok {
		return "", "", false
	}
	return m.name, original, true
}

func (g *Group) split(namespaced string) (*member, string, bool) {
	prefix, original, ok := strings.Cut(namespaced, g.opts.Separator)
	if !ok {
		return nil, "", false
	}
	m, ok := g.byPrefix[prefix]
	return m, original, ok
}

// route finds the server of a namespaced name and its client, connecting
// it if it is down and due.
func (g *Group) route(ctx context.Context, namespaced string) (*member, *client.Client, string, error) {
	m, original, ok := g.split(namespaced)
	if !ok {
		return nil, nil, "", fmt.Errorf("%w: %q", ErrUnknownName, namespaced)
	}
	c, err := m.get(ctx)
	return m, c, original, err
}

// Client returns the client of a server, connecting it if it is down and
// due: for what the group does not merge (completion, subscriptions,
// tasks, typed calls). Names on it are the server's own.
func (g *Group) Client(ctx context.Context, server string) (*client.Client, error) {
	m, ok := g.byName[server]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownName, server)
	}
	return m.get(ctx)
}

// Servers reports the state of every server, in the order given to
// Connect.
func (g *Group) Servers() []Status {
	out := make([]Status, 0, len(g.members))
	for _, m := range g.members {
		out = append(out, m.status())
	}
	return out
}

// Close closes every server's client and waits for connection attempts
// and subscriptions in flight to end. Calls in flight fail. It is
// idempotent and returns the clients' close errors, joined.
func (g *Group) Close() error {
	g.closing.Do(func() {
		g.cancel()
		var olds []*client.Client
		for _, m := range g.members {
			if c := m.shut(); c != nil {
				olds = append(olds, c)
			}
		}
		errs := make([]error, len(olds))
		var wg sync.WaitGroup
		for i, c := range olds {
			wg.Go(func() { errs[i] = c.Close() })
		}
		wg.Wait()
		g.wg.Wait()
		g.closeErr = errors.Join(errs...)
	})
	return g.closeErr
}

// listenFilter is the subscription a modern server's list changes need.
var listenFilter = mcp.SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true, ResourcesListChanged: true}
