package mcptest_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
)

// TestMain fails the package if any goroutine outlives the tests: a Pair
// must stop everything it started.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type greetIn struct {
	Name string `json:"name"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

type signup struct {
	Email string `json:"email" jsonschema:"format=email"`
}

// newServer offers a tool of each kind the tests use: plain, failing,
// and asking for each kind of input in the multi round-trip style.
func newServer(t testing.TB) *server.Server {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "test", Version: "1.0.0"}})
	err := errors.Join(
		server.AddTool(s, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *server.CallToolRequest, in greetIn) (greetOut, error) {
			return greetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		}),
		server.AddTool(s, &mcp.Tool{Name: "fail"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (greetOut, error) {
			return greetOut{}, errors.New("out of greetings")
		}),
		server.AddTool(s, &mcp.Tool{Name: "signup"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (greetOut, error) {
			v, err := server.Ask[signup](req.Request, "signup", "Your email?")
			if err != nil {
				return greetOut{}, err
			}
			return greetOut{Greeting: "Welcome, " + v.Email}, nil
		}),
		server.AddTool(s, &mcp.Tool{Name: "poem"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (greetOut, error) {
			m, ok, err := req.CreateMessageResult("poem")
			if err != nil {
				return greetOut{}, err
			}
			if !ok {
				return greetOut{}, server.NeedInput().CreateMessage("poem", &mcp.CreateMessageParams{
					Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "A poem?"})}},
					MaxTokens: 100,
				})
			}
			return greetOut{Greeting: m.Content.Blocks[0].(*mcp.TextContent).Text + " (" + m.Model + ")"}, nil
		}),
		server.AddTool(s, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (greetOut, error) {
			r, ok, err := req.ListRootsResult("roots")
			if err != nil {
				return greetOut{}, err
			}
			if !ok {
				return greetOut{}, server.NeedInput().ListRoots("roots")
			}
			var names []string
			for _, root := range r.Roots {
				names = append(names, root.Name)
			}
			return greetOut{Greeting: strings.Join(names, ",")}, nil
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func eachEra(t *testing.T, f func(t *testing.T, era client.Era)) {
	for _, era := range mcptest.Eras() {
		t.Run(era.String(), func(t *testing.T) { f(t, era) })
	}
}

func TestPairEras(t *testing.T) {
	for _, tc := range []struct {
		opts    *mcptest.Options
		era     client.Era
		version string
	}{
		{nil, client.EraModern, mcp.Version20260728},
		{&mcptest.Options{Era: client.EraModern}, client.EraModern, mcp.Version20260728},
		{&mcptest.Options{Era: client.EraLegacy}, client.EraLegacy, mcp.LatestLegacy},
		{&mcptest.Options{ProtocolVersion: mcp.Version20250618}, client.EraLegacy, mcp.Version20250618},
		{&mcptest.Options{ProtocolVersion: mcp.Version20241105}, client.EraLegacy, mcp.Version20241105},
	} {
		t.Run(tc.version, func(t *testing.T) {
			p := mcptest.NewPair(t, newServer(t), tc.opts)
			if p.Era() != tc.era || p.Version != tc.version {
				t.Fatalf("era %v, version %s; want %v, %s", p.Era(), p.Version, tc.era, tc.version)
			}
			if got := mcptest.CallTool[greetOut](t, p, "greet", greetIn{Name: "Ada"}); got.Greeting != "Hello, Ada!" {
				t.Errorf("greeting = %q", got.Greeting)
			}
		})
	}
}

func TestToolError(t *testing.T) {
	eachEra(t, func(t *testing.T, era client.Era) {
		p := mcptest.NewPair(t, newServer(t), &mcptest.Options{Era: era})
		if got := mcptest.ToolError(t, p, "fail", nil); got != "out of greetings" {
			t.Errorf("tool error = %q", got)
		}
		res := mcptest.CallToolResult(t, p, "fail", nil)
		if !res.IsError {
			t.Errorf("CallToolResult: isError not set: %+v", res)
		}
	})
}

func TestScriptElicit(t *testing.T) {
	eachEra(t, func(t *testing.T, era client.Era) {
		script := new(mcptest.Script).Elicit(mcptest.Accept(map[string]any{"email": "ada@example.com"}), mcptest.Decline())
		p := mcptest.NewPair(t, newServer(t), &mcptest.Options{Era: era, Script: script})
		if got := mcptest.CallTool[greetOut](t, p, "signup", nil); got.Greeting != "Welcome, ada@example.com" {
			t.Errorf("accepted: %q", got.Greeting)
		}
		if got := mcptest.ToolError(t, p, "signup", nil); !strings.Contains(got, "declined") {
			t.Errorf("declined: %q", got)
		}
		asked := script.ElicitRequests()
		if len(asked) != 2 || asked[0].Message != "Your email?" {
			t.Fatalf("asked %d elicitations: %+v", len(asked), asked)
		}
	})
}

func TestScriptSamplingAndRoots(t *testing.T) {
	eachEra(t, func(t *testing.T, era client.Era) {
		script := new(mcptest.Script).
			CreateMessage(mcptest.Reply("test-model", "Roses are red")).
			ListRoots(mcp.Root{URI: "file:///a", Name: "a"}, mcp.Root{URI: "file:///b", Name: "b"})
		p := mcptest.NewPair(t, newServer(t), &mcptest.Options{Era: era, Script: script})
		if got := mcptest.CallTool[greetOut](t, p, "poem", nil); got.Greeting != "Roses are red (test-model)" {
			t.Errorf("poem: %q", got.Greeting)
		}
		if got := mcptest.CallTool[greetOut](t, p, "roots", nil); got.Greeting != "a,b" {
			t.Errorf("roots: %q", got.Greeting)
		}
		if n := len(script.CreateMessageRequests()); n != 1 {
			t.Errorf("%d sampling requests; want 1", n)
		}
		if n := script.ListRootsRequests(); n != 1 {
			t.Errorf("roots listed %d times; want 1", n)
		}
	})
}

// TestScriptDeclares checks that only what the script answers is
// declared: without sampling the server sees no sampling capability.
func TestScriptDeclares(t *testing.T) {
	eachEra(t, func(t *testing.T, era client.Era) {
		s := newServer(t)
		caps := make(chan mcp.ClientCapabilities, 1)
		if err := server.AddTool(s, &mcp.Tool{Name: "caps"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (greetOut, error) {
			caps <- req.ClientCapabilities()
			return greetOut{}, nil
		}); err != nil {
			t.Fatal(err)
		}
		p := mcptest.NewPair(t, s, &mcptest.Options{Era: era, Script: new(mcptest.Script).ListRoots()})
		mcptest.CallTool[greetOut](t, p, "caps", nil)
		c := <-caps
		if c.Roots == nil || c.Sampling != nil || c.Elicitation != nil {
			t.Errorf("declared %+v; want roots only", c)
		}
	})
}

// recorder stands in for a test to see what mcptest reports: errors are
// recorded, a fatal error ends the goroutine as testing does.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) { r.add(fmt.Sprintf(format, args...)) }
func (r *recorder) Error(args ...any)                 { r.add(fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.add(fmt.Sprintf(format, args...))
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) { r.add(fmt.Sprint(args...)); runtime.Goexit() }

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.errs = append(r.errs, s)
	r.mu.Unlock()
}

func (r *recorder) reported() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

// run runs f as a test body on r's own goroutine (Fatal ends it) and
// waits for it.
func (r *recorder) run(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

func TestScriptUnanswered(t *testing.T) {
	eachEra(t, func(t *testing.T, era client.Era) {
		r := &recorder{TB: t}
		r.run(func() {
			p := mcptest.NewPair(r, newServer(t), &mcptest.Options{Era: era, Script: new(mcptest.Script).Elicit()})
			ctx := p.Context()
			if _, err := p.Client.CallTool(ctx, &mcp.CallToolParams{Name: "signup"}); err == nil {
				t.Error("a call whose question had no answer succeeded")
			}
		})
		if got := r.reported(); len(got) != 1 || !strings.Contains(got[0], `elicitation 1 ("Your email?") has no scripted answer`) {
			t.Errorf("reported %q", got)
		}
	})
}

func TestScriptLeftOver(t *testing.T) {
	r := &recorder{TB: t}
	t.Run("pair", func(t *testing.T) {
		r.TB = t
		mcptest.NewPair(r, newServer(t), &mcptest.Options{Script: new(mcptest.Script).CreateMessage(mcptest.Reply("m", "unused"))})
	}) // the subtest's cleanup reports the unused answer
	if got := r.reported(); len(got) != 1 || !strings.Contains(got[0], "1 scripted sampling answer(s) left unused") {
		t.Errorf("reported %q", got)
	}
}

func TestOptionErrors(t *testing.T) {
	for name, opts := range map[string]*mcptest.Options{
		"two elicitation handlers": {
			Script: new(mcptest.Script).Elicit(),
			Client: &client.Options{ElicitHandler: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) { return nil, nil }},
		},
		"not a revision": {ProtocolVersion: "latest"},
		"not an era":     {Era: client.Era(7)},
	} {
		t.Run(name, func(t *testing.T) {
			r := &recorder{TB: t}
			r.run(func() {
				mcptest.NewPair(r, newServer(t), opts)
				t.Error("NewPair returned")
			})
			if got := r.reported(); len(got) != 1 || !strings.HasPrefix(got[0], "mcptest: ") {
				t.Errorf("reported %q", got)
			}
		})
	}
	t.Run("script reused", func(t *testing.T) {
		script := new(mcptest.Script).ListRoots()
		mcptest.NewPair(t, newServer(t), &mcptest.Options{Script: script})
		r := &recorder{TB: t}
		r.run(func() { mcptest.NewPair(r, newServer(t), &mcptest.Options{Script: script}) })
		if got := r.reported(); len(got) != 1 || !strings.Contains(got[0], "belongs to one Pair") {
			t.Errorf("reported %q", got)
		}
	})
}

// TestExtensionMethod checks that extension methods, which no revision's
// schema defines, pass through the wire check.
func TestExtensionMethod(t *testing.T) {
	eachEra(t, func(t *testing.T, era client.Era) {
		s := newServer(t)
		if err := server.AddMethod(s, "example.com/echo", func(ctx context.Context, req *server.Request, in greetIn) (greetOut, error) {
			return greetOut{Greeting: in.Name}, nil
		}); err != nil {
			t.Fatal(err)
		}
		p := mcptest.NewPair(t, s, &mcptest.Options{Era: era})
		out, err := client.CallMethod[greetOut](p.Context(), p.Client, "example.com/echo", greetIn{Name: "x"})
		if err != nil || out.Greeting != "x" {
			t.Fatalf("CallMethod = %+v, %v", out, err)
		}
	})
}

// addSteps adds "steps": three progress steps, a question, then a fourth
// step, written once in the multi round-trip style (the run after the
// answer reports the first three again).
func addSteps(t *testing.T, s *server.Server) {
	t.Helper()
	err := server.AddTool(s, &mcp.Tool{Name: "steps"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (greetOut, error) {
		for i := 1; i <= 3; i++ {
			if err := req.Progress(ctx, float64(i), 4, fmt.Sprintf("step %d", i)); err != nil {
				return greetOut{}, err
			}
		}
		v, err := server.Ask[signup](req.Request, "signup", "Your email?")
		if err != nil {
			return greetOut{}, err
		}
		if err := req.Progress(ctx, 4, 4, "step 4"); err != nil {
			return greetOut{}, err
		}
		return greetOut{Greeting: "Welcome, " + v.Email}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestProgressThenAsk: a handler that reports progress and then asks a
// question works in both eras, and the client sees each step once, in
// order (Pair.Progress), although the handler runs twice.
func TestProgressThenAsk(t *testing.T) {
	eachEra(t, func(t *testing.T, era client.Era) {
		s := newServer(t)
		addSteps(t, s)
		script := new(mcptest.Script).Elicit(mcptest.Accept(map[string]any{"email": "ada@example.com"}))
		p := mcptest.NewPair(t, s, &mcptest.Options{Era: era, Script: script})
		if got := mcptest.CallTool[greetOut](t, p, "steps", nil); got.Greeting != "Welcome, ada@example.com" {
			t.Errorf("greeting = %q", got.Greeting)
		}
		var got []string
		for _, n := range p.Progress() {
			got = append(got, fmt.Sprintf("%v %s", n.Progress, n.Message))
		}
		if want := "[1 step 1 2 step 2 3 step 3 4 step 4]"; fmt.Sprint(got) != want {
			t.Errorf("progress seen by the client = %v, want %s", got, want)
		}
		// A call without progress leaves none.
		mcptest.CallTool[greetOut](t, p, "greet", greetIn{Name: "Ada"})
		if n := p.Progress(); n != nil {
			t.Errorf("progress of greet = %v", n)
		}
	})
}
