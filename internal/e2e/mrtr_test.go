package e2e

// Multi Round-Trip Requests (SEP-2322) end to end: one handler, written
// once with server.NeedInput, completes an elicitation round trip for a
// legacy client over Streamable HTTP (the server's legacy shim asks on the
// request's stream), a legacy client over stdio (newline-delimited JSON
// over pipes), and a modern (2026-07-28) request over HTTP whose client
// performs the retry itself.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/stdio"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

type mrtrGreetIn struct {
	Greeting string `json:"greeting"`
}

// mrtrServer serves "mrtr_greet": it asks who is there (keeping the
// greeting in its requestState), then greets them. runs counts its runs.
func mrtrServer(runs *atomic.Int32) *server.Server {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "mrtr", Version: "1.0.0"}})
	server.AddTool(s, &mcp.Tool{Name: "mrtr_greet", Description: "Greets whoever is there"}, func(ctx context.Context, req *server.CallToolRequest, in mrtrGreetIn) (string, error) {
		runs.Add(1)
		who, ok, err := req.Elicitation("who")
		if err != nil {
			return "", err
		}
		if !ok {
			return "", server.NeedInput().
				Elicit("who", &mcp.ElicitParams{Message: "Who is there?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}).
				State("greeting=" + in.Greeting)
		}
		if who.Action != mcp.ElicitActionAccept {
			return "nobody", nil
		}
		return fmt.Sprintf("%s, %v! [%s]", in.Greeting, who.Content["name"], req.RequestState()), nil
	})
	return s
}

const mrtrWant = "Hello, Ada! [greeting=Hello]"

// mrtrAnswer is the client's elicitation handler, the same in every era;
// it reports each question on asked.
func mrtrAnswer(asked chan<- *mcp.ElicitParams) client.ElicitationHandler {
	return func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		select {
		case asked <- p:
		default:
		}
		return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
	}
}

func mrtrCall(t *testing.T, c *client.Client) {
	t.Helper()
	res, err := c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "mrtr_greet", Arguments: jsontext.Value(`{"greeting":"Hello"}`)})
	if err != nil {
		t.Fatalf("tools/call mrtr_greet: %v", err)
	}
	if res.IsError || text(res) != mrtrWant {
		t.Errorf("mrtr_greet = %q (isError %v), want %q", text(res), res.IsError, mrtrWant)
	}
}

func wantAsked(t *testing.T, asked <-chan *mcp.ElicitParams) {
	t.Helper()
	p := recv(t, asked, "the elicitation")
	if p.Message != "Who is there?" || p.EffectiveMode() != mcp.ElicitModeForm {
		t.Errorf("the client was asked %+v", p)
	}
	select {
	case p := <-asked:
		t.Errorf("the client was asked twice (%+v)", p)
	default:
	}
}

// serveHTTP serves s over a loopback Streamable HTTP endpoint until the
// test ends.
func serveHTTP(t *testing.T, s *server.Server) string {
	t.Helper()
	h := server.NewHTTPHandler(s, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("HTTPHandler.Close: %v", err)
		}
		ts.Close()
	})
	return ts.URL
}

func TestMRTRSameHandler(t *testing.T) {
	t.Parallel()

	t.Run("legacy client over Streamable HTTP", func(t *testing.T) {
		t.Parallel()
		var runs atomic.Int32
		url := serveHTTP(t, mrtrServer(&runs))
		asked := make(chan *mcp.ElicitParams, 2)
		w := newWire(t, mcp.LatestLegacy)
		c, err := client.Connect(testCtx(t), streamable.New(url, nil), &client.Options{
			ProtocolVersion: mcp.LatestLegacy,
			Observe:         w.clientSide,
			Elicitation:     mrtrAnswer(asked),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		mrtrCall(t, c)
		wantAsked(t, asked)
		if n := runs.Load(); n != 2 {
			t.Errorf("the handler ran %d times, want 2", n)
		}
		// Nothing of the 2026 wire reached the legacy client.
		for _, m := range w.messages(wirecheck.ServerToClient) {
			if strings.Contains(string(m), "input_required") || strings.Contains(string(m), "requestState") {
				t.Errorf("the legacy client read %s", m)
			}
		}
	})

	t.Run("legacy client over stdio", func(t *testing.T) {
		t.Parallel()
		var runs atomic.Int32
		s := mrtrServer(&runs)
		toServer, fromClient, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		toClient, fromServer, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		ss := s.Connect(stdio.NewConn(toServer, fromServer, stdio.Options{}))
		t.Cleanup(func() { ss.Close() })
		asked := make(chan *mcp.ElicitParams, 2)
		w := newWire(t, mcp.LatestLegacy)
		c, err := client.Connect(testCtx(t), stdio.NewConn(toClient, fromClient, stdio.Options{}), &client.Options{
			ProtocolVersion: mcp.LatestLegacy,
			Observe:         w.clientSide,
			Elicitation:     mrtrAnswer(asked),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		mrtrCall(t, c)
		wantAsked(t, asked)
		if n := runs.Load(); n != 2 {
			t.Errorf("the handler ran %d times, want 2", n)
		}
	})

	t.Run("modern request over HTTP, retried by the client", func(t *testing.T) {
		t.Parallel()
		var runs atomic.Int32
		url := serveHTTP(t, mrtrServer(&runs))
		wc := wirecheck.For(t, mcp.Version20260728)
		asked := make(chan *mcp.ElicitParams, 2)
		answer := mrtrAnswer(asked)
		params := map[string]any{
			"_meta": map[string]any{
				mcp.MetaKeyProtocolVersion:    mcp.Version20260728,
				mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
				mcp.MetaKeyClientInfo:         map[string]any{"name": "raw-modern", "version": "1"},
			},
			"name":      "mrtr_greet",
			"arguments": map[string]any{"greeting": "Hello"},
		}
		var id atomic.Int64
		hc := &http.Client{Transport: &http.Transport{}}
		defer hc.CloseIdleConnections()
		post := func(params map[string]any) jsontext.Value {
			t.Helper()
			body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id.Add(1), "method": mcp.MethodToolsCall, "params": params})
			if err != nil {
				t.Fatal(err)
			}
			if err := wc.Check(body); err != nil {
				t.Errorf("request does not conform: %v\n%s", err, body)
			}
			req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, url, strings.NewReader(string(body)))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", mcp.Version20260728)
			req.Header.Set("Mcp-Method", mcp.MethodToolsCall)
			req.Header.Set("Mcp-Name", "mrtr_greet")
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d, %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), data)
			}
			if err := wc.CheckResult(mcp.MethodToolsCall, data); err != nil {
				t.Errorf("answer does not conform: %v\n%s", err, data)
			}
			var m struct {
				Result jsontext.Value `json:"result"`
				Error  jsontext.Value `json:"error"`
			}
			if err := json.Unmarshal(data, &m); err != nil || m.Error != nil {
				t.Fatalf("answer %s (%v)", data, err)
			}
			return m.Result
		}

		// Round 1: input required, nothing asked of the client yet.
		raw := post(params)
		var ir mcp.InputRequiredResult
		if err := json.Unmarshal(raw, &ir); err != nil || ir.ResultType != mcp.ResultInputRequired || ir.RequestState == "" {
			t.Fatalf("round 1 = %s (%v), want input_required with a requestState", raw, err)
		}
		if strings.Contains(ir.RequestState, "greeting") {
			t.Errorf("the requestState %q shows the handler's state: it must be sealed", ir.RequestState)
		}
		// The client answers with the same handler as on a legacy session.
		responses := mcp.InputResponses{}
		for key, r := range ir.InputRequests {
			if r.Method != mcp.MethodElicitationCreate {
				t.Fatalf("input request %q: %s", key, r.Method)
			}
			var p mcp.ElicitParams
			if err := r.DecodeParams(&p); err != nil {
				t.Fatal(err)
			}
			res, err := answer(testCtx(t), &p)
			if err != nil {
				t.Fatal(err)
			}
			if err := responses.Set(key, res); err != nil {
				t.Fatal(err)
			}
		}
		// Round 2: a new id, the same params, the answers and the state
		// byte for byte.
		params["inputResponses"] = responses
		params["requestState"] = ir.RequestState
		raw = post(params)
		var res mcp.CallToolResult
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatal(err)
		}
		if res.ResultType != mcp.ResultComplete || res.IsError || text(&res) != mrtrWant {
			t.Errorf("round 2 = %s, want %q", raw, mrtrWant)
		}
		wantAsked(t, asked)
		if n := runs.Load(); n != 2 {
			t.Errorf("the handler ran %d times, want 2", n)
		}
	})

	t.Run("modern client over HTTP, manual path", func(t *testing.T) {
		t.Parallel()
		var runs atomic.Int32
		url := serveHTTP(t, mrtrServer(&runs))
		asked := make(chan *mcp.ElicitParams, 2)
		answer := mrtrAnswer(asked)
		w := newWire(t, mcp.Version20260728)
		c, err := client.Connect(testCtx(t), streamable.New(url, nil), &client.Options{
			ProtocolVersion: mcp.Version20260728,
			Observe:         w.clientSide,
			Elicitation:     answer,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		params := &mcp.CallToolParams{Name: "mrtr_greet", Arguments: jsontext.Value(`{"greeting":"Hello"}`)}
		res, err := c.CallTool(testCtx(t), params)
		var ire *client.InputRequiredError
		if !errors.As(err, &ire) {
			// The automatic driver (C1–C6) may already have answered.
			if err != nil {
				t.Fatalf("tools/call: %v, want a result or an *InputRequiredError", err)
			}
		} else {
			t.Logf("manual path: %v", ire)
			responses := mcp.InputResponses{}
			for key, r := range ire.Result.InputRequests {
				var p mcp.ElicitParams
				if err := r.DecodeParams(&p); err != nil {
					t.Fatal(err)
				}
				a, err := answer(testCtx(t), &p)
				if err != nil {
					t.Fatal(err)
				}
				if err := responses.Set(key, a); err != nil {
					t.Fatal(err)
				}
			}
			retry := *params
			retry.InputResponses, retry.RequestState = responses, ire.Result.RequestState
			if res, err = c.CallTool(testCtx(t), &retry); err != nil {
				t.Fatalf("retry: %v", err)
			}
		}
		if res.IsError || text(res) != mrtrWant {
			t.Errorf("mrtr_greet = %q (isError %v), want %q", text(res), res.IsError, mrtrWant)
		}
		wantAsked(t, asked)
		if n := runs.Load(); n != 2 {
			t.Errorf("the handler ran %d times, want 2", n)
		}
	})
}
