package wire

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestDecodeInJSONRPCTypes: the codec's answers arrive as jsonrpc's
// Message and Error, the zero Limits are jsonrpc's defaults, and a
// failure carries a message only when the id could be read.
func TestDecodeInJSONRPCTypes(t *testing.T) {
	m, err := Decode([]byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"nope","data":1}}`), jsonrpc.Limits{})
	if err != nil || m.ID != mcp.IntID(7) || m.Error == nil || m.Error.Code != mcp.CodeMethodNotFound || string(m.Error.Data) != "1" {
		t.Fatalf("Decode = %+v, %v", m, err)
	}
	m, err = Decode([]byte(`{"jsonrpc":"1.0","id":"a","method":"m"}`), jsonrpc.Limits{})
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != mcp.CodeInvalidRequest || m == nil || m.ID != mcp.StringID("a") {
		t.Fatalf("bad version: %+v, %v", m, err)
	}
	if m, err = Decode([]byte(`{"jsonrpc":"2.0","method":1}`), jsonrpc.Limits{}); m != nil || err == nil {
		t.Fatalf("no id: %+v, %v", m, err)
	}
	deep := `{"jsonrpc":"2.0","id":1,"method":"m","params":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`
	if _, err := Decode([]byte(deep), jsonrpc.Limits{}); !errors.As(err, &e) || e.Code != mcp.CodeParseError {
		t.Fatalf("depth 65 under the default limit: %v", err)
	}
	if _, err := Decode([]byte(deep), jsonrpc.Limits{MaxDepth: 65}); err != nil {
		t.Fatalf("depth 65 under a limit of 65: %v", err)
	}
	if _, err := DecodeOwned([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), jsonrpc.Limits{MaxBytes: 10}); !errors.As(err, &e) || e.Code != mcp.CodeParseError {
		t.Fatalf("over MaxBytes: %v", err)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	out := EncodeError(mcp.IntID(3), jsonrpc.NewError(mcp.CodeInternalError, "boom"))
	m, err := Decode(out, jsonrpc.Limits{})
	if err != nil || m.Error == nil || m.Error.Message != "boom" || m.ID != mcp.IntID(3) {
		t.Fatalf("%s: %+v, %v", out, m, err)
	}
	out, err = EncodeRequest(mcp.IntID(4), "tools/list", nil)
	if err != nil || string(out) != `{"jsonrpc":"2.0","id":4,"method":"tools/list"}` {
		t.Fatalf("%s, %v", out, err)
	}
	out, err = EncodeResult(mcp.IntID(4), map[string]int{"a": 1})
	if err != nil || string(out) != `{"jsonrpc":"2.0","id":4,"result":{"a":1}}` {
		t.Fatalf("%s, %v", out, err)
	}
}
