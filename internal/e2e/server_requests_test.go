package e2e

import (
	"context"
	"errors"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/revisions"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// answerName accepts a form elicitation with only the required name.
func answerName(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
}

func TestElicitationForm(t *testing.T) {
	t.Parallel()
	for _, defaults := range []bool{false, true} {
		name := "without defaults"
		if defaults {
			name = "with defaults"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			asked := make(chan *mcp.ElicitParams, 1)
			s := newFixture(nil).connect(t, "", &client.Options{
				ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					asked <- p
					return answerName(ctx, p)
				},
				ElicitationDefaults: defaults,
			})
			caps := s.ss.ClientCapabilities()
			if !caps.Elicitation.SupportsForm() || caps.Elicitation.SupportsURL() {
				t.Errorf("server saw elicitation capability %+v, want form only", caps.Elicitation)
			}
			if got := caps.Elicitation.Form != nil && caps.Elicitation.Form.ApplyDefaults; got != defaults {
				t.Errorf("server saw applyDefaults %v, want %v", got, defaults)
			}
			res := s.mustCall(t, "ask", nil)
			if res.IsError {
				t.Fatalf("ask failed: %s", text(res))
			}
			p := recv(t, asked, "the elicitation")
			if p.EffectiveMode() != mcp.ElicitModeForm || p.Message != "Your name?" || len(p.RequestedSchema) == 0 {
				t.Errorf("the client was asked %+v", p)
			}
			var out askOut
			if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
				t.Fatalf("ask result %s: %v", res.StructuredContent, err)
			}
			if out.Action != mcp.ElicitActionAccept || out.Content["name"] != "Ada" {
				t.Errorf("server saw %+v", out)
			}
			age, ok := out.Content["age"]
			switch {
			case defaults && age != float64(30):
				t.Errorf("with ElicitationDefaults the server saw age %v (%T), want 30 (SEP-1034)", age, age)
			case !defaults && ok:
				t.Errorf("without ElicitationDefaults the server saw age %v, want it omitted", age)
			}
		})
	}
}

func TestElicitationURL(t *testing.T) {
	t.Parallel()
	t.Run("refused without the capability", func(t *testing.T) {
		t.Parallel()
		s := newFixture(nil).connect(t, "", &client.Options{
			ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				t.Errorf("the client was asked %+v", p)
				return nil, errors.New("unexpected")
			},
		})
		s.wantToolError(t, "ask_url", nil, "elicitation.url")
	})
	t.Run("accepted with the capability", func(t *testing.T) {
		t.Parallel()
		asked := make(chan *mcp.ElicitParams, 1)
		s := newFixture(nil).connect(t, "", &client.Options{
			ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				asked <- p
				if p.Mode == mcp.ElicitModeURL {
					return &mcp.ElicitResult{Action: mcp.ElicitActionAccept}, nil
				}
				// A form's answer has the required fields: the server checks.
				return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
			},
			ElicitationURL: true,
		})
		if !s.ss.ClientCapabilities().Elicitation.SupportsURL() {
			t.Errorf("server did not see elicitation.url")
		}
		s.wantText(t, "ask_url", nil, "accept")
		p := recv(t, asked, "the elicitation")
		if p.Mode != mcp.ElicitModeURL || p.URL != "https://example.com/connect" || p.Message != "Sign in" {
			t.Errorf("the client was asked %+v", p)
		}
		if p.ElicitationID == "" {
			t.Errorf("a URL-mode elicitation without an elicitationId")
		}
		// Form mode still works for a client that declared both.
		s.wantText(t, "ask", nil, `{"action":"accept","content":{"name":"Ada"}}`)
	})
}

// TestNoClientHandler: without a handler the client declares nothing, and
// the server refuses to send, naming the capability.
func TestNoClientHandler(t *testing.T) {
	t.Parallel()
	s := newFixture(nil).connect(t, "", nil)
	if caps := s.ss.ClientCapabilities(); caps.Elicitation != nil || caps.Sampling != nil || caps.Roots != nil {
		t.Errorf("a client without handlers declared %+v", caps)
	}
	s.wantToolError(t, "ask", nil, "elicitation.form")
	s.wantToolError(t, "ask_url", nil, "elicitation.url")
	s.wantToolError(t, "sample", nil, "sampling")
	s.wantToolError(t, "roots", nil, "roots")
	for _, m := range s.wire.messages("server->client") {
		var env struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(m, &env) == nil && revisions.IsInputRequestMethod(env.Method) {
			t.Errorf("the server sent %s to a client that did not declare it", m)
		}
	}
}

func TestSampling(t *testing.T) {
	t.Parallel()
	t.Run("model", func(t *testing.T) {
		t.Parallel()
		asked := make(chan *mcp.CreateMessageParams, 1)
		s := newFixture(nil).connect(t, "", &client.Options{
			CreateMessageHandler: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
				asked <- p
				return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "Paris"}), Model: "test-model-1", StopReason: mcp.StopReasonEndTurn}, nil
			},
		})
		s.wantText(t, "sample", nil, "test-model-1")
		p := recv(t, asked, "the sampling request")
		if p.MaxTokens != 50 || len(p.Messages) != 1 || p.Messages[0].Role != mcp.RoleUser {
			t.Errorf("the client was asked %+v", p)
		}
	})
	t.Run("rejected", func(t *testing.T) {
		t.Parallel()
		s := newFixture(nil).connect(t, "", &client.Options{
			CreateMessageHandler: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
				return nil, jsonrpc.NewError(-1, "User rejected sampling request")
			},
		})
		s.wantToolError(t, "sample", nil, `ClientError method=sampling/createMessage code=-1 message="User rejected sampling request"`)
	})
}

func TestRoots(t *testing.T) {
	t.Parallel()
	s := newFixture(nil).connect(t, "", &client.Options{
		ListRootsHandler: func(ctx context.Context) (*mcp.ListRootsResult, error) {
			return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///a", Name: "a"}, {URI: "file:///b"}}}, nil
		},
	})
	if r := s.ss.ClientCapabilities().Roots; r == nil || !r.ListChanged {
		t.Errorf("server saw roots capability %+v", r)
	}
	s.wantText(t, "roots", nil, "file:///a,file:///b")
	if err := s.c.RootsChanged(testCtx(t)); err != nil {
		t.Errorf("RootsChanged: %v", err)
	}
	// An empty list is sent as [], never null.
	s2 := newFixture(nil).connect(t, "", &client.Options{
		ListRootsHandler: func(ctx context.Context) (*mcp.ListRootsResult, error) { return &mcp.ListRootsResult{}, nil },
	})
	s2.wantText(t, "roots", nil, "")
}

// TestClientHandlerPlainError: a client handler's plain Go error reaches
// the server as -32603.
func TestClientHandlerPlainError(t *testing.T) {
	t.Parallel()
	s := newFixture(nil).connect(t, "", &client.Options{
		ListRootsHandler: func(ctx context.Context) (*mcp.ListRootsResult, error) {
			return nil, errors.New("disk on fire")
		},
		CreateMessageHandler: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return nil, errors.New("no model")
		},
	})
	s.wantToolError(t, "roots", nil, "roots/list", "-32603", "disk on fire")
	s.wantToolError(t, "sample", nil, "code=-32603", "no model")
}

// fakeServer is a raw server-side JSON-RPC peer that answers initialize
// and lets the test send the client whatever it likes.
func fakeServer(t *testing.T, opts *client.Options, onCall func(ctx context.Context, srv *jsonrpc.Conn, msg *jsonrpc.Message) (any, error)) (*client.Client, *jsonrpc.Conn) {
	t.Helper()
	a, b := memory.NewPair()
	var srv *jsonrpc.Conn
	ready := make(chan struct{})
	srv = rawConn(t, b, handlerFunc{fn: func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
		if msg.Method == mcp.MethodPing {
			return struct{}{}, nil
		}
		if msg.Method == mcp.MethodInitialize {
			return &mcp.InitializeResult{
				ProtocolVersion: mcp.LatestLegacy,
				Capabilities:    mcp.ServerCapabilities{Tools: &mcp.ToolsCapability{}},
				ServerInfo:      mcp.Implementation{Name: "fake", Version: "1"},
			}, nil
		}
		<-ready
		if onCall != nil {
			return onCall(ctx, srv, msg)
		}
		return nil, jsonrpc.ErrMethodNotFound
	}}, nil)
	close(ready)
	o := *opts
	w := newWire(t, mcp.LatestLegacy)
	o.Observe = w.clientSide
	o.ProtocolVersion = mcp.LatestLegacy
	c, err := client.Connect(testCtx(t), a, &o)
	if err != nil {
		t.Fatalf("Connect to the fake server: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c, srv
}

// TestSEP2260 checks the client's side of SEP-2260 and of its handlers.
func TestSEP2260(t *testing.T) {
	t.Parallel()
	elicit := &mcp.ElicitParams{Message: "name?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}}}`)}
	sampling := &mcp.CreateMessageParams{
		Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "hi"})}},
		MaxTokens: 5,
	}
	t.Run("unsolicited request, legacy", func(t *testing.T) {
		t.Parallel()
		// Revisions up to 2025-11-25 allow a server's requests outside the
		// client's: by default they reach the handlers.
		c, srv := fakeServer(t, &client.Options{
			ElicitHandler: answerName,
			ListRootsHandler: func(ctx context.Context) (*mcp.ListRootsResult, error) {
				return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///w"}}}, nil
			},
		}, nil)
		ctx := testCtx(t)
		var er mcp.ElicitResult
		if err := srv.Call(ctx, mcp.MethodElicitationCreate, elicit, &er); err != nil || er.Action != mcp.ElicitActionAccept {
			t.Errorf("unsolicited elicitation: %+v, %v", er, err)
		}
		var rr mcp.ListRootsResult
		if err := srv.Call(ctx, mcp.MethodRootsList, nil, &rr); err != nil || len(rr.Roots) != 1 {
			t.Errorf("unsolicited roots/list: %+v, %v", rr, err)
		}
		if err := c.Ping(ctx); err != nil {
			t.Errorf("ping: %v", err)
		}
	})
	t.Run("unsolicited request, strict", func(t *testing.T) {
		t.Parallel()
		called := make(chan struct{}, 3)
		c, srv := fakeServer(t, &client.Options{
			StrictServerRequests: true,
			ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				called <- struct{}{}
				return answerName(ctx, p)
			},
			CreateMessageHandler: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
				called <- struct{}{}
				return nil, errors.New("unexpected")
			},
			ListRootsHandler: func(ctx context.Context) (*mcp.ListRootsResult, error) {
				called <- struct{}{}
				return &mcp.ListRootsResult{}, nil
			},
		}, nil)
		ctx := testCtx(t)
		// The client has no request in flight.
		wantCode(t, srv.Call(ctx, mcp.MethodElicitationCreate, elicit, nil), mcp.CodeInvalidParams)
		wantCode(t, srv.Call(ctx, mcp.MethodSamplingCreateMessage, sampling, nil), mcp.CodeInvalidParams)
		wantCode(t, srv.Call(ctx, mcp.MethodRootsList, nil, nil), mcp.CodeInvalidParams)
		// ping is exempt.
		if err := srv.Call(ctx, mcp.MethodPing, nil, nil); err != nil {
			t.Errorf("unsolicited ping: %v", err)
		}
		select {
		case <-called:
			t.Errorf("a client handler ran for an unsolicited request")
		default:
		}
		if err := c.Ping(ctx); err != nil {
			t.Errorf("the client is unusable after refusing: %v", err)
		}
	})
	t.Run("associated request", func(t *testing.T) {
		t.Parallel()
		// The same request sent while the client's tools/call is in flight
		// is answered by the handler.
		c, _ := fakeServer(t, &client.Options{ElicitHandler: answerName}, func(ctx context.Context, srv *jsonrpc.Conn, msg *jsonrpc.Message) (any, error) {
			var res mcp.ElicitResult
			if err := srv.Call(ctx, mcp.MethodElicitationCreate, elicit, &res); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: res.Action}}}, nil
		})
		res, err := c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "x"})
		if err != nil || text(res) != mcp.ElicitActionAccept {
			t.Fatalf("CallTool = %v, %v", res, err)
		}
	})
	t.Run("no handler", func(t *testing.T) {
		t.Parallel()
		// Even inside a request, a method the client has no handler for is
		// -32601 (and the client did not declare it).
		c, _ := fakeServer(t, &client.Options{}, func(ctx context.Context, srv *jsonrpc.Conn, msg *jsonrpc.Message) (any, error) {
			for m, params := range map[string]any{
				mcp.MethodElicitationCreate:     elicit,
				mcp.MethodSamplingCreateMessage: sampling,
				mcp.MethodRootsList:             nil,
			} {
				if e, ok := jsonrpc.AsError(srv.Call(ctx, m, params, nil)); !ok || e.Code != mcp.CodeMethodNotFound {
					return nil, jsonrpc.Errorf(-32000, "%s: got %v, want -32601", m, e)
				}
			}
			return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "ok"}}}, nil
		})
		res, err := c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "x"})
		if err != nil || text(res) != "ok" {
			t.Fatalf("CallTool = %v, %v", res, err)
		}
	})
}

// TestRequestEnded: a Request used after its handler returned refuses to
// reach the client (SEP-2260).
func TestRequestEnded(t *testing.T) {
	t.Parallel()
	f := newFixture(nil)
	s := f.connect(t, "", &client.Options{
		ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			t.Errorf("elicitation after the request ended: %+v", p)
			return answerName(ctx, p)
		},
		CreateMessageHandler: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			t.Errorf("sampling after the request ended")
			return nil, errors.New("unexpected")
		},
		ListRootsHandler: func(ctx context.Context) (*mcp.ListRootsResult, error) {
			t.Errorf("roots after the request ended")
			return &mcp.ListRootsResult{}, nil
		},
	})
	s.wantText(t, "capture", nil, "captured")
	req := recv(t, f.captured, "the captured request")
	ctx := testCtx(t)
	if _, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "late", RequestedSchema: jsontext.Value(`{"type":"object","properties":{}}`)}); !errors.Is(err, server.ErrRequestEnded) {
		t.Errorf("Elicit after the handler returned: %v, want ErrRequestEnded", err)
	}
	if _, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 1}); !errors.Is(err, server.ErrRequestEnded) {
		t.Errorf("CreateMessage after the handler returned: %v, want ErrRequestEnded", err)
	}
	if _, err := req.ListRoots(ctx); !errors.Is(err, server.ErrRequestEnded) {
		t.Errorf("ListRoots after the handler returned: %v, want ErrRequestEnded", err)
	}
	if err := req.Log(ctx, mcp.LevelError, "late", "x"); !errors.Is(err, server.ErrRequestEnded) {
		t.Errorf("Log after the handler returned: %v, want ErrRequestEnded", err)
	}
	if req.Session() != s.ss {
		t.Errorf("the request's session is not the test's session")
	}
}

// TestCancellation: cancelling CallTool's context cancels the server's
// handler, CallTool returns context.Canceled, and no response is sent for
// the cancelled request.
func TestCancellation(t *testing.T) {
	t.Parallel()
	var serverWire *wire
	f := newFixture(&server.Options{Observe: func(in bool, msg []byte) { serverWire.serverSide(in, msg) }})
	serverWire = newWire(t, mcp.LatestLegacy)
	s := f.connect(t, "", nil)

	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() {
		_, err := s.call(t, ctx, "wait", nil)
		done <- err
	}()
	recv(t, f.waitStarted, "the wait tool to start")
	cancel()
	if err := recv(t, done, "CallTool to return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("CallTool = %v, want context.Canceled", err)
	}
	cause := recv(t, f.waitEnded, "the handler's context to end")
	// The peer's cancellation, not the connection's end: this is the cause
	// under which the connection sends no answer.
	if cause == nil || cause.Error() != "jsonrpc: request cancelled by the peer" {
		t.Fatalf("handler context ended with %v, want the peer's cancellation", cause)
	}

	// The session goes on; then no response to the cancelled call was
	// ever written.
	s.wantText(t, "add", map[string]int{"a": 1, "b": 1}, `{"sum":2}`)
	var cancelled jsontext.Value
	for _, m := range serverWire.messages("client->server") {
		var env struct {
			Method string              `json:"method"`
			Params mcp.CancelledParams `json:"params"`
		}
		if json.Unmarshal(m, &env) == nil && env.Method == mcp.NotificationCancelled {
			cancelled, _ = json.Marshal(env.Params.RequestID)
		}
	}
	if cancelled == nil {
		t.Fatal("the client sent no notifications/cancelled")
	}
	s.ss.Close()
	for _, m := range serverWire.messages("server->client") {
		var env struct {
			ID     jsontext.Value `json:"id"`
			Method string         `json:"method"`
		}
		if json.Unmarshal(m, &env) == nil && env.Method == "" && string(env.ID) == string(cancelled) {
			t.Errorf("the server answered the cancelled request: %s", m)
		}
	}
}
