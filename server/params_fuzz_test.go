package server

import (
	"reflect"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// FuzzWireParams holds the hand-written params decoder to json.Unmarshal
// into wireParams: both accept or both reject, with the same members.
func FuzzWireParams(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
		`{"cursor":null}`, `{"cursor":"c"}`, `{"cursor":1}`, `{"name":null}`, `{"name":1}`, `{"n\u0061me":"x"}`, `{"Name":"x"}`,
		`{"name":"a","name":"b"}`, `{"uri":"file:///x","requestState":"s","taskId":"t","inputResponses":{"k":{"action":"accept"}}}`,
		`{"inputResponses":null,"_meta":null}`, `{"_meta":5}`, `{"task":{"ttl":1},"ref":{"type":"ref/prompt"},"argument":{"name":"a","value":"v"},"context":{},"level":"info","notifications":{"toolsListChanged":true}}`,
		`{"x":[1,{"y":2}],"arguments":null}`, `{"_meta":{}}`, `{"_meta":{"io.modelcontextprotocol/clientInfo":null,"io.modelcontextprotocol/logLevel":"info","io.modelcontextprotocol/clientCapabilities":{"a":1}}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":1,"io.modelcontextprotocol/protocolVersion":2}}`, `{"name":"\ud800"}`, "{\"name\":\"\xff\"}", `{"a":1} x`, `{"a":1}{}`, `{"a"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || data[0] != '{' {
			return
		}
		fast, ferr := decodeWire(jsontext.Value(data))
		slow := &wireParams{raw: jsontext.Value(data)}
		serr := json.Unmarshal(data, slow)
		if serr == nil {
			liftEnv(slow)
			var rare wireRare // made only when a rare member is present
			if serr = json.Unmarshal(data, &rare); serr == nil && !reflect.DeepEqual(rare, wireRare{}) {
				slow.wireRare = &rare
			}
		}
		if (ferr == nil) != (serr == nil) {
			t.Fatalf("%q: hand-written error %v, json.Unmarshal error %v", data, ferr, serr)
		}
		if ferr == nil && !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nhand-written %+v\njson.Unmarshal %+v", data, fast, slow)
		}
	})
}

// liftEnv moves the envelope's members out of json.Unmarshal's Meta, as
// the hand-written decoder does (parseMeta); a Meta left empty is nil.
func liftEnv(wp *wireParams) {
	for key, v := range wp.Meta {
		if dst := envelopeMember(&wp.env, key); dst != nil {
			*dst = v.(jsontext.Value)
			delete(wp.Meta, key)
		}
	}
	if wp.Meta != nil && len(wp.Meta) == 0 {
		wp.Meta = nil
	}
}

// FuzzWireParamsDecoded holds the walk over params jsonrpc has checked
// (fastParse) to the token decoder's parse: where it answers, it answers
// the same.
func FuzzWireParamsDecoded(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { "name" : "echo" , "arguments" : { "text" : "a\"}b" } } `,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"b","version":"1"},"progressToken":7,"x":[1,{"y":"]"}]},"name":"echo","arguments":{"text":"hello"}}`,
		`{"cursor":null}`, `{"cursor":"c"}`, `{"cursor":1}`, `{"name":null}`, `{"name":1}`, `{"n\u0061me":"x"}`, `{"name":"a\nb"}`,
		`{"uri":"file:///x","requestState":"s","taskId":"t","inputResponses":{"k":{"action":"accept"}}}`,
		`{"uri":"file:///x","requestState":"s","taskId":"t","name":"n","cursor":"c"}`, `{"uri":null,"requestState":null,"taskId":null}`,
		`{"inputResponses":null,"_meta":null}`, `{"_meta":5}`, `{"_meta":{}}`, `{"_meta":{"\u0078":1}}`,
		`{"task":{"ttl":1},"ref":{"type":"ref/prompt"},"argument":{"name":"a","value":"v"},"context":{},"level":"info","notifications":{"toolsListChanged":true}}`,
		`{"x":[1,{"y":2}],"arguments":null,"z":-1.5e3,"t":true,"f":false}`, `{"arguments":[]}`, `{"name":"é\u00e9"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v := jsontext.Value(data)
		if v.Kind() != '{' || !v.IsValid() {
			return // not what jsonrpc's decode lets through
		}
		fast := &wireParams{raw: v}
		if !fast.fastParse(data) {
			return
		}
		slow, err := decodeWire(v)
		if err != nil {
			t.Fatalf("%q: the walk answered, the parse failed: %v", data, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nwalk  %+v\nparse %+v", data, fast, slow)
		}
	})
}

// TestFastParseTakes: the walk answers the shapes of everyday params
// itself (FuzzWireParamsDecoded holds what it answers to the parse), and
// leaves to the parse what it does not read.
func TestFastParseTakes(t *testing.T) {
	for _, s := range []string{
		`{}`, `{"name":"echo","arguments":{"text":"hi"}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":1},"name":"echo","arguments":{"text":"a\"b"}}`,
		`{"uri":"file:///x"}`, `{"cursor":"c"}`, `{"cursor":null}`, `{"taskId":"t","task":{"ttl":1}}`, ` { "name" : null } `,
	} {
		if wp := (&wireParams{raw: jsontext.Value(s)}); !wp.fastParse([]byte(s)) {
			t.Errorf("%s: not taken by the walk", s)
		}
	}
	for _, s := range []string{`{"n\u0061me":"x"}`, `{"name":"a\nb"}`, `{"name":1}`, `{"inputResponses":{}}`, `{"_meta":5}`} {
		if wp := (&wireParams{raw: jsontext.Value(s)}); wp.fastParse([]byte(s)) {
			t.Errorf("%s: taken by the walk, which must leave it to the parse", s)
		}
	}
}
