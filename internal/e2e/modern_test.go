package e2e

import (
	"context"
	"errors"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/streamhttp"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// The modern era (2026-07-28) from the client's side, against the real
// server: in memory, over a stdio child and over the Streamable HTTP
// handler. The client is left on automatic era selection.

// carrier connects a client to srv (nil: the stdio child, which serves
// the fixture) one way.
type carrier struct {
	name  string
	dial  func(t testing.TB, srv *server.Server) transport.Conn
	child bool // the server is the stdio child, not srv
}

var carriers = []carrier{
	{name: "memory", dial: func(t testing.TB, srv *server.Server) transport.Conn {
		a, b := memory.NewPair()
		ss := srv.Connect(b)
		t.Cleanup(func() { ss.Close() })
		return a
	}},
	{name: "stdio", child: true, dial: func(t testing.TB, _ *server.Server) transport.Conn {
		return startChild(t, 0)
	}},
	{name: "http", dial: func(t testing.TB, srv *server.Server) transport.Conn {
		h := streamhttp.NewHandler(srv, nil)
		ts := httptest.NewServer(h)
		t.Cleanup(func() {
			h.Close()
			ts.Close()
		})
		return streamable.New(ts.URL, nil)
	}},
}

// connectModern connects a client with automatic era selection and the
// wire checked against 2026-07-28.
func connectModern(t testing.TB, cr carrier, srv *server.Server, opts *client.Options) (*client.Client, *wire) {
	t.Helper()
	var o client.Options
	if opts != nil {
		o = *opts
	}
	w := newWire(t, mcp.Version20260728)
	o.Observe = w.clientSide
	c, err := client.Connect(testCtx(t), cr.dial(t, srv), &o)
	if err != nil {
		t.Fatalf("Connect over %s: %v", cr.name, err)
	}
	t.Cleanup(func() { c.Close() })
	if c.Era() != client.EraModern || c.ProtocolVersion() != mcp.Version20260728 {
		t.Fatalf("over %s: era %v, version %q; want modern 2026-07-28", cr.name, c.Era(), c.ProtocolVersion())
	}
	return c, w
}

// TestModernClient: the client detects the modern server, sends the
// envelope on every request (the wire check validates each message), and
// every method works.
func TestModernClient(t *testing.T) {
	for _, cr := range carriers {
		t.Run(cr.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(nil)
			logs := make(chan *mcp.LoggingMessageParams, 8)
			c, w := connectModern(t, cr, f.srv, &client.Options{
				Info:  mcp.Implementation{Name: "modern-e2e", Version: "1"},
				OnLog: func(_ context.Context, p *mcp.LoggingMessageParams) { logs <- p },
			})
			ctx := testCtx(t)
			if c.ServerInfo().Name != "fixture" || c.ServerCapabilities().Tools == nil || c.Instructions() != "Use the tools." {
				t.Errorf("discover: %+v %+v %q", c.ServerInfo(), c.ServerCapabilities(), c.Instructions())
			}
			var names []string
			for tool, err := range c.Tools(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, tool.Name)
			}
			if !slices.Contains(names, "add") || !slices.Contains(names, "defs") {
				t.Fatalf("tools %v", names)
			}
			res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: jsontext.Value(`{"a":2,"b":40}`)})
			if err != nil || res.IsError || string(res.StructuredContent) != `{"sum":42}` {
				t.Fatalf("add: %+v %v", res, err)
			}
			for prompt, err := range c.Prompts(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				_ = prompt
			}
			if _, err := c.GetPrompt(ctx, &mcp.GetPromptParams{Name: "with_args", Arguments: map[string]string{"topic": "go"}}); err != nil {
				t.Fatal(err)
			}
			for _, err := range c.Resources(ctx) {
				if err != nil {
					t.Fatal(err)
				}
			}
			for _, err := range c.ResourceTemplates(ctx) {
				if err != nil {
					t.Fatal(err)
				}
			}
			rr, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://text"})
			if err != nil || rr.Contents[0].(*mcp.TextResourceContents).Text != "some text" {
				t.Fatalf("read: %+v %v", rr, err)
			}
			if _, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://nothing"}); !errors.Is(err, mcp.ErrResourceNotFound) {
				t.Errorf("read of an unknown resource: %v", err)
			}
			if _, err := c.Complete(ctx, &mcp.CompleteParams{Ref: mcp.CompleteReference{Type: mcp.RefPrompt, Name: "with_args"}, Argument: mcp.CompleteArgument{Name: "topic", Value: "py"}}); err != nil {
				t.Fatal(err)
			}

			// Progress on the request's own stream; logs only with a level.
			var progress []float64
			var mu sync.Mutex
			pctx := client.WithProgress(ctx, func(p *mcp.ProgressParams) { mu.Lock(); progress = append(progress, p.Progress); mu.Unlock() })
			if res, err := c.CallTool(pctx, &mcp.CallToolParams{Name: "progress"}); err != nil || res.IsError {
				t.Fatalf("progress: %+v %v", res, err)
			}
			mu.Lock()
			if len(progress) != 3 {
				t.Errorf("progress %v", progress)
			}
			mu.Unlock()
			select {
			case l := <-logs:
				t.Errorf("a log without a level: %+v", l)
			default:
			}
			if err := c.SetLoggingLevel(ctx, mcp.LevelInfo); err != nil {
				t.Fatal(err)
			}
			if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "progress"}); err != nil {
				t.Fatal(err)
			}
			if l := recv(t, logs, "the info log"); l.Level != mcp.LevelInfo {
				t.Errorf("log %+v", l)
			}
			if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: jsontext.Value(`{"a":1,"b":1}`)}); err != nil {
				t.Fatal(err)
			}
			select {
			case l := <-logs:
				t.Errorf("a log below the level: %+v", l)
			default:
			}

			// No initialize, no ping, no setLevel on the wire.
			for _, m := range w.messages("client->server") {
				var env struct {
					Method string `json:"method"`
				}
				_ = json.Unmarshal(m, &env)
				switch env.Method {
				case mcp.MethodInitialize, mcp.MethodPing, mcp.MethodLoggingSetLevel, mcp.NotificationInitialized:
					t.Errorf("sent %s", m)
				}
			}
		})
	}
}

// TestModernListen: subscriptions/listen against the real server: the
// acknowledgement, change notifications tagged per subscription (several
// at once), the cache invalidated and the handlers run, and the end of a
// subscription by its context. The stdio child offers no way to change
// its tools, so it runs over memory and HTTP.
func TestModernListen(t *testing.T) {
	for _, cr := range carriers {
		if cr.child {
			continue
		}
		t.Run(cr.name, func(t *testing.T) {
			t.Parallel()
			srv := server.New(&server.Options{Info: mcp.Implementation{Name: "listen", Version: "1"}, CacheTTL: time.Hour})
			server.AddTool(srv, &mcp.Tool{Name: "first"}, func(context.Context, *server.CallToolRequest, struct{}) (string, error) { return "1", nil })
			changed := make(chan struct{}, 8)
			c, _ := connectModern(t, cr, srv, &client.Options{OnToolsListChanged: func(context.Context) { changed <- struct{}{} }})
			ctx := testCtx(t)

			tools, err := c.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true})
			if err != nil {
				t.Fatal(err)
			}
			if f := tools.Filter(); !f.ToolsListChanged || f.PromptsListChanged {
				t.Errorf("acknowledged %+v: the server has no prompts", f)
			}
			ctx2, cancel2 := context.WithCancel(ctx)
			defer cancel2()
			other, err := c.Listen(ctx2, mcp.SubscriptionFilter{ToolsListChanged: true})
			if err != nil {
				t.Fatal(err)
			}
			if tools.ID() == other.ID() {
				t.Fatalf("two subscriptions share id %v", tools.ID())
			}
			res, err := c.ListTools(ctx, nil) // cached for an hour
			if err != nil || len(res.Tools) != 1 {
				t.Fatalf("tools %+v %v", res, err)
			}

			server.AddTool(srv, &mcp.Tool{Name: "second"}, func(context.Context, *server.CallToolRequest, struct{}) (string, error) { return "2", nil })
			for _, s := range []*client.Subscription{tools, other} {
				n := firstNote(t, s)
				if n.Method != mcp.NotificationToolsListChanged {
					t.Errorf("subscription %v got %s", s.ID(), n.Method)
				}
			}
			recv(t, changed, "OnToolsListChanged")
			res, err = c.ListTools(ctx, nil)
			if err != nil || len(res.Tools) != 2 {
				t.Errorf("after the change: %d tools (%v), want 2: the cache was not invalidated", len(res.Tools), err)
			}

			cancel2()
			recv(t, other.Done(), "the cancelled subscription to end")
			if !errors.Is(other.Err(), context.Canceled) {
				t.Errorf("cancelled subscription: %v", other.Err())
			}
			server.AddTool(srv, &mcp.Tool{Name: "third"}, func(context.Context, *server.CallToolRequest, struct{}) (string, error) { return "3", nil })
			if n := firstNote(t, tools); n.Method != mcp.NotificationToolsListChanged {
				t.Errorf("the open subscription got %s", n.Method)
			}
			if err := tools.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// firstNote waits for one notification on s.
func firstNote(t testing.TB, s *client.Subscription) client.Notification {
	t.Helper()
	ch := make(chan client.Notification, 1)
	go func() {
		for n := range s.Notifications() {
			ch <- n
			return
		}
	}()
	return recv(t, ch, "a notification on subscription "+s.ID().String())
}

// TestModernAndLegacyOnOneEndpoint: a modern client and a legacy client
// use one HTTP endpoint and one server at once, through the same handlers.
func TestModernAndLegacyOnOneEndpoint(t *testing.T) {
	f := newFixture(nil)
	h := streamhttp.NewHandler(f.srv, nil)
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Close()
	ctx := testCtx(t)
	modern, err := client.Connect(ctx, streamable.New(ts.URL, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer modern.Close()
	legacy, err := client.Connect(ctx, streamable.New(ts.URL, nil), &client.Options{ProtocolVersion: mcp.LatestLegacy})
	if err != nil {
		t.Fatal(err)
	}
	defer legacy.Close()
	if modern.Era() != client.EraModern || legacy.Era() != client.EraLegacy {
		t.Fatalf("eras %v and %v", modern.Era(), legacy.Era())
	}
	var wg sync.WaitGroup
	for i, c := range []*client.Client{modern, legacy, modern, legacy} {
		wg.Go(func() {
			res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: jsontext.Value(`{"a":1,"b":` + string(rune('0'+i)) + `}`)})
			if err != nil || res.IsError {
				t.Errorf("client %d: %+v %v", i, res, err)
			}
		})
	}
	wg.Wait()
}

// TestModernListenStdio: a subscription over a stdio child is
// acknowledged, and ending it sends notifications/cancelled for it.
func TestModernListenStdio(t *testing.T) {
	t.Parallel()
	c, w := connectModern(t, carriers[1], nil, nil)
	s, err := c.Listen(testCtx(t), mcp.SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"test://text"}})
	if err != nil {
		t.Fatal(err)
	}
	if f := s.Filter(); !f.ToolsListChanged || !slices.Equal(f.ResourceSubscriptions, []string{"test://text"}) {
		t.Errorf("acknowledged %+v", f)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(s.Err(), context.Canceled) {
		t.Errorf("Err %v", s.Err())
	}
	var cancelled bool
	for _, m := range w.messages("client->server") {
		var env struct {
			Method string `json:"method"`
			Params struct {
				RequestID jsontext.Value `json:"requestId"`
			} `json:"params"`
		}
		_ = json.Unmarshal(m, &env)
		if env.Method == mcp.NotificationCancelled && string(env.Params.RequestID) == s.ID().String() {
			cancelled = true
		}
	}
	if !cancelled {
		t.Error("no notifications/cancelled for the subscription")
	}
	// The connection still serves requests.
	if _, err := c.ListTools(testCtx(t), nil); err != nil {
		t.Fatal(err)
	}
}
