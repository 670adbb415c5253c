package gateway

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// relayQueue bounds the progress and log messages waiting to be passed to
// one client request; more are dropped (the upstream must not be slowed
// by a slow client).
const relayQueue = 64

// relay passes an upstream call's progress and log messages to the client
// request attached to it, in order, on a goroutine of its own started at
// the first message (the client's notification callbacks must not do
// I/O; most calls have none). stop waits for what is queued.
type relay struct {
	req     *server.Request
	ctx     context.Context
	mu      sync.Mutex
	queue   []func()
	running bool
	stopped bool
	wg      sync.WaitGroup
}

func newRelay(ctx context.Context, req *server.Request) *relay {
	return &relay{req: req, ctx: ctx}
}

func (r *relay) stop() {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	r.wg.Wait()
}

func (r *relay) send(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || len(r.queue) >= relayQueue {
		return
	}
	r.queue = append(r.queue, f)
	if !r.running {
		r.running = true
		r.wg.Add(1)
		go r.work()
	}
}

// work runs the queue until it is empty.
func (r *relay) work() {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		if len(r.queue) == 0 {
			r.running = false
			r.mu.Unlock()
			return
		}
		f := r.queue[0]
		r.queue = r.queue[1:]
		r.mu.Unlock()
		f()
	}
}

func (r *relay) progress(p *mcp.ProgressParams) {
	total := 0.0
	if p.Total != nil {
		total = *p.Total
	}
	r.send(func() { _ = r.req.Progress(r.ctx, p.Progress, total, p.Message) }) // best effort, as upstream sent it
}

func (r *relay) log(p *mcp.LoggingMessageParams) {
	r.send(func() { _ = r.req.Log(r.ctx, p.Level, p.Logger, p.Data) }) // best effort, as upstream sent it
}

// context asks the upstream for progress on the call, for r, when the
// client asked for progress.
func (r *relay) context(ctx context.Context) context.Context {
	m := r.req.Meta()
	if _, present := m[mcp.MetaKeyProgressToken]; !present {
		return ctx // the common case, told without decoding anything
	}
	if _, ok := m.ProgressToken(); !ok {
		return ctx
	}
	return client.WithProgress(ctx, r.progress)
}

// connHandlers are the handlers of one upstream connection: cc is the
// call connection (nil: the control connection, which no call holds).
type connHandlers struct {
	u  *upstream
	cc *callConn
}

// holder is the call holding the connection now (nil: none).
func (h connHandlers) holder() *inflight {
	if h.cc == nil {
		return nil
	}
	return h.cc.holder.Load()
}

// logTap is the first interceptor of the gateway's client on a
// connection: it passes the upstream's log messages to the call holding
// the connection. It runs on the connection's reader, in order, so a
// message sent before a call's response reaches the call before it ends
// (the client's OnLog, which gets the messages of no call, runs later on
// a goroutine of its own).
func (h connHandlers) logTap(next intercept.Handler) intercept.Handler {
	return func(ctx context.Context, c *intercept.Call) (any, error) {
		if !c.Inbound || !c.Notification || c.Method != mcp.NotificationMessage {
			return next(ctx, c)
		}
		in := h.holder()
		if in == nil && (h.cc == nil || h.cc.control) {
			in = h.u.modernSole()
		}
		if in != nil {
			if r := in.sink.Load(); r != nil {
				var p mcp.LoggingMessageParams
				if json.Unmarshal(c.Raw, &p) == nil {
					r.log(&p)
					return nil, nil
				}
			}
		}
		return next(ctx, c)
	}
}

// onLog receives the upstream's log messages no call claimed: they go to
// the gateway's log at the slog level of their own (slogLevel), named by
// the upstream, so that an operator sees an upstream's warnings and errors
// without turning on the gateway's debug output.
func (u *upstream) onLog(ctx context.Context, p *mcp.LoggingMessageParams) {
	u.g.log.Log(ctx, slogLevel(p.Level), "gateway: upstream log message", "upstream", u.cfg.Name, "level", string(p.Level), "logger", p.Logger, "data", p.Data)
}

// slogLevel is the slog level of an MCP log level: debug is Debug; info
// and notice are Info; warning is Warn; error and above are Error; an
// unknown level is Info.
func slogLevel(l mcp.LoggingLevel) slog.Level {
	switch l {
	case mcp.LevelDebug:
		return slog.LevelDebug
	case mcp.LevelWarning:
		return slog.LevelWarn
	case mcp.LevelError, mcp.LevelCritical, mcp.LevelAlert, mcp.LevelEmergency:
		return slog.LevelError
	}
	return slog.LevelInfo // info, notice, and a level the spec does not name
}

// The upstream's requests (legacy): passed to the call holding the
// connection they came on, refused (-32602, as SEP-2260 advises for a
// request associated with no client request) on any other.

func (h connHandlers) claim() (*pending, error) {
	in := h.holder()
	if in == nil || in.pend() == nil {
		return nil, errUnheld
	}
	return in.pend(), nil
}

func (h connHandlers) elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	pc, err := h.claim()
	if err != nil {
		return nil, err
	}
	raw, err := pc.ask(ctx, mcp.MethodElicitationCreate, p)
	if err != nil {
		return nil, err
	}
	var res mcp.ElicitResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func (h connHandlers) createMessage(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	pc, err := h.claim()
	if err != nil {
		return nil, err
	}
	raw, err := pc.ask(ctx, mcp.MethodSamplingCreateMessage, p)
	if err != nil {
		return nil, err
	}
	var res mcp.CreateMessageResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// listRoots answers a legacy upstream's roots/list: with the roots of the
// client whose call holds the connection, when it declared roots (asked
// as an input request of that call), else with the roots configured for
// the upstream (a legacy server may ask outside any call, such as right
// after initialize).
func (h connHandlers) listRoots(ctx context.Context) (*mcp.ListRootsResult, error) {
	if pc, err := h.claim(); err == nil {
		if r := pc.call.sink.Load(); r != nil && r.req.ClientCapabilities().Roots != nil {
			raw, err := pc.ask(ctx, mcp.MethodRootsList, nil)
			if err != nil {
				return nil, err
			}
			var res mcp.ListRootsResult
			if err := json.Unmarshal(raw, &res); err != nil {
				return nil, err
			}
			return &res, nil
		}
	}
	return &mcp.ListRootsResult{Roots: slices.Clone(h.u.cfg.Roots)}, nil
}

// Resource subscriptions. A client's interest in a resource (legacy
// resources/subscribe, or a 2026 subscriptions/listen naming it) makes the
// gateway subscribe to it upstream, once; the upstream's updates reach the
// subscribed clients through the server (ResourceUpdated). Upstream
// subscriptions are kept while the connection lives (clients come and go;
// the server passes an update only to those subscribed).

// subscriptions is the gateway server's interceptor that notices them.
func (g *Gateway) subscriptions(next intercept.Handler) intercept.Handler {
	return func(ctx context.Context, c *intercept.Call) (any, error) {
		if !c.Inbound || c.Notification {
			return next(ctx, c)
		}
		switch c.Method {
		case mcp.MethodResourcesSubscribe:
			res, err := next(ctx, c)
			if err == nil {
				g.subscribe(c.Name).wait(ctx)
			}
			return res, err
		case mcp.MethodSubscriptionsListen:
			// The upstream subscriptions first, then the listen, whose
			// acknowledgement tells the client it is subscribed.
			var p mcp.SubscriptionsListenParams
			if json.Unmarshal(c.Raw, &p) == nil {
				var waits []subWait
				for _, uri := range p.Notifications.ResourceSubscriptions {
					waits = append(waits, g.subscribe(uri))
				}
				for _, w := range waits {
					w.wait(ctx)
				}
			}
		}
		return next(ctx, c)
	}
}

// MaxSubscriptions bounds the resources the gateway subscribes to on one
// upstream; clients' subscriptions beyond it are not passed upstream.
const MaxSubscriptions = 1000

// subscribe notes a client's interest in the resource outerURI: one the
// gateway lists (a URI a template would match is not subscribed to
// upstream: the set stays bounded by what the upstreams list).
//
// It returns what to wait for before the client is told it is subscribed:
// the subscription upstream, on the connection the upstream has now, so
// that an update made as soon as the client knows reaches it. There is
// nothing to wait for when the upstream is not ready (its subscriptions
// are made when it is) or the resource is not one to subscribe to.
func (g *Gateway) subscribe(outerURI string) subWait {
	u := g.names.lookup(kindResource, outerURI)
	if u == nil {
		return subWait{}
	}
	uri, ok := inner(u.cfg.Prefix, kindResource, outerURI)
	if !ok {
		return subWait{}
	}
	u.mu.Lock()
	_, mine := u.reg[kindResource][outerURI]
	added := mine && !u.subscribed[uri] && len(u.subscribed) < MaxSubscriptions
	if added {
		u.subscribed[uri] = true
		if u.state == StateReady {
			if u.subWaits == nil {
				u.subWaits = make(map[string]chan struct{})
			}
			u.subWaits[uri] = make(chan struct{})
		}
	}
	w := subWait{ch: u.subWaits[uri], bound: u.cfg.CallTimeout}
	u.mu.Unlock()
	if added {
		signal(u.listenKick)
	}
	return w
}

// subWait is a client's wait for a subscription upstream: ch is closed
// once the subscription was made (or tried, or the connection ended);
// nil: nothing to wait for. The wait is bounded by the upstream's
// CallTimeout, as the subscribe request itself is.
type subWait struct {
	ch    chan struct{}
	bound time.Duration
}

func (w subWait) wait(ctx context.Context) {
	if w.ch == nil {
		return
	}
	timer := time.NewTimer(w.bound)
	defer timer.Stop()
	select {
	case <-w.ch:
	case <-ctx.Done():
	case <-timer.C:
	}
}

// subscribedUpstream releases the clients waiting for the upstream
// subscriptions to uris (made, or tried and refused: either way the
// gateway did what it could). With no uris it releases every waiter:
// the connection ended, and its successor subscribes to everything anew.
func (u *upstream) subscribedUpstream(uris ...string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(uris) == 0 {
		for uri, ch := range u.subWaits {
			close(ch)
			delete(u.subWaits, uri)
		}
		return
	}
	for _, uri := range uris {
		if ch, ok := u.subWaits[uri]; ok {
			close(ch)
			delete(u.subWaits, uri)
		}
	}
}

func (u *upstream) subscribedURIs() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Sorted(maps.Keys(u.subscribed))
}

// resubscribe subscribes a legacy upstream to the resources clients asked
// for that this connection has not subscribed to yet.
func (u *upstream) resubscribe(ctx context.Context, c *client.Client) {
	if caps := c.ServerCapabilities(); caps.Resources == nil || !caps.Resources.Subscribe {
		u.subscribedUpstream()
		return
	}
	for _, uri := range u.subscribedURIs() {
		u.mu.Lock()
		done := u.subscribedUp[uri]
		u.subscribedUp[uri] = true
		u.mu.Unlock()
		if done {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, u.cfg.ConnectTimeout)
		err := c.Subscribe(sctx, uri)
		cancel()
		u.subscribedUpstream(uri)
		if err != nil {
			u.g.log.Debug("gateway: upstream subscription refused", "upstream", u.cfg.Name, "uri", uri, "err", err)
		}
	}
}

// listen keeps a subscriptions/listen stream open to a modern upstream,
// for its list changes and the resources clients subscribed to (opened
// again when they change). The notifications go to the client's
// handlers, which sync or pass updates on.
func (u *upstream) listen(ctx context.Context, c *client.Client) {
	pause := u.g.opts.RestartMin
	// prev is the stream a kick replaces: it stays open until its
	// successor is acknowledged, so that no update of a resource already
	// subscribed to falls between the two streams.
	var prev *openListen
	defer func() { prev.close() }()
	for ctx.Err() == nil {
		f := mcp.SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true, ResourcesListChanged: true, ResourceSubscriptions: u.subscribedURIs()}
		sctx, cancel := context.WithCancel(ctx)
		sub, err := c.Listen(sctx, f)
		if len(f.ResourceSubscriptions) > 0 {
			u.subscribedUpstream(f.ResourceSubscriptions...)
		}
		if err != nil {
			cancel()
			if unsupported(err) {
				u.subscribedUpstream()
				return
			}
			u.g.log.Debug("gateway: upstream listen failed", "upstream", u.cfg.Name, "err", err)
			select {
			case <-u.g.after(pause):
			case <-ctx.Done():
				return
			}
			pause = min(pause*2, u.g.opts.RestartMax)
			continue
		}
		if prev != nil {
			prev.close()
			// An update the upstream sent on the old stream just before
			// the new one was registered may be lost with it: two HTTP
			// streams keep no order between them, so the new stream's
			// acknowledgement can be read first, and closing the old one
			// drops what it still held (on stdio, the upstream may refuse
			// to send on a listen request that is ending). The resources
			// both covered may have changed unseen: say so to their
			// subscribers, who read them again. resources/updated is a
			// hint to read; a spurious one costs a read, a lost one a
			// stale view.
			for _, uri := range prev.uris {
				u.onResourceUpdated(ctx, uri)
			}
			prev = nil
		}
		pause = u.g.opts.RestartMin
		// What changed before the stream was open was not notified.
		signal(u.resync)
		cur := &openListen{cancel: cancel, done: make(chan struct{}), uris: f.ResourceSubscriptions}
		go func() { // owned by listen: closed by cur.close
			defer close(cur.done)
			for range sub.Notifications() {
			}
		}()
		select {
		case <-u.listenKick:
			prev = cur // replaced once the next stream is acknowledged
		case <-cur.done:
			cur.close()
		case <-ctx.Done():
			cur.close()
			return
		}
	}
}

// openListen is an upstream listen stream and its reader; uris are the
// resources it is subscribed to.
type openListen struct {
	cancel context.CancelFunc
	done   chan struct{}
	uris   []string
}

// close ends the stream and waits for its reader; nil does nothing.
func (l *openListen) close() {
	if l == nil {
		return
	}
	l.cancel()
	<-l.done
}

// onResourceUpdated passes an upstream's update to the subscribed clients.
func (u *upstream) onResourceUpdated(_ context.Context, uri string) {
	u.g.srv.ResourceUpdated(outer(u.cfg.Prefix, kindResource, uri))
}

// complete routes completion/complete to the upstream of the prompt or
// resource template, under its own name.
func (g *Gateway) complete(ctx context.Context, req *server.CompleteRequest) (*mcp.CompleteResult, error) {
	p := *req.Params
	var u *upstream
	var ok bool
	switch p.Ref.Type {
	case mcp.RefPrompt:
		u, p.Ref.Name, ok = g.innerName(kindPrompt, p.Ref.Name)
	default:
		u, p.Ref.URI, ok = g.innerName(kindTemplate, p.Ref.URI)
		if !ok {
			u, p.Ref.URI, ok = g.innerName(kindResource, req.Params.Ref.URI)
		}
	}
	if !ok {
		return &mcp.CompleteResult{}, nil
	}
	ctl, err := u.control()
	if err != nil {
		return nil, upstreamError(err)
	}
	if caps := ctl.ServerCapabilities(); caps.Completions == nil {
		return &mcp.CompleteResult{}, nil
	}
	p.Meta = passMeta(req.Request)
	res, err := forward(ctx, u, req.Request, roundState{}, func(ctx context.Context, c *client.Client, _ mcp.InputResponses, _ string) (*mcp.CompleteResult, error) {
		return c.Complete(ctx, &p)
	})
	if err != nil {
		return nil, upstreamError(err)
	}
	return res, nil
}
