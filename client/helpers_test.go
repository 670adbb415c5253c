package client_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// TestMain fails the package if any goroutine outlives the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// hangGuard bounds every wait; a test that reaches it has failed.
const hangGuard = 20 * time.Second

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	t.Cleanup(cancel)
	return ctx
}

func recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangGuard):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// fakeServer is a scripted JSON-RPC peer standing in for an MCP server:
// handle answers each request; every request and notification it
// receives is recorded.
type fakeServer struct {
	conn   *jsonrpc.Conn
	handle func(ctx context.Context, msg *jsonrpc.Message) (any, error)

	mu    sync.Mutex
	reqs  []*jsonrpc.Message
	notes []*jsonrpc.Message
	got   chan *jsonrpc.Message // every message, as it arrives
}

func (f *fakeServer) HandleRequest(ctx context.Context, msg *jsonrpc.Message) (any, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, msg)
	f.mu.Unlock()
	select {
	case f.got <- msg:
	default:
	}
	return f.handle(ctx, msg)
}

func (f *fakeServer) HandleNotification(ctx context.Context, msg *jsonrpc.Message) {
	f.mu.Lock()
	f.notes = append(f.notes, msg)
	f.mu.Unlock()
	select {
	case f.got <- msg:
	default:
	}
}

// requests returns the requests received so far.
func (f *fakeServer) requests() []*jsonrpc.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

// methods returns the methods of the requests received so far.
func (f *fakeServer) methods() []string {
	var out []string
	for _, m := range f.requests() {
		out = append(out, m.Method)
	}
	return out
}

func (f *fakeServer) notifications() []*jsonrpc.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.notes)
}

// startFake starts a fake server and returns the client's end of the
// in-memory connection to it.
func startFake(t testing.TB, handle func(ctx context.Context, msg *jsonrpc.Message) (any, error)) (transport.Conn, *fakeServer) {
	a, b := memory.NewPair()
	f := &fakeServer{handle: handle, got: make(chan *jsonrpc.Message, 256)}
	f.conn = jsonrpc.NewConn(b, &jsonrpc.ConnOptions{Handler: f})
	f.conn.Start()
	t.Cleanup(func() { f.conn.Close() })
	return a, f
}

// connect connects a client over tr; it is closed when the test ends.
func connect(t testing.TB, tr transport.Conn, opts *client.Options) *client.Client {
	t.Helper()
	c, err := client.Connect(testCtx(t), tr, opts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// modernWire returns an Observe function that checks every message of a
// modern connection against the 2026-07-28 schema.
func modernWire(t testing.TB) func(in bool, msg []byte) {
	obs := wirecheck.For(t, mcp.Version20260728).Observe(t)
	return func(in bool, msg []byte) {
		dir := wirecheck.ClientToServer
		if in {
			dir = wirecheck.ServerToClient
		}
		obs(dir, msg)
	}
}

// serverInfo is the identity of the fake modern server.
var serverInfo = mcp.Implementation{Name: "fake", Version: "2"}

func withServerInfo() mcp.Meta { return mcp.Meta{mcp.MetaKeyServerInfo: serverInfo} }

// discoverResult is a complete server/discover result listing versions.
func discoverResult(versions ...string) *mcp.DiscoverResult {
	ttl := int64(0)
	return &mcp.DiscoverResult{
		ResultType:        mcp.ResultComplete,
		SupportedVersions: versions,
		Capabilities:      mcp.ServerCapabilities{Tools: &mcp.ToolsCapability{ListChanged: true}},
		Instructions:      "be nice",
		TTLMs:             &ttl,
		CacheScope:        mcp.CachePrivate,
		Meta:              withServerInfo(),
	}
}

func initializeResult() *mcp.InitializeResult {
	return &mcp.InitializeResult{
		ProtocolVersion: mcp.LatestLegacy,
		Capabilities:    mcp.ServerCapabilities{Tools: &mcp.ToolsCapability{}},
		ServerInfo:      mcp.Implementation{Name: "legacy", Version: "1"},
	}
}

// ttl returns a pointer to ms.
func ttl(ms int64) *int64 { return &ms }

// toolsResult is a complete tools/list result.
func toolsResult(ttlMs *int64, scope mcp.CacheScope, tools ...mcp.Tool) *mcp.ListToolsResult {
	if tools == nil {
		tools = []mcp.Tool{}
	}
	return &mcp.ListToolsResult{ResultType: mcp.ResultComplete, Tools: tools, TTLMs: ttlMs, CacheScope: scope, Meta: withServerInfo()}
}

// envelopeOf decodes the _meta of a request's params.
func envelopeOf(t testing.TB, m *jsonrpc.Message) mcp.Meta {
	t.Helper()
	var p struct {
		Meta mcp.Meta `json:"_meta"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("%s params: %v", m.Method, err)
	}
	return p.Meta
}

// unsupported is the -32022 error naming supported.
func unsupported(requested string, supported ...string) *jsonrpc.Error {
	return jsonrpc.NewError(mcp.CodeUnsupportedProtocolVersion, "Unsupported protocol version").
		WithData(mcp.UnsupportedProtocolVersionData{Supported: supported, Requested: requested})
}

// headerTap records the headers each written request carries
// (transport.Message.Header), by method.
type headerTap struct {
	transport.Conn
	mu      sync.Mutex
	headers map[string][]transport.Header
	each    map[string][][]transport.Header // every write's, in order
}

func (h *headerTap) Write(ctx context.Context, msg transport.Message) error {
	var env struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(msg.Data, &env)
	h.mu.Lock()
	if h.headers == nil {
		h.headers = map[string][]transport.Header{}
	}
	if h.each == nil {
		h.each = map[string][][]transport.Header{}
	}
	h.headers[env.Method] = slices.Clone(msg.Header) // Write may not retain it
	h.each[env.Method] = append(h.each[env.Method], h.headers[env.Method])
	h.mu.Unlock()
	return h.Conn.Write(ctx, msg)
}

func (h *headerTap) of(method string) []transport.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.headers[method]
}

// all returns the headers of every write of method, in order.
func (h *headerTap) all(method string) [][]transport.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.each[method]
}
