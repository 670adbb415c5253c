package client_test

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
)

// writeTap records every message the client writes, whole.
type writeTap struct {
	transport.Conn
	mu  sync.Mutex
	out []transport.Message
}

func (w *writeTap) Write(ctx context.Context, msg transport.Message) error {
	msg.Data = bytes.Clone(msg.Data)
	w.mu.Lock()
	w.out = append(w.out, msg)
	w.mu.Unlock()
	return w.Conn.Write(ctx, msg)
}

// last returns the last message written with method.
func (w *writeTap) last(t *testing.T, method string) transport.Message {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.out) - 1; i >= 0; i-- {
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(w.out[i].Data, &m, json.RejectUnknownMembers(false)) == nil && m.Method == method {
			return w.out[i]
		}
	}
	t.Fatalf("no %s written", method)
	return transport.Message{}
}

// metaKeys returns the member names of params._meta, in wire order.
func metaKeys(t *testing.T, data []byte) []string {
	t.Helper()
	var m struct {
		Params struct {
			Meta jsontext.Value `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(data, &m, json.RejectUnknownMembers(false)); err != nil {
		t.Fatal(err)
	}
	dec := jsontext.NewDecoder(bytes.NewReader(m.Params.Meta))
	if _, err := dec.ReadToken(); err != nil {
		t.Fatalf("_meta %s: %v", m.Params.Meta, err)
	}
	var keys []string
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.String())
		if err := dec.SkipValue(); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// TestEnvelopeKeyOrder: the envelope's keys come first in a fixed order,
// then the caller's keys sorted, on every request (twenty calls would
// show a map's random order), and the transport is told the request's
// revision and Mcp-Name, which match what is on the wire.
func TestEnvelopeKeyOrder(t *testing.T) {
	tr, _ := startFake(t, modernServer)
	tap := &writeTap{Conn: tr}
	c := connect(t, tap, &client.Options{Info: mcp.Implementation{Name: "order", Version: "1"}, Observe: modernWire(t)})
	ctx := testCtx(t)
	if err := c.SetLoggingLevel(ctx, mcp.LoggingLevel("info")); err != nil {
		t.Fatal(err)
	}
	want := []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientCapabilities, mcp.MetaKeyClientInfo, mcp.MetaKeyLogLevel, "com.example/a", "com.example/z"}
	callerMeta := mcp.Meta{"com.example/z": 1, "com.example/a": "x", mcp.MetaKeyProtocolVersion: "1999-01-01"}
	for i := range 20 {
		p := &mcp.CallToolParams{Meta: callerMeta, Name: "t", Arguments: jsontext.Value(`{"n":1}`)}
		if _, err := c.CallTool(ctx, p); err != nil {
			t.Fatal(err)
		}
		if len(p.Meta) != 3 || p.Meta[mcp.MetaKeyProtocolVersion] != "1999-01-01" {
			t.Fatalf("the caller's params changed: %v", p.Meta)
		}
		msg := tap.last(t, mcp.MethodToolsCall)
		if got := metaKeys(t, msg.Data); !equal(got, want) {
			t.Fatalf("call %d: _meta keys %q, want %q", i, got, want)
		}
		if !bytes.Contains(msg.Data, []byte(`"io.modelcontextprotocol/protocolVersion":"2026-07-28"`)) {
			t.Fatalf("the envelope's version is not the client's: %s", msg.Data)
		}
		if !bytes.Contains(msg.Data, []byte(`"id":`+msg.Modern.ID.String()+`,`)) {
			t.Fatalf("transport told id %v of %s", msg.Modern.ID, msg.Data)
		}
		if msg.Modern != (transport.Modern{Version: mcp.Version20260728, Name: "t", HasName: true, ID: msg.Modern.ID, Method: mcp.MethodToolsCall}) {
			t.Fatalf("transport told %+v", msg.Modern)
		}
	}
	if _, err := c.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if m := tap.last(t, mcp.MethodToolsList).Modern; m != (transport.Modern{Version: mcp.Version20260728, ID: m.ID, Method: mcp.MethodToolsList}) || !m.ID.IsValid() {
		t.Fatalf("tools/list: transport told %+v", m)
	}
	if m := tap.last(t, mcp.MethodServerDiscover).Modern; m != (transport.Modern{Version: mcp.Version20260728, ID: m.ID, Method: mcp.MethodServerDiscover}) || !m.ID.IsValid() {
		t.Fatalf("server/discover: transport told %+v", m)
	}
}

// TestEnvelopeWithInterceptors: with an interceptor the envelope is the
// map it sees in params._meta, and the transport is told nothing (an
// interceptor may change the request): it reads the request itself.
func TestEnvelopeWithInterceptors(t *testing.T) {
	tr, _ := startFake(t, modernServer)
	tap := &writeTap{Conn: tr}
	var seen []string
	var mu sync.Mutex
	ic := func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, call *intercept.Call) (any, error) {
			if call.Method == mcp.MethodToolsCall {
				p, err := call.ParamsWithMeta()
				if err == nil {
					var v struct {
						Meta struct {
							Version string `json:"io.modelcontextprotocol/protocolVersion"`
						} `json:"_meta"`
					}
					b, _ := json.Marshal(p)
					_ = json.Unmarshal(b, &v, json.RejectUnknownMembers(false))
					mu.Lock()
					seen = append(seen, v.Meta.Version)
					mu.Unlock()
				}
			}
			return next(ctx, call)
		}
	}
	c := connect(t, tap, &client.Options{Interceptors: []intercept.Interceptor{ic}, Observe: modernWire(t)})
	if _, err := c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != mcp.Version20260728 {
		t.Fatalf("the interceptor saw protocol versions %q", seen)
	}
	msg := tap.last(t, mcp.MethodToolsCall)
	// jsonrpc.Conn names every request it encodes (ID, Method); the
	// envelope, which interceptors may change, is not claimed.
	if msg.Modern != (transport.Modern{ID: msg.Modern.ID, Method: mcp.MethodToolsCall}) || !msg.Modern.ID.IsValid() {
		t.Fatalf("transport told %+v with interceptors", msg.Modern)
	}
	if keys := metaKeys(t, msg.Data); len(keys) != 3 {
		t.Fatalf("_meta keys %q", keys)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestWithCapabilitiesOverridesTheEnvelope(t *testing.T) {
	s := server.New(nil)
	seen := make(chan mcp.ClientCapabilities, 4)
	if err := s.AddRawTool(&mcp.Tool{Name: "caps"}, func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		seen <- req.ClientCapabilities()
		return &mcp.CallToolResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	p := mcptest.NewPair(t, s, &mcptest.Options{Client: &client.Options{
		ElicitHandler: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) { return nil, nil },
	}})
	if _, err := p.Client.CallTool(p.Context(), &mcp.CallToolParams{Name: "caps"}); err != nil {
		t.Fatal(err)
	}
	if c := <-seen; c.Elicitation == nil || c.Sampling != nil {
		t.Fatalf("own capabilities = %+v", c)
	}
	ctx := client.WithCapabilities(p.Context(), mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}, Roots: &mcp.RootsCapability{ListChanged: true}})
	if _, err := p.Client.CallTool(ctx, &mcp.CallToolParams{Name: "caps"}); err != nil {
		t.Fatal(err)
	}
	if c := <-seen; c.Elicitation != nil || c.Sampling == nil || c.Roots == nil {
		t.Fatalf("overridden capabilities = %+v", c)
	}
}
