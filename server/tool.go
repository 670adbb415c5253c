package server

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/mcpkit/mcpkit/server/internal/seam"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonschema"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// CallToolRequest is a tools/call request as its handler sees it.
type CallToolRequest struct {
	*Request
	Params *mcp.CallToolParams
}

// ToolHandler answers tools/call for one tool. A returned *jsonrpc.Error
// is sent as a JSON-RPC error; any other error becomes a result with
// isError set and the error's text, which the model can read (SEP-1303).
type ToolHandler func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error)

// TypedToolHandler answers tools/call with arguments decoded into In and
// a result built from Out.
type TypedToolHandler[In, Out any] func(ctx context.Context, req *CallToolRequest, in In) (Out, error)

// toolEntry is a registered tool with what every call needs, computed
// once at registration.
type toolEntry struct {
	tool    mcp.Tool
	input   *jsonschema.Schema // nil: no validation
	headers []paramHeader      // x-mcp-header annotations (SEP-2243)
	handler ToolHandler
	// onDemand: the handler runs in the request and becomes a task by
	// returning ContinueAsTask (TaskOnDemand).
	onDemand bool
}

// emptyObjectSchema is the input schema of a tool without arguments.
var emptyObjectSchema = jsontext.Value(`{"type":"object","additionalProperties":false}`)

// AddRawTool registers a tool with a hand-written input schema (nil means
// the tool takes no arguments). Arguments are validated against the
// schema before h runs. Registering a name again replaces the tool.
// Sessions are told with notifications/tools/list_changed.
//
// A tool without a name, a nil handler, an input schema that is not a
// JSON object or does not compile, an output schema that does not
// compile, an invalid x-mcp-header annotation or an unknown
// execution.taskSupport is an error whose message starts with "server:" and
// names the tool, and nothing is registered. AddRawTool never panics.
//
// A tool whose Execution.TaskSupport is optional or required may run as a
// task: see ContinueAsTask, TaskOnDemand and docs/design/tasks.md.
func (s *Server) AddRawTool(t *mcp.Tool, h ToolHandler, opts ...ToolOption) error {
	return s.noteRegistration(s.addRawTool("AddRawTool", t, h, opts))
}

// addRawTool registers a tool for AddRawTool and AddTool; op names the
// caller in errors.
func (s *Server) addRawTool(op string, t *mcp.Tool, h ToolHandler, opts []ToolOption) error {
	if err := checkTool(op, t); err != nil {
		return err
	}
	tool := *t
	if h == nil {
		return fmt.Errorf("server: %s %q: nil handler", op, tool.Name)
	}
	if len(tool.InputSchema) == 0 {
		tool.InputSchema = emptyObjectSchema
	}
	if tool.InputSchema.Kind() != '{' {
		return fmt.Errorf("server: %s %q: inputSchema must be a JSON object", op, tool.Name)
	}
	input, err := jsonschema.Compile(tool.InputSchema)
	if err != nil {
		return fmt.Errorf("server: %s %q: inputSchema: %w", op, tool.Name, err)
	}
	headers, err := paramHeaders(tool.InputSchema)
	if err != nil {
		return fmt.Errorf("server: %s %q: %w", op, tool.Name, err)
	}
	if len(tool.OutputSchema) > 0 {
		if _, err := jsonschema.Compile(tool.OutputSchema); err != nil {
			return fmt.Errorf("server: %s %q: outputSchema: %w", op, tool.Name, err)
		}
	}
	e := &toolEntry{tool: tool, input: input, headers: headers, handler: h}
	for _, o := range opts {
		if o.apply != nil {
			o.apply(e)
		}
	}
	switch e.taskSupport() {
	case mcp.TaskSupportForbidden, mcp.TaskSupportOptional, mcp.TaskSupportRequired:
	default:
		return fmt.Errorf("server: %s %q: unknown execution.taskSupport %q", op, tool.Name, e.taskSupport())
	}
	s.tools.put(map[string]*toolEntry{tool.Name: e})
	s.announceItems(mcp.NotificationToolsListChanged, tool.Name)
	return nil
}

// checkTool checks what every registration needs before anything else.
func checkTool(op string, t *mcp.Tool) error {
	if t == nil {
		return fmt.Errorf("server: %s: nil tool", op)
	}
	if t.Name == "" {
		return fmt.Errorf("server: %s: the tool needs a name", op)
	}
	return nil
}

// AddTool registers a typed tool. Unless t.InputSchema is set, the input
// schema is inferred from In (see internal/jsonschema for the struct tags
// that refine it: a plain `jsonschema:"…"` tag is the field's
// description, and key=value items add keywords); unless t.OutputSchema
// is set and when Out is a struct or map, the output schema is inferred
// from Out. Arguments are validated before h runs and decoded into In. A
// struct or map result is sent as structuredContent plus its JSON text
// (for clients without structured output); a string result as text; a
// *mcp.CallToolResult as it is. A Go error becomes an isError result.
//
// A successful result of a tool with an output schema (inferred or given)
// is checked against it before it is sent: structuredContent that is
// missing or does not conform is a bug in the handler, answered with a
// JSON-RPC internal error (-32603) and logged at Error level through
// Options.Logger. Raw tools (AddRawTool) are sent as they are.
//
// A schema that cannot be inferred (e.g. a malformed struct tag) or
// compiled, and everything AddRawTool refuses, is an error naming the
// tool and, for a struct tag, the Go field, such as
//
//	server: AddTool "add": input type main.AddIn: field B: jsonschema tag "minimum=x": minimum: want a JSON number, got "x"
//
// Nothing is registered then. AddTool never panics.
func AddTool[In, Out any](s *Server, t *mcp.Tool, h TypedToolHandler[In, Out], opts ...ToolOption) error {
	return s.noteRegistration(addTool(s, t, h, opts))
}

func addTool[In, Out any](s *Server, t *mcp.Tool, h TypedToolHandler[In, Out], opts []ToolOption) error {
	const op = "AddTool"
	if err := checkTool(op, t); err != nil {
		return err
	}
	tool := *t
	if h == nil {
		return fmt.Errorf("server: %s %q: nil handler", op, tool.Name)
	}
	if len(tool.InputSchema) == 0 {
		schema, err := jsonschema.For[In]()
		if err != nil {
			return fmt.Errorf("server: %s %q: input %s", op, tool.Name, inferError(err))
		}
		if schema.Kind() != '{' || !isObjectSchema(schema) {
			return fmt.Errorf("server: %s %q: input type %s: must be a struct or a map", op, tool.Name, reflect.TypeFor[In]())
		}
		tool.InputSchema = schema
	}
	outType := reflect.TypeFor[Out]()
	structured := isStructured(outType)
	implied := false // every Out value conforms to the output schema
	if len(tool.OutputSchema) == 0 && structured {
		schema, err := jsonschema.For[Out]()
		if err != nil {
			return fmt.Errorf("server: %s %q: output %s", op, tool.Name, inferError(err))
		}
		tool.OutputSchema = schema
		implied, _ = jsonschema.Implied(outType) // For succeeded: no error
	}
	if len(tool.OutputSchema) > 0 && !structured && outType != reflect.TypeFor[*mcp.CallToolResult]() {
		// Such a result is sent as text only: every call would fail the
		// output check below.
		return fmt.Errorf("server: %s %q: an outputSchema needs structured results, but %s is not a struct or a map", op, tool.Name, outType)
	}
	var output *jsonschema.Schema
	if len(tool.OutputSchema) > 0 {
		var err error
		if output, err = jsonschema.Compile(tool.OutputSchema); err != nil {
			return fmt.Errorf("server: %s %q: outputSchema: %w", op, tool.Name, err)
		}
	}
	// A result marshaled from an Out value needs no check when the schema
	// was inferred from Out and asks nothing such a value could fail
	// (jsonschema.Implied); a result the handler builds itself (the rest
	// of its work as a task) is checked all the same.
	typedOutput := output
	if implied {
		typedOutput = nil
	}
	return s.addRawTool(op, &tool, func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
		var in In
		args := req.Params.Arguments
		if len(args) == 0 {
			args = jsontext.Value("{}")
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return errorResult(fmt.Sprintf("invalid arguments: %s", seam.ShortErr(err))), nil
		}
		out, err := h(ctx, req, in)
		if aw, ok := asAsync(err); ok && output != nil { // as callTool matches it
			// The rest of the work runs as a task: its result is checked
			// the same way when it comes.
			next := aw.fn
			return nil, &asyncWork{fn: func(ctx context.Context, req *CallToolRequest) (*mcp.CallToolResult, error) {
				res, err := next(ctx, req)
				return s.checkedOutput(ctx, tool.Name, output, res, err)
			}}
		}
		if err != nil {
			return nil, err
		}
		res, err := typedResult(out, structured)
		return s.checkedOutput(ctx, tool.Name, typedOutput, res, err)
	}, opts)
}

// checkedOutput passes a typed tool's result on once it conforms to the
// tool's output schema (output nil: none); a successful result that does
// not is a bug in the handler: -32603, logged at Error level.
func (s *Server) checkedOutput(ctx context.Context, name string, output *jsonschema.Schema, res *mcp.CallToolResult, err error) (*mcp.CallToolResult, error) {
	if err != nil || output == nil || res == nil || res.IsError {
		return res, err
	}
	if err := checkOutput(output, res); err != nil {
		s.log.ErrorContext(ctx, "server: a typed tool's result does not match its output schema", "tool", name, "err", err)
		return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: the result of tool %q does not match its output schema: %v", name, err)
	}
	return res, nil
}

// checkOutput checks a typed tool's successful result against the tool's
// output schema: a tool with an output schema must return conforming
// structuredContent (spec, tools: output schema).
func checkOutput(output *jsonschema.Schema, res *mcp.CallToolResult) error {
	if len(res.StructuredContent) == 0 {
		return errors.New("no structuredContent")
	}
	return output.Validate(res.StructuredContent)
}

// inferError is an inference error without its package prefix: "type T:
// field F: …".
func inferError(err error) string {
	return strings.TrimPrefix(err.Error(), "jsonschema: ")
}

func isObjectSchema(schema jsontext.Value) bool {
	var probe struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(schema, &probe) == nil && probe.Type == "object"
}

var callToolResultType = reflect.TypeFor[*mcp.CallToolResult]()

// isStructured reports whether results of type t go to structuredContent.
func isStructured(t reflect.Type) bool {
	if t == callToolResultType {
		return false
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct || t.Kind() == reflect.Map && t.Key().Kind() == reflect.String
}

func typedResult(out any, structured bool) (*mcp.CallToolResult, error) {
	switch v := out.(type) {
	case *mcp.CallToolResult:
		if v == nil {
			return &mcp.CallToolResult{}, nil
		}
		return v, nil
	case string:
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: v}}}, nil
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encoding the tool result: %w", err)
	}
	// The result, its one content block and the block's slot are one
	// allocation.
	box := &struct {
		res  mcp.CallToolResult
		text mcp.TextContent
		slot [1]mcp.Content
	}{}
	box.text.Text = string(raw)
	box.slot[0] = &box.text
	box.res.Content = box.slot[:]
	if structured {
		box.res.StructuredContent = raw
	}
	return &box.res, nil
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: text}}, IsError: true}
}

// RemoveTools unregisters tools by name and tells sessions when any was
// registered.
func (s *Server) RemoveTools(names ...string) {
	if s.tools.remove(names...) {
		s.announceItems(mcp.NotificationToolsListChanged, names...)
	}
}

func listTools(ctx context.Context, s *Server, req *Request, wp *wireParams) (any, error) {
	entries, next, err := s.tools.page(wp.Cursor, s.pageSize(), keep(s, ctx, req, toolItem))
	if err != nil {
		return nil, err
	}
	res := &mcp.ListToolsResult{Tools: make([]mcp.Tool, len(entries)), NextCursor: next}
	for i, e := range entries {
		res.Tools[i] = e.tool
	}
	return res, nil
}

func callTool(ctx context.Context, s *Server, req *Request, wp *wireParams) (any, error) {
	p := mcp.CallToolParams{Meta: wp.Meta, Name: wp.Name, Arguments: wp.Arguments}
	if p.Arguments.Kind() == 'n' {
		// "arguments": null is absent: go-sdk clients send it for a nil
		// map, and the schema's "no arguments" is what they mean.
		p.Arguments = nil
	}
	if err := decodeMember("task", wp.rareOf().Task, &p.Task); err != nil {
		return nil, err
	}
	req.meta = p.Meta
	e, ok := s.tools.get(p.Name)
	if !ok || !s.visible(ctx, req, toolItem(e)) { // hidden: exactly as unknown
		return nil, jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: unknown tool %q", p.Name)
	}
	if err := s.prepareInput(ctx, req, mrtrCall{method: mcp.MethodToolsCall, target: p.Name, args: p.Arguments}, wp.InputResponses, wp.RequestState); err != nil {
		return nil, err
	}
	if req.header != nil && len(e.headers) > 0 {
		if err := checkParamHeaders(req.header, e.headers, p.Arguments); err != nil {
			return nil, err
		}
	}
	if p.Arguments != nil && p.Arguments.Kind() != '{' {
		return errorResult(`invalid arguments: "arguments" must be an object`), nil
	}
	if e.input != nil {
		args := p.Arguments
		if args == nil {
			args = jsontext.Value("{}")
		}
		if err := e.input.Validate(args); err != nil {
			return errorResult("invalid arguments: " + err.Error()), nil
		}
	}
	asTask, err := req.era().tasks().Eligible(req.version, hasTasksExtension(req), e.tool.Name, e.taskSupport(), &p)
	if err != nil {
		return nil, err
	}
	if asTask && !e.onDemand {
		return s.startTask(ctx, req, &p, e.handler)
	}
	res, err := e.handler(ctx, &CallToolRequest{Request: req, Params: &p})
	if aw, ok := asAsync(err); ok {
		if asTask {
			return s.startTask(ctx, req, &p, aw.fn)
		}
		res, err = aw.fn(ctx, &CallToolRequest{Request: req, Params: &p})
	}
	if err != nil {
		if in, ok := asInput(err); ok {
			return nil, in
		}
		if rpcErr, ok := jsonrpc.AsError(err); ok {
			return nil, rpcErr
		}
		return s.capToolResult(ctx, p.Name, errorResult(err.Error())), nil
	}
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	return s.capToolResult(ctx, p.Name, res), nil
}
