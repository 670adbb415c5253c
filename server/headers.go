package server

import (
	"fmt"
	"net/textproto"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/mcpheader"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/server/internal/seam"
)

// The prefix of the SEP-2243 headers that mirror tool arguments.
const headerParamPrefix = "Mcp-Param-"

// paramHeader is one x-mcp-header annotation of a tool's input schema,
// found once when the tool is registered: the header Mcp-Param-{Name}
// mirrors the argument at path.
type paramHeader struct {
	name string   // as annotated; header names are case-insensitive
	path []string // property names from the root of the arguments
	kind string   // "string", "integer" or "boolean"
}

// paramHeaders finds the x-mcp-header annotations of an input schema.
// Annotations count only on properties reachable through "properties"
// chains and only on string, integer and boolean properties; names must
// be HTTP tokens, unique regardless of case (SEP-2243). A schema that
// breaks these rules is a registration error.
func paramHeaders(schema jsontext.Value) ([]paramHeader, error) {
	var out []paramHeader
	seen := map[string]bool{}
	var walk func(raw jsontext.Value, path []string) error
	walk = func(raw jsontext.Value, path []string) error {
		var node struct {
			Header     jsontext.Value            `json:"x-mcp-header"`
			Type       jsontext.Value            `json:"type"`
			Properties map[string]jsontext.Value `json:"properties"`
		}
		if raw.Kind() != '{' || json.Unmarshal(raw, &node) != nil {
			return nil
		}
		if node.Header != nil {
			if len(path) == 0 {
				return fmt.Errorf("x-mcp-header on the schema root")
			}
			var name string
			if node.Header.Kind() != '"' || json.Unmarshal(node.Header, &name) != nil {
				return fmt.Errorf("x-mcp-header %s is not a string", node.Header)
			}
			if !mcpheader.IsToken(name) {
				return fmt.Errorf("x-mcp-header %q is not an HTTP token", name)
			}
			key := strings.ToLower(name)
			if seen[key] {
				return fmt.Errorf("x-mcp-header %q is used twice", name)
			}
			seen[key] = true
			var kind string
			_ = json.Unmarshal(node.Type, &kind)
			switch kind {
			case "string", "integer", "boolean":
			default:
				return fmt.Errorf("x-mcp-header %q is on a %q property; only string, integer and boolean are allowed", name, node.Type)
			}
			out = append(out, paramHeader{name: name, path: append([]string(nil), path...), kind: kind})
		}
		for prop, sub := range node.Properties {
			if err := walk(sub, append(path, prop)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(schema, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// checkParamHeaders validates the Mcp-Param-* headers of a tools/call
// against the arguments, for the tool's annotated properties.
func checkParamHeaders(h map[string][]string, annotations []paramHeader, args jsontext.Value) *jsonrpc.Error {
	for _, a := range annotations {
		value, present := lookup(args, a.path)
		hv, hasHeader := h[textproto.CanonicalMIMEHeaderKey(headerParamPrefix+a.name)]
		switch {
		case !present && !hasHeader:
			continue
		case present && !hasHeader:
			return seam.HeaderMismatch("the %s%s header is missing", headerParamPrefix, a.name)
		case !present && hasHeader:
			return seam.HeaderMismatch("the %s%s header has no matching argument", headerParamPrefix, a.name)
		}
		got, ok := mcpheader.Decode(seam.TrimOWS(hv[0]))
		if !ok {
			return seam.HeaderMismatch("the %s%s header has an invalid base64 value", headerParamPrefix, a.name)
		}
		if !sameValue(a.kind, value, got) {
			return seam.HeaderMismatch("%s%s header value '%s' does not match the argument", headerParamPrefix, a.name, got)
		}
	}
	return nil
}

// lookup returns the value at path in a JSON object; null counts as
// absent (the client omits the header for null).
func lookup(obj jsontext.Value, path []string) (jsontext.Value, bool) {
	cur := obj
	for _, p := range path {
		var m map[string]jsontext.Value
		if cur.Kind() != '{' || json.Unmarshal(cur, &m) != nil {
			return nil, false
		}
		v, ok := m[p]
		if !ok {
			return nil, false
		}
		cur = v
	}
	if cur.Kind() == 'n' {
		return nil, false
	}
	return cur, true
}

// sameValue compares an argument with its header text: strings exactly,
// integers numerically, booleans as true/false.
func sameValue(kind string, value jsontext.Value, header string) bool {
	switch kind {
	case "string":
		var s string
		return json.Unmarshal(value, &s) == nil && s == header
	case "integer":
		var n int64
		if json.Unmarshal(value, &n) != nil {
			var f float64
			if json.Unmarshal(value, &f) != nil || f != float64(int64(f)) {
				return false
			}
			n = int64(f)
		}
		h, err := strconv.ParseInt(strings.TrimSpace(header), 10, 64)
		return err == nil && h == n
	case "boolean":
		var b bool
		return json.Unmarshal(value, &b) == nil && strconv.FormatBool(b) == header
	}
	return false
}
