package rpccodec

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestEncodeChecked: a *Checked is sent verbatim (empty: the empty
// object), where the same bytes as a jsontext.Value are checked first.
func TestEncodeChecked(t *testing.T) {
	p := Checked(`{"_meta":{"a":1},"name":"x"}`)
	got, err := EncodeRequest(mcp.IntID(1), "tools/call", &p)
	if want := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"a":1},"name":"x"}}`; err != nil || string(got) != want {
		t.Errorf("EncodeRequest(*Checked) = %s, %v; want %s", got, err, want)
	}
	var empty Checked
	if got, err := EncodeRequest(mcp.IntID(2), "ping", &empty); err != nil || string(got) != `{"jsonrpc":"2.0","id":2,"method":"ping","params":{}}` {
		t.Errorf("EncodeRequest(empty *Checked) = %s, %v", got, err)
	}
	bad := jsontext.Value(`{"a":1,"a":2}`)
	if _, err := EncodeRequest(mcp.IntID(3), "x", &bad); err == nil {
		t.Error("a jsontext.Value with a name twice was sent unchecked")
	}
}
