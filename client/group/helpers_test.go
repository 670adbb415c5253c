package group_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
)

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Server string `json:"server"`
	Text   string `json:"text"`
}

// newServer is a real mcpkit server whose tool, prompt, resource and
// template share their names with every other test server's and answer
// with the server's own name.
func newServer(t *testing.T, name string) *server.Server {
	t.Helper()
	s := server.New(&server.Options{Info: mcp.Implementation{Name: name, Version: "1.0.0"}})
	err := server.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes, naming its server."},
		func(ctx context.Context, req *server.CallToolRequest, in echoIn) (echoOut, error) {
			return echoOut{Server: name, Text: in.Text}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	err = s.AddPrompt(&mcp.Prompt{Name: "greet"}, func(ctx context.Context, req *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "hello from " + name}}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	read := func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{
			&mcp.TextResourceContents{URI: req.Params.URI, Text: name + ":" + req.Params.URI},
		}}, nil
	}
	if err := s.AddResource(&mcp.Resource{URI: "file:///a.txt", Name: "a"}, read); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "file:///{name}", Name: "files"}, read); err != nil {
		t.Fatal(err)
	}
	s.SetCompletionHandler(func(ctx context.Context, req *server.CompleteRequest) (*mcp.CompleteResult, error) {
		ref := req.Params.Ref
		return &mcp.CompleteResult{Completion: mcp.Completion{Values: []string{name + ":" + ref.Name + ref.URI}}}, nil
	})
	return s
}

// host serves one server over in-memory connections, one per dial; it
// can refuse dials, hold them, and cut the connections it served.
type host struct {
	t      *testing.T
	srv    *server.Server
	ctx    context.Context
	wg     *sync.WaitGroup
	refuse atomic.Bool
	dials  atomic.Int32

	mu    sync.Mutex
	ends  []*memory.Conn
	block chan struct{} // non-nil: a dial signals here, then waits for its ctx
}

var errRefused = errors.New("test: connection refused")

// newHost serves srv until the test ends, and waits for every session.
func newHost(t *testing.T, srv *server.Server) *host {
	ctx, cancel := context.WithCancel(context.Background())
	h := &host{t: t, srv: srv, ctx: ctx, wg: &sync.WaitGroup{}}
	t.Cleanup(func() {
		cancel()
		h.cut()
		h.wg.Wait()
	})
	return h
}

func (h *host) dial(ctx context.Context) (transport.Conn, error) {
	h.dials.Add(1)
	h.mu.Lock()
	block := h.block
	h.mu.Unlock()
	if block != nil {
		block <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if h.refuse.Load() {
		return nil, errRefused
	}
	c, s := memory.NewPair()
	h.mu.Lock()
	h.ends = append(h.ends, s)
	h.mu.Unlock()
	h.wg.Go(func() { _ = h.srv.Serve(h.ctx, s) }) // ends when s is closed or the test ends
	return c, nil
}

// cut closes the server's end of every connection it served.
func (h *host) cut() {
	h.mu.Lock()
	ends := h.ends
	h.ends = nil
	h.mu.Unlock()
	for _, e := range ends {
		_ = e.Close()
	}
}

// clock is a clock the tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// testContext ends with the test, or after a minute at most.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
