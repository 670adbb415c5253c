package e2e

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/revisions"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// TestNegotiation offers each revision the client knows (and one it does
// not) and then exercises every feature the negotiated revision has, with
// every message checked against that revision's schema: what an old
// revision does not define must not reach it.
func TestNegotiation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ offer, want string }{
		{mcp.Version20241105, mcp.Version20241105},
		{mcp.Version20250326, mcp.Version20250326},
		{mcp.Version20250618, mcp.Version20250618},
		{mcp.Version20251125, mcp.Version20251125},
		{"1900-01-01", mcp.Version20251125},
	} {
		t.Run(tc.offer, func(t *testing.T) {
			t.Parallel()
			f := newFixture(nil)
			opts := &client.Options{
				Info: mcp.Implementation{Name: "e2e", Version: "1"},
				CreateMessageHandler: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
					return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "Paris"}), Model: "m1"}, nil
				},
				ListRootsHandler: func(ctx context.Context) (*mcp.ListRootsResult, error) {
					return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///r"}}}, nil
				},
			}
			if revisions.HasElicitation(tc.want) {
				opts.ElicitHandler = func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					if p.EffectiveMode() == mcp.ElicitModeURL {
						return &mcp.ElicitResult{Action: mcp.ElicitActionAccept}, nil
					}
					return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
				}
				// Declared on every revision: the server must still not send
				// URL mode to a revision that does not define it.
				opts.ElicitationURL = true
			}
			s := f.connect(t, tc.offer, opts)
			ctx := testCtx(t)
			if got := s.c.ProtocolVersion(); got != tc.want {
				t.Fatalf("ProtocolVersion = %q, want %q", got, tc.want)
			}
			if got := s.ss.ProtocolVersion(); got != tc.want {
				t.Errorf("server session ProtocolVersion = %q, want %q", got, tc.want)
			}
			if got := s.ss.ClientInfo(); got.Name != "e2e" {
				t.Errorf("server saw clientInfo %+v", got)
			}
			if err := s.c.Ping(ctx); err != nil {
				t.Errorf("client ping: %v", err)
			}
			if err := s.ss.Ping(ctx); err != nil {
				t.Errorf("server ping: %v", err)
			}
			for _, err := range s.c.Tools(ctx) {
				if err != nil {
					t.Fatalf("tools/list: %v", err)
				}
			}
			s.wantText(t, "add", map[string]int{"a": 1, "b": 2}, `{"sum":3}`)
			s.wantText(t, "greet", map[string]string{"name": "Ada"}, "hello Ada")
			s.wantToolError(t, "fail", nil, "on purpose")
			s.wantText(t, "progress", nil, "done")
			s.wantText(t, "sample", nil, "m1")
			s.wantText(t, "roots", nil, "file:///r")
			if revisions.HasElicitation(tc.want) {
				s.wantText(t, "ask", nil, `{"action":"accept","content":{"name":"Ada"}}`)
			} else {
				// Nothing may be sent: the revision has no elicitation.
				s.wantToolError(t, "ask", nil, "elicitation")
			}
			if revisions.HasURLElicitation(tc.want) {
				s.wantText(t, "ask_url", nil, "accept")
			} else {
				s.wantToolError(t, "ask_url", nil, "elicitation")
			}
			for _, err := range s.c.Prompts(ctx) {
				if err != nil {
					t.Fatalf("prompts/list: %v", err)
				}
			}
			if _, err := s.c.GetPrompt(ctx, &mcp.GetPromptParams{Name: "with_args", Arguments: map[string]string{"topic": "go"}}); err != nil {
				t.Errorf("prompts/get: %v", err)
			}
			for _, err := range s.c.Resources(ctx) {
				if err != nil {
					t.Fatalf("resources/list: %v", err)
				}
			}
			for _, err := range s.c.ResourceTemplates(ctx) {
				if err != nil {
					t.Fatalf("resources/templates/list: %v", err)
				}
			}
			for _, uri := range []string{"test://text", "test://blob", "test://items/1"} {
				if _, err := s.c.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil {
					t.Errorf("resources/read %s: %v", uri, err)
				}
			}
			if _, err := s.c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://none"}); !errors.Is(err, mcp.ErrResourceNotFound) {
				t.Errorf("resources/read of an unknown URI: %v", err)
			}
			if err := s.c.Subscribe(ctx, "test://text"); err != nil {
				t.Errorf("resources/subscribe: %v", err)
			}
			if err := s.c.Unsubscribe(ctx, "test://text"); err != nil {
				t.Errorf("resources/unsubscribe: %v", err)
			}
			if _, err := s.c.Complete(ctx, &mcp.CompleteParams{Ref: mcp.CompleteReference{Type: mcp.RefPrompt, Name: "with_args"}, Argument: mcp.CompleteArgument{Name: "topic", Value: "py"}}); err != nil {
				t.Errorf("completion/complete: %v", err)
			}
			if err := s.c.SetLoggingLevel(ctx, mcp.LevelDebug); err != nil {
				t.Errorf("logging/setLevel: %v", err)
			}
			s.wantText(t, "log", logIn{Level: "debug", Message: "m"}, "logged")
			if err := s.c.RootsChanged(ctx); err != nil {
				t.Errorf("notifications/roots/list_changed: %v", err)
			}
			// The server never advertises a capability of a later revision
			// as if the client knew it.
			caps := s.c.ServerCapabilities()
			if caps.Tasks != nil || caps.Extensions != nil {
				t.Errorf("capabilities %+v carry tasks or extensions", caps)
			}
		})
	}
}

// TestServerInfo checks what initialize reports: identity, instructions and
// capabilities that follow what is registered, before and after changes.
func TestServerInfo(t *testing.T) {
	t.Parallel()
	t.Run("fixture", func(t *testing.T) {
		t.Parallel()
		s := newFixture(nil).connect(t, "", nil)
		if got := s.c.ServerInfo(); got.Name != "fixture" || got.Version != "1.0.0" {
			t.Errorf("serverInfo = %+v", got)
		}
		if got := s.c.Instructions(); got != "Use the tools." {
			t.Errorf("instructions = %q", got)
		}
		caps := s.c.ServerCapabilities()
		if caps.Tools == nil || !caps.Tools.ListChanged {
			t.Errorf("tools capability = %+v", caps.Tools)
		}
		if caps.Prompts == nil || !caps.Prompts.ListChanged {
			t.Errorf("prompts capability = %+v", caps.Prompts)
		}
		if caps.Resources == nil || !caps.Resources.Subscribe || !caps.Resources.ListChanged {
			t.Errorf("resources capability = %+v", caps.Resources)
		}
		if caps.Completions == nil || caps.Logging == nil {
			t.Errorf("completions %v, logging %v: want both", caps.Completions, caps.Logging)
		}
	})
	t.Run("tools only", func(t *testing.T) {
		t.Parallel()
		srv := server.New(nil)
		server.AddTool(srv, &mcp.Tool{Name: "only"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			return "ok", nil
		})
		s := (&fixture{srv: srv}).connect(t, "", nil)
		ctx := testCtx(t)
		if got := s.c.ServerInfo(); got.Name != "mcpkit" || got.Version == "" {
			t.Errorf("default serverInfo = %+v", got)
		}
		if got := s.c.Instructions(); got != "" {
			t.Errorf("instructions = %q, want none", got)
		}
		caps := s.c.ServerCapabilities()
		if caps.Tools == nil || caps.Prompts != nil || caps.Resources != nil || caps.Completions != nil || caps.Logging != nil {
			t.Errorf("capabilities = %+v, want tools only", caps)
		}
		_, err := s.c.ListPrompts(ctx, nil)
		wantCode(t, err, mcp.CodeMethodNotFound)
		_, err = s.c.ListResources(ctx, nil)
		wantCode(t, err, mcp.CodeMethodNotFound)
		_, err = s.c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://text"})
		wantCode(t, err, mcp.CodeMethodNotFound)
		_, err = s.c.Complete(ctx, &mcp.CompleteParams{Ref: mcp.CompleteReference{Type: mcp.RefPrompt, Name: "x"}, Argument: mcp.CompleteArgument{Name: "a"}})
		wantCode(t, err, mcp.CodeMethodNotFound)
		wantCode(t, s.c.SetLoggingLevel(ctx, mcp.LevelInfo), mcp.CodeMethodNotFound)

		// Registering a prompt now makes prompts/list answer, and a new
		// session is offered the capability.
		srv.AddPrompt(&mcp.Prompt{Name: "late"}, func(ctx context.Context, req *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "late"}}}}, nil
		})
		res, err := s.c.ListPrompts(ctx, nil)
		if err != nil || len(res.Prompts) != 1 || res.Prompts[0].Name != "late" {
			t.Fatalf("prompts/list after AddPrompt = %+v, %v", res, err)
		}
		s2 := (&fixture{srv: srv}).connect(t, "", nil)
		if s2.c.ServerCapabilities().Prompts == nil {
			t.Errorf("a session after AddPrompt has no prompts capability")
		}
		srv.RemoveTools("only")
		_, err = s.c.ListTools(ctx, nil)
		wantCode(t, err, mcp.CodeMethodNotFound)
	})
}

// TestUnsupportedVersion: a server that answers initialize with a revision
// the client does not speak is refused, and the connection is closed.
func TestUnsupportedVersion(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	a, b := memory.NewPair()
	notes := make(chan *jsonrpc.Message, 8)
	fake := rawConn(t, b, handlerFunc{
		fn: func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
			if msg.Method != mcp.MethodInitialize {
				return nil, jsonrpc.ErrMethodNotFound
			}
			return jsontext.Value(`{"protocolVersion":"2099-01-01","capabilities":{},"serverInfo":{"name":"future","version":"9"}}`), nil
		},
		notes: notes,
	}, nil)
	w := newWire(t, mcp.LatestLegacy)
	c, err := client.Connect(ctx, a, &client.Options{ProtocolVersion: mcp.LatestLegacy, Observe: w.clientSide})
	if !errors.Is(err, client.ErrUnsupportedVersion) {
		t.Fatalf("Connect = %v, %v; want ErrUnsupportedVersion", c, err)
	}
	if c != nil {
		t.Errorf("Connect returned a client with its error")
	}
	// The client closed its end: the fake server's reader sees the end.
	recv(t, fake.Done(), "the connection to close")
	if err := fake.Err(); !jsonrpc.IsEOF(err) {
		t.Errorf("fake server connection ended with %v, want io.EOF", err)
	}
	// Notifications are handled by the reader before it sees the end, so
	// an initialized notification would be waiting here.
	select {
	case n := <-notes:
		t.Errorf("the client sent %s to a server it refused", n.Method)
	default:
	}
}

// TestRequestBeforeInitialize: only ping may precede initialize.
func TestRequestBeforeInitialize(t *testing.T) {
	t.Parallel()
	f := newFixture(nil)
	ctx := testCtx(t)
	a, b := memory.NewPair()
	ss := f.srv.Connect(b)
	t.Cleanup(func() { ss.Close() })
	w := newWire(t, mcp.LatestLegacy)
	c := rawConn(t, a, nil, w.clientSide)

	for method, params := range map[string]any{
		mcp.MethodToolsList:       nil,
		mcp.MethodToolsCall:       &mcp.CallToolParams{Name: "add", Arguments: jsontext.Value(`{"a":1,"b":2}`)},
		mcp.MethodLoggingSetLevel: &mcp.SetLevelParams{Level: mcp.LevelDebug},
		mcp.MethodPromptsGet:      &mcp.GetPromptParams{Name: "plain"},
	} {
		e := wantCode(t, c.Call(ctx, method, params, nil), mcp.CodeInvalidRequest)
		t.Logf("%s before initialize: %s", method, e.Message)
	}
	if err := c.Call(ctx, mcp.MethodPing, nil, nil); err != nil {
		t.Errorf("ping before initialize: %v", err)
	}
	res := rawInitialize(t, ctx, c, mcp.LatestLegacy)
	if res.ProtocolVersion != mcp.LatestLegacy {
		t.Errorf("initialize chose %q", res.ProtocolVersion)
	}
	var tools mcp.ListToolsResult
	if err := c.Call(ctx, mcp.MethodToolsList, nil, &tools); err != nil || len(tools.Tools) == 0 {
		t.Errorf("tools/list after initialize: %v, %d tools", err, len(tools.Tools))
	}
}

// TestSecondInitialize: initialize is answered once per session.
func TestSecondInitialize(t *testing.T) {
	t.Parallel()
	f := newFixture(nil)
	ctx := testCtx(t)
	a, b := memory.NewPair()
	ss := f.srv.Connect(b)
	t.Cleanup(func() { ss.Close() })
	w := newWire(t, mcp.Version20250618)
	c := rawConn(t, a, nil, w.clientSide)
	rawInitialize(t, ctx, c, mcp.Version20250618)
	err := c.Call(ctx, mcp.MethodInitialize, &mcp.InitializeParams{
		ProtocolVersion: mcp.Version20251125,
		ClientInfo:      mcp.Implementation{Name: "again", Version: "1"},
	}, nil)
	wantCode(t, err, mcp.CodeInvalidRequest)
	// The first negotiation stands.
	if got := ss.ProtocolVersion(); got != mcp.Version20250618 {
		t.Errorf("after a second initialize the session speaks %q", got)
	}
	if got := ss.ClientInfo().Name; got != "raw" {
		t.Errorf("after a second initialize the client is %q", got)
	}
}

// TestPing pings in both directions, and the session reports the client.
func TestPing(t *testing.T) {
	t.Parallel()
	s := newFixture(nil).connect(t, "", nil)
	ctx := testCtx(t)
	if err := s.c.Ping(ctx); err != nil {
		t.Fatalf("client→server ping: %v", err)
	}
	if err := s.ss.Ping(ctx); err != nil {
		t.Fatalf("server→client ping: %v", err)
	}
	if !slices.Contains(s.f.srv.Sessions(), s.ss) {
		t.Errorf("the server does not list the session")
	}
	if s.ss.ID() == "" {
		t.Errorf("the session has no id")
	}
}
