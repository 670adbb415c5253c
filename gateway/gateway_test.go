package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
)

type echoIn struct {
	Text string `json:"text"`
}
type echoOut struct {
	Text string `json:"text"`
}
type nameForm struct {
	Name string `json:"name" jsonschema:"your name"`
}

// upstreamServer is the server behind the gateway in these tests: a tool
// of each kind the gateway bridges.
func upstreamServer(t *testing.T, tag string) *server.Server {
	t.Helper()
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "up-" + tag, Version: "1"}, Logging: true})
	must(t, server.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *server.CallToolRequest, in echoIn) (echoOut, error) {
		return echoOut{Text: tag + ":" + in.Text}, nil
	}))
	must(t, server.AddTool(s, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (echoOut, error) {
		f, err := server.Ask[nameForm](req.Request, "who", "Who are you?")
		if err != nil {
			return echoOut{}, err
		}
		return echoOut{Text: "hello " + f.Name}, nil
	}))
	must(t, server.AddTool(s, &mcp.Tool{Name: "twice"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (echoOut, error) {
		a, err := server.Ask[nameForm](req.Request, "first", "First name?")
		if err != nil {
			return echoOut{}, err
		}
		b, err := server.Ask[nameForm](req.Request, "last", "Last name?")
		if err != nil {
			return echoOut{}, err
		}
		return echoOut{Text: a.Name + " " + b.Name}, nil
	}))
	must(t, server.AddTool(s, &mcp.Tool{Name: "work"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (echoOut, error) {
		for i := 1; i <= 3; i++ {
			if err := req.Progress(ctx, float64(i), 3, "step"); err != nil {
				return echoOut{}, err
			}
		}
		req.Log(ctx, mcp.LevelInfo, "work", "working")
		return echoOut{Text: "done"}, nil
	}))
	must(t, s.AddPrompt(&mcp.Prompt{Name: "hello", Arguments: []mcp.PromptArgument{{Name: "who"}}}, func(ctx context.Context, req *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "hi " + req.Params.Arguments["who"]}}}}, nil
	}))
	must(t, s.AddResource(&mcp.Resource{URI: "file:///a.txt", Name: "a"}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: tag + " A"}}}, nil
	}))
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// memUpstream serves s on in-memory connections, one per connect; kill
// ends every one still open (the upstream "dies": its control connection
// and its call connections alike).
type memUpstream struct {
	t     *testing.T
	s     *server.Server
	mu    sync.Mutex
	conns []transport.Conn
	n     int
	// connected receives the number of each connection made.
	connected chan int
	wg        sync.WaitGroup
}

func newMemUpstream(t *testing.T, s *server.Server) *memUpstream {
	m := &memUpstream{t: t, s: s, connected: make(chan int, 16)}
	t.Cleanup(m.wg.Wait)
	return m
}

func (m *memUpstream) connect(ctx context.Context) (transport.Conn, error) {
	a, b := memory.NewPair()
	m.mu.Lock()
	m.conns = append(m.conns, b)
	m.n++
	n := m.n
	m.mu.Unlock()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.s.Serve(context.Background(), b)
	}()
	select { // a test reads the first few (the control connection's)
	case m.connected <- n:
	default:
	}
	return a, nil
}

func (m *memUpstream) kill() {
	m.mu.Lock()
	cs := m.conns
	m.conns = nil
	m.mu.Unlock()
	for _, c := range cs {
		c.Close()
	}
}

func version(era client.Era) string {
	if era == client.EraLegacy {
		return mcp.LatestLegacy
	}
	return mcp.Version20260728
}

// newGateway starts a gateway in front of the given upstreams.
func newGateway(t *testing.T, opts *Options) *Gateway {
	t.Helper()
	g, err := New(opts)
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	must(t, g.Start(ctx))
	t.Cleanup(func() { g.Close() })
	return g
}

// eraPairs runs f for every upstream era × client era.
func eraPairs(t *testing.T, f func(t *testing.T, up, down client.Era)) {
	for _, up := range mcptest.Eras() {
		for _, down := range mcptest.Eras() {
			t.Run(fmt.Sprintf("upstream=%s/client=%s", up, down), func(t *testing.T) {
				f(t, up, down)
			})
		}
	}
}

func TestBridgeBothWays(t *testing.T) {
	eraPairs(t, func(t *testing.T, up, down client.Era) {
		mu := newMemUpstream(t, upstreamServer(t, "one"))
		g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "one", Prefix: "one", Connect: mu.connect, ProtocolVersion: version(up)}}})
		if h := g.Health()[0]; h.State != StateReady || h.Era != up.String() || h.Tools != 4 || h.Prompts != 1 || h.Resources != 1 {
			t.Fatalf("health = %+v", h)
		}
		script := (&mcptest.Script{}).Elicit(mcptest.Accept(map[string]any{"name": "Ada"}), mcptest.Accept(map[string]any{"name": "Ada"}), mcptest.Accept(map[string]any{"name": "Lovelace"}))
		p := mcptest.NewPair(t, g.Server(), &mcptest.Options{Era: down, Script: script})

		var names []string
		for tool, err := range p.Client.Tools(p.Context()) {
			must(t, err)
			names = append(names, tool.Name)
		}
		if got := strings.Join(names, ","); got != "one_echo,one_greet,one_twice,one_work" {
			t.Fatalf("tools = %s", got)
		}
		if out := mcptest.CallTool[echoOut](t, p, "one_echo", echoIn{Text: "x"}); out.Text != "one:x" {
			t.Fatalf("echo = %q", out.Text)
		}
		if out := mcptest.CallTool[echoOut](t, p, "one_greet", nil); out.Text != "hello Ada" {
			t.Fatalf("greet = %q", out.Text)
		}
		if out := mcptest.CallTool[echoOut](t, p, "one_twice", nil); out.Text != "Ada Lovelace" {
			t.Fatalf("twice = %q", out.Text)
		}
		if asked := script.ElicitRequests(); len(asked) != 3 || asked[0].Message != "Who are you?" || asked[2].Message != "Last name?" {
			t.Fatalf("elicitations = %+v", asked)
		}

		var progress []float64
		ctx := client.WithProgress(p.Context(), func(pp *mcp.ProgressParams) { progress = append(progress, pp.Progress) })
		res, err := p.Client.CallTool(ctx, &mcp.CallToolParams{Name: "one_work"})
		must(t, err)
		if res.IsError || fmt.Sprint(progress) != "[1 2 3]" {
			t.Fatalf("work: %+v, progress %v", res, progress)
		}

		pr, err := p.Client.GetPrompt(p.Context(), &mcp.GetPromptParams{Name: "one_hello", Arguments: map[string]string{"who": "Bo"}})
		must(t, err)
		if txt := pr.Messages[0].Content.(*mcp.TextContent).Text; txt != "hi Bo" {
			t.Fatalf("prompt = %q", txt)
		}
		rr, err := p.Client.ReadResource(p.Context(), &mcp.ReadResourceParams{URI: "one+file:///a.txt"})
		must(t, err)
		if c := rr.Contents[0].(*mcp.TextResourceContents); c.URI != "one+file:///a.txt" || c.Text != "one A" {
			t.Fatalf("read = %+v", c)
		}
		_, err = p.Client.ReadResource(p.Context(), &mcp.ReadResourceParams{URI: "file:///a.txt"})
		if err == nil {
			t.Fatal("an unprefixed URI was read")
		}
	})
}

func TestUpstreamErrorsPassThrough(t *testing.T) {
	eraPairs(t, func(t *testing.T, up, down client.Era) {
		s := server.New(nil)
		must(t, s.AddRawTool(&mcp.Tool{Name: "fail"}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, jsonrpc.NewError(-32042, "custom failure")
		}))
		must(t, s.AddRawTool(&mcp.Tool{Name: "toolerr"}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, errors.New("it broke")
		}))
		mu := newMemUpstream(t, s)
		g := newGateway(t, &Options{Upstreams: []Upstream{{Name: "u", Connect: mu.connect, ProtocolVersion: version(up)}}})
		p := mcptest.NewPair(t, g.Server(), &mcptest.Options{Era: down})
		_, err := p.Client.CallTool(p.Context(), &mcp.CallToolParams{Name: "fail"})
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != -32042 || je.Message != "custom failure" {
			t.Fatalf("err = %v", err)
		}
		if msg := mcptest.ToolError(t, p, "toolerr", nil); !strings.Contains(msg, "it broke") {
			t.Fatalf("tool error = %q", msg)
		}
	})
}
