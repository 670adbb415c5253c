package mcptest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// Eras returns both eras, legacy first, for a test that runs in each:
//
//	for _, era := range mcptest.Eras() { t.Run(era.String(), …) }
func Eras() []client.Era { return []client.Era{client.EraLegacy, client.EraModern} }

// DefaultTimeout bounds each call a helper of this package makes
// (CallTool, the Context of a Pair) when the test has no deadline
// nearer: a server that never answers fails the test instead of hanging
// it. Options.Timeout changes it.
const DefaultTimeout = 30 * time.Second

// Options configures a Pair. Nil (or the zero value) is a modern pair
// (2026-07-28) with no client capabilities and wire checks on.
type Options struct {
	// Era is the era the client connects in: client.EraModern (the
	// default, also for the zero value) or client.EraLegacy.
	Era client.Era
	// ProtocolVersion pins a revision instead of the era's newest (such
	// as "2025-06-18"); its era wins over Era.
	ProtocolVersion string
	// Client are the client's options; nil: defaults. Its Info defaults
	// to "mcptest". ProtocolVersion is set from Era, and the handlers of
	// the input requests Script answers come from Script (setting one in
	// both places fails the test).
	Client *client.Options
	// Script answers the server's input requests. Each non-nil list of
	// answers declares its capability, even when empty; answers may be
	// added later with the Script's methods.
	Script *Script
	// NoWireCheck turns the schema checks off.
	NoWireCheck bool
	// Timeout bounds each call of the package's helpers. Zero:
	// DefaultTimeout.
	Timeout time.Duration
}

// Pair is a server and a client connected in memory. Its fields are set
// by NewPair and must not be changed.
type Pair struct {
	// Client is connected to Server in the pair's era; use it for
	// anything the helpers do not cover.
	Client *client.Client
	// Server is the server the test passed to NewPair.
	Server *server.Server
	// Version is the revision in use (negotiated, for a legacy pair).
	Version string

	t       testing.TB
	timeout time.Duration

	mu       sync.Mutex
	progress []mcp.ProgressParams // of the last call a helper made
}

// NewPair serves srv in memory and connects a client to it in the era of
// opts (nil: modern). It fails the test if the client cannot connect.
// Everything it starts is stopped in t.Cleanup, which waits for the
// server's session to end and reports an error it ended with.
func NewPair(t testing.TB, srv *server.Server, opts *Options) *Pair {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if srv == nil {
		t.Fatal("mcptest: NewPair needs a server")
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	version, err := pickVersion(o.Era, o.ProtocolVersion)
	if err != nil {
		t.Fatal(err)
	}
	var co client.Options
	if o.Client != nil {
		co = *o.Client
	}
	if co.Info.Name == "" {
		co.Info = mcp.Implementation{Name: "mcptest", Version: "1.0.0"}
	}
	co.ProtocolVersion = version
	if err := o.Script.install(t, &co); err != nil {
		t.Fatal(err)
	}

	clientEnd, serverEnd := memory.NewPair()
	var conn transport.Conn = clientEnd
	if !o.NoWireCheck {
		if checker := wirecheck.For(t, version); checker != nil { // nil without the schemas
			conn = newObservedConn(clientEnd, checker, checker.Observe(t))
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, serverEnd) }() // ends in the cleanup below
	p := &Pair{Server: srv, t: t, timeout: o.Timeout}
	var c *client.Client
	t.Cleanup(func() {
		if c != nil {
			c.Close()
		}
		clientEnd.Close()
		cancel()
		if err := <-served; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("mcptest: the server's session ended with %v", err)
		}
	})
	cctx, ccancel := p.context()
	defer ccancel()
	c, err = client.Connect(cctx, conn, &co)
	if err != nil {
		t.Fatalf("mcptest: connecting in %s: %v", version, err)
	}
	p.Client = c
	p.Version = c.ProtocolVersion()
	return p
}

// pickVersion returns the revision the client pins.
func pickVersion(era client.Era, version string) (string, error) {
	switch {
	case version != "":
		if !mcp.IsModern(version) && !mcp.IsLegacy(version) {
			return "", errors.New("mcptest: Options.ProtocolVersion " + version + " is not a revision")
		}
		return version, nil
	case era == client.EraLegacy:
		return mcp.LatestLegacy, nil
	case era == 0 || era == client.EraModern:
		return mcp.Version20260728, nil
	}
	return "", errors.New("mcptest: Options.Era " + era.String() + " is not an era")
}

// Era returns the era of the pair.
func (p *Pair) Era() client.Era { return p.Client.Era() }

// Context returns a context for a call of the test's own: it ends with
// the test, after the pair's timeout, or at the test's deadline,
// whichever comes first.
func (p *Pair) Context() context.Context {
	ctx, cancel := p.context()
	p.t.Cleanup(cancel)
	return ctx
}

func (p *Pair) context() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	if dl, ok := p.t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dl.Deadline(); ok {
			ctx2, cancel2 := context.WithDeadline(ctx, d)
			return ctx2, func() { cancel2(); cancel() }
		}
	}
	return ctx, cancel
}

// progressRecorder keeps the progress notifications of one call.
type progressRecorder struct {
	mu   sync.Mutex
	seen []mcp.ProgressParams
}

func (r *progressRecorder) add(n *mcp.ProgressParams) {
	r.mu.Lock()
	r.seen = append(r.seen, *n)
	r.mu.Unlock()
}

// callContext returns the context of a helper's call of the tool name:
// it carries a progress token, as a client that shows progress sends,
// and done records the notifications the server sent for it (Progress)
// and fails the test unless each step was greater than the one before
// (the rule of notifications/progress).
func (p *Pair) callContext(t testing.TB, name string) (ctx context.Context, done func()) {
	ctx, cancel := p.context()
	rec := &progressRecorder{}
	ctx = client.WithProgress(ctx, rec.add)
	return ctx, func() {
		t.Helper()
		cancel()
		rec.mu.Lock()
		seen := rec.seen
		rec.mu.Unlock()
		checkProgress(t, name, seen)
		p.mu.Lock()
		p.progress = seen
		p.mu.Unlock()
	}
}

// checkProgress fails the test unless each step of seen is greater than
// the one before.
func checkProgress(t testing.TB, name string, seen []mcp.ProgressParams) {
	t.Helper()
	for i := 1; i < len(seen); i++ {
		if seen[i].Progress <= seen[i-1].Progress {
			t.Errorf("mcptest: the progress of %q went from %v to %v (steps %v): progress must increase with each notification, and a step must reach the client once", name, seen[i-1].Progress, seen[i].Progress, progressValues(seen))
			return
		}
	}
}

func progressValues(ps []mcp.ProgressParams) []float64 {
	v := make([]float64, len(ps))
	for i := range ps {
		v[i] = ps[i].Progress
	}
	return v
}

// Progress returns the progress notifications the server sent for the
// last call of CallTool, ToolError or CallToolResult, in the order the
// client received them (nil when it sent none). Those helpers send a
// progress token with each call and fail the test when a call's steps
// do not increase — a step sent twice, say when a handler that asked
// for input runs again. For calls made at once from several
// goroutines, "last" is the last to finish.
func (p *Pair) Progress() []mcp.ProgressParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.progress
}

// CallTool calls the tool name with args (any value that encodes as a
// JSON object: a struct or a map) and returns its structured result
// decoded into Out, checked against the tool's output schema
// (client.CallTool). An error, or a result with isError set, fails the
// test; use ToolError to test a tool's failures. The call carries a
// progress token: see Progress.
func CallTool[Out any](t testing.TB, p *Pair, name string, args any) Out {
	t.Helper()
	ctx, done := p.callContext(t, name)
	defer done()
	out, _, err := client.CallTool[Out](ctx, p.Client, name, args)
	if err != nil {
		t.Fatalf("mcptest: calling %q: %v", name, err)
	}
	return out
}

// ToolError calls the tool name with args, expecting it to fail with a
// tool error (a result with isError set), and returns that error's text.
// A successful call or a protocol error fails the test. The call carries
// a progress token: see Progress.
func ToolError(t testing.TB, p *Pair, name string, args any) string {
	t.Helper()
	ctx, done := p.callContext(t, name)
	defer done()
	_, _, err := client.CallTool[jsontext.Value](ctx, p.Client, name, args)
	var te *client.ToolError
	switch {
	case errors.As(err, &te):
		return te.Text
	case err == nil:
		t.Fatalf("mcptest: %q succeeded; want a tool error", name)
	default:
		t.Fatalf("mcptest: calling %q: %v; want a tool error", name, err)
	}
	return ""
}

// CallToolResult calls the tool name with args (nil, or any value that
// encodes as a JSON object) and returns its raw result, isError or not.
// A protocol error fails the test. The call carries a progress token:
// see Progress.
func CallToolResult(t testing.TB, p *Pair, name string, args any) *mcp.CallToolResult {
	t.Helper()
	params := &mcp.CallToolParams{Name: name}
	if args != nil {
		raw, err := json.Marshal(args)
		if err != nil {
			t.Fatalf("mcptest: encoding the arguments of %q: %v", name, err)
		}
		params.Arguments = raw
	}
	ctx, done := p.callContext(t, name)
	defer done()
	res, err := p.Client.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("mcptest: calling %q: %v", name, err)
	}
	return res
}
