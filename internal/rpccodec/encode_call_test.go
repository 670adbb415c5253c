package rpccodec

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestAppendPlainCall holds AppendPlainCall to the reflective encoder
// (with this package's options and with json's defaults): the same bytes
// where it takes the params, nothing where it leaves them; and a request
// EncodeRequest writes with such params is the encoder's too.
func TestAppendPlainCall(t *testing.T) {
	for _, tc := range []struct {
		p     mcp.CallToolParams
		plain bool
	}{
		{mcp.CallToolParams{Name: "echo", Arguments: jsontext.Value(`{"text":"hi"}`)}, true},
		{mcp.CallToolParams{Name: "echo"}, true},
		{mcp.CallToolParams{}, true},
		{mcp.CallToolParams{Name: "<a & \"b\">\u2028é😀", Arguments: jsontext.Value(`{"t":"<&>é😀","n":[1,2.5e3,-0,true,null]}`)}, true},
		{mcp.CallToolParams{Name: "x", Arguments: jsontext.Value(`[]`)}, true},
		{mcp.CallToolParams{Name: "x", Arguments: jsontext.Value(`{"a":"\u00e9\n"}`)}, false},
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
		var want bytes.Buffer
		werr := json.MarshalWrite(&want, &tc.p, marshalOpts)
		def, derr := json.Marshal(&tc.p)
		got, ok := AppendPlainCall([]byte("prefix"), &tc.p)
		if ok != tc.plain {
			t.Errorf("%+v: taken %v, want %v", tc.p, ok, tc.plain)
		}
		if ok {
			if werr != nil || derr != nil || string(got) != "prefix"+want.String() || !bytes.Equal(def, want.Bytes()) {
				t.Errorf("%+v: %s, the encoder's %s (%v), by default %s (%v)", tc.p, got, want.Bytes(), werr, def, derr)
			}
		}
		req, err := EncodeRequest(mcp.IntID(7), "tools/call", &tc.p)
		if (err != nil) != (werr != nil) {
			t.Errorf("%+v: EncodeRequest error %v, the encoder's %v", tc.p, err, werr)
			continue
		}
		if err == nil && string(req) != `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":`+want.String()+`}` {
			t.Errorf("%+v: EncodeRequest wrote %s, params by the encoder %s", tc.p, req, want.Bytes())
		}
	}
}
