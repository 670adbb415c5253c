package client

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/mcpheader"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// The SEP-2243 x-mcp-header annotations of tool input schemas: a property
// annotated "x-mcp-header": "Region" is mirrored, on 2026-07-28 HTTP
// requests, into the header Mcp-Param-Region of each tools/call. The
// client finds the annotations when it lists tools (it keeps the schema
// raw: it never rewrites it, and never fetches a $ref), drops tools whose
// annotations break the rules, and passes the headers with each
// tools/call as data (jsonrpc.CallOptions.Header, which the transport gets
// in transport.Message.Header); transports without headers ignore them.

// ErrInvalidTool is returned by CallTool for a tool the client dropped
// from its view because the x-mcp-header annotations of its input schema
// are invalid (SEP-2243): its arguments could not be mirrored correctly.
var ErrInvalidTool = errors.New("client: the tool has invalid x-mcp-header annotations and was dropped from the client's view")

// headerParamPrefix starts the header that mirrors an annotated argument.
const headerParamPrefix = "Mcp-Param-"

// maxSchemaDepth bounds the walk of a schema; deeper subschemas are not
// searched for annotations.
const maxSchemaDepth = 64

// paramHeader is one valid annotation: Mcp-Param-{name} mirrors the
// argument at path, of JSON Schema type kind (string, integer, boolean).
type paramHeader struct {
	name string
	path []string
	kind string
}

// toolHeaders is what the client knows of a listed tool's annotations.
type toolHeaders struct {
	headers []paramHeader
	invalid error // non-nil: the tool was dropped
}

// subschemaKeywords are the JSON Schema keywords whose value is a schema,
// an array of schemas or an object of schemas, other than "properties".
// An annotation found through them is not reachable purely via
// "properties" chains, which SEP-2243 requires.
var subschemaKeywords = map[string]byte{
	"items": '?', "prefixItems": '[', "additionalItems": '{', "contains": '{',
	"additionalProperties": '{', "patternProperties": 'm', "propertyNames": '{',
	"unevaluatedItems": '{', "unevaluatedProperties": '{', "dependentSchemas": 'm',
	"dependencies": 'm', "allOf": '[', "anyOf": '[', "oneOf": '[', "not": '{',
	"if": '{', "then": '{', "else": '{', "$defs": 'm', "definitions": 'm',
}

// mayAnnotate reports whether a schema can hold an x-mcp-header
// annotation: its bytes spell the keyword, or a \u escape might (a
// member name may be written with escapes). Without either, listing a
// tool needs no walk of its schema.
func mayAnnotate(schema jsontext.Value) bool {
	return bytes.Contains(schema, []byte("x-mcp-header")) || bytes.Contains(schema, []byte(`\u`))
}

// paramHeaders validates the x-mcp-header annotations of an input schema
// and returns them (SEP-2243): each must be a non-empty RFC 9110 token,
// unique regardless of case, on a string, integer or boolean property
// reachable from the root through "properties" alone.
func paramHeaders(schema jsontext.Value) ([]paramHeader, error) {
	if !mayAnnotate(schema) {
		return nil, nil // the usual case: nothing to walk
	}
	w := headerWalk{seen: map[string]string{}}
	if err := w.walk(schema, nil, true, 0); err != nil {
		return nil, err
	}
	return w.out, nil
}

// headerWalk collects the x-mcp-header annotations of one schema.
type headerWalk struct {
	out  []paramHeader
	seen map[string]string // lower-case name → name as written
}

// walk visits the schema raw at path; viaProperties: every step from the
// root was a "properties" member.
func (w *headerWalk) walk(raw jsontext.Value, path []string, viaProperties bool, depth int) error {
	if raw.Kind() != '{' || depth > maxSchemaDepth {
		return nil
	}
	var node map[string]jsontext.Value
	if json.Unmarshal(raw, &node) != nil {
		return nil
	}
	if h, ok := node["x-mcp-header"]; ok {
		if err := w.annotation(node, h, path, viaProperties); err != nil {
			return err
		}
	}
	for kw, v := range node {
		if err := w.subschemas(kw, v, path, viaProperties, depth); err != nil {
			return err
		}
	}
	return nil
}

// subschemas walks the subschemas keyword kw of a node at path holds.
func (w *headerWalk) subschemas(kw string, v jsontext.Value, path []string, viaProperties bool, depth int) error {
	switch shape := subschemaKeywords[kw]; {
	case kw == "properties":
		var props map[string]jsontext.Value
		if v.Kind() == '{' && json.Unmarshal(v, &props) == nil {
			for name, sub := range props {
				if err := w.walk(sub, append(path[:len(path):len(path)], name), viaProperties, depth+1); err != nil {
					return err
				}
			}
		}
	case shape == 'm' || shape == '[' || (shape == '?' && v.Kind() == '['):
		subs := map[string]jsontext.Value{}
		if v.Kind() == '[' {
			var list []jsontext.Value
			_ = json.Unmarshal(v, &list)
			for i, sub := range list {
				subs[strconv.Itoa(i)] = sub
			}
		} else {
			_ = json.Unmarshal(v, &subs)
		}
		for key, sub := range subs {
			if err := w.walk(sub, append(path[:len(path):len(path)], kw, key), false, depth+1); err != nil {
				return err
			}
		}
	case shape != 0:
		return w.walk(v, append(path[:len(path):len(path)], kw), false, depth+1)
	}
	return nil
}

// annotation checks the annotation h of node at path and keeps it.
func (w *headerWalk) annotation(node map[string]jsontext.Value, h jsontext.Value, path []string, viaProperties bool) error {
	var name string
	if h.Kind() != '"' || json.Unmarshal(h, &name) != nil {
		return fmt.Errorf("x-mcp-header %s is not a string", h)
	}
	where := "/" + strings.Join(path, "/")
	switch {
	case len(path) == 0:
		return fmt.Errorf("x-mcp-header %q on the schema root", name)
	case !viaProperties:
		return fmt.Errorf("x-mcp-header %q at %s is not reachable through properties alone", name, where)
	case name == "":
		return fmt.Errorf("empty x-mcp-header at %s", where)
	case !mcpheader.IsToken(name):
		return fmt.Errorf("x-mcp-header %q at %s is not an HTTP token", name, where)
	}
	key := strings.ToLower(name)
	if other, dup := w.seen[key]; dup {
		return fmt.Errorf("x-mcp-header %q at %s duplicates %q (names are case-insensitive)", name, where, other)
	}
	w.seen[key] = name
	var kind string
	_ = json.Unmarshal(node["type"], &kind)
	switch kind {
	case "string", "integer", "boolean":
	default:
		t := string(node["type"])
		if t == "" {
			t = "no type"
		}
		return fmt.Errorf("x-mcp-header %q at %s is on a property of type %s; only string, integer and boolean are allowed", name, where, t)
	}
	w.out = append(w.out, paramHeader{name: name, path: append([]string(nil), path...), kind: kind})
	return nil
}

// noteTools validates the annotations of listed tools, records them for
// CallTool, and returns the tools whose annotations are valid; the others
// are dropped, with a warning the first time.
func (c *Client) noteTools(tools []mcp.Tool) []mcp.Tool {
	kept := make([]mcp.Tool, 0, len(tools))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tools == nil {
		c.tools = make(map[string]toolHeaders)
	}
	for _, t := range tools {
		hs, err := paramHeaders(t.InputSchema)
		prev, known := c.tools[t.Name]
		c.tools[t.Name] = toolHeaders{headers: hs, invalid: err}
		if err != nil {
			if !known || prev.invalid == nil || prev.invalid.Error() != err.Error() {
				c.log.Warn("client: dropping a tool with invalid x-mcp-header annotations (SEP-2243)", "tool", t.Name, "err", err)
			}
			continue
		}
		kept = append(kept, t)
	}
	return kept
}

// callHeaders returns the Mcp-Param-* headers of a modern request with
// params: for a tools/call (its params, or a retry's), those of the tool
// with the call's arguments, as the tool's listed schema annotates them;
// for anything else, none. A tool not listed yet gets none; a tool
// dropped for invalid annotations is ErrInvalidTool.
func (c *Client) callHeaders(method string, params any) ([]transport.Header, error) {
	if method != mcp.MethodToolsCall {
		return nil, nil
	}
	if r, ok := params.(*retryParams); ok {
		params = r.base
	}
	p, ok := params.(*mcp.CallToolParams)
	if !ok {
		return nil, nil
	}
	c.mu.Lock()
	th, ok := c.tools[p.Name]
	c.mu.Unlock()
	if !ok {
		return nil, nil
	}
	if th.invalid != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidTool, p.Name, th.invalid)
	}
	var hs []transport.Header
	for _, h := range th.headers {
		v, ok := lookupArg(p.Arguments, h.path)
		if !ok {
			continue
		}
		if text, ok := headerText(v); ok {
			hs = append(hs, transport.Header{Name: headerParamPrefix + h.name, Value: text})
		}
	}
	return hs, nil
}

// lookupArg returns the value at path in an arguments object; absent and
// null are not found (their header is omitted).
func lookupArg(args jsontext.Value, path []string) (jsontext.Value, bool) {
	cur := args
	for _, p := range path {
		if cur.Kind() != '{' {
			return nil, false
		}
		var m map[string]jsontext.Value
		if json.Unmarshal(cur, &m) != nil {
			return nil, false
		}
		v, ok := m[p]
		if !ok {
			return nil, false
		}
		cur = v
	}
	return cur, cur.Kind() != 'n'
}

// maxSafeInteger is 2^53-1, the largest integer a header mirrors exactly.
const maxSafeInteger = 1<<53 - 1

// headerText returns the text of an argument for its header: a string as
// is (the transport encodes it when it is not plain visible ASCII), an
// integer in decimal, a boolean as true or false. Other values have no
// header.
func headerText(v jsontext.Value) (string, bool) {
	switch v.Kind() {
	case '"':
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "", false
		}
		return s, true
	case 't':
		return "true", true
	case 'f':
		return "false", true
	case '0':
		lit := string(v)
		if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
			return strconv.FormatInt(n, 10), true
		}
		f, err := strconv.ParseFloat(lit, 64)
		if err == nil && f == math.Trunc(f) && math.Abs(f) <= maxSafeInteger {
			return strconv.FormatInt(int64(f), 10), true
		}
		return lit, true
	}
	return "", false
}
