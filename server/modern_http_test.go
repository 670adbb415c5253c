package server

// Tests of the 2026-07-28 ("modern") era over Streamable HTTP: the
// envelope and its errors, the SEP-2243 header checks, result stamping,
// -32021, per-request logging, cancellation by closing the stream,
// subscriptions/listen, and both eras on one endpoint at once. Every
// error is checked for its JSON-RPC code, its HTTP status and the echoed
// request id (an integer id and a string id), and every well-formed
// message against the 2026-07-28 schema (SEP-2575 envelope and discovery,
// SEP-2243 headers, SEP-2549 cache hints, the 2026-07-28 Streamable HTTP
// transport).
//
// This file has the fixture, the helpers (shared with the other
// modern_http_*_test.go files and with modern_stdio_test.go) and the
// envelope tests; the methods 2026-07-28 removed, GET and DELETE, and
// both eras at once are in modern_http_eras_test.go, the headers in
// modern_http_headers_test.go, results, -32021 and logging in
// modern_http_results_test.go, cancellation and subscriptions/listen in
// modern_http_streams_test.go.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// ---------------------------------------------------------------------
// The fixture

// fixture26 is the server of the modern tests, with what its handlers saw.
type fixture26 struct {
	s                      *Server
	modernEcho, legacyEcho atomic.Int64
	gate                   chan struct{}    // closed by a test: the "gate" tool goes on
	blocked                chan struct{}    // the "block" tool is running
	unblocked              chan blockReport // what "block" saw once cancelled
}

// blockReport is what the "block" tool saw after its context ended.
type blockReport struct {
	cause       error // context.Cause of the handler's context
	progressErr error // Request.Progress after the cancellation
	logErr      error // Request.Log after the cancellation
}

type textIn struct {
	Text string `json:"text"`
}

type nameIn struct {
	Name string `json:"name"`
}

type uriIn struct {
	URI string `json:"uri"`
}

type tagIn struct {
	Tag string `json:"tag"`
}

// needIn selects what the "needs" tool requires of the client.
type needIn struct {
	Sampling bool `json:"sampling,omitzero"`
	Form     bool `json:"form,omitzero"`
	URL      bool `json:"url,omitzero"`
	Roots    bool `json:"roots,omitzero"`
	// Elicitation requires an empty elicitation object (form mode).
	Elicitation bool `json:"elicitation,omitzero"`
}

// xhSchema annotates string, integer and boolean arguments, one of them
// nested, with x-mcp-header (SEP-2243).
const xhSchema = `{"type":"object","properties":{` +
	`"region":{"type":"string","x-mcp-header":"Region"},` +
	`"level":{"type":"integer","x-mcp-header":"Level"},` +
	`"dry":{"type":"boolean","x-mcp-header":"Dry-Run"},` +
	`"scope":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},` +
	`"note":{"type":"string"}}}`

func newFixture26(opts *Options) *fixture26 {
	if opts == nil {
		opts = &Options{Info: mcp.Implementation{Name: "fixture26", Version: "1.2.3"}, Instructions: "Try the echo tool.", Logging: true}
	}
	s := New(opts)
	f := &fixture26{s: s, gate: make(chan struct{}), blocked: make(chan struct{}, 8), unblocked: make(chan blockReport, 8)}
	AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text"}, func(ctx context.Context, req *CallToolRequest, in textIn) (string, error) {
		if mcp.IsModern(req.ProtocolVersion()) {
			f.modernEcho.Add(1)
		} else {
			f.legacyEcho.Add(1)
		}
		return in.Text, nil
	})
	AddTool(s, &mcp.Tool{Name: "logs", Description: "Logs at debug and error, with progress"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		if err := req.Progress(ctx, 1, 2, "half"); err != nil {
			return "", err
		}
		if err := req.Log(ctx, mcp.LevelDebug, "fixture", "debug line"); err != nil {
			return "", err
		}
		if err := req.Log(ctx, mcp.LevelError, "fixture", "error line"); err != nil {
			return "", err
		}
		if err := req.Progress(ctx, 2, 2, "done"); err != nil {
			return "", err
		}
		return "logged", nil
	})
	AddTool(s, &mcp.Tool{Name: "gate", Description: "Reports progress, waits for the gate, logs, answers"}, func(ctx context.Context, req *CallToolRequest, in tagIn) (string, error) {
		if err := req.Progress(ctx, 1, 2, "before "+in.Tag); err != nil {
			return "", err
		}
		select {
		case <-f.gate:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if err := req.Log(ctx, mcp.LevelInfo, "gate", "log "+in.Tag); err != nil {
			return "", err
		}
		if err := req.Progress(ctx, 2, 2, "after "+in.Tag); err != nil {
			return "", err
		}
		return "gate " + in.Tag, nil
	})
	AddTool(s, &mcp.Tool{Name: "block", Description: "Blocks until cancelled"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		_ = req.Progress(ctx, 1, 0, "started") // with a token, the answer becomes a stream
		f.blocked <- struct{}{}
		<-ctx.Done()
		rep := blockReport{cause: context.Cause(ctx)}
		rep.progressErr = req.Progress(ctx, 2, 0, "after the cancellation")
		rep.logErr = req.Log(ctx, mcp.LevelError, "fixture", "after the cancellation")
		f.unblocked <- rep
		return "too late", nil
	})
	AddTool(s, &mcp.Tool{Name: "needs", Description: "Requires client capabilities"}, func(ctx context.Context, req *CallToolRequest, in needIn) (string, error) {
		var need mcp.ClientCapabilities
		if in.Sampling {
			need.Sampling = &mcp.SamplingCapability{}
		}
		if in.Form || in.URL || in.Elicitation {
			need.Elicitation = &mcp.ElicitationCapability{}
			if in.Form {
				need.Elicitation.Form = &mcp.FormElicitationCapability{}
			}
			if in.URL {
				need.Elicitation.URL = &struct{}{}
			}
		}
		if in.Roots {
			need.Roots = &mcp.RootsCapability{}
		}
		if err := req.Require(need); err != nil {
			return "", err
		}
		return "served", nil
	})
	AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks the user (legacy sessions only)"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return "", err
		}
		return "answered " + res.Action, nil
	})
	AddTool(s, &mcp.Tool{Name: "boom", Description: "Panics"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		panic("boom")
	})
	AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Registers a tool"}, func(ctx context.Context, req *CallToolRequest, in nameIn) (string, error) {
		AddTool(s, &mcp.Tool{Name: in.Name, Description: "Added at run time"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
			return "dynamic", nil
		})
		return "added", nil
	})
	AddTool(s, &mcp.Tool{Name: "add_prompt", Description: "Registers a prompt"}, func(ctx context.Context, req *CallToolRequest, in nameIn) (string, error) {
		s.AddPrompt(&mcp.Prompt{Name: in.Name}, func(ctx context.Context, req *GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "dynamic"}}}}, nil
		})
		return "added", nil
	})
	AddTool(s, &mcp.Tool{Name: "add_resource", Description: "Registers a resource"}, func(ctx context.Context, req *CallToolRequest, in uriIn) (string, error) {
		s.AddResource(&mcp.Resource{URI: in.URI, Name: "dynamic"}, textResource("dynamic"))
		return "added", nil
	})
	AddTool(s, &mcp.Tool{Name: "touch", Description: "Reports a resource update"}, func(ctx context.Context, req *CallToolRequest, in uriIn) (string, error) {
		s.ResourceUpdated(in.URI)
		return "touched", nil
	})
	s.AddRawTool(&mcp.Tool{Name: "xh", Description: "Mirrors arguments into Mcp-Param-* headers", InputSchema: jsontext.Value(xhSchema)},
		func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "xh ok"}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []mcp.PromptArgument{{Name: "who", Required: true}}}, func(ctx context.Context, req *GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["who"]}}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, textResource("r"))
	s.AddResource(&mcp.Resource{URI: "test://cached", Name: "cached"}, func(ctx context.Context, req *ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		ttl := int64(5)
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: "c"}}, TTLMs: &ttl, CacheScope: mcp.CachePublic}, nil
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://t/{id}", Name: "t"}, func(ctx context.Context, req *ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: "t " + req.Vars["id"]}}}, nil
	})
	s.SetCompletionHandler(func(ctx context.Context, req *CompleteRequest) (*mcp.CompleteResult, error) {
		return &mcp.CompleteResult{Completion: mcp.Completion{Values: []string{"ada", "alan"}}}, nil
	})
	return f
}

func textResource(text string) ResourceHandler {
	return func(ctx context.Context, req *ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: req.Params.URI, Text: text}}}, nil
	}
}

// listenerCount reports the open subscriptions/listen streams of s.
func listenerCount(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.listeners)
}

// ---------------------------------------------------------------------
// Messages (shared with modern_stdio_test.go).

func logLevelOf(t testing.TB, m *httpenv.RPCMsg) string {
	t.Helper()
	var p struct {
		Level string `json:"level"`
		Data  any    `json:"data"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s:%v", p.Level, p.Data)
}

// ---------------------------------------------------------------------
// The HTTP environment.

// modernEnv is the 2026-07-28 view of an httpEnv (httpenv.Modern); legacy
// is the same endpoint checked against 2025-11-25.
type modernEnv struct {
	*httpenv.Modern
	legacy *httpEnv
	srv    *Server
	h      TestHTTPHandler
}

func newModernEnv(t testing.TB, srv *Server, opts *HTTPOptions) *modernEnv {
	t.Helper()
	legacy := newHTTPEnv(t, srv, opts)
	return &modernEnv{Modern: httpenv.NewModern(t, &legacy.Env, legacy.srv.opts.Info.Name), legacy: legacy, srv: legacy.srv, h: legacy.h}
}

// sub returns a view of m whose failures (and 2026 observer) belong to t.
func (m *modernEnv) sub(t testing.TB) *modernEnv {
	return &modernEnv{Modern: m.Modern.Sub(t), legacy: m.legacy.sub(t), srv: m.srv, h: m.h}
}

// ---------------------------------------------------------------------
// 1. The envelope.

func TestModernHTTPEnvelopeErrors(t *testing.T) {
	f := newFixture26(nil)
	m := newModernEnv(t, f.s, nil)
	var discover struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	res := m.Call(m.ID(), mcp.MethodServerDiscover, "", nil)
	if err := json.Unmarshal(res["supportedVersions"], &discover.SupportedVersions); err != nil || len(discover.SupportedVersions) == 0 {
		t.Fatalf("server/discover supportedVersions = %s", res["supportedVersions"])
	}
	echo := map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}
	withMeta := func(meta map[string]any) map[string]any {
		p := map[string]any{"_meta": meta}
		for k, v := range echo {
			p[k] = v
		}
		return p
	}
	cases := []struct {
		name    string
		params  map[string]any // tools/call params; nil: none at all
		version string         // MCP-Protocol-Version; "-" leaves it out
		code    int64
		// wellFormed: the request conforms to the schema (its header may
		// still be wrong).
		wellFormed bool
		requested  string // -32022: data.requested
	}{
		{name: "no _meta", params: echo, version: httpenv.V26, code: mcp.CodeInvalidParams},
		{name: "no params at all", params: nil, version: httpenv.V26, code: mcp.CodeInvalidParams},
		{name: "_meta without protocolVersion", params: withMeta(httpenv.Meta26(map[string]any{mcp.MetaKeyProtocolVersion: nil})), version: httpenv.V26, code: mcp.CodeInvalidParams},
		{name: "_meta without clientCapabilities", params: withMeta(httpenv.Meta26(map[string]any{mcp.MetaKeyClientCapabilities: nil})), version: httpenv.V26, code: mcp.CodeInvalidParams},
		{name: "empty _meta", params: withMeta(map[string]any{}), version: httpenv.V26, code: mcp.CodeInvalidParams},
		{name: "clientCapabilities a string", params: withMeta(httpenv.Meta26(map[string]any{mcp.MetaKeyClientCapabilities: "all"})), version: httpenv.V26, code: mcp.CodeInvalidParams},
		{name: "clientCapabilities an array", params: withMeta(httpenv.Meta26(map[string]any{mcp.MetaKeyClientCapabilities: []any{}})), version: httpenv.V26, code: mcp.CodeInvalidParams},
		{name: "clientCapabilities null", params: withMeta(map[string]any{mcp.MetaKeyProtocolVersion: httpenv.V26, mcp.MetaKeyClientCapabilities: json.RawMessage("null")}), version: httpenv.V26, code: mcp.CodeInvalidParams},
		{name: "protocolVersion a number", params: withMeta(httpenv.Meta26(map[string]any{mcp.MetaKeyProtocolVersion: 20260728})), version: httpenv.V26, code: mcp.CodeInvalidParams},
		{name: "clientInfo a string", params: withMeta(httpenv.Meta26(map[string]any{mcp.MetaKeyClientInfo: "me"})), version: httpenv.V26, code: mcp.CodeInvalidParams},
		{name: "unknown logLevel", params: withMeta(httpenv.Meta26(map[string]any{mcp.MetaKeyLogLevel: "loud"})), version: httpenv.V26, code: mcp.CodeInvalidParams},
		{name: "header names a legacy version", params: withMeta(httpenv.Meta26(nil)), version: mcp.Version20251125, code: mcp.CodeHeaderMismatch, wellFormed: true},
		{name: "header names another version", params: withMeta(httpenv.Meta26(nil)), version: "2026-12-31", code: mcp.CodeHeaderMismatch, wellFormed: true},
		{name: "header missing", params: withMeta(httpenv.Meta26(nil)), version: "-", code: mcp.CodeHeaderMismatch, wellFormed: true},
		// The suite's order: a mismatch is reported even when the body's
		// version is unsupported.
		{name: "mismatch wins over unsupported", params: withMeta(httpenv.Meta26(map[string]any{mcp.MetaKeyProtocolVersion: "v999.0.0"})), version: httpenv.V26, code: mcp.CodeHeaderMismatch, wellFormed: true},
		{name: "header missing, body unsupported", params: withMeta(httpenv.Meta26(map[string]any{mcp.MetaKeyProtocolVersion: "v999.0.0"})), version: "-", code: mcp.CodeHeaderMismatch, wellFormed: true},
		{name: "unsupported version", params: withMeta(httpenv.Meta26(map[string]any{mcp.MetaKeyProtocolVersion: "v999.0.0"})), version: "v999.0.0", code: mcp.CodeUnsupportedProtocolVersion, wellFormed: true, requested: "v999.0.0"},
		{name: "modern-style claim of 2025-11-25", params: withMeta(httpenv.Meta26(map[string]any{mcp.MetaKeyProtocolVersion: mcp.Version20251125})), version: mcp.Version20251125, code: mcp.CodeUnsupportedProtocolVersion, wellFormed: true, requested: mcp.Version20251125},
		{name: "modern-style claim of 1900-01-01", params: withMeta(httpenv.Meta26(map[string]any{mcp.MetaKeyProtocolVersion: "1900-01-01"})), version: "1900-01-01", code: mcp.CodeUnsupportedProtocolVersion, wellFormed: true, requested: "1900-01-01"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := m.sub(t)
			for _, id := range m.IDs() {
				var body string
				if tc.params == nil {
					body = httpenv.RawReq(id, mcp.MethodToolsCall, nil)
				} else {
					body = httpenv.RawReq(id, mcp.MethodToolsCall, tc.params)
				}
				opts := httpenv.H26(mcp.MethodToolsCall, "echo")
				if tc.version == "-" {
					opts = append(opts, httpenv.WithHeader("MCP-Protocol-Version", ""))
				} else {
					opts = append(opts, httpenv.WithHeader("MCP-Protocol-Version", tc.version))
				}
				e := m.WantErr(m.Send(body, tc.wellFormed, opts...), http.StatusBadRequest, tc.code, id)
				if tc.code != mcp.CodeUnsupportedProtocolVersion {
					continue
				}
				var data mcp.UnsupportedProtocolVersionData
				if err := json.Unmarshal(e.Data, &data); err != nil {
					t.Fatalf("-32022 data %s: %v", e.Data, err)
				}
				if data.Requested != tc.requested {
					t.Errorf("data.requested %q, want %q", data.Requested, tc.requested)
				}
				if len(data.Supported) == 0 {
					t.Error("data.supported is empty")
				}
				for _, v := range data.Supported {
					if !slices.Contains(discover.SupportedVersions, v) {
						t.Errorf("data.supported %v is not a subset of server/discover's supportedVersions %v", data.Supported, discover.SupportedVersions)
					}
				}
			}
		})
	}
	t.Run("clientInfo is optional", func(t *testing.T) {
		m := m.sub(t)
		for _, id := range m.IDs() {
			params := withMeta(httpenv.Meta26(map[string]any{mcp.MetaKeyClientInfo: nil}))
			res := m.WantOK(m.Send(httpenv.RawReq(id, mcp.MethodToolsCall, params), true, httpenv.H26(mcp.MethodToolsCall, "echo")...), id)
			if text, isErr := httpenv.ResultText(t, res); text != "x" || isErr {
				t.Errorf("echo answered %q (isError %v)", text, isErr)
			}
		}
	})
	t.Run("extra capabilities are accepted", func(t *testing.T) {
		m := m.sub(t)
		caps := map[string]any{"elicitation": map[string]any{"form": map[string]any{}}, "extensions": map[string]any{"com.example/x": map[string]any{}}}
		params := withMeta(httpenv.Meta26(map[string]any{mcp.MetaKeyClientCapabilities: caps}))
		id := m.ID()
		m.WantOK(m.Send(httpenv.RawReq(id, mcp.MethodToolsCall, params), true, httpenv.H26(mcp.MethodToolsCall, "echo")...), id)
	})
}
