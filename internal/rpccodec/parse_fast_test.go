package rpccodec

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// toolsCall (as in jsonrpc's benchmarks) is a realistic tools/call request: _meta with a progress token
// and nested arguments.
const toolsCall = `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"_meta":{"progressToken":"tok-42-7f3a9c"},"name":"search_documents","arguments":{"query":"quarterly revenue by region","filters":{"year":2024,"tags":["finance","q3","emea"],"limit":25},"options":{"highlight":true,"language":"en","sort":{"field":"date","order":"desc"}}}}}`

// parseFastSeeds add to fuzzSeeds what the byte walk must decide or
// leave: escapes, nesting, duplicates below the envelope, many members.
var parseFastSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"line\none \"quoted\" \\ \/ \t\b\f\r"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"b":1,"b":2}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[{"x":1},{"x":1}]}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\u00e9\u003c\uD83D\uDE00"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\ud800"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\udc00\ud800"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\ud800\u0041"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\u12G4"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{"\u0061":1,"a":2}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{"é":1,"é":2}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":[-0.5e+10,0,1E-2,-1,true,false,null,"",[],{}]}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":[01]}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":[1.]}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":[.5]}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":[tru]}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":[1,]}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m"} {}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":\"\x01\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\xff\":1}}",
	`{"jsonrpc":"2.0","id":1,"method":"m","params":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{` + manyMembers(20) + `}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","x":{},"y":[],"z":null}`,
}

func manyMembers(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"m` + string(rune('a'+i)) + `":1`)
	}
	return b.String()
}

// FuzzParseFast: a message the byte walk takes, the token decoder takes
// too, with the same members, byte for byte; and isValid is IsValid.
func FuzzParseFast(f *testing.F) {
	for _, s := range append(fuzzSeeds, parseFastSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if isValid(data) != jsontext.Value(data).IsValid() {
			t.Fatalf("isValid(%q) = %v, IsValid says otherwise", data, isValid(data))
		}
		var fast wireMessage
		if !fast.parseFast(data) {
			if fast.JSONRPC != nil || fast.ID != nil || fast.Method != nil || fast.Params != nil || fast.Result != nil || fast.Error != nil {
				t.Fatalf("parseFast(%q) left members behind when it did not take it", data)
			}
			return
		}
		var tok wireMessage
		if err := tok.parseTokens(data); err != nil {
			t.Fatalf("parseFast takes %q, the token decoder says %v", data, err)
		}
		for i, pair := range [][2][]byte{{fast.JSONRPC, tok.JSONRPC}, {fast.ID, tok.ID}, {fast.Method, tok.Method}, {fast.Params, tok.Params}, {fast.Result, tok.Result}, {fast.Error, tok.Error}} {
			if (pair[0] == nil) != (pair[1] == nil) || !bytes.Equal(pair[0], pair[1]) {
				t.Fatalf("%q: member %d is %q by the walk, %q by the decoder", data, i, pair[0], pair[1])
			}
		}
	})
}

// TestParseFastTakes: the walk takes the everyday messages (else it is a
// cost, not a shortcut) and leaves what it does not decide.
func TestParseFastTakes(t *testing.T) {
	const head = `{"jsonrpc":"2.0","id":1,"method":"m","params":`
	for _, c := range []struct {
		msg  string
		want bool
	}{
		{fuzzSeeds[0], true},
		{toolsCall, true},
		{head + `{"text":"line\none \"quoted\" \\ \/ \t\b\f\r"}}`, true},
		{head + `[-0.5e+10,0,1E-2,-1,true,false,null,"",[],{}]}`, true},
		{head + `{"t":"日本 é"}}`, true},
		{head + `{"a":"\u00e9\u003c\uD83D\uDE00"}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"m","x":{},"y":[],"z":null}`, true},
		{head + `{"a":{"b":1,"b":2}}}`, false}, // a duplicate: the decoder's error
		{head + `{"a":"\ud800"}}`, false},      // a lone high surrogate
		{head + `{"a":"\udc00"}}`, false},      // a lone low one
		{head + `{"a":"\ud800\u0041"}}`, false},
		{head + `{"a":"\u12G4"}}`, false},
		{head + `{"\u0061":1}}`, false}, // an escaped name
		{head + strings.Repeat("[", fastMaxDepth) + strings.Repeat("]", fastMaxDepth) + `}`, false},
		{head + `{` + manyMembers(fastMaxNames+1) + `}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"m",` + manyMembers(fastMaxNames-3) + `}`, true}, // as many names as it compares
		{`{"jsonrpc":"2.0","id":1,"method":"m",` + manyMembers(fastMaxNames-2) + `}`, false},
		{head + `[01]}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"m"} {}`, false},
	} {
		var w wireMessage
		if got := w.parseFast([]byte(c.msg)); got != c.want {
			t.Errorf("parseFast(%s) = %v, want %v", c.msg, got, c.want)
		}
	}
}
