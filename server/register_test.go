package server

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/mcp"
)

// addIn uses the plain-description tag form that go-sdk and mcp-go users
// write, next to the key=value form.
type addIn struct {
	A int `json:"a" jsonschema:"first addend"`
	B int `json:"b" jsonschema:"second addend, may be negative"`
	C int `json:"c,omitzero" jsonschema:"minimum=0,description=a third one"`
}

func TestAddToolPlainDescriptionTag(t *testing.T) {
	s := New(nil)
	err := AddTool(s, &mcp.Tool{Name: "add"}, func(ctx context.Context, req *CallToolRequest, in addIn) (struct {
		Sum int `json:"sum" jsonschema:"the sum"`
	}, error) {
		var out struct {
			Sum int `json:"sum" jsonschema:"the sum"`
		}
		out.Sum = in.A + in.B + in.C
		return out, nil
	})
	if err != nil {
		t.Fatalf("AddTool: %v", err)
	}
	e, ok := s.tools.get("add")
	if !ok {
		t.Fatal("the tool was not registered")
	}
	wantIn := `{"type":"object","properties":{` +
		`"a":{"type":"integer","description":"first addend"},` +
		`"b":{"type":"integer","description":"second addend, may be negative"},` +
		`"c":{"type":"integer","description":"a third one","minimum":0}},` +
		`"required":["a","b"],"additionalProperties":false}`
	if got := string(e.tool.InputSchema); got != wantIn {
		t.Errorf("inputSchema\n got %s\nwant %s", got, wantIn)
	}
	if got := string(e.tool.OutputSchema); !strings.Contains(got, `"sum":{"type":"integer","description":"the sum"}`) {
		t.Errorf("outputSchema %s lacks the description", got)
	}

	p := newModernPeer(t, s, true)
	call := func(args map[string]any) mcp.CallToolResult {
		t.Helper()
		var res mcp.CallToolResult
		if err := p.call(t, mcp.MethodToolsCall, map[string]any{"_meta": httpenv.EnvelopeMeta(nil), "name": "add", "arguments": args}, &res); err != nil {
			t.Fatalf("tools/call: %v", err)
		}
		return res
	}
	if res := call(map[string]any{"a": 1, "b": -3}); res.IsError || string(res.StructuredContent) != `{"sum":-2}` {
		t.Errorf("valid call: %+v (structured %s)", res, res.StructuredContent)
	}
	for _, args := range []map[string]any{
		{"a": 1},                  // b is required
		{"a": "1", "b": 2},        // a is an integer
		{"a": 1, "b": 2, "c": -1}, // c has a minimum
	} {
		if res := call(args); !res.IsError {
			t.Errorf("arguments %v were accepted: %+v", args, res)
		}
	}
}

type badMinimum struct {
	A int `json:"a"`
	B int `json:"b" jsonschema:"minimum=x"`
}

type badNested struct {
	Inner struct {
		Items []struct {
			N string `json:"n" jsonschema:"minLength=2,maxLenght=3"`
		} `json:"items"`
	} `json:"inner"`
}

type badOut struct {
	V int `json:"v" jsonschema:"pattern=a"`
}

func noop[In, Out any](context.Context, *CallToolRequest, In) (Out, error) {
	var out Out
	return out, nil
}

// newLoggedServer returns a server whose Error-level log lines go to buf.
func newLoggedServer(buf *bytes.Buffer) *Server {
	return New(&Options{Logger: slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelError}))})
}

// checkRefused checks a registration error: it starts with prefix,
// mentions each of want, nothing was registered, and nothing was logged
// (the error is the caller's to handle, once).
func checkRefused(t *testing.T, s *Server, log *bytes.Buffer, err error, prefix string, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("registration succeeded, want an error starting with %q", prefix)
	}
	t.Log(err)
	if !strings.HasPrefix(err.Error(), prefix) {
		t.Errorf("error %q does not start with %q", err, prefix)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	if log.Len() != 0 {
		t.Errorf("the failure was logged as well as returned: %q", log.String())
	}
	if n := s.tools.len() + s.prompts.len() + s.resources.len() + s.templates.len(); n != 0 {
		t.Errorf("%d entries registered after a failed registration", n)
	}
	if c := s.Capabilities(); c.Tools != nil || c.Prompts != nil || c.Resources != nil {
		t.Errorf("capabilities after a failed registration: %+v", c)
	}
}

func TestAddToolErrors(t *testing.T) {
	rawOK := func(context.Context, *CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil }
	tests := []struct {
		name   string
		add    func(s *Server) error
		prefix string
		want   []string
	}{
		{"malformed tag", func(s *Server) error {
			return AddTool(s, &mcp.Tool{Name: "add"}, noop[badMinimum, string])
		}, `server: AddTool "add": input type server.badMinimum: field B: jsonschema tag "minimum=x": minimum: `, []string{`want a JSON number, got "x"`}},
		{"malformed nested tag", func(s *Server) error {
			return AddTool(s, &mcp.Tool{Name: "nested"}, noop[badNested, string])
		}, `server: AddTool "nested": input type server.badNested: field Inner.Items[].N: jsonschema tag "minLength=2,maxLenght=3": `, []string{"maxLenght: unknown key"}},
		{"malformed output tag", func(s *Server) error {
			return AddTool(s, &mcp.Tool{Name: "out"}, noop[struct{}, badOut])
		}, `server: AddTool "out": output type server.badOut: field V: jsonschema tag "pattern=a": `, []string{"pattern: does not apply to type integer"}},
		{"duplicate key", func(s *Server) error {
			return AddTool(s, &mcp.Tool{Name: "dup"}, noop[struct {
				A string `json:"a" jsonschema:"title=x,title=y"`
			}, string])
		}, `server: AddTool "dup": input type struct {`, []string{`field A: jsonschema tag "title=x,title=y": duplicate "title"`}},
		{"misspelled key after a description", func(s *Server) error {
			return AddTool(s, &mcp.Tool{Name: "desc"}, noop[struct {
				N int `json:"n" jsonschema:"description=how many,minimun=1"`
			}, string])
		}, `server: AddTool "desc": input type struct {`, []string{`field N: jsonschema tag "description=how many,minimun=1": minimun: unknown key`}},
		{"unsupported input type", func(s *Server) error {
			return AddTool(s, &mcp.Tool{Name: "ch"}, noop[struct {
				C chan int `json:"c"`
			}, string])
		}, `server: AddTool "ch": input type struct {`, []string{"field C: unsupported type chan int"}},
		{"output schema for a text result", func(s *Server) error {
			return AddTool(s, &mcp.Tool{Name: "txt", OutputSchema: jsontext.Value(`{"type":"object"}`)}, noop[struct{}, string])
		}, `server: AddTool "txt": an outputSchema needs structured results, but string is not a struct or a map`, nil},
		{"input not an object", func(s *Server) error {
			return AddTool(s, &mcp.Tool{Name: "int"}, noop[int, string])
		}, `server: AddTool "int": input type int: must be a struct or a map`, nil},
		{"typed: invalid given input schema", func(s *Server) error {
			return AddTool(s, &mcp.Tool{Name: "given", InputSchema: jsontext.Value(`{"type":"object","minimum":"x"}`)}, noop[map[string]any, string])
		}, `server: AddTool "given": inputSchema: `, nil},
		{"typed: missing name", func(s *Server) error {
			return AddTool(s, &mcp.Tool{}, noop[struct{}, string])
		}, `server: AddTool: the tool needs a name`, nil},
		{"typed: nil tool", func(s *Server) error {
			return AddTool(s, nil, noop[struct{}, string])
		}, `server: AddTool: nil tool`, nil},
		{"typed: nil handler", func(s *Server) error {
			return AddTool[struct{}, string](s, &mcp.Tool{Name: "nil"}, nil)
		}, `server: AddTool "nil": nil handler`, nil},
		{"raw: missing name", func(s *Server) error {
			return s.AddRawTool(&mcp.Tool{}, rawOK)
		}, `server: AddRawTool: the tool needs a name`, nil},
		{"raw: nil tool", func(s *Server) error {
			return s.AddRawTool(nil, rawOK)
		}, `server: AddRawTool: nil tool`, nil},
		{"raw: nil handler", func(s *Server) error {
			return s.AddRawTool(&mcp.Tool{Name: "raw"}, nil)
		}, `server: AddRawTool "raw": nil handler`, nil},
		{"raw: input schema not an object", func(s *Server) error {
			return s.AddRawTool(&mcp.Tool{Name: "raw", InputSchema: jsontext.Value(`true`)}, rawOK)
		}, `server: AddRawTool "raw": inputSchema must be a JSON object`, nil},
		{"raw: input schema does not compile", func(s *Server) error {
			return s.AddRawTool(&mcp.Tool{Name: "raw", InputSchema: jsontext.Value(`{"type":"object","properties":{"a":{"type":"strin"}}}`)}, rawOK)
		}, `server: AddRawTool "raw": inputSchema: jsonschema: `, nil},
		{"raw: external reference", func(s *Server) error {
			return s.AddRawTool(&mcp.Tool{Name: "raw", InputSchema: jsontext.Value(`{"type":"object","$ref":"https://example.com/s.json"}`)}, rawOK)
		}, `server: AddRawTool "raw": inputSchema: `, []string{"refused"}},
		{"raw: output schema does not compile", func(s *Server) error {
			return s.AddRawTool(&mcp.Tool{Name: "raw", OutputSchema: jsontext.Value(`{"type":7}`)}, rawOK)
		}, `server: AddRawTool "raw": outputSchema: `, nil},
		{"raw: unknown task support", func(s *Server) error {
			return s.AddRawTool(&mcp.Tool{Name: "raw", Execution: &mcp.ToolExecution{TaskSupport: "sometimes"}}, rawOK)
		}, `server: AddRawTool "raw": unknown execution.taskSupport "sometimes"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			s := newLoggedServer(&log)
			checkRefused(t, s, &log, tt.add(s), tt.prefix, tt.want...)
		})
	}
}

func TestAddPromptAndResourceErrors(t *testing.T) {
	prompt := func(context.Context, *GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, nil }
	resource := func(context.Context, *ReadResourceRequest) (*mcp.ReadResourceResult, error) { return nil, nil }
	tests := []struct {
		name string
		add  func(s *Server) error
		want string
	}{
		{"prompt: missing name", func(s *Server) error { return s.AddPrompt(&mcp.Prompt{}, prompt) }, `server: AddPrompt: the prompt needs a name`},
		{"prompt: nil prompt", func(s *Server) error { return s.AddPrompt(nil, prompt) }, `server: AddPrompt: nil prompt`},
		{"prompt: nil handler", func(s *Server) error { return s.AddPrompt(&mcp.Prompt{Name: "p"}, nil) }, `server: AddPrompt "p": nil handler`},
		{"resource: missing URI", func(s *Server) error { return s.AddResource(&mcp.Resource{Name: "r"}, resource) }, `server: AddResource: the resource needs a URI`},
		{"resource: nil resource", func(s *Server) error { return s.AddResource(nil, resource) }, `server: AddResource: nil resource`},
		{"resource: nil handler", func(s *Server) error { return s.AddResource(&mcp.Resource{URI: "file:///a"}, nil) }, `server: AddResource "file:///a": nil handler`},
		{"template: missing URI template", func(s *Server) error {
			return s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "t"}, resource)
		}, `server: AddResourceTemplate: the template needs a URI template`},
		{"template: nil template", func(s *Server) error { return s.AddResourceTemplate(nil, resource) }, `server: AddResourceTemplate: nil template`},
		{"template: nil handler", func(s *Server) error {
			return s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "file:///{x}"}, nil)
		}, `server: AddResourceTemplate "file:///{x}": nil handler`},
		{"template: does not parse", func(s *Server) error {
			return s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "file:///{x"}, resource)
		}, `server: AddResourceTemplate "file:///{x": `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			s := newLoggedServer(&log)
			checkRefused(t, s, &log, tt.add(s), tt.want)
		})
	}
}

// A failed registration leaves what was registered before in place, and a
// good registration returns nil and logs nothing.
func TestFailedRegistrationKeepsPrevious(t *testing.T) {
	var log bytes.Buffer
	s := newLoggedServer(&log)
	if err := AddTool(s, &mcp.Tool{Name: "add"}, noop[addIn, string]); err != nil {
		t.Fatal(err)
	}
	if log.Len() != 0 {
		t.Errorf("a good registration logged %q", log.String())
	}
	before, _ := s.tools.get("add")
	if err := AddTool(s, &mcp.Tool{Name: "add"}, noop[badMinimum, string]); err == nil {
		t.Fatal("the bad replacement was registered")
	}
	if after, _ := s.tools.get("add"); after != before || s.tools.len() != 1 {
		t.Error("a failed registration replaced the registered tool")
	}
}
