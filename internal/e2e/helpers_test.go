package e2e

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/command"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// hangGuard bounds every wait of a test. It is never a synchronisation:
// a test that reaches it has failed.
const hangGuard = 30 * time.Second

// testCtx returns the test's context bounded by the hang guard.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	t.Cleanup(cancel)
	return ctx
}

// recv receives one value from ch, failing the test at the hang guard.
func recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(hangGuard)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// negotiated is the revision the server answers an offer with: the offer
// when it is a legacy revision it knows, else its newest legacy revision.
func negotiated(offer string) string {
	if slices.Contains(mcp.LegacyVersions(), offer) {
		return offer
	}
	return mcp.LatestLegacy
}

// wire checks every message a client sees against the schema of the
// negotiated revision and keeps a copy of each for later assertions.
// Requests a test sends malformed on purpose (allowInvalid) are checked to
// be rejected by the schema and are then kept out of the checker, with
// their responses.
type wire struct {
	t       testing.TB
	checker *wirecheck.Checker
	observe func(dir string, msg []byte)

	mu         sync.Mutex
	invalidOK  map[string]bool // methods sent malformed on purpose
	exempt     map[string]bool // ids of requests kept out of the checker
	rejected   int             // requests the schema rejected, as intended
	recordings []recorded
}

type recorded struct {
	dir string
	msg []byte
}

func newWire(t testing.TB, revision string) *wire {
	c := wirecheck.For(t, revision)
	return &wire{t: t, checker: c, observe: c.Observe(t), invalidOK: map[string]bool{}, exempt: map[string]bool{}}
}

// allowInvalid lets the test send schema-invalid requests of method.
func (w *wire) allowInvalid(method string) {
	w.mu.Lock()
	w.invalidOK[method] = true
	w.mu.Unlock()
}

// rejectedCount reports how many requests the schema rejected as intended.
func (w *wire) rejectedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rejected
}

// messages returns the messages seen in direction dir so far.
func (w *wire) messages(dir string) [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out [][]byte
	for _, r := range w.recordings {
		if r.dir == dir {
			out = append(out, r.msg)
		}
	}
	return out
}

// clientSide is a client.Options.Observe / jsonrpc.ConnOptions.Observe for
// the client end of a connection: in means server→client.
func (w *wire) clientSide(in bool, msg []byte) {
	dir := wirecheck.ClientToServer
	if in {
		dir = wirecheck.ServerToClient
	}
	w.see(dir, msg)
}

// serverSide is the same for the server end: in means client→server.
func (w *wire) serverSide(in bool, msg []byte) {
	dir := wirecheck.ServerToClient
	if in {
		dir = wirecheck.ClientToServer
	}
	w.see(dir, msg)
}

func (w *wire) see(dir string, msg []byte) {
	var env struct {
		ID     jsontext.Value `json:"id"`
		Method string         `json:"method"`
	}
	_ = json.Unmarshal(msg, &env)
	skip := false
	w.mu.Lock()
	w.recordings = append(w.recordings, recorded{dir, slices.Clone(msg)})
	switch {
	case dir == wirecheck.ClientToServer && env.ID != nil && w.invalidOK[env.Method] && w.checker.Check(msg) != nil:
		w.exempt[string(env.ID)] = true
		w.rejected++
		skip = true
	case dir == wirecheck.ServerToClient && env.Method == "" && w.exempt[string(env.ID)]:
		delete(w.exempt, string(env.ID))
		skip = true
	}
	w.mu.Unlock()
	if !skip {
		w.observe(dir, msg)
	}
}

// session is a client connected in memory to a fixture's server.
type session struct {
	f    *fixture
	c    *client.Client
	ss   *server.Session
	wire *wire
}

// connect connects a client offering version (default: the newest legacy
// revision) to f's server over an in-memory pair, with the wire checked
// against the revision the server will choose. The client and the session
// are closed when the test ends.
func (f *fixture) connect(t testing.TB, version string, opts *client.Options) *session {
	t.Helper()
	if version == "" {
		version = mcp.LatestLegacy
	}
	var o client.Options
	if opts != nil {
		o = *opts
	}
	o.ProtocolVersion = version
	w := newWire(t, negotiated(version))
	o.Observe = w.clientSide
	a, b := memory.NewPair()
	ss := f.srv.Connect(b)
	c, err := client.Connect(testCtx(t), a, &o)
	if err != nil {
		ss.Close()
		t.Fatalf("client.Connect(%s): %v", version, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("client Close: %v", err)
		}
		ss.Close()
	})
	if got := c.ProtocolVersion(); got != negotiated(version) {
		t.Fatalf("negotiated %q, want %q", got, negotiated(version))
	}
	return &session{f: f, c: c, ss: ss, wire: w}
}

// call calls a tool with args marshaled to JSON (nil: no arguments).
func (s *session) call(t testing.TB, ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	t.Helper()
	p := &mcp.CallToolParams{Name: name}
	if args != nil {
		raw, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		p.Arguments = raw
	}
	return s.c.CallTool(ctx, p)
}

// mustCall calls a tool and fails the test on a protocol error.
func (s *session) mustCall(t testing.TB, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := s.call(t, testCtx(t), name, args)
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// wantText calls a tool and checks that it succeeded with the given text.
func (s *session) wantText(t testing.TB, name string, args any, want string) {
	t.Helper()
	res := s.mustCall(t, name, args)
	if res.IsError || text(res) != want {
		t.Fatalf("tools/call %s = %q (isError %v), want %q", name, text(res), res.IsError, want)
	}
}

// wantToolError calls a tool and checks that it failed as a tool (isError)
// with a text that contains every one of parts.
func (s *session) wantToolError(t testing.TB, name string, args any, parts ...string) string {
	t.Helper()
	res := s.mustCall(t, name, args)
	if !res.IsError {
		t.Fatalf("tools/call %s = %q, want isError", name, text(res))
	}
	got := text(res)
	for _, p := range parts {
		if !strings.Contains(got, p) {
			t.Errorf("tools/call %s error text %q does not mention %q", name, got, p)
		}
	}
	return got
}

// text joins the text blocks of a tool result.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// wantCode checks that err is a JSON-RPC error with code.
func wantCode(t testing.TB, err error, code int64) *jsonrpc.Error {
	t.Helper()
	e, ok := jsonrpc.AsError(err)
	if !ok {
		t.Fatalf("got error %v, want a JSON-RPC error with code %d", err, code)
	}
	if e.Code != code {
		t.Fatalf("got JSON-RPC error %d %q, want code %d", e.Code, e.Message, code)
	}
	return e
}

// handlerFunc is a jsonrpc.Handler for raw peers: it answers requests with
// fn and passes notifications to notes, when set.
type handlerFunc struct {
	fn    func(ctx context.Context, msg *jsonrpc.Message) (any, error)
	notes chan<- *jsonrpc.Message
}

func (h handlerFunc) HandleRequest(ctx context.Context, msg *jsonrpc.Message) (any, error) {
	if h.fn == nil {
		return nil, jsonrpc.ErrMethodNotFound
	}
	return h.fn(ctx, msg)
}

func (h handlerFunc) HandleNotification(ctx context.Context, msg *jsonrpc.Message) {
	if h.notes != nil {
		select {
		case h.notes <- msg:
		default:
		}
	}
}

// rawConn starts a bare JSON-RPC peer over tr, closed when the test ends.
func rawConn(t testing.TB, tr transport.Conn, h jsonrpc.Handler, observe func(in bool, msg []byte)) *jsonrpc.Conn {
	c := jsonrpc.NewConn(tr, &jsonrpc.ConnOptions{Handler: h, Observe: observe})
	c.Start()
	t.Cleanup(func() { c.Close() })
	return c
}

// rawInitialize runs the legacy handshake on a raw client conn.
func rawInitialize(t testing.TB, ctx context.Context, c *jsonrpc.Conn, version string) *mcp.InitializeResult {
	t.Helper()
	var res mcp.InitializeResult
	err := c.Call(ctx, mcp.MethodInitialize, &mcp.InitializeParams{
		ProtocolVersion: version,
		ClientInfo:      mcp.Implementation{Name: "raw", Version: "1"},
	}, &res)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if err := c.Notify(ctx, mcp.NotificationInitialized, nil); err != nil {
		t.Fatalf("notifications/initialized: %v", err)
	}
	return &res
}

// startChild launches this test binary as the stdio fixture server.
// maxBytes > 0 sets the child's cap on one incoming message.
func startChild(t testing.TB, maxBytes int) *command.Conn {
	return startChildWith(t, command.Options{}, childMaxEnv+"="+strconv.Itoa(maxBytes))
}

// startChildWith launches the child with extra environment and options.
func startChildWith(t testing.TB, opts command.Options, env ...string) *command.Conn {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Env = append(cmd.Env, env...)
	cmd.Env = append(cmd.Env,
		// A race-enabled child would otherwise linger a second at exit.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	cmd.Stderr = os.Stderr
	conn, err := command.Start(t.Context(), cmd, &opts)
	if err != nil {
		t.Fatalf("starting the child server: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
