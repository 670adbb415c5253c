package client

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestAppendPlainCall holds appendPlainCall to the reflective encoder:
// the same bytes where it takes the params, and the encoder's way (no
// bytes of its own) for everything it leaves to it.
func TestAppendPlainCall(t *testing.T) {
	for _, tc := range []struct {
		p     mcp.CallToolParams
		plain bool
	}{
		{mcp.CallToolParams{Name: "echo", Arguments: jsontext.Value(`{"text":"hi"}`)}, true},
		{mcp.CallToolParams{Name: "echo"}, true},
		{mcp.CallToolParams{}, true},
		{mcp.CallToolParams{Name: "<a & \"b\">\u2028é😀", Arguments: jsontext.Value(`{"t":"<&>é😀","n":[1,2.5e3,-0,true,null]}`)}, true},
		{mcp.CallToolParams{Name: "x", Arguments: jsontext.Value(`{"a":"\u00e9\n"}`)}, false},
		{mcp.CallToolParams{Name: "x", Arguments: jsontext.Value(`[]`)}, true},
		{mcp.CallToolParams{Name: "x", Arguments: jsontext.Value(`{"a": 1}`)}, false},
		{mcp.CallToolParams{Name: "x", Arguments: jsontext.Value("{\"a\":1}\n")}, false},
		{mcp.CallToolParams{Name: "x", Arguments: jsontext.Value(`{"a":1,"a":2}`)}, false},
		{mcp.CallToolParams{Name: "x", Arguments: jsontext.Value(`{"a":`)}, false},
		{mcp.CallToolParams{Name: "x", Arguments: jsontext.Value{}}, false},
		{mcp.CallToolParams{Name: "x", Arguments: jsontext.Value("{\"a\":\"\xff\"}")}, false},
		{mcp.CallToolParams{Name: "\xff"}, false},
		{mcp.CallToolParams{Name: "x", Meta: mcp.Meta{"k": "v"}}, false},
		{mcp.CallToolParams{Name: "x", Task: &mcp.TaskMetadata{}}, false},
		{mcp.CallToolParams{Name: "x", RequestState: "s"}, false},
		{mcp.CallToolParams{Name: "x", InputResponses: mcp.InputResponses{"a": jsontext.Value(`{}`)}}, false},
	} {
		got, ok := appendPlainCall(nil, &tc.p)
		if ok != tc.plain {
			t.Errorf("%+v: taken %v, want %v", tc.p, ok, tc.plain)
		}
		if !ok {
			continue
		}
		want, err := json.Marshal(&tc.p)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%+v: %s, the encoder's %s (%v)", tc.p, got, want, err)
		}
	}
}
