package interop

// Other SDKs' clients through the gateway to a legacy-only upstream (the
// reference everything server over stdio), each in both eras: go-sdk,
// mcp-go and the TypeScript SDK (its v2 client, run by the Node of the
// peers folder). Each lists the tools, calls the prefixed echo and checks
// its text, and calls the prefixed elicitation tool: the upstream's
// elicitation/create reaches the client's handler (a real request on
// 2025-11-25, an input-required result it fulfils on 2026-07-28) and its
// answer the upstream. The revision each spoke is read off the wire.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	mgclient "github.com/mark3labs/mcp-go/client"
	mgtransport "github.com/mark3labs/mcp-go/client/transport"
	mgmcp "github.com/mark3labs/mcp-go/mcp"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/gateway"
)

// clientReport is what one SDK's client saw through the gateway.
type clientReport struct {
	ProtocolVersion string   `json:"protocolVersion"`
	Tools           []string `json:"tools"`
	Text            string   `json:"text"`
	IsError         bool     `json:"isError"`
	Elicited        string   `json:"elicited"`
	Asked           []string `json:"asked"`
}

const (
	interopEcho      = "ev_echo"
	interopEchoArgs  = `{"message":"from another SDK"}`
	interopElicit    = "ev_trigger-elicitation-request"
	interopEchoWant  = "Echo: from another SDK"
	interopElicitAsk = "Please provide inputs for the following fields:"
)

func (r *clientReport) check(t *testing.T, tg *testGateway, version string) {
	t.Helper()
	if r.ProtocolVersion != version {
		t.Errorf("negotiated %q, want %s", r.ProtocolVersion, version)
	}
	if seen := tg.versionsSeen(); !slices.Equal(seen, []string{version}) {
		t.Errorf("MCP-Protocol-Version headers on the wire %v, want only %s", seen, version)
	}
	if !slices.Contains(r.Tools, interopEcho) || !slices.Contains(r.Tools, interopElicit) || len(withPrefix(r.Tools, "ev_")) != len(r.Tools) {
		t.Errorf("tools through the gateway: %v", r.Tools)
	}
	if r.IsError || !strings.Contains(r.Text, interopEchoWant) {
		t.Errorf("%s = %q (isError %v), want %q", interopEcho, r.Text, r.IsError, interopEchoWant)
	}
	if !strings.Contains(r.Elicited, "Ada") {
		t.Errorf("%s = %q, want the client's answer (Ada)", interopElicit, r.Elicited)
	}
	if len(r.Asked) != 1 || !strings.HasPrefix(r.Asked[0], interopElicitAsk) {
		t.Errorf("the client's elicitation handler was asked %q, want one %q…", r.Asked, interopElicitAsk)
	}
}

func TestGatewayInteropClients(t *testing.T) {
	t.Parallel()
	tg := startGateway(t, &gateway.Options{Upstreams: []gateway.Upstream{everythingUpstream(t, "everything", "ev")}})
	tg.requireReady(t)
	if h := tg.Health()[0]; h.Era != "legacy" {
		t.Fatalf("the everything server is not taken for a legacy-only upstream: %+v", h)
	}
	// One client at a time: the upstream's requests are attributed to the
	// one call in flight.
	for _, e := range clientEras {
		t.Run("go-sdk/"+e.name, func(t *testing.T) {
			tg.versionsSeen()
			goSDKThroughGateway(t, tg.URL, e.version).check(t, tg, e.version)
		})
		t.Run("mcp-go/"+e.name, func(t *testing.T) {
			tg.versionsSeen()
			mcpGoThroughGateway(t, tg.URL, e.version).check(t, tg, e.version)
		})
		t.Run("typescript/"+e.name, func(t *testing.T) {
			tg.versionsSeen()
			typeScriptThroughGateway(t, tg.URL, e.version).check(t, tg, e.version)
		})
	}
}

func goSDKThroughGateway(t *testing.T, url, version string) *clientReport {
	ctx := testCtx(t)
	var mu sync.Mutex
	r := &clientReport{}
	c := gomcp.NewClient(&gomcp.Implementation{Name: "interop-gosdk", Version: "1"}, &gomcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
			mu.Lock()
			r.Asked = append(r.Asked, req.Params.Message)
			mu.Unlock()
			return &gomcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	cs, err := c.Connect(ctx, &gomcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &gomcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("go-sdk Connect: %v", err)
	}
	defer cs.Close()
	r.ProtocolVersion = cs.InitializeResult().ProtocolVersion
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("go-sdk tools/list: %v", err)
		}
		r.Tools = append(r.Tools, tool.Name)
	}
	text := func(res *gomcp.CallToolResult) string {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*gomcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(interopEchoArgs), &args); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: interopEcho, Arguments: args})
	if err != nil {
		t.Fatalf("go-sdk %s: %v", interopEcho, err)
	}
	r.Text, r.IsError = text(res), res.IsError
	res, err = cs.CallTool(ctx, &gomcp.CallToolParams{Name: interopElicit, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("go-sdk %s: %v", interopElicit, err)
	}
	r.Elicited = text(res)
	mu.Lock()
	defer mu.Unlock()
	return r
}

// mcpGoElicit answers mcp-go's elicitation requests.
type mcpGoElicit struct {
	mu    sync.Mutex
	asked []string
}

func (e *mcpGoElicit) Elicit(_ context.Context, req mgmcp.ElicitationRequest) (*mgmcp.ElicitationResult, error) {
	e.mu.Lock()
	e.asked = append(e.asked, req.Params.Message)
	e.mu.Unlock()
	return &mgmcp.ElicitationResult{ElicitationResponse: mgmcp.ElicitationResponse{
		Action: mgmcp.ElicitationResponseActionAccept, Content: map[string]any{"name": "Ada"}}}, nil
}

func mcpGoThroughGateway(t *testing.T, url, version string) *clientReport {
	ctx := testCtx(t)
	tr, err := mgtransport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	el := &mcpGoElicit{}
	opts := []mgclient.ClientOption{mgclient.WithElicitationHandler(el)}
	if version != "2026-07-28" {
		//lint:ignore SA1019 the legacy (initialize) era is what this test checks
		opts = append(opts, mgclient.WithLegacyProtocolOnly())
	}
	c := mgclient.NewClient(tr, opts...)
	if err := c.Start(ctx); err != nil {
		t.Fatalf("mcp-go Start: %v", err)
	}
	defer c.Close()
	init := mgmcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mgmcp.Implementation{Name: "interop-mcpgo", Version: "1"}
	ir, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatalf("mcp-go Initialize: %v", err)
	}
	r := &clientReport{ProtocolVersion: ir.ProtocolVersion}
	var lr mgmcp.ListToolsRequest
	for {
		page, err := c.ListToolsByPage(ctx, lr)
		if err != nil {
			t.Fatalf("mcp-go tools/list: %v", err)
		}
		for _, tool := range page.Tools {
			r.Tools = append(r.Tools, tool.Name)
		}
		if page.NextCursor == "" {
			break
		}
		lr.Params.Cursor = page.NextCursor
	}
	text := func(res *mgmcp.CallToolResult) string {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(mgmcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	call := mgmcp.CallToolRequest{}
	call.Params.Name = interopEcho
	call.Params.Arguments = json.RawMessage(interopEchoArgs)
	res, err := c.CallTool(ctx, call)
	if err != nil {
		t.Fatalf("mcp-go %s: %v", interopEcho, err)
	}
	r.Text, r.IsError = text(res), res.IsError
	call = mgmcp.CallToolRequest{}
	call.Params.Name = interopElicit
	call.Params.Arguments = map[string]any{}
	if res, err = c.CallTool(ctx, call); err != nil {
		t.Fatalf("mcp-go %s: %v", interopElicit, err)
	}
	r.Elicited = text(res)
	el.mu.Lock()
	r.Asked = el.asked
	el.mu.Unlock()
	return r
}

func typeScriptThroughGateway(t *testing.T, url, version string) *clientReport {
	dir := peers(t)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "client", "package.json")); err != nil {
		t.Fatalf("MCPKIT_PEERS_DIR=%s lacks the TypeScript SDK's client (run interop/peers/install.sh again): %v", dir, err)
	}
	mode := version
	if version != "2026-07-28" {
		mode = "legacy" // the v2 client's plain 2025 connect: initialize at its latest revision
	}
	cmd := exec.CommandContext(testCtx(t), filepath.Join(dir, "node"), filepath.Join("testdata", "tsclient.mjs"), dir, url, mode, interopEcho, interopEchoArgs, interopElicit)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the TypeScript client: %v\n%s", err, stderr.String())
	}
	r := &clientReport{}
	if err := json.Unmarshal(out, r); err != nil {
		t.Fatalf("the TypeScript client's report %q: %v", out, err)
	}
	return r
}
