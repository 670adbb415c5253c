package e2e

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// Extensions (SEP-2133) end to end, in both eras and over memory and
// Streamable HTTP: a custom request with a typed handler, notifications
// both ways, and the extension advertised and read on both sides.

const extID = "com.example/echo"

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Text     string `json:"text"`
	Declared bool   `json:"declared"` // the client declared extID
	Session  bool   `json:"session"`  // the request arrived on a legacy session
}

type helloIn struct {
	From string `json:"from"`
}

type hello struct {
	from    string
	session bool
}

func extServer(t testing.TB) (*server.Server, chan hello) {
	srv := server.New(&server.Options{Info: mcp.Implementation{Name: "ext", Version: "1"}})
	if err := srv.AddExtension(extID, map[string]int{"level": 2}); err != nil {
		t.Fatal(err)
	}
	err := server.AddMethod(srv, "com.example/echo", func(ctx context.Context, req *server.Request, in echoIn) (echoOut, error) {
		switch in.Text {
		case "fail":
			return echoOut{}, jsonrpc.NewError(-32001, "refused")
		case "crash":
			return echoOut{}, errors.New("something broke")
		}
		if err := req.Notify(ctx, "com.example/echoed", map[string]string{"text": in.Text}); err != nil {
			return echoOut{}, err
		}
		_, declared := req.ClientExtension(extID)
		return echoOut{Text: in.Text, Declared: declared, Session: req.Session() != nil}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	hellos := make(chan hello, 4)
	err = server.AddNotification(srv, "com.example/hello", func(_ context.Context, n *server.Notification, in helloIn) {
		hellos <- hello{from: in.From, session: n.Session != nil}
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv, hellos
}

// extWire checks every message against the schema of revision except
// those of the extension (and the answers to its requests), which the
// schema does not know.
func extWire(t testing.TB, revision string) func(in bool, msg []byte) {
	c := wirecheck.For(t, revision)
	observe := c.Observe(t)
	var mu sync.Mutex
	skipped := map[string]bool{} // ids of extension requests
	return func(in bool, msg []byte) {
		var env struct {
			ID     jsontext.Value `json:"id"`
			Method string         `json:"method"`
		}
		_ = json.Unmarshal(msg, &env)
		mu.Lock()
		skip := strings.HasPrefix(env.Method, "com.example/")
		if skip && env.ID != nil {
			skipped[string(env.ID)] = true
		}
		if env.Method == "" && skipped[string(env.ID)] {
			skip = true
		}
		mu.Unlock()
		if skip {
			return
		}
		dir := wirecheck.ClientToServer
		if in {
			dir = wirecheck.ServerToClient
		}
		observe(dir, msg)
	}
}

type extCarrier struct {
	name string
	dial func(t testing.TB, srv *server.Server) transport.Conn
}

var extCarriers = []extCarrier{
	{"memory", func(t testing.TB, srv *server.Server) transport.Conn {
		a, b := memory.NewPair()
		ss := srv.Connect(b)
		t.Cleanup(func() { ss.Close() })
		return a
	}},
	{"http", func(t testing.TB, srv *server.Server) transport.Conn {
		h := streamhttp.NewHandler(srv, nil)
		ts := httptest.NewServer(h)
		t.Cleanup(func() {
			h.Close()
			ts.Close()
		})
		return streamable.New(ts.URL, nil)
	}},
}

func TestExtensions(t *testing.T) {
	for _, era := range []string{mcp.LatestLegacy, mcp.Version20260728} {
		for _, cr := range extCarriers {
			t.Run(era+"/"+cr.name, func(t *testing.T) {
				t.Parallel()
				srv, hellos := extServer(t)
				echoed := make(chan string, 4)
				c, err := client.Connect(testCtx(t), cr.dial(t, srv), &client.Options{
					ProtocolVersion: era,
					Extensions:      map[string]any{extID: nil},
					Observe:         extWire(t, era),
					OnNotification: func(_ context.Context, method string, params jsontext.Value) {
						if method == "com.example/echoed" {
							echoed <- string(params)
						}
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				ctx := testCtx(t)
				if c.Era() == client.EraModern {
					if _, err := c.Discover(ctx); err != nil {
						t.Fatal(err)
					}
				}
				settings, ok := c.ServerExtension(extID)
				if !ok || string(settings) != `{"level":2}` {
					t.Fatalf("ServerExtension = %s, %v", settings, ok)
				}
				legacy := era != mcp.Version20260728

				out, err := client.CallMethod[echoOut](ctx, c, "com.example/echo", echoIn{Text: "hi"})
				if err != nil {
					t.Fatal(err)
				}
				if out != (echoOut{Text: "hi", Declared: true, Session: legacy}) {
					t.Fatalf("echo = %+v (legacy %v)", out, legacy)
				}
				if got := recv(t, echoed, "com.example/echoed"); !strings.Contains(got, `"text":"hi"`) {
					t.Fatalf("echoed params %s", got)
				}
				raw, err := client.CallMethod[jsontext.Value](ctx, c, "com.example/echo", map[string]any{"text": "raw", "_meta": map[string]string{"k": "v"}})
				if err != nil {
					t.Fatal(err)
				}
				if got := recv(t, echoed, "com.example/echoed"); !strings.Contains(got, `"text":"raw"`) {
					t.Fatalf("echoed params %s", got)
				}
				var probe struct {
					ResultType string   `json:"resultType"`
					Meta       mcp.Meta `json:"_meta"`
				}
				if err := json.Unmarshal(raw, &probe); err != nil {
					t.Fatal(err)
				}
				if legacy != (probe.ResultType == "") || legacy != (probe.Meta == nil) {
					t.Fatalf("result %s: want resultType and serverInfo exactly on modern", raw)
				}

				// Errors: the handler's own JSON-RPC error, a Go error
				// (-32603), params that do not decode (-32602), and an
				// unregistered method (-32601).
				_, err = client.CallMethod[echoOut](ctx, c, "com.example/echo", echoIn{Text: "fail"})
				wantCode(t, err, -32001)
				_, err = client.CallMethod[echoOut](ctx, c, "com.example/echo", echoIn{Text: "crash"})
				wantCode(t, err, mcp.CodeInternalError)
				_, err = client.CallMethod[echoOut](ctx, c, "com.example/echo", map[string]int{"text": 3})
				wantCode(t, err, mcp.CodeInvalidParams)
				_, err = client.CallMethod[echoOut](ctx, c, "com.example/nothing", nil)
				wantCode(t, err, mcp.CodeMethodNotFound)

				if legacy && cr.name == "memory" {
					// A notification of the session, tied to no request.
					for _, ss := range srv.Sessions() {
						if err := ss.Notify(ctx, "com.example/echoed", map[string]string{"text": "session"}); err != nil {
							t.Fatal(err)
						}
					}
					if got := recv(t, echoed, "session notification"); !strings.Contains(got, `"text":"session"`) {
						t.Fatalf("session notification params %s", got)
					}
					if err := srv.Sessions()[0].Notify(ctx, mcp.NotificationToolsListChanged, nil); err == nil {
						t.Fatal("Session.Notify sent a core notification")
					}
				}
				if err := c.Notify(ctx, "com.example/hello", helloIn{From: "client"}); err != nil {
					t.Fatal(err)
				}
				if h := recv(t, hellos, "com.example/hello"); h != (hello{from: "client", session: legacy}) {
					t.Fatalf("hello = %+v, legacy %v", h, legacy)
				}
			})
		}
	}
}

// TestExtensionRegistration: registration refuses what would break the
// protocol, with errors naming the package and the method.
func TestExtensionRegistration(t *testing.T) {
	srv := server.New(nil)
	h := func(context.Context, *server.Request, struct{}) (struct{}, error) { return struct{}{}, nil }
	for _, method := range []string{"", "tools/call", "initialize", "server/discover", "tasks/get", "notifications/progress"} {
		if err := server.AddMethod(srv, method, h); err == nil || !strings.HasPrefix(err.Error(), "server: AddMethod") {
			t.Errorf("AddMethod(%q) = %v, want an error", method, err)
		}
	}
	if err := server.AddMethod[struct{}, struct{}](srv, "com.example/x", nil); err == nil {
		t.Error("AddMethod with a nil handler succeeded")
	}
	for _, id := range []string{"", "noprefix", "/x", "com.example/", "1com/x", "com-/x", "com.example/a/b", "com.example/-x"} {
		if err := srv.AddExtension(id, nil); err == nil {
			t.Errorf("AddExtension(%q) succeeded", id)
		}
	}
	if err := srv.AddExtension("com.example/x", []int{1}); err == nil {
		t.Error("AddExtension with array settings succeeded")
	}
	if err := srv.AddExtension("io.modelcontextprotocol/ui", nil); err != nil {
		t.Error(err)
	}
	if got := string(srv.Capabilities().Extensions["io.modelcontextprotocol/ui"]); got != "{}" {
		t.Errorf("advertised settings %q, want {}", got)
	}
	a, b := memory.NewPair()
	defer b.Close()
	if _, err := client.Connect(testCtx(t), a, &client.Options{Extensions: map[string]any{"com.example/x": 3}}); err == nil {
		t.Error("client.Connect with non-object extension settings succeeded")
	}
}

// TestExtensionNotificationPanic: an extension notification goes through
// the interceptors in both eras and on every carrier (the 2026-07-28 POST
// path included), and a handler that panics is recovered: the next
// notification is served.
func TestExtensionNotificationPanic(t *testing.T) {
	for _, era := range []string{mcp.LatestLegacy, mcp.Version20260728} {
		for _, cr := range extCarriers {
			t.Run(era+"/"+cr.name, func(t *testing.T) {
				t.Parallel()
				seen := make(chan string, 8)
				srv := server.New(&server.Options{Interceptors: []intercept.Interceptor{
					func(next intercept.Handler) intercept.Handler {
						return func(ctx context.Context, c *intercept.Call) (any, error) {
							if c.Inbound && c.Notification && strings.HasPrefix(c.Method, "com.example/") {
								seen <- c.Method
							}
							return next(ctx, c)
						}
					},
				}})
				hellos := make(chan string, 4)
				err := server.AddNotification(srv, "com.example/hello", func(_ context.Context, _ *server.Notification, in helloIn) {
					if in.From == "panic" {
						panic("the handler broke")
					}
					hellos <- in.From
				})
				if err != nil {
					t.Fatal(err)
				}
				c, err := client.Connect(testCtx(t), cr.dial(t, srv), &client.Options{ProtocolVersion: era})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				ctx := testCtx(t)
				for _, from := range []string{"panic", "after"} {
					if err := c.Notify(ctx, "com.example/hello", helloIn{From: from}); err != nil {
						t.Fatal(err)
					}
				}
				if got := recv(t, hellos, "the notification after the panic"); got != "after" {
					t.Fatalf("hello from %q", got)
				}
				for range 2 {
					if m := recv(t, seen, "the interceptor's view"); m != "com.example/hello" {
						t.Fatalf("interceptor saw %q", m)
					}
				}
			})
		}
	}
}
