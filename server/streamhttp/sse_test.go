package streamhttp

// The 2024-11-05 HTTP+SSE transport (Options.LegacySSE): the endpoint
// event, messages POSTed to it and answered on the stream, a 2024-11-05
// session doing elicitation, the checks (unknown session, another
// principal, media type, body cap, Host), the session cap, and the end
// of a session with its stream and at Shutdown.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/internal/httpenv"
)

// sseClient is a raw 2024-11-05 client: one event stream, POSTs to the
// endpoint it announced.
type sseClient struct {
	t        *testing.T
	e        *httpEnv
	body     io.ReadCloser
	rd       *sse.Reader
	endpoint string
	cancel   context.CancelFunc
}

func openSSE(t *testing.T, e *httpEnv, header http.Header) (*sseClient, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(e.Ctx)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.TS.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := e.Client.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		cancel()
		return nil, resp
	}
	c := &sseClient{t: t, e: e, body: resp.Body, rd: sse.NewReader(resp.Body, 1<<20), cancel: cancel}
	t.Cleanup(c.close)
	ev, err := c.rd.Next()
	if err != nil || ev.Type != "endpoint" || !strings.HasPrefix(string(ev.Data), "/mcp?sessionId=") {
		t.Fatalf("first event %q %q (%v), want the endpoint /mcp?sessionId=…", ev.Type, ev.Data, err)
	}
	c.endpoint = string(ev.Data)
	return c, resp
}

func (c *sseClient) close() {
	c.cancel()
	c.body.Close()
}

// post sends one message to the endpoint and returns the status.
func (c *sseClient) post(body string, header http.Header) (int, string) {
	c.t.Helper()
	req, _ := http.NewRequestWithContext(c.e.Ctx, http.MethodPost, c.e.TS.URL+c.endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := c.e.Client.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// next returns the next message event's data.
func (c *sseClient) next() *httpenv.WireMsg {
	c.t.Helper()
	for {
		ev, err := c.rd.Next()
		if err != nil {
			c.t.Fatalf("stream: %v", err)
		}
		if ev.Type == "message" {
			return httpenv.ParseWire(c.t, ev.Data)
		}
	}
}

func initBody(id int, version string, caps string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"old","version":"1"}}}`, id, version, caps)
}

func sseServer() *server.Server {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "sse", Version: "1"}})
	server.AddTool(s, &mcp.Tool{Name: "ask"}, func(_ context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		ans, ok, err := req.ElicitResult("name")
		if err != nil {
			return "", err
		}
		if !ok {
			return "", server.NeedInput().Elicit("name", &mcp.ElicitParams{Message: "Name?",
				RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		}
		return fmt.Sprintf("hello %v", ans.Content["name"]), nil
	})
	return s
}

func TestLegacySSESession(t *testing.T) {
	e := newHTTPEnv(t, sseServer(), &Options{LegacySSE: true})
	c, resp := openSSE(t, e, nil)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	if status, _ := c.post(initBody(1, "2025-03-26", `{"elicitation":{}}`), nil); status != http.StatusAccepted {
		t.Fatalf("POST initialize: %d, want 202", status)
	}
	m := c.next()
	var init mcp.InitializeResult
	if err := json.Unmarshal(m.Result, &init); err != nil || init.ProtocolVersion != "2025-03-26" || string(m.ID) != "1" {
		t.Fatalf("initialize answered %s", m.Raw)
	}
	if status, _ := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); status != http.StatusAccepted {
		t.Fatalf("POST initialized: %d", status)
	}
	// A tool that elicits: the server's request comes on the stream, the
	// answer goes as a POST, then the result comes.
	if status, _ := c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask"}}`, nil); status != http.StatusAccepted {
		t.Fatalf("POST tools/call: %d", status)
	}
	ask := c.next()
	if ask.Method != mcp.MethodElicitationCreate {
		t.Fatalf("got %s, want elicitation/create", ask.Raw)
	}
	answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"Ada"}}}`, ask.ID)
	if status, _ := c.post(answer, nil); status != http.StatusAccepted {
		t.Fatalf("POST answer: %d", status)
	}
	res := c.next()
	if string(res.ID) != "2" || !strings.Contains(string(res.Result), "hello Ada") {
		t.Fatalf("tools/call answered %s", res.Raw)
	}
	if n := e.h.SessionCount(); n != 1 {
		t.Errorf("SessionCount %d, want 1", n)
	}
	// The client leaves: the session ends with its stream.
	c.close()
	waitFor(t, "the session to end with its stream", func() bool { return e.h.SessionCount() == 0 && len(e.srv.Sessions()) == 0 })
	if status, _ := c.post(`{"jsonrpc":"2.0","id":3,"method":"ping"}`, nil); status != http.StatusNotFound {
		t.Errorf("POST to an ended session: %d, want 404", status)
	}
}

// principalHandler is a Handler behind principalMiddleware.
type principalHandler struct {
	mw http.Handler
	*Handler
}

func (p principalHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mw.ServeHTTP(w, r)
}

func TestLegacySSEChecks(t *testing.T) {
	srv := sseServer()
	e := &httpEnv{srv: srv}
	e.Env = *httpenv.New(t, func() httpenv.Handler {
		e.h = NewHandler(srv, &Options{LegacySSE: true, MaxBodyBytes: 1024, MaxSessions: 1})
		return principalHandler{principalMiddleware(e.h), e.h}
	}, func() int { return len(srv.Sessions()) })
	c, _ := openSSE(t, e, nil)
	for _, tc := range []struct {
		name   string
		body   string
		header http.Header
		want   int
	}{
		{"media type", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, http.Header{"Content-Type": {"text/plain"}}, http.StatusUnsupportedMediaType},
		{"body cap", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("x", 2000) + `"}}`, nil, http.StatusRequestEntityTooLarge},
		{"not JSON", `{"jsonrpc"`, nil, http.StatusBadRequest},
		{"another principal", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, http.Header{"X-Test-Principal": {"mallory"}}, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if status, body := c.post(tc.body, tc.header); status != tc.want {
				t.Errorf("status %d (%s), want %d", status, body, tc.want)
			}
		})
	}
	// An unknown session.
	req, _ := http.NewRequestWithContext(e.Ctx, http.MethodPost, e.TS.URL+"/mcp?sessionId=nope", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	if resp, err := e.Client.Do(req); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown session: %v %v, want 404", resp, err)
	} else {
		resp.Body.Close()
	}
	// The session cap counts these sessions.
	if _, resp := openSSE(t, e, nil); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a second stream over MaxSessions: %d, want 503 with Retry-After", resp.StatusCode)
	}
	// Host checks apply (DNS rebinding).
	if _, resp := openSSE(t, e, http.Header{"Origin": {"http://evil.example"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a foreign Origin: %d, want 403", resp.StatusCode)
	}
}

// TestLegacySSEShutdown: Shutdown ends the open streams and frees their
// sessions (httpenv checks that nothing is left).
func TestLegacySSEShutdown(t *testing.T) {
	e := newHTTPEnv(t, sseServer(), &Options{LegacySSE: true})
	c, _ := openSSE(t, e, nil)
	if status, _ := c.post(initBody(1, "2024-11-05", `{}`), nil); status != http.StatusAccepted {
		t.Fatalf("POST initialize: %d", status)
	}
	c.next()
	e.Shutdown()
	for {
		if _, err := c.rd.Next(); err != nil {
			break // the stream ended
		}
	}
}

// TestLegacySSEOff: without LegacySSE a GET without a session is the
// Streamable HTTP transport's 400; a Stateless handler ignores LegacySSE
// (405: it has no sessions).
func TestLegacySSEOff(t *testing.T) {
	e := newHTTPEnv(t, sseServer(), nil)
	if _, resp := openSSE(t, e, nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("GET without a session: %d, want 400", resp.StatusCode)
	}
	e = newHTTPEnv(t, sseServer(), &Options{Stateless: true, LegacySSE: true})
	if _, resp := openSSE(t, e, nil); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("stateless: GET %d, want 405", resp.StatusCode)
	}
}
