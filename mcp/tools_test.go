package mcp

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// weirdSchema uses 2020-12 keywords, unusual key order, odd whitespace,
// number spellings and escapes that a typed schema struct would lose.
const weirdSchema = `{ "type" :"object",
	"$defs" : {"pos":{"$anchor":"p","type":"integer" , "minimum":1.50e0, "maximum": -0}},
  "allOf":[ {"$ref":"#p"}, true ],
	"if":{"properties":{"mode":{"const":"fast"}}},   "then":{"required":["limit"]}, "else" : { } ,
  "properties":{ "zeta":{"type":"string","x-mcp-header":"Zeta"},
                 "alpha":{"type":"string","pattern":"^a\\d+\"$"} },
  "unevaluatedProperties"  :false, "x-big": 123456789012345678901234567890
}`

const weirdOutput = `[ {"type":"array" ,"prefixItems":[{"type":"number"}] } ]`

func TestToolSchemaByteExact(t *testing.T) {
	src := []byte("{\"name\":\"weird\",\n \"inputSchema\":  " + weirdSchema + " ,\"outputSchema\":" + weirdOutput + "}")
	var tool Tool
	if err := json.Unmarshal(src, &tool); err != nil {
		t.Fatal(err)
	}
	// Decoding keeps the exact source bytes, whitespace included.
	if string(tool.InputSchema) != weirdSchema || string(tool.OutputSchema) != weirdOutput {
		t.Fatalf("decoded schemas differ:\n%s\n%s", tool.InputSchema, tool.OutputSchema)
	}
	// Encoding keeps every byte except insignificant whitespace.
	out, err := json.Marshal(&tool)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"weird","inputSchema":` + string(compactJSON([]byte(weirdSchema))) +
		`,"outputSchema":` + string(compactJSON([]byte(weirdOutput))) + `}`
	if string(out) != want {
		t.Fatalf("encoded tool:\n got %s\nwant %s", out, want)
	}
	// Decode and encode again: a fixed point, byte for byte.
	var again Tool
	if err := json.Unmarshal(out, &again); err != nil {
		t.Fatal(err)
	}
	out2, err := json.Marshal(&again)
	if err != nil || !bytes.Equal(out, out2) {
		t.Fatalf("second round trip differs (%v):\n%s\n%s", err, out, out2)
	}
	// Building a tool in Go and sending it keeps the schema exactly.
	built := Tool{Name: "b", InputSchema: jsontext.Value(compactJSON([]byte(weirdSchema)))}
	raw, _ := json.Marshal(built)
	var back Tool
	if err := json.Unmarshal(raw, &back); err != nil || !bytes.Equal(back.InputSchema, built.InputSchema) {
		t.Fatalf("Go round trip differs (%v): %s", err, back.InputSchema)
	}
}

func TestToolAnnotationsDefaults(t *testing.T) {
	var nilAnn *ToolAnnotations
	if nilAnn.ReadOnly() || !nilAnn.Destructive() || nilAnn.Idempotent() || !nilAnn.OpenWorld() {
		t.Error("nil annotations do not use the defaults")
	}
	a := &ToolAnnotations{ReadOnlyHint: new(true), DestructiveHint: new(false), OpenWorldHint: new(false)}
	if !a.ReadOnly() || a.Destructive() || a.Idempotent() || a.OpenWorld() {
		t.Errorf("annotations = %+v", a)
	}
	raw, _ := json.Marshal(a)
	if string(raw) != `{"readOnlyHint":true,"destructiveHint":false,"openWorldHint":false}` {
		t.Errorf("encoded %s", raw)
	}
	tool := Tool{Name: "n", Annotations: &ToolAnnotations{Title: "A"}}
	if tool.DisplayName() != "A" {
		t.Error(tool.DisplayName())
	}
	tool.Title = "T"
	if tool.DisplayName() != "T" {
		t.Error(tool.DisplayName())
	}
}

func TestCallToolParamsMRTR(t *testing.T) {
	raw := []byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}},` +
		`"name":"get_weather","arguments":{"location":"New York"},` +
		`"inputResponses":{"github_login":{"action":"accept","content":{"name":"octocat"}}},"requestState":"eyJ4Ijox"}`)
	var p CallToolParams
	roundTrip(t, raw, &p)
	var er ElicitResult
	if ok, err := p.InputResponses.Decode("github_login", &er); !ok || err != nil || er.Content["name"] != "octocat" {
		t.Errorf("decode = %v %v %+v", ok, err, er)
	}
	caps, err := p.Meta.ClientCapabilities()
	if err != nil || !caps.Elicitation.SupportsForm() || caps.Elicitation.SupportsURL() {
		t.Errorf("caps = %+v, %v", caps, err)
	}
}
