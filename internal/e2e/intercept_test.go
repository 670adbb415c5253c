package e2e

// Interceptors (package intercept) end to end, in both eras: what a
// server's and a client's chains see of one multi round-trip tools/call
// (the legacy shim's server→client request, the modern driver's retry),
// _meta set by one side and read by the other both ways, an interceptor
// that answers without the handler, changes the params, or panics.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"net/http/httptest"

	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/memory"
	"github.com/mcpkit/mcpkit/transport/streamable"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
)

// seen is what a recording interceptor saw of one Call.
type seen struct {
	side         intercept.Side
	inbound      bool
	note         bool
	method, name string
	era          intercept.Era
	version      string
	session      bool
	round        int
	id, related  string
	mark         string // _meta "test/mark"
}

func (s seen) String() string {
	dir := "out"
	if s.inbound {
		dir = "in"
	}
	return fmt.Sprintf("%s %s %s r%d", s.side, dir, s.method, s.round)
}

// recorder records every Call and marks outbound ones in _meta.
type recorder struct {
	mu   sync.Mutex
	log  []seen
	mark string
}

func (r *recorder) interceptor(next intercept.Handler) intercept.Handler {
	return func(ctx context.Context, c *intercept.Call) (any, error) {
		if !c.Inbound && r.mark != "" {
			c.SetMeta("test/mark", r.mark)
		}
		s := seen{side: c.Side, inbound: c.Inbound, note: c.Notification, method: c.Method, name: c.Name, era: c.Era,
			version: c.Version, session: c.SessionID != "", round: c.Round, id: c.ID.String(), related: c.Related.String()}
		s.mark, _ = c.MetaString("test/mark")
		r.mu.Lock()
		r.log = append(r.log, s)
		r.mu.Unlock()
		return next(ctx, c)
	}
}

func (r *recorder) find(inbound bool, method string) []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []seen
	for _, s := range r.log {
		if s.inbound == inbound && s.method == method {
			out = append(out, s)
		}
	}
	return out
}

func TestInterceptorsBothEras(t *testing.T) {
	for _, tc := range icCases() {
		t.Run(tc.name, func(t *testing.T) {
			version := tc.version
			modern := mcp.IsModern(version)
			srvRec, cliRec := &recorder{mark: "from-server"}, &recorder{mark: "from-client"}
			s := server.New(&server.Options{Info: mcp.Implementation{Name: "mrtr", Version: "1"}, Interceptors: []intercept.Interceptor{srvRec.interceptor}})
			server.AddTool(s, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
				who, ok, err := req.ElicitResult("who")
				if err != nil {
					return "", err
				}
				if !ok {
					return "", server.NeedInput().Elicit("who", &mcp.ElicitParams{Message: "Who?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
				}
				return fmt.Sprint("hello ", who.Content["name"]), nil
			})
			c := icConnect(t, tc, s, &client.Options{
				Interceptors: []intercept.Interceptor{cliRec.interceptor},
				ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
				},
			})
			icWant(t, c, "greet", nil, "hello Ada")

			wantEra := intercept.EraLegacy
			if modern {
				wantEra = intercept.EraModern
			}
			// The server saw every tools/call, in its era, with the
			// client's mark; the client sent each.
			calls := srvRec.find(true, mcp.MethodToolsCall)
			sent := cliRec.find(false, mcp.MethodToolsCall)
			wantCalls := 1
			if modern {
				wantCalls = 2 // the first request and the driver's retry
			}
			if len(calls) != wantCalls || len(sent) != wantCalls {
				t.Fatalf("server saw %d tools/call, client sent %d; want %d each", len(calls), len(sent), wantCalls)
			}
			for i, c := range calls {
				if c.era != wantEra || c.version != version || c.name != "greet" || c.mark != "from-client" || c.session != tc.session || c.id == "" {
					t.Errorf("server's tools/call %d = %+v", i, c)
				}
				if c.round != i || sent[i].round != i || sent[i].era != wantEra {
					t.Errorf("tools/call %d: server round %d, client round %d (era %v)", i, c.round, sent[i].round, sent[i].era)
				}
			}
			// The elicitation: a server→client request of the shim
			// (legacy), an input request answered by the driver (modern);
			// the client's interceptor sees it inbound either way.
			got := cliRec.find(true, mcp.MethodElicitationCreate)
			if len(got) != 1 {
				t.Fatalf("client saw %d elicitation/create inbound, want 1", len(got))
			}
			if modern {
				if got[0].round != 1 || got[0].era != intercept.EraModern {
					t.Errorf("modern input request = %+v", got[0])
				}
				if out := srvRec.find(false, mcp.MethodElicitationCreate); len(out) != 0 {
					t.Errorf("the modern server sent %d elicitation requests", len(out))
				}
			} else {
				out := srvRec.find(false, mcp.MethodElicitationCreate)
				if len(out) != 1 || out[0].round != 1 || out[0].related != calls[0].id || !out[0].session || out[0].mark != "from-server" {
					t.Fatalf("server's outbound elicitation = %+v (tools/call id %s)", out, calls[0].id)
				}
				if got[0].mark != "from-server" || got[0].era != intercept.EraLegacy {
					t.Errorf("client's inbound elicitation = %+v, want the server's mark", got[0])
				}
				if init := srvRec.find(true, mcp.MethodInitialize); len(init) != 1 {
					t.Errorf("server saw %d initialize", len(init))
				}
				if n := srvRec.find(true, mcp.NotificationInitialized); len(n) != 1 || !n[0].note {
					t.Errorf("server saw notifications/initialized %+v", n)
				}
				if n := cliRec.find(false, mcp.NotificationInitialized); len(n) != 1 || !n[0].note {
					t.Errorf("client sent notifications/initialized %+v", n)
				}
			}
		})
	}
}

// TestInterceptorsChange: interceptors answer without the handler,
// rewrite params and results, and a panic in one is -32603, in both eras.
func TestInterceptorsChange(t *testing.T) {
	for _, tc := range icCases() {
		t.Run(tc.name, func(t *testing.T) {
			var handled atomic.Int32
			guard := func(next intercept.Handler) intercept.Handler {
				return func(ctx context.Context, c *intercept.Call) (any, error) {
					if c.Method != mcp.MethodToolsCall {
						return next(ctx, c)
					}
					switch c.Name {
					case "blocked":
						return nil, &jsonrpc.Error{Code: -32050, Message: "blocked by policy"}
					case "boom":
						panic("interceptor bug")
					case "rewrite":
						c.Raw = jsontext.Value(`{"name":"echo","arguments":{"text":"rewritten"}}`)
					}
					res, err := next(ctx, c)
					if r, ok := res.(*mcp.CallToolResult); ok && c.Name == "shout" {
						r.Content = []mcp.Content{&mcp.TextContent{Text: "SHOUTED"}}
					}
					return res, err
				}
			}
			s := server.New(&server.Options{Interceptors: []intercept.Interceptor{guard}})
			for _, name := range []string{"echo", "blocked", "boom", "rewrite", "shout"} {
				server.AddTool(s, &mcp.Tool{Name: name}, func(ctx context.Context, req *server.CallToolRequest, in struct {
					Text string `json:"text"`
				}) (string, error) {
					handled.Add(1)
					return in.Text, nil
				})
			}
			fakeList := func(next intercept.Handler) intercept.Handler {
				return func(ctx context.Context, c *intercept.Call) (any, error) {
					if c.Method == mcp.MethodPromptsList {
						return &mcp.ListPromptsResult{Prompts: []mcp.Prompt{{Name: "made-up"}}}, nil
					}
					return next(ctx, c)
				}
			}
			c := icConnect(t, tc, s, &client.Options{Interceptors: []intercept.Interceptor{fakeList}})
			ctx := testCtx(t)

			_, err := icCall(ctx, c, "blocked", nil)
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != -32050 {
				t.Errorf("blocked: %v, want -32050", err)
			}
			_, err = icCall(ctx, c, "boom", nil)
			if !errors.As(err, &je) || je.Code != mcp.CodeInternalError || !strings.Contains(je.Message, "panicked") {
				t.Errorf("boom: %v, want -32603 panicked", err)
			}
			if handled.Load() != 0 {
				t.Errorf("handlers ran %d times for calls the interceptor answered", handled.Load())
			}
			icWant(t, c, "rewrite", map[string]string{"text": "original"}, "rewritten")
			icWant(t, c, "shout", map[string]string{"text": "quiet"}, "SHOUTED")
			// The client's interceptor answered prompts/list itself: the
			// server (which has no prompts) never saw it.
			res, err := c.ListPrompts(ctx, nil)
			if err != nil || len(res.Prompts) != 1 || res.Prompts[0].Name != "made-up" {
				t.Errorf("ListPrompts = %+v, %v", res, err)
			}
			if !slices.Contains([]int32{2}, handled.Load()) {
				t.Errorf("handlers ran %d times, want 2", handled.Load())
			}
		})
	}
}

// icCase is one era over one carrier.
type icCase struct {
	name, version string
	http          bool
	session       bool // the server's requests belong to a legacy session
}

func icCases() []icCase {
	return []icCase{
		{"legacy/memory", mcp.LatestLegacy, false, true},
		{"legacy/http", mcp.LatestLegacy, true, true},
		{"modern/memory", mcp.Version20260728, false, false},
		{"modern/http", mcp.Version20260728, true, false},
	}
}

// icConnect connects a client in tc's era and carrier to srv.
func icConnect(t testing.TB, tc icCase, srv *server.Server, opts *client.Options) *client.Client {
	t.Helper()
	o := *opts
	o.ProtocolVersion = tc.version
	var conn transport.Conn
	if tc.http {
		h := streamhttp.NewHandler(srv, nil)
		ts := httptest.NewServer(h)
		t.Cleanup(func() {
			h.Close()
			ts.Close()
		})
		conn = streamable.New(ts.URL, nil)
	} else {
		a, b := memory.NewPair()
		ss := srv.Connect(b)
		t.Cleanup(func() { ss.Close() })
		conn = a
	}
	c, err := client.Connect(testCtx(t), conn, &o)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func icCall(ctx context.Context, c *client.Client, name string, args any) (*mcp.CallToolResult, error) {
	p := &mcp.CallToolParams{Name: name}
	if args != nil {
		raw, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		p.Arguments = raw
	}
	return c.CallTool(ctx, p)
}

func icWant(t testing.TB, c *client.Client, name string, args any, want string) {
	t.Helper()
	res, err := icCall(testCtx(t), c, name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("%s = %+v", name, res)
	}
	if txt, ok := res.Content[0].(*mcp.TextContent); !ok || txt.Text != want {
		t.Fatalf("%s = %+v, want %q", name, res.Content[0], want)
	}
}
