// Package clustertest runs one MCP server as several instances behind a
// round-robin reverse proxy, and checks that legacy sessions, stream
// resumption, server→client requests, MRTR retries and subscriptions work
// whichever instance each HTTP request lands on. The shared stores and
// the broker come from the caller: in-memory ones (internal/e2e) or Redis
// (the store/redis module).
//
// It is test support: it imports testing and must not be imported by
// non-test code.
package clustertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/streamhttp"

	"github.com/mcpkit/mcpkit/store"

	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// Backend is what one instance shares with the others.
type Backend struct {
	Sessions store.SessionStore
	Events   store.EventStore
	Broker   store.Broker
	// Tasks is the shared TaskStore; nil: each instance keeps its own
	// (the task scenarios need a shared one).
	Tasks store.TaskStore
	// Close releases the instance's own parts (its broker); may be nil.
	Close func()
}

// Node is one instance.
type Node struct {
	Index   int
	Server  *server.Server
	Handler *streamhttp.Handler
	ts      *httptest.Server
	backend Backend
	down    atomic.Bool
	once    sync.Once
}

// BrokerID is the id of the instance's broker: the instance part of the
// ids of the tasks it runs.
func (n *Node) BrokerID() string { return n.backend.Broker.ID() }

// cutEvents is an instance's view of the shared EventStore. Once the
// instance is killed it stores nothing more, as a killed process could
// not: Kill still closes its handler (to free its goroutines), and that
// graceful shutdown's answers to the requests in flight must not reach
// the clients through the store.
type cutEvents struct {
	store.EventStore
	down *atomic.Bool
}

func (e *cutEvents) Append(ctx context.Context, session, stream string, seq uint64, data []byte) error {
	if e.down.Load() {
		return errors.New("clustertest: the instance was killed")
	}
	return e.EventStore.Append(ctx, session, stream, seq, data)
}

// cutTasks is an instance's view of the shared TaskStore: once the
// instance is killed it reads and writes nothing more, so its leases
// lapse as a dead process's would.
type cutTasks struct {
	store.TaskStore
	down *atomic.Bool
}

var errKilled = errors.New("clustertest: the instance was killed")

func (c *cutTasks) Put(ctx context.Context, r *store.TaskRecord) error {
	if c.down.Load() {
		return errKilled
	}
	return c.TaskStore.Put(ctx, r)
}

func (c *cutTasks) Get(ctx context.Context, id string) (*store.TaskRecord, error) {
	if c.down.Load() {
		return nil, errKilled
	}
	return c.TaskStore.Get(ctx, id)
}

func (c *cutTasks) List(ctx context.Context, principal, session string) ([]*store.TaskRecord, error) {
	if c.down.Load() {
		return nil, errKilled
	}
	return c.TaskStore.List(ctx, principal, session)
}

func (c *cutTasks) Update(ctx context.Context, id string, fn func(*store.TaskRecord) bool) (*store.TaskRecord, bool, error) {
	if c.down.Load() {
		return nil, false, errKilled
	}
	return c.TaskStore.Update(ctx, id, fn)
}

func (c *cutTasks) Delete(ctx context.Context, id string) error {
	if c.down.Load() {
		return errKilled
	}
	return c.TaskStore.Delete(ctx, id)
}

// TaskLease is the task lease of every instance: short, so that a killed
// owner's task fails within seconds, and still far above a heartbeat's
// delay on a busy machine (a beat every second).
const TaskLease = 3 * time.Second

// Hit is one HTTP request the proxy passed on.
type Hit struct {
	Node   int
	Method string // HTTP method
	// What the POST body was: a JSON-RPC method, "response", or "".
	What string
}

// Cluster is N instances behind a round-robin proxy.
type Cluster struct {
	Nodes []*Node
	URL   string // the proxy's endpoint

	proxy *httptest.Server
	next  atomic.Int64
	mu    sync.Mutex
	hits  []Hit
	// Release unblocks the "hold" tool.
	Release chan struct{}
	// Tasks reports what the task tools see (NewServer).
	Tasks *TaskEvents
	// skew is how far Advance has moved the instances' clocks ahead of
	// the real time (nanoseconds).
	skew atomic.Int64
}

// Advance moves the clock of every instance ahead by d: a session copy
// then reads the SessionStore again (streamhttp SessionCheckInterval)
// without the test sleeping.
func (c *Cluster) Advance(d time.Duration) { c.skew.Add(int64(d)) }

func (c *Cluster) now() time.Time { return time.Now().Add(time.Duration(c.skew.Load())) }

// StateKey is the requestState key every instance shares.
var StateKey = server.RequestStateKey([]byte("clustertest-shared-state-key-32b"))

// New starts n instances, each with the backend backend(i), and the proxy.
// Everything is closed when the test ends.
func New(t *testing.T, n int, backend func(i int) Backend) *Cluster {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { // registered first: runs after everything is closed
		http.DefaultClient.CloseIdleConnections()
		goleak.VerifyNone(t, before)
	})
	c := &Cluster{Release: make(chan struct{}), Tasks: newTaskEvents()}
	for i := range n {
		b := backend(i)
		node := &Node{Index: i, backend: b}
		opts := &server.Options{TaskLease: TaskLease}
		if b.Tasks != nil {
			opts.TaskStore = &cutTasks{TaskStore: b.Tasks, down: &node.down}
		}
		s := newServer(c.Release, c.Tasks, opts)
		node.Server = s
		events := b.Events
		if events != nil {
			events = &cutEvents{EventStore: events, down: &node.down}
		}
		node.Handler = streamhttp.NewHandler(s, &streamhttp.Options{
			SessionStore:  b.Sessions,
			EventStore:    events,
			Broker:        b.Broker,
			RetryInterval: 50 * time.Millisecond,
			KeepAlive:     200 * time.Millisecond,
			Now:           c.now,
		})
		node.ts = httptest.NewServer(node.Handler)
		c.Nodes = append(c.Nodes, node)
	}
	c.proxy = httptest.NewServer(http.HandlerFunc(c.serve))
	c.URL = c.proxy.URL
	t.Cleanup(func() {
		c.proxy.CloseClientConnections()
		c.proxy.Close()
		for _, node := range c.Nodes {
			c.stop(node)
		}
	})
	return c
}

// NewServer returns the server every instance runs:
//   - "ask" asks for a name (elicitation) and greets it;
//   - "poll" logs, closes its SSE connection (SEP-1699), logs again and
//     answers — the client must resume the stream to get the answer;
//   - "hold" logs and waits for release (or its cancellation);
//   - "later" answers, then sends notifications/elicitation/complete
//     outside any request;
//   - the resource "test://r", which can be subscribed to;
//   - the task tools of addTaskTools.
func NewServer(release <-chan struct{}) *server.Server {
	return newServer(release, newTaskEvents(), nil)
}

func newServer(release <-chan struct{}, events *TaskEvents, opts *server.Options) *server.Server {
	o := server.Options{}
	if opts != nil {
		o = *opts
	}
	o.Logging, o.RequestStateKeys = true, []server.RequestStateKey{StateKey}
	s := server.New(&o)
	addTaskTools(s, release, events)
	_ = server.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		res, ok, err := req.ElicitResult("who")
		if err != nil {
			return "", err
		}
		if !ok {
			return "", server.NeedInput().Elicit("who", &mcp.ElicitParams{
				Message:         "Who is there?",
				RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
			})
		}
		return fmt.Sprintf("hello %v", res.Content["name"]), nil
	})
	_ = server.AddTool(s, &mcp.Tool{Name: "poll"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		_ = req.Log(ctx, mcp.LevelInfo, "poll", "first")
		req.CloseStream()
		select {
		case <-time.After(150 * time.Millisecond):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		_ = req.Log(ctx, mcp.LevelInfo, "poll", "second")
		return "polled", nil
	})
	_ = server.AddTool(s, &mcp.Tool{Name: "hold"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		_ = req.Log(ctx, mcp.LevelInfo, "hold", "holding")
		select {
		case <-release:
			return "released", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	_ = server.AddTool(s, &mcp.Tool{Name: "later"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		ss := req.Session()
		if ss == nil {
			return "", errors.New("no session")
		}
		// After the answer, outside any request: the message goes to the
		// session's GET stream, wherever it is held.
		go func() { // ends after one notification
			time.Sleep(50 * time.Millisecond)
			_ = ss.ElicitationComplete(context.Background(), "e1")
		}()
		return "later", nil
	})
	_ = s.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: "test://r", Text: "r"}}}, nil
	})
	// Each registration above is checked here, once: they are fixed
	// values, so an error is a bug in this package.
	if err := s.Err(); err != nil {
		panic(err)
	}
	return s
}

func (c *Cluster) serve(w http.ResponseWriter, r *http.Request) {
	var node *Node
	for range len(c.Nodes) {
		n := c.Nodes[int(c.next.Add(1)-1)%len(c.Nodes)]
		if !n.down.Load() {
			node = n
			break
		}
	}
	if node == nil {
		http.Error(w, "no instance up", http.StatusBadGateway)
		return
	}
	hit := Hit{Node: node.Index, Method: r.Method}
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		hit.What = what(body)
	}
	c.mu.Lock()
	c.hits = append(c.hits, hit)
	c.mu.Unlock()
	target, _ := url.Parse(node.ts.URL)
	p := httputil.NewSingleHostReverseProxy(target)
	p.FlushInterval = -1
	p.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		http.Error(w, "instance unreachable", http.StatusBadGateway)
	}
	p.ServeHTTP(w, r)
}

// what names a JSON-RPC body: its method, or "response".
func what(body []byte) string {
	s := string(body)
	if i := strings.Index(s, `"method":"`); i >= 0 {
		rest := s[i+len(`"method":"`):]
		if j := strings.IndexByte(rest, '"'); j >= 0 {
			return rest[:j]
		}
	}
	if strings.Contains(s, `"result"`) || strings.Contains(s, `"error"`) {
		return "response"
	}
	return ""
}

// Hits returns the requests passed on so far.
func (c *Cluster) Hits() []Hit {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Hit(nil), c.hits...)
}

// Kill stops instance i abruptly: its connections are cut, it leaves the
// broker, and the proxy stops sending it requests.
func (c *Cluster) Kill(i int) {
	c.stop(c.Nodes[i])
}

func (c *Cluster) stop(n *Node) {
	n.once.Do(func() {
		n.down.Store(true)
		n.ts.CloseClientConnections()
		if n.backend.Close != nil {
			n.backend.Close()
		}
		n.Handler.Close()
		n.ts.Close()
		// Its task goroutines end too (their store calls fail: nothing
		// is recorded, as for a killed process).
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = n.Server.Shutdown(ctx)
	})
}
