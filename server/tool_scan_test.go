package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonschema"
	"github.com/mcpkit/mcpkit/mcp"
)

type scanIn struct {
	S string  `json:"s" jsonschema:"description=a string"`
	B bool    `json:"b,omitzero"`
	F float64 `json:"f"`
	I int     `json:"i,omitzero"`
}

// TestTypedToolScanShortcut checks that a typed tool whose inferred
// schema is scannable (validated by a token scan) answers every input
// exactly as the same tool validated by the full validator.
func TestTypedToolScanShortcut(t *testing.T) {
	inferred, err := jsonschema.For[scanIn]()
	if err != nil {
		t.Fatal(err)
	}
	// The same constraints plus a keyword that asserts nothing, so that the
	// schema is not scannable and the full validator runs.
	full := jsontext.Value(strings.Replace(string(inferred), `{`, `{"minProperties":0,`, 1))
	h := func(_ context.Context, _ *CallToolRequest, in scanIn) (scanIn, error) { return in, nil }
	s := New(&Options{Info: mcp.Implementation{Name: "t", Version: "1"}})
	AddTool(s, &mcp.Tool{Name: "fast"}, h)
	AddTool(s, &mcp.Tool{Name: "full", InputSchema: full}, h)
	if e, _ := s.tools.get("fast"); !e.input.Scannable() {
		t.Fatalf("inferred schema %s is not scannable", inferred)
	}
	if e, _ := s.tools.get("full"); e.input.Scannable() {
		t.Fatal("the control schema is scannable")
	}
	p := newModernPeer(t, s, false)
	meta := httpenv.EnvelopeMeta(nil)
	var valid, invalid int
	for _, args := range []string{
		`{"s":"a","f":1}`, `{"s":"a","f":1.5,"b":true,"i":-3}`, `{"s":"\u00e9","f":0,"i":1e2}`, `{"s":"a","f":1,"i":2.0}`,
		`{}`, `{"s":"a"}`, `{"f":1}`, `{"s":1,"f":1}`, `{"s":null,"f":1}`, `{"s":"a","f":"1"}`, `{"s":"a","f":1,"b":"true"}`,
		`{"s":"a","f":1,"i":1.5}`, `{"s":"a","f":1,"x":0}`, `{"s":"a","f":1,"y":0,"x":{}}`, `{"s":["a"],"f":{}}`,
		`{"s":"a","f":1,"i":null}`, `{"s":"a","f":1,"i":1e400}`,
	} {
		var got [2]string
		for i, name := range []string{"fast", "full"} {
			var res mcp.CallToolResult
			err := p.call(t, mcp.MethodToolsCall, map[string]any{"_meta": meta, "name": name, "arguments": jsontext.Value(args)}, &res)
			b, _ := json.Marshal(res.Content)
			got[i] = fmt.Sprintf("err=%v isError=%v content=%s structured=%s", err, res.IsError, b, res.StructuredContent)
			if i == 0 {
				if res.IsError {
					invalid++
					if err == nil && !strings.HasPrefix(res.Content[0].(*mcp.TextContent).Text, "invalid arguments: ") {
						t.Errorf("%s: %s", args, got[0])
					}
				} else if err == nil {
					valid++
				}
			}
		}
		if got[0] != got[1] {
			t.Errorf("arguments %s:\nshortcut  %s\nvalidator %s", args, got[0], got[1])
		}
	}
	if valid != 2 || invalid != 15 { // 1e2 and 2.0 pass the schema but not the decode into int, either way
		t.Errorf("%d valid and %d invalid inputs, want 2 and 15", valid, invalid)
	}
}
