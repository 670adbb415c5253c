package mcp

import (
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

func TestValidMetaKey(t *testing.T) {
	for key, want := range map[string]bool{
		"progressToken": true,
		"traceparent":   true,
		"io.modelcontextprotocol/protocolVersion": true,
		"io.modelcontextprotocol/related-task":    true,
		"com.example/":                            true,
		"com.example/a":                           true,
		"com.example/a_b.c-d":                     true,
		"x/1":                                     true,
		"a1.b-2.c/x":                              true,
		"1abc":                                    true,
		"":                                        false,
		"/x":                                      false,
		"com.example./x":                          false,
		"com..example/x":                          false,
		"1com.example/x":                          false,
		"com-.example/x":                          false,
		"-com/x":                                  false,
		"com.ex_ample/x":                          false,
		"com.example/x/y":                         false,
		"com.example/-x":                          false,
		"com.example/x_":                          false,
		"_x":                                      false,
		"x.":                                      false,
		"a b":                                     false,
		"café":                                    false,
	} {
		if got := ValidMetaKey(key); got != want {
			t.Errorf("ValidMetaKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestIsReservedMetaKey(t *testing.T) {
	for key, want := range map[string]bool{
		MetaKeyProtocolVersion:          true,
		"dev.mcp/x":                     true,
		"org.modelcontextprotocol.api/": true,
		"com.mcp.tools/x":               true,
		MetaKeyProgressToken:            true,
		MetaKeyBaggage:                  true,
		"com.example.mcp/x":             false,
		"mcp/x":                         false,
		"modelcontextprotocol/x":        false,
		"custom":                        false,
	} {
		if got := IsReservedMetaKey(key); got != want {
			t.Errorf("IsReservedMetaKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestMetaAccessors(t *testing.T) {
	raw := []byte(`{"_meta":{
		"io.modelcontextprotocol/protocolVersion":"2026-07-28",
		"io.modelcontextprotocol/clientCapabilities":{},
		"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},
		"io.modelcontextprotocol/logLevel":"warning",
		"progressToken":9007199254740993,
		"com.example/n":1.000}}`)
	var p RequestParams
	roundTrip(t, raw, &p)
	m := p.Meta
	if v, ok := m["com.example/n"].(jsontext.Value); !ok || string(v) != "1.000" {
		t.Errorf("raw value = %#v", m["com.example/n"])
	}
	if m.ProtocolVersion() != Version20260728 {
		t.Error(m.ProtocolVersion())
	}
	caps, err := m.ClientCapabilities()
	if err != nil || caps == nil || caps.Elicitation != nil {
		t.Errorf("caps = %+v, %v", caps, err)
	}
	info, err := m.ClientInfo()
	if err != nil || info.Name != "c" {
		t.Errorf("info = %+v, %v", info, err)
	}
	if info, err := m.ServerInfo(); info != nil || err != nil {
		t.Errorf("server info = %+v, %v", info, err)
	}
	if l, ok := m.LogLevel(); !ok || l != LevelWarning {
		t.Errorf("level = %q %v", l, ok)
	}
	if id, ok := m.ProgressToken(); !ok || id.String() != "9007199254740993" || id.IsString() {
		t.Errorf("progress token = %v %v", id, ok)
	}
	if _, ok := m.SubscriptionID(); ok {
		t.Error("subscription id found")
	}
	// Values set by Go code read back the same way.
	m2 := Meta{MetaKeyProgressToken: StringID("tok"), MetaKeySubscriptionID: "listen-1", MetaKeyServerInfo: Implementation{Name: "s", Version: "2"}}
	if id, ok := m2.ProgressToken(); !ok || !id.IsString() || id.Str() != "tok" {
		t.Errorf("token = %v", id)
	}
	if id, ok := m2.SubscriptionID(); !ok || id.Value() != "listen-1" {
		t.Errorf("subscription = %v", id)
	}
	if info, err := m2.ServerInfo(); err != nil || info.Version != "2" {
		t.Errorf("server info = %+v %v", info, err)
	}
	var null RequestParams
	if err := json.Unmarshal([]byte(`{"_meta":null}`), &null); err != nil || null.Meta != nil {
		t.Errorf("null meta = %v %v", null.Meta, err)
	}
	if err := json.Unmarshal([]byte(`{"_meta":[]}`), &null); err == nil {
		t.Error("array meta accepted")
	}
}

func TestID(t *testing.T) {
	for _, tc := range []struct {
		in    string
		isStr bool
	}{{`"1"`, true}, {`1`, false}, {`-9223372036854775808`, false}, {`""`, true}} {
		var id ID
		if err := json.Unmarshal([]byte(tc.in), &id); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		out, _ := json.Marshal(id)
		if string(out) != tc.in || id.IsString() != tc.isStr || !id.IsValid() {
			t.Errorf("%s: re-encoded %s, string=%v", tc.in, out, id.IsString())
		}
	}
	for _, bad := range []string{`1.5`, `true`, `{}`, `1e400`} {
		var id ID
		if err := json.Unmarshal([]byte(bad), &id); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if n, ok := IntID(7).Int(); !ok || n != 7 {
		t.Error("IntID")
	}
	if _, ok := StringID("7").Int(); ok {
		t.Error("StringID is an integer")
	}
	raw, _ := json.Marshal(CancelledParams{Reason: "r"})
	if string(raw) != `{"reason":"r"}` {
		t.Errorf("absent id encoded: %s", raw)
	}
	raw, _ = json.Marshal(CancelledParams{RequestID: IntID(0)})
	if string(raw) != `{"requestId":0}` {
		t.Errorf("id 0 encoded: %s", raw)
	}
}
