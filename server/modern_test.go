package server

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// modernPeer is a raw client of a server over memory: it sends
// hand-built modern requests and sees every notification.
type modernPeer struct {
	conn  *jsonrpc.Conn
	notes chan *jsonrpc.Message
}

type noteHandler chan *jsonrpc.Message

func (h noteHandler) HandleRequest(context.Context, *jsonrpc.Message) (any, error) {
	return nil, jsonrpc.ErrMethodNotFound
}
func (h noteHandler) HandleNotification(_ context.Context, n *jsonrpc.Message) { h <- n }

// newModernPeer connects a raw peer; with checked, every message both
// ways is validated against the 2026-07-28 schema (tests that send
// malformed requests on purpose pass false).
func newModernPeer(t *testing.T, s *Server, checked bool) *modernPeer {
	t.Helper()
	a, b := memory.NewPair()
	ss := s.Connect(a)
	var observe func(bool, []byte)
	if checked {
		obs := wirecheck.For(t, mcp.Version20260728).Observe(t)
		observe = func(in bool, msg []byte) {
			if in {
				obs(wirecheck.ServerToClient, msg)
			} else {
				obs(wirecheck.ClientToServer, msg)
			}
		}
	}
	notes := make(chan *jsonrpc.Message, 64)
	c := jsonrpc.NewConn(b, &jsonrpc.ConnOptions{Handler: noteHandler(notes), Observe: observe})
	c.Start()
	t.Cleanup(func() { c.Close(); ss.Close() })
	return &modernPeer{conn: c, notes: notes}
}

func (p *modernPeer) call(t *testing.T, method string, params map[string]any, result any) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return p.conn.Call(ctx, method, params, result)
}

func modernServer() *Server {
	s := New(&Options{Info: mcp.Implementation{Name: "modern", Version: "2"}, Logging: true, CacheTTL: time.Minute, CacheScope: mcp.CachePublic})
	AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *CallToolRequest, in struct {
		Text string `json:"text"`
	}) (string, error) {
		if err := req.Log(ctx, mcp.LevelInfo, "t", "logged"); err != nil {
			return "", err
		}
		return in.Text, nil
	})
	AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		_, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "hi", RequestedSchema: jsontext.Value(`{"type":"object","properties":{}}`)})
		return "", err
	})
	s.AddPrompt(&mcp.Prompt{Name: "p"}, func(ctx context.Context, req *GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "x"}}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: "r"}}}, nil
	})
	return s
}

func wantCode(t *testing.T, err error, code int64) *jsonrpc.Error {
	t.Helper()
	e, ok := jsonrpc.AsError(err)
	if !ok || e.Code != code {
		t.Fatalf("err = %v, want JSON-RPC error %d", err, code)
	}
	return e
}

func TestModernDiscover(t *testing.T) {
	p := newModernPeer(t, modernServer(), true)
	var res mcp.DiscoverResult
	if err := p.call(t, mcp.MethodServerDiscover, map[string]any{"_meta": httpenv.EnvelopeMeta(nil)}, &res); err != nil {
		t.Fatal(err)
	}
	if res.ResultType != mcp.ResultComplete || len(res.SupportedVersions) != 1 || res.SupportedVersions[0] != mcp.Version20260728 {
		t.Errorf("discover = %+v", res)
	}
	if res.Capabilities.Tools == nil || res.Capabilities.Prompts == nil || res.Capabilities.Resources == nil || res.Capabilities.Logging == nil {
		t.Errorf("capabilities = %+v", res.Capabilities)
	}
	if res.TTLMs == nil || *res.TTLMs != 60000 || res.CacheScope != mcp.CachePublic {
		t.Errorf("cache hints = %v %q", res.TTLMs, res.CacheScope)
	}
	info, err := res.Meta.ServerInfo()
	if err != nil || info == nil || info.Name != "modern" {
		t.Errorf("serverInfo = %+v, %v", info, err)
	}
}

func TestModernResults(t *testing.T) {
	p := newModernPeer(t, modernServer(), true)
	meta := httpenv.EnvelopeMeta(nil)
	var tools mcp.ListToolsResult
	if err := p.call(t, mcp.MethodToolsList, map[string]any{"_meta": meta}, &tools); err != nil {
		t.Fatal(err)
	}
	if tools.ResultType != mcp.ResultComplete || tools.TTLMs == nil || tools.CacheScope == "" || len(tools.Tools) != 2 {
		t.Errorf("tools/list = %+v", tools)
	}
	var call mcp.CallToolResult
	if err := p.call(t, mcp.MethodToolsCall, map[string]any{"_meta": meta, "name": "echo", "arguments": map[string]any{"text": "hi"}}, &call); err != nil {
		t.Fatal(err)
	}
	if call.ResultType != mcp.ResultComplete || call.Content[0].(*mcp.TextContent).Text != "hi" {
		t.Errorf("tools/call = %+v", call)
	}
	// No logLevel in the envelope: no log notification (2026 logging).
	select {
	case n := <-p.notes:
		t.Errorf("unexpected notification %s", n.Method)
	default:
	}
	var read mcp.ReadResourceResult
	if err := p.call(t, mcp.MethodResourcesRead, map[string]any{"_meta": meta, "uri": "test://r"}, &read); err != nil {
		t.Fatal(err)
	}
	if read.ResultType != mcp.ResultComplete || read.TTLMs == nil {
		t.Errorf("resources/read = %+v", read)
	}
	// Unknown resource: -32602 with data.uri (SEP-2164), never empty contents.
	err := p.call(t, mcp.MethodResourcesRead, map[string]any{"_meta": meta, "uri": "test://none"}, nil)
	e := wantCode(t, err, mcp.CodeInvalidParams)
	if !strings.Contains(string(e.Data), `"uri":"test://none"`) {
		t.Errorf("data = %s", e.Data)
	}
}

func TestModernLogLevel(t *testing.T) {
	p := newModernPeer(t, modernServer(), true)
	meta := httpenv.EnvelopeMeta(map[string]any{mcp.MetaKeyLogLevel: "info"})
	if err := p.call(t, mcp.MethodToolsCall, map[string]any{"_meta": meta, "name": "echo", "arguments": map[string]any{"text": "x"}}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-p.notes:
		if n.Method != mcp.NotificationMessage {
			t.Errorf("notification %s", n.Method)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no log notification with logLevel info")
	}
	meta[mcp.MetaKeyLogLevel] = "loud"
	raw := newModernPeer(t, modernServer(), false)
	wantCode(t, raw.call(t, mcp.MethodToolsCall, map[string]any{"_meta": meta, "name": "echo", "arguments": map[string]any{"text": "x"}}, nil), mcp.CodeInvalidParams)
}

func TestModernEnvelopeErrors(t *testing.T) {
	p := newModernPeer(t, modernServer(), false)
	noCaps := httpenv.EnvelopeMeta(nil)
	delete(noCaps, mcp.MetaKeyClientCapabilities)
	wantCode(t, p.call(t, mcp.MethodToolsList, map[string]any{"_meta": noCaps}, nil), mcp.CodeInvalidParams)

	badVersion := httpenv.EnvelopeMeta(map[string]any{mcp.MetaKeyProtocolVersion: "1900-01-01"})
	e := wantCode(t, p.call(t, mcp.MethodToolsList, map[string]any{"_meta": badVersion}, nil), mcp.CodeUnsupportedProtocolVersion)
	var data mcp.UnsupportedProtocolVersionData
	if json.Unmarshal(e.Data, &data) != nil || data.Requested != "1900-01-01" || len(data.Supported) == 0 {
		t.Errorf("data = %s", e.Data)
	}
	// A modern-style claim of a legacy revision is unsupported too.
	legacy := httpenv.EnvelopeMeta(map[string]any{mcp.MetaKeyProtocolVersion: mcp.Version20251125})
	wantCode(t, p.call(t, mcp.MethodToolsList, map[string]any{"_meta": legacy}, nil), mcp.CodeUnsupportedProtocolVersion)

	badCaps := httpenv.EnvelopeMeta(map[string]any{mcp.MetaKeyClientCapabilities: "all"})
	wantCode(t, p.call(t, mcp.MethodToolsList, map[string]any{"_meta": badCaps}, nil), mcp.CodeInvalidParams)

	// Methods removed in 2026-07-28 are unknown there.
	for _, m := range []string{mcp.MethodInitialize, mcp.MethodPing, mcp.MethodLoggingSetLevel, mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe, "no/such"} {
		wantCode(t, p.call(t, m, map[string]any{"_meta": httpenv.EnvelopeMeta(nil), "uri": "test://r", "level": "info"}, nil), mcp.CodeMethodNotFound)
	}
}

func TestModernNoServerRequests(t *testing.T) {
	p := newModernPeer(t, modernServer(), true)
	var res mcp.CallToolResult
	if err := p.call(t, mcp.MethodToolsCall, map[string]any{"_meta": httpenv.EnvelopeMeta(nil), "name": "ask"}, &res); err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "input-required") {
		t.Errorf("result = %+v", res)
	}
}

func TestModernListen(t *testing.T) {
	s := modernServer()
	p := newModernPeer(t, s, true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- p.conn.Call(ctx, mcp.MethodSubscriptionsListen, map[string]any{
			"_meta":         httpenv.EnvelopeMeta(nil),
			"notifications": map[string]any{"toolsListChanged": true, "promptsListChanged": false, "resourceSubscriptions": []string{"test://r"}},
		}, nil)
	}()
	next := func() *jsonrpc.Message {
		t.Helper()
		select {
		case n := <-p.notes:
			return n
		case <-time.After(5 * time.Second):
			t.Fatal("no notification")
			return nil
		}
	}
	ack := next()
	if ack.Method != mcp.NotificationSubscriptionsAcknowledged {
		t.Fatalf("first message %s, want the acknowledgement", ack.Method)
	}
	var ackParams mcp.SubscriptionsAcknowledgedParams
	if err := json.Unmarshal(ack.Params, &ackParams); err != nil {
		t.Fatal(err)
	}
	if !ackParams.Notifications.ToolsListChanged || ackParams.Notifications.PromptsListChanged || len(ackParams.Notifications.ResourceSubscriptions) != 1 {
		t.Errorf("acknowledged %+v", ackParams.Notifications)
	}
	subID, ok := ackParams.Meta.SubscriptionID()
	if !ok {
		t.Fatal("ack without subscription id")
	}
	// A prompt change is not asked for; a tool change and an update are.
	s.AddPrompt(&mcp.Prompt{Name: "p2"}, func(ctx context.Context, req *GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, nil })
	s.RemoveTools("ask")
	s.ResourceUpdated("test://r")
	for _, want := range []string{mcp.NotificationToolsListChanged, mcp.NotificationResourcesUpdated} {
		n := next()
		if n.Method != want {
			t.Fatalf("got %s, want %s", n.Method, want)
		}
		var np mcp.NotificationParams
		_ = json.Unmarshal(n.Params, &np)
		if id, ok := np.Meta.SubscriptionID(); !ok || id != subID {
			t.Errorf("%s tagged %v, want %v", n.Method, id, subID)
		}
	}
	cancel() // notifications/cancelled ends the listen; no result is sent
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("listen ended with %v", err)
	}
}
