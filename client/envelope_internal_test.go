package client

import (
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// checkedEnvelope encodes params in an envelope with the caller's meta
// key (when not "") and log level, and fails the test when encode calls
// bytes checked that a JSON decoder refuses (invalid, or a name twice):
// jsonrpc sends checked bytes without walking them.
func checkedEnvelope(t *testing.T, p *mcp.CallToolParams, key, level string) (jsontext.Value, bool) {
	t.Helper()
	info, err := json.Marshal(mcp.Implementation{Name: "t\u00e9", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	e := outEnvelope{version: mcp.Version20260728, caps: jsontext.Value(`{"elicitation":{}}`), info: info, level: mcp.LoggingLevel(level)}
	if key != "" {
		e.caller = mcp.Meta{key: "v", "com.example/n": 1}
	}
	raw, buf, checked, err := e.encode(p)
	defer putEnvelopeBuf(buf)
	if err != nil {
		return nil, false
	}
	if checked && !raw.IsValid() {
		t.Fatalf("encode called checked bytes a decoder refuses: %s", raw)
	}
	return raw.Clone(), checked
}

// TestEnvelopeChecked: the everyday tools/call params in the envelope
// are checked (jsonrpc need not walk them again); params of any other
// kind, which may carry a "_meta" of their own, are not.
func TestEnvelopeChecked(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p       *mcp.CallToolParams
		key     string
		level   string
		checked bool
	}{
		{"plain", &mcp.CallToolParams{Name: "echo", Arguments: jsontext.Value(`{"text":"hi"}`)}, "", "", true},
		{"no arguments, caller meta, level", &mcp.CallToolParams{Name: "a\"b\u2028"}, "com.example/\u00e9\"k", "debug", true},
		{"the caller's logLevel", &mcp.CallToolParams{Name: "x", Arguments: jsontext.Value(`[1,{"a":null}]`)}, mcp.MetaKeyLogLevel, "", true},
		{"the caller's logLevel and a level", &mcp.CallToolParams{Name: "x"}, mcp.MetaKeyLogLevel, "debug", true},
		{"arguments with spaces", &mcp.CallToolParams{Name: "x", Arguments: jsontext.Value(`{"a": 1}`)}, "", "", false},
		{"a request state", &mcp.CallToolParams{Name: "x", RequestState: "s"}, "", "", false},
	} {
		if _, checked := checkedEnvelope(t, tc.p, tc.key, tc.level); checked != tc.checked {
			t.Errorf("%s: checked %v, want %v", tc.name, checked, tc.checked)
		}
	}
	e := outEnvelope{version: mcp.Version20260728, caps: jsontext.Value(`{}`), info: jsontext.Value(`{}`)}
	for _, params := range []any{jsontext.Value(`{"_meta":{},"name":"x"}`), &mcp.GetPromptParams{Name: "p"}} {
		_, buf, checked, err := e.encode(params)
		putEnvelopeBuf(buf)
		if err != nil || checked {
			t.Errorf("%T params: checked %v (%v), want unchecked", params, checked, err)
		}
	}
}

// FuzzEnvelopeChecked: whatever the name, arguments, caller key and log
// level, bytes encode calls checked are valid JSON with distinct names.
func FuzzEnvelopeChecked(f *testing.F) {
	f.Add("echo", []byte(`{"text":"hi"}`), "com.example/k", "info")
	f.Add("\xff", []byte(`{"a":"\u00e9"}`), mcp.MetaKeyLogLevel, "")
	f.Add("echo", []byte(`{}`), mcp.MetaKeyLogLevel, "info") // the pair that once wrote the key twice
	f.Fuzz(func(t *testing.T, name string, args []byte, key, level string) {
		p := &mcp.CallToolParams{Name: name}
		if len(args) > 0 {
			p.Arguments = jsontext.Value(args)
		}
		checkedEnvelope(t, p, key, level)
	})
}
