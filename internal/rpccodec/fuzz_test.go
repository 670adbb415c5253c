package rpccodec

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// fuzzSeeds cover every shape Decode accepts and every way it rejects.
var fuzzSeeds = []string{
	// requests, notifications, responses
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":7}}}`,
	`{"jsonrpc":"2.0","id":"abc","method":"sum","params":[1,2,3]}`,
	`{"jsonrpc":"2.0","id":0,"method":"ping"}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"user"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
	`{"jsonrpc":"2.0","id":"r","result":null}`,
	`{"jsonrpc":"2.0","id":2,"result":"text"}`,
	`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found","data":{"method":"x"}}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
	`{"jsonrpc":"2.0","id":8,"error":{"code":0,"message":"","data":null}}`,
	" \t{ \"params\" : [ 1 , {\"a\" : 2} ] , \"method\" : \"m\" , \"id\" : 3 , \"jsonrpc\" : \"2.0\" }\r\n",
	// ids
	`{"jsonrpc":"2.0","id":"","method":"m"}`,
	`{"jsonrpc":"2.0","id":"0","method":"m"}`,
	`{"jsonrpc":"2.0","id":-42,"method":"m"}`,
	`{"jsonrpc":"2.0","id":-0,"method":"m"}`,
	`{"jsonrpc":"2.0","id":9223372036854775807,"method":"m"}`,
	`{"jsonrpc":"2.0","id":-9223372036854775808,"result":1}`,
	`{"jsonrpc":"2.0","id":9223372036854775808,"method":"m"}`,
	`{"jsonrpc":"2.0","id":"a\"b\\c\u00e9\ud83d\ude00\/\u0000","method":"m"}`,
	"{\"jsonrpc\":\"2.0\",\"id\":\"\u2028\x7f日本\",\"method\":\"m\"}",
	`{"jsonrpc":"2.0","id":1.5,"method":"m"}`,
	`{"jsonrpc":"2.0","id":1e3,"method":"m"}`,
	`{"jsonrpc":"2.0","id":true,"method":"m"}`,
	`{"jsonrpc":"2.0","id":{},"method":"m"}`,
	`{"jsonrpc":"2.0","id":null,"method":"m"}`,
	`{"jsonrpc":"2.0","id":"\ud800","method":"m"}`,
	// malformed and strictness
	`{"jsonrpc":"2.0","id":1,"method":`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}",
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`,
	`{"jsonrpc":"2.0","id":1,"Method":"m"}`,
	`{"jsonrpc":"2.0","id":1,"method":1}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}`,
	`{"jsonrpc":"1.0","id":1,"method":"m"}`,
	`{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1}}`,
	`{"jsonrpc":"2.0","id":1,"result":1,"params":{}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"m"}]`,
	`"x"`, `42`, `null`, ``,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":["` + strings.Repeat(`[{\"`, 70) + `"]}`,
}

// decodeDefault is Decode under jsonrpc's default limits.
func decodeDefault(data []byte) (*Envelope, *Error) {
	env, fail := Decode(data, 4<<20, 64, false)
	if fail != nil && !env.ID.IsValid() {
		return nil, fail
	}
	return &env, fail
}

func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, e := decodeDefault(data)
		if e != nil {
			if e.Code != mcp.CodeParseError && e.Code != mcp.CodeInvalidRequest {
				t.Fatalf("Decode(%q) error code %d", data, e.Code)
			}
			// The error response is itself a valid message echoing the id.
			id := mcp.ID{}
			if m != nil {
				id = m.ID
			}
			r, re := decodeDefault(EncodeError(id, e))
			if re != nil || r.ID != id || r.Error == nil || r.Error.Code != e.Code || r.Error.Message != e.Message {
				t.Fatalf("error response for %q does not round-trip: %v %v", data, r, re)
			}
			return
		}
		request := m.Method != "" && m.ID.IsValid()
		notification := m.Method != "" && !m.ID.IsValid()
		response := m.Method == ""
		shapes := 0
		for _, b := range []bool{request, notification, response} {
			if b {
				shapes++
			}
		}
		if shapes != 1 {
			t.Fatalf("Decode(%q) = %+v: %d shapes", data, m, shapes)
		}
		if response && (m.Result == nil) == (m.Error == nil) {
			t.Fatalf("Decode(%q): response with result %q and error %v", data, m.Result, m.Error)
		}
		// The id's JSON text parses back to the same id.
		if m.ID.IsValid() {
			if id, err := mcp.ParseID(jsontext.Value(m.ID.String())); err != nil || id != m.ID {
				t.Fatalf("id %#v renders as %s which parses as %#v (%v)", m.ID, m.ID, id, err)
			}
		}
		out := encodeMessage(t, m)
		m2, e2 := decodeDefault(out)
		if e2 != nil {
			t.Fatalf("re-encoded %q as %s which does not decode: %v", data, out, e2)
		}
		if !equalMessages(m, m2) {
			t.Fatalf("round trip changed the message:\n in  %q\n out %s\n %+v\n %+v", data, out, m, m2)
		}
		if out2 := encodeMessage(t, m2); !bytes.Equal(out, out2) {
			t.Fatalf("encoding is not stable: %s then %s", out, out2)
		}
	})
}

func encodeMessage(t *testing.T, m *Envelope) []byte {
	t.Helper()
	var out []byte
	var err error
	switch {
	case m.Method != "":
		var params any // nil params stay absent
		if m.Params != nil {
			params = m.Params
		}
		out, err = EncodeRequest(m.ID, m.Method, params)
	case m.Error != nil:
		out = EncodeError(m.ID, m.Error)
	default:
		out, err = EncodeResult(m.ID, m.Result)
	}
	if err != nil {
		t.Fatalf("encoding %+v: %v", m, err)
	}
	return out
}

func equalMessages(a, b *Envelope) bool {
	if a.ID != b.ID || a.Method != b.Method || !bytes.Equal(a.Params, b.Params) || !bytes.Equal(a.Result, b.Result) {
		return false
	}
	if (a.Params == nil) != (b.Params == nil) || (a.Result == nil) != (b.Result == nil) {
		return false
	}
	if (a.Error == nil) != (b.Error == nil) {
		return false
	}
	if a.Error != nil {
		return a.Error.Code == b.Error.Code && a.Error.Message == b.Error.Message && bytes.Equal(a.Error.Data, b.Error.Data)
	}
	return true
}

// FuzzEnvelope holds the hand-written envelope parser to the reflective
// decoding it replaced: for every object, both succeed or both fail, with
// the same raw members.
func FuzzEnvelope(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"jsonr\u0070c":"2.0","id":1,"method":"m","params":{"a":[1,{"b":null}]},"x":1}`))
	f.Add([]byte(`{"id":1,"id":2}`))
	f.Add([]byte(`{"JSONRPC":"2.0"} `))
	f.Fuzz(func(t *testing.T, data []byte) {
		if firstByte(data) != '{' {
			return
		}
		var fast, slow wireMessage
		ferr := fast.parse(data, false)
		serr := json.Unmarshal(data, &slow, decodeOpts)
		if (ferr == nil) != (serr == nil) {
			t.Fatalf("%q: parse error %v, json.Unmarshal error %v", data, ferr, serr)
		}
		if ferr != nil {
			return
		}
		for i, pair := range [][2]jsontext.Value{{fast.JSONRPC, slow.JSONRPC}, {fast.ID, slow.ID}, {fast.Method, slow.Method},
			{fast.Params, slow.Params}, {fast.Result, slow.Result}, {fast.Error, slow.Error}} {
			if !bytes.Equal(pair[0], pair[1]) || (pair[0] == nil) != (pair[1] == nil) {
				t.Fatalf("%q: member %d: parse %q, json.Unmarshal %q", data, i, pair[0], pair[1])
			}
		}
	})
}

// depthSlow is the byte-at-a-time scan depth replaced.
func depthSlow(data []byte) int {
	d, maxD := 0, 0
	inStr, esc := false, false
	for _, c := range data {
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			d++
			if d > maxD {
				maxD = d
			}
		case '}', ']':
			d--
		}
	}
	return maxD
}

func FuzzDepth(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"a\\":"[[[","b\\\"{":[{}],"c":"\\\\"}`))
	f.Add([]byte(`"unterminated [[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := depth(data), depthSlow(data); got != want {
			t.Fatalf("depth(%q) = %d, want %d", data, got, want)
		}
	})
}
