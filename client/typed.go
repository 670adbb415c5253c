package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonschema"
	"github.com/mcpkit/mcpkit/mcp"
)

// The typed call: the client-side pair of server.AddTool[In, Out].

// CallTool calls the tool name with args and decodes its result into Out;
// it is the client's side of server.AddTool[In, Out]:
//
//	sum, _, err := client.CallTool[AddOut](ctx, c, "add", AddIn{A: 2, B: 3})
//
// args is any Go value that encodes to a JSON object: a struct, a map,
// a jsontext.Value holding an object, or nil for no arguments. It is
// encoded with github.com/go-json-experiment/json, so the json struct tags
// of the server's In type work unchanged.
//
// The result is decoded into Out from its structuredContent, which is
// first validated against the tool's outputSchema (spec, tools: clients
// SHOULD validate structured results). The schema is the one the client
// saw in the last tools/list; when the tool is unknown, CallTool lists
// every tool once to learn it (again after notifications/tools/
// list_changed), and a tool still unknown after that (or one without an
// outputSchema) is decoded without validation. When Out is string and the
// result has no structuredContent, its text blocks are joined instead, as
// the server sends a string Out. With any other Out, a result without
// structuredContent is an error.
//
// A result with isError set is a *ToolError carrying its text. Failures
// of the typed layer are errors starting with "client:"; protocol and
// transport errors are those of the CallTool method, which this function
// calls (headers, input requests and tasks work the same). The result is
// returned with every error that follows a result, for its content and
// _meta.
func CallTool[Out any](ctx context.Context, c *Client, name string, args any) (Out, *mcp.CallToolResult, error) {
	var zero Out
	raw, err := encodeArgs(args)
	if err != nil {
		return zero, nil, fmt.Errorf("client: CallTool %q: %w", name, err)
	}
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: raw})
	if err != nil {
		return zero, nil, err
	}
	if res.IsError {
		return zero, res, &ToolError{Tool: name, Text: joinText(res)}
	}
	out, err := decodeResult[Out](ctx, c, name, res)
	return out, res, err
}

// ToolError is a tool's own failure, a result with isError set: the
// message is meant for the model, and the call itself worked.
type ToolError struct {
	Tool string // the tool's name
	Text string // the result's text blocks, joined
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("client: tool %q failed: %s", e.Tool, e.Text)
}

// OutputSchemaError is the error of a typed call whose result's
// structuredContent does not conform to the tool's outputSchema.
type OutputSchemaError struct {
	Tool   string // the tool's name
	Reason string // where and how the content breaks the schema
}

func (e *OutputSchemaError) Error() string {
	return fmt.Sprintf("client: tool %q: structuredContent does not match its outputSchema: %s", e.Tool, e.Reason)
}

// encodeArgs encodes a typed call's arguments: nil is none; anything
// else must encode to a JSON object.
func encodeArgs(args any) (jsontext.Value, error) {
	var raw jsontext.Value
	switch v := args.(type) {
	case nil:
		return nil, nil
	case jsontext.Value:
		if !v.IsValid() {
			return nil, errors.New("the arguments are not valid JSON")
		}
		raw = v
	default:
		if rv := reflect.ValueOf(args); (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Map) && rv.IsNil() {
			return nil, nil
		}
		var err error
		if raw, err = json.Marshal(args); err != nil {
			return nil, fmt.Errorf("encoding the arguments: %w", err)
		}
	}
	if raw.Kind() != '{' {
		return nil, fmt.Errorf("the arguments must encode to a JSON object, not %s", kindName(raw.Kind()))
	}
	return raw, nil
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "invalid JSON"
}

// decodeResult validates a successful result's structured content against
// the tool's output schema and decodes it into Out.
func decodeResult[Out any](ctx context.Context, c *Client, name string, res *mcp.CallToolResult) (Out, error) {
	var out Out
	if p, ok := any(&out).(*string); ok && len(res.StructuredContent) == 0 {
		*p = joinText(res)
		return out, nil
	}
	if len(res.StructuredContent) == 0 {
		return out, fmt.Errorf("client: tool %q returned no structuredContent to decode into %s", name, reflect.TypeFor[Out]())
	}
	schema, err := c.outputSchema(ctx, name)
	if err != nil {
		return out, err
	}
	if schema != nil {
		if err := schema.Validate(res.StructuredContent); err != nil {
			return out, &OutputSchemaError{Tool: name, Reason: err.Error()}
		}
	}
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
		return out, fmt.Errorf("client: tool %q: decoding structuredContent into %s: %w", name, reflect.TypeFor[Out](), err)
	}
	return out, nil
}

// joinText joins the text blocks of a result.
func joinText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, ct := range res.Content {
		if t, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// outputSchema is a listed tool's output schema, compiled on first use.
type outputSchema struct {
	raw    jsontext.Value
	once   sync.Once
	schema *jsonschema.Schema
	err    error
}

func (o *outputSchema) compiled() (*jsonschema.Schema, error) {
	o.once.Do(func() { o.schema, o.err = jsonschema.Compile(o.raw) })
	return o.schema, o.err
}

// noteOutputs records the output schemas of listed tools; all reports a
// listing complete in one page.
func (c *Client) noteOutputs(tools []mcp.Tool, all bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.outputs == nil {
		c.outputs = make(map[string]*outputSchema)
	}
	for _, t := range tools {
		if len(t.OutputSchema) == 0 {
			c.outputs[t.Name] = nil
			continue
		}
		if prev := c.outputs[t.Name]; prev == nil || !bytes.Equal(prev.raw, t.OutputSchema) {
			c.outputs[t.Name] = &outputSchema{raw: t.OutputSchema}
		}
	}
	c.listedAll = c.listedAll || all
}

// forgetOutputs drops the recorded output schemas when the server says
// its tools changed: the next typed call lists them again.
func (c *Client) forgetOutputs() {
	c.mu.Lock()
	c.outputs, c.listedAll = nil, false
	c.mu.Unlock()
}

// outputSchema returns the compiled output schema of the tool name, nil
// when it has none or is unknown after one complete listing.
func (c *Client) outputSchema(ctx context.Context, name string) (*jsonschema.Schema, error) {
	c.mu.Lock()
	o, known := c.outputs[name]
	listed := c.listedAll
	c.mu.Unlock()
	if !known && !listed {
		for _, err := range c.Tools(ctx) {
			if err != nil {
				return nil, fmt.Errorf("client: listing the tools to learn the outputSchema of %q: %w", name, err)
			}
		}
		c.mu.Lock()
		c.listedAll = true
		o = c.outputs[name]
		c.mu.Unlock()
	}
	if o == nil {
		return nil, nil
	}
	s, err := o.compiled()
	if err != nil {
		return nil, fmt.Errorf("client: tool %q: its outputSchema does not compile: %w", name, err)
	}
	return s, nil
}
