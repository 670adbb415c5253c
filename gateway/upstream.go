package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/skills"
	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/command"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// upstream is one server behind the gateway and its connection's life:
// connect, list and register, watch, withdraw, reconnect. Its run
// goroutine, owned by the Gateway, is the only one that connects, syncs
// and withdraws; calls read the current client under mu.
type upstream struct {
	g     *Gateway
	cfg   Upstream
	index int // in Options.Upstreams: on a name collision the lower wins
	sem   chan struct{}
	tried chan struct{} // closed once the first attempt ended
	once  sync.Once
	// resync is signalled (never blocking) when the upstream says a list
	// changed; listenKick when the resource subscriptions grew.
	resync     chan struct{}
	listenKick chan struct{}

	mu         sync.Mutex
	c          *client.Client
	state      State
	since      time.Time
	err        string
	connects   int
	reg        [kinds]map[string]registered // outer name → what was registered
	conflicts  []string
	skipped    []string
	subscribed map[string]bool // upstream URIs a client subscribed to
	// The skills the upstream listed at its last sync, with the gateway's
	// URIs, and what it declared of the skills extension (skills.go).
	skills         []skills.Skill
	skillsDirRead  bool
	skillsDeclared bool
	// subWaits are the clients' waits for subscriptions not yet made on
	// this connection (see Gateway.subscribe).
	subWaits map[string]chan struct{}
	hc       *http.Client // the upstream's own, when none is configured
	// subscribedUp are the URIs subscribed to on this connection (legacy).
	subscribedUp map[string]bool

	// The call connections (conns.go). gen counts the control
	// connections: one opened under another is not reused.
	conns map[*callConn]bool // open (leased or idle)
	ctlCC *callConn          // MaxConnections 1: the control connection, leased to calls
	// A modern upstream's calls, on the control connection (modern.go).
	modern     map[*inflight]struct{}
	abandoned  int // modern calls given up on that may still run upstream
	idle       []*callConn
	open       int // connections open or being opened
	leased     int
	gen        uint64
	wake       chan struct{}  // closed when a connection comes free, if waiting > 0
	waiting    int            // calls waiting on wake (takeConn)
	perClient  map[string]int // calls of each client key (waiting, running, parked)
	poolClosed bool           // the gateway closed: no more connections
	closers    sync.WaitGroup // retired connections being closed
	// onWait, when set (by tests), is called each time a call is about to
	// wait for a connection (takeConn), outside u.mu.
	onWait func()
}

// registered is one registered item: the upstream's name for it and the
// encoding it was registered with (a sync re-registers only what changed).
type registered struct {
	inner string
	enc   string
}

func newUpstream(g *Gateway, cfg Upstream, index int) *upstream {
	u := &upstream{
		g:          g,
		index:      index,
		cfg:        cfg,
		sem:        make(chan struct{}, cfg.MaxInFlight),
		tried:      make(chan struct{}),
		resync:     make(chan struct{}, 1),
		listenKick: make(chan struct{}, 1),
		state:      StateConnecting,
		since:      time.Now(),
		subscribed: make(map[string]bool),
		conns:      make(map[*callConn]bool),
		wake:       make(chan struct{}),
		perClient:  make(map[string]int),
		modern:     make(map[*inflight]struct{}),
	}
	for k := range u.reg {
		u.reg[k] = make(map[string]registered)
	}
	return u
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// run connects, serves and reconnects until ctx ends.
func (u *upstream) run(ctx context.Context) {
	defer u.setState(StateClosed, nil)
	defer u.closeConns(true)
	defer func() {
		u.mu.Lock()
		hc := u.hc
		u.mu.Unlock()
		if hc != nil {
			hc.CloseIdleConnections()
		}
	}()
	defer u.once.Do(func() { close(u.tried) })
	pause := u.g.opts.RestartMin
	for {
		u.setState(StateConnecting, nil)
		c, cc, err := u.connect(ctx)
		if err == nil {
			u.setClient(c, cc)
			sctx, cancel := context.WithTimeout(ctx, u.cfg.ConnectTimeout)
			err = u.sync(sctx, c)
			cancel()
			if err != nil {
				u.disconnect(c)
			}
		}
		if err == nil {
			u.mu.Lock()
			u.connects++
			u.mu.Unlock()
			u.setState(StateReady, nil)
			u.once.Do(func() { close(u.tried) })
			pause = u.g.opts.RestartMin
			err = u.serve(ctx, c)
			if ctx.Err() == nil {
				u.setState(StateDown, err)
			}
			u.disconnect(c)
		}
		if ctx.Err() != nil {
			return
		}
		u.g.log.Warn("gateway: upstream down", "upstream", u.cfg.Name, "err", err, "retry in", pause)
		u.setState(StateDown, err)
		u.once.Do(func() { close(u.tried) })
		select {
		case <-u.g.after(pause):
		case <-ctx.Done():
			return
		}
		pause = min(pause*2, u.g.opts.RestartMax)
	}
}

// disconnect ends the connection of control client c: calls no longer
// get it, its call connections are closed, and its items withdrawn.
func (u *upstream) disconnect(c *client.Client) {
	u.setClient(nil, nil)
	u.closeConns(false)
	c.Close()
	u.withdraw()
}

// connect opens the control connection and its client. With
// MaxConnections 1 it is also the call connection (setClient).
func (u *upstream) connect(ctx context.Context) (*client.Client, *callConn, error) {
	cctx, cancel := context.WithTimeout(ctx, u.cfg.ConnectTimeout)
	defer cancel()
	var cc *callConn
	if u.cfg.MaxConnections == 1 && u.cfg.Identity.Mode == IdentityStatic {
		// (A caller's identity never rides the control connection: its
		// calls get a call connection of their own even then.)
		cc = &callConn{control: true}
	}
	c, err := u.connectWith(ctx, cctx, u.cfg.ProtocolVersion, cc)
	if err != nil {
		return nil, nil, err
	}
	if cc != nil && c.Era() == client.EraLegacy {
		cc.c = c
		return c, cc, nil
	}
	return c, nil, nil
}

// connectWith opens a connection and its client, speaking version (""
// detects the era), bounded by cctx; a command lives as long as ctx. cc
// is the call connection it becomes (nil: the control connection).
func (u *upstream) connectWith(ctx, cctx context.Context, version string, cc *callConn) (*client.Client, error) {
	conn, err := u.dial(ctx, cctx, cc)
	if err != nil {
		return nil, err
	}
	c, err := client.Connect(cctx, conn, u.clientOptions(version, cc))
	if err != nil && version == "" && len(u.cfg.Command) > 0 && errors.Is(err, client.ErrProbeClosed) {
		// A legacy stdio server that exits on the modern probe: launch it
		// again and speak legacy.
		if conn, err = u.dial(ctx, cctx, cc); err != nil {
			return nil, err
		}
		c, err = client.Connect(cctx, conn, u.clientOptions(mcp.LatestLegacy, cc))
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("gateway: connecting to upstream %q: %w", u.cfg.Name, err)
	}
	if c.Era() == client.EraModern && version != "" {
		// A pinned modern revision skips the probe: ask what it offers.
		if _, err := c.Discover(cctx); err != nil {
			c.Close()
			return nil, fmt.Errorf("gateway: upstream %q: server/discover: %w", u.cfg.Name, err)
		}
	}
	if wantsAllLogs(c, u.cfg.URL != "", cc) {
		if err := c.SetLoggingLevel(cctx, mcp.LevelDebug); err != nil {
			u.g.log.Debug("gateway: upstream refused a log level", "upstream", u.cfg.Name, "err", err)
		}
	}
	return c, nil
}

// wantsAllLogs reports whether connection c (cc: its call connection, nil
// for the control connection) asks its upstream for every log message,
// at debug. A legacy session: yes, the gateway's server passes on to
// each client only what its own level lets through. A 2026 upstream
// sends messages only for requests that carry a level, so a connection's
// level reaches every request made on it: the control connection of an
// upstream reached by URL asks for all (its own requests, the syncs,
// health checks, listen streams and task polls, whose messages go to the
// gateway's log), since no client call runs there (forwardModernLeased);
// a 2026 command's or Connect transport's control connection carries the
// clients' calls too, and a call must carry its client's own level or
// none (passMeta), so that the upstream sends messages only for the
// calls that want them (modernSole): it asks for nothing of its own. A
// call connection never does (each call carries its client's level).
func wantsAllLogs(c *client.Client, byURL bool, cc *callConn) bool {
	if c.Era() == client.EraLegacy {
		return c.ServerCapabilities().Logging != nil
	}
	return byURL && cc == nil
}

// dial opens the transport: a command lives as long as ctx (the
// gateway), the rest is bounded by cctx.
func (u *upstream) dial(ctx, cctx context.Context, cc *callConn) (transport.Conn, error) {
	switch {
	case u.cfg.Connect != nil:
		return u.cfg.Connect(cctx)
	case u.cfg.URL != "":
		hc := u.httpClient()
		if cc != nil && cc.who != nil {
			// A caller's call connection: the caller's identity on each
			// of its requests (identity.go).
			hc = u.identityClient(cc.who)
		}
		return streamable.New(u.cfg.URL, &streamable.Options{
			Header:     u.cfg.Header,
			HTTPClient: hc,
			Logger:     u.g.log,
		}), nil
	}
	cmd := exec.Command(u.cfg.Command[0], u.cfg.Command[1:]...)
	if len(u.cfg.Env) > 0 {
		cmd.Env = append(os.Environ(), u.cfg.Env...)
	}
	cmd.Dir = u.cfg.Dir
	cmd.Stderr = u.cfg.Stderr
	conn, err := command.Start(ctx, cmd, nil)
	if err != nil {
		return nil, fmt.Errorf("gateway: starting upstream %q: %w", u.cfg.Name, err)
	}
	return conn, nil
}

// httpClient is the configured HTTP client, or one of the upstream's own
// that keeps as many idle connections as calls may run at once (the
// default keeps two, so a busy gateway would reconnect for most calls).
func (u *upstream) httpClient() *http.Client {
	if u.cfg.HTTPClient != nil {
		return u.cfg.HTTPClient
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = u.cfg.MaxInFlight + 4 // + the listening streams
		u.hc = &http.Client{Transport: tr}
	}
	return u.hc
}

// clientOptions are the options of the gateway's client of u on one
// connection: cc is the call connection (nil: the control connection).
// The input handlers and the log tap give what the upstream sends to the
// call holding cc, and to no call on the control connection; the manual
// multi round-trip path lets the client of the gateway answer; the
// control connection's notification handlers pass changes through.
func (u *upstream) clientOptions(version string, cc *callConn) *client.Options {
	h := connHandlers{u: u, cc: cc}
	o := &client.Options{
		Info:                 u.g.info,
		ProtocolVersion:      version,
		CallTimeout:          u.cfg.CallTimeout,
		Logger:               u.g.log,
		Interceptors:         append([]intercept.Interceptor{h.logTap}, u.g.opts.Interceptors...),
		ManualInput:          true,
		ElicitHandler:        h.elicit,
		ElicitationURL:       true,
		CreateMessageHandler: h.createMessage,
		ListRootsHandler:     h.listRoots,
		SamplingTools:        true,
		Listen:               true,
		OnLog:                u.onLog,
	}
	if cc != nil && !cc.control {
		// A call connection hears no resources/updated (the control
		// connection's listen stream does), so a result cached on it
		// could outlive its resource's change: its calls go to the
		// upstream each time.
		o.NoCache = true
	}
	if cc == nil || cc.control {
		o.OnToolsListChanged = func(context.Context) { signal(u.resync) }
		o.OnPromptsListChanged = func(context.Context) { signal(u.resync) }
		o.OnResourcesListChanged = func(context.Context) { signal(u.resync) }
		o.OnResourceUpdated = u.onResourceUpdated
	}
	return o
}

// serve watches a connected upstream until it dies, fails its health
// check, or ctx ends; it runs the syncs the upstream's list changes ask
// for.
func (u *upstream) serve(ctx context.Context, c *client.Client) error {
	defer u.subscribedUpstream() // nobody waits on a connection that ended
	// The listen goroutine ends when lctx does: stop runs before the wait
	// (deferred calls run last first).
	var listening sync.WaitGroup
	defer listening.Wait()
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	if c.Era() == client.EraModern {
		listening.Add(1)
		go func() {
			defer listening.Done()
			u.listen(lctx, c)
		}()
	} else {
		u.resubscribe(ctx, c)
	}
	u.g.log.Info("gateway: upstream ready", "upstream", u.cfg.Name, "era", c.Era().String(), "version", c.ProtocolVersion())
	// A modern upstream's listen goroutine takes the kicks; a legacy
	// one's subscriptions are made here.
	kicks := u.listenKick
	if c.Era() == client.EraModern {
		kicks = nil
	}
	var health <-chan time.Time
	if u.cfg.HealthInterval > 0 {
		health = u.g.after(u.cfg.HealthInterval)
	}
	for {
		select {
		case <-c.Done():
			if err := c.Wait(); err != nil {
				return err
			}
			return errors.New("gateway: the upstream closed the connection")
		case <-ctx.Done():
			return ctx.Err()
		case <-u.resync:
			if err := u.sync(ctx, c); err != nil {
				u.g.log.Warn("gateway: upstream lists failed", "upstream", u.cfg.Name, "err", err)
			}
		case <-kicks:
			u.resubscribe(ctx, c)
		case <-health:
			if err := u.check(ctx, c); err != nil {
				return fmt.Errorf("gateway: health check: %w", err)
			}
			health = u.g.after(u.cfg.HealthInterval)
		}
	}
}

// check asks the upstream whether it is alive.
func (u *upstream) check(ctx context.Context, c *client.Client) error {
	cctx, cancel := context.WithTimeout(ctx, u.cfg.ConnectTimeout)
	defer cancel()
	if c.Era() == client.EraModern {
		_, err := c.Discover(cctx)
		return err
	}
	return c.Ping(cctx)
}

// setClient makes c the control connection's client (nil: none).
func (u *upstream) setClient(c *client.Client, cc *callConn) {
	u.mu.Lock()
	u.c = c
	u.ctlCC = cc
	u.subscribedUp = make(map[string]bool)
	u.wakeLocked() // calls waiting for a connection see the new one (or none)
	u.mu.Unlock()
}

func (u *upstream) setState(s State, err error) {
	u.mu.Lock()
	if s == u.state && err == nil {
		u.mu.Unlock()
		return
	}
	u.state, u.since = s, time.Now()
	u.err = ""
	if err != nil {
		u.err = err.Error()
	}
	u.mu.Unlock()
	if h := u.g.stateHook; h != nil {
		h(u.cfg.Name, s)
	}
}

func (u *upstream) health() Health {
	u.mu.Lock()
	defer u.mu.Unlock()
	h := Health{
		Name:      u.cfg.Name,
		State:     u.state,
		Since:     u.since,
		Err:       u.err,
		Connects:  u.connects,
		Tools:     len(u.reg[kindTool]),
		Prompts:   len(u.reg[kindPrompt]),
		Resources: len(u.reg[kindResource]),
		Templates: len(u.reg[kindTemplate]),
		Conflicts: append([]string(nil), u.conflicts...),
		Skipped:   append([]string(nil), u.skipped...),
	}
	if u.c != nil {
		h.Era = u.c.Era().String()
		h.ProtocolVersion = u.c.ProtocolVersion()
		h.Server = u.c.ServerInfo().Name
	}
	h.Pending = u.g.pending.count(u)
	h.InFlight = len(u.sem)
	h.MaxInFlight = u.cfg.MaxInFlight
	h.Connections = u.open
	h.Leased = u.leased
	h.MaxConnections = u.cfg.MaxConnections
	h.Exhausted = h.InFlight >= h.MaxInFlight || h.Leased >= h.MaxConnections
	return h
}

// control is the control connection's client.
func (u *upstream) control() (*client.Client, error) {
	u.mu.Lock()
	c := u.c
	u.mu.Unlock()
	if c == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnavailable, u.cfg.Name)
	}
	return c, nil
}

// acquireControl takes a MaxInFlight slot (waiting at most QueueTimeout)
// and the control connection's client, for a request of a 2026
// upstream's task (tasks.go); release gives the slot back.
func (u *upstream) acquireControl(ctx context.Context) (*client.Client, func(), error) {
	if err := u.takeSlot(ctx, u.queueWait()); err != nil {
		return nil, nil, err
	}
	c, err := u.control()
	if err != nil {
		<-u.sem
		return nil, nil, err
	}
	var once sync.Once
	return c, func() { once.Do(func() { <-u.sem }) }, nil
}

// encode is an item's encoding, to tell a changed item from an unchanged one.
func encode(v any) string {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return ""
	}
	return string(b)
}
