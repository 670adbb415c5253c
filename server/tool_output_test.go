package server

import (
	"context"
	"strings"
	"testing"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestTypedOutputChecked: a typed tool's result is checked against its
// output schema wherever a value of its type could fail it (a bound from
// a jsonschema tag, a nil pointer, a schema the tool gave itself), and
// passes unchecked where the inferred schema asks nothing more than the
// type (jsonschema.Implied).
func TestTypedOutputChecked(t *testing.T) {
	type plain struct {
		N int `json:"n"`
	}
	type bounded struct {
		N int `json:"n" jsonschema:"minimum=0"`
	}
	s := New(&Options{Info: mcp.Implementation{Name: "out", Version: "1"}})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(AddTool(s, &mcp.Tool{Name: "plain"}, func(context.Context, *CallToolRequest, struct{}) (plain, error) {
		return plain{N: -1}, nil
	}))
	must(AddTool(s, &mcp.Tool{Name: "bounded"}, func(context.Context, *CallToolRequest, struct{}) (bounded, error) {
		return bounded{N: -1}, nil
	}))
	must(AddTool(s, &mcp.Tool{Name: "nilptr"}, func(context.Context, *CallToolRequest, struct{}) (*plain, error) {
		return nil, nil
	}))
	must(AddTool(s, &mcp.Tool{Name: "given", OutputSchema: jsontext.Value(`{"type":"object","properties":{"n":{"type":"string"}}}`)},
		func(context.Context, *CallToolRequest, struct{}) (plain, error) {
			return plain{N: 1}, nil
		}))
	p := newLegacyPeer(t, s, `{}`, nil, false)
	// plain's check is skipped (TestImplied holds that it cannot fail):
	// its result is served.
	if _, err := p.callTool("plain", ""); err != nil {
		t.Errorf("plain: %v", err)
	}
	for _, name := range []string{"bounded", "nilptr", "given"} {
		_, err := p.callTool(name, "")
		e, ok := jsonrpc.AsError(err)
		if !ok || e.Code != mcp.CodeInternalError || !strings.Contains(e.Message, "does not match its output schema") {
			t.Errorf("%s: %v, want -32603 for a result that does not match the output schema", name, err)
		}
	}
}

// TestInboundSize: a request as the handlers see it is the largest
// allocation of a call; without interceptors it has no Call (handle
// serves it directly) and fits the 288-byte size class (it is 280).
func TestInboundSize(t *testing.T) {
	if n := unsafe.Sizeof(inbound{}); n > 288 {
		t.Errorf("inbound is %d bytes, more than 288 (the next size class is 320)", n)
	}
}

// TestRequestSize: the Request on its own (a task's run, the shim's
// rounds) fits the 208-byte size class; its one-byte era id and field
// order keep it there (docs/design/era.md, "The Request's layout").
func TestRequestSize(t *testing.T) {
	if n := unsafe.Sizeof(Request{}); n > 208 {
		t.Errorf("Request is %d bytes, more than 208 (the next size class is 224)", n)
	}
}
