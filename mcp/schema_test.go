package mcp

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
)

var (
	schemaMu   sync.Mutex
	schemaDocs = map[string]*jsonschema.Compiler{}
)

// validateAgainst checks raw against the schema at pointer (such as
// "/$defs/Tool" or "/definitions/Tool") in the official schema of rev
// (found with wirecheck.Dir: without $MCPKIT_SCHEMA_DIR the test skips).
func validateAgainst(t *testing.T, rev, pointer string, raw []byte) {
	t.Helper()
	schemaMu.Lock()
	defer schemaMu.Unlock()
	url := "https://schema.test/" + rev + "/schema.json"
	c, ok := schemaDocs[rev]
	if !ok {
		f, err := os.ReadFile(filepath.Join(wirecheck.Dir(t), rev, "schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(f))
		if err != nil {
			t.Fatal(err)
		}
		c = jsonschema.NewCompiler()
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		schemaDocs[rev] = c
	}
	sch, err := c.Compile(url + "#" + pointer)
	if err != nil {
		t.Fatalf("compile %s#%s: %v", rev, pointer, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s#%s rejects %s:\n%v", rev, pointer, raw, err)
	}
}

// schemaCase is a wire value of one revision and the definition it must match.
type schemaCase struct {
	rev, pointer string
	new          func() any
	raw          string
}

// legacyCases are hand-written values of older revisions. Each must be valid
// in its revision, and so must its re-encoding.
var legacyCases = []schemaCase{
	{Version20241105, "/definitions/InitializeRequest/properties/params", of[InitializeParams](),
		`{"protocolVersion":"2024-11-05","capabilities":{"roots":{"listChanged":true},"sampling":{}},"clientInfo":{"name":"c","version":"1"}}`},
	{Version20241105, "/definitions/InitializeResult", of[InitializeResult](),
		`{"protocolVersion":"2024-11-05","capabilities":{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true}},"serverInfo":{"name":"s","version":"1"}}`},
	{Version20241105, "/definitions/CallToolResult", of[CallToolResult](),
		`{"content":[{"type":"text","text":"x","annotations":{"audience":["user"],"priority":0}},{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"resource","resource":{"uri":"file:///a","blob":"aGk="}}],"isError":true}`},
	{Version20241105, "/definitions/CreateMessageRequest/properties/params", of[CreateMessageParams](),
		`{"messages":[{"role":"user","content":{"type":"image","data":"aGk=","mimeType":"image/png"}}],"modelPreferences":{"hints":[{"name":"m"}],"costPriority":0},"includeContext":"thisServer","temperature":0,"maxTokens":10,"stopSequences":["x"],"metadata":{"k":1}}`},
	{Version20241105, "/definitions/CompleteRequest/properties/params", of[CompleteParams](),
		`{"ref":{"type":"ref/resource","uri":"file:///{path}"},"argument":{"name":"path","value":"a"}}`},
	{Version20241105, "/definitions/ProgressNotification/properties/params", of[ProgressParams](),
		`{"progressToken":1,"progress":0.5,"total":0}`},
	{Version20241105, "/definitions/ListRootsResult", of[ListRootsResult](),
		`{"roots":[{"uri":"file:///a","name":"a"}]}`},
	{Version20250326, "/definitions/Tool", of[Tool](),
		`{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}},"annotations":{"title":"T","readOnlyHint":true,"destructiveHint":false}}`},
	{Version20250326, "/definitions/CallToolResult", of[CallToolResult](),
		`{"content":[{"type":"audio","data":"aGk=","mimeType":"audio/wav"}]}`},
	{Version20250618, "/definitions/CallToolResult", of[CallToolResult](),
		`{"content":[{"type":"resource_link","uri":"file:///a","name":"a","title":"A","_meta":{"com.example/x":1}}],"structuredContent":{"t":22.5}}`},
	{Version20250618, "/definitions/ElicitRequest/properties/params", of[ElicitParams](),
		`{"message":"m","requestedSchema":{"type":"object","properties":{"c":{"type":"string","enum":["a","b"],"enumNames":["A","B"]}},"required":["c"]}}`},
	{Version20250618, "/definitions/ElicitResult", of[ElicitResult](),
		`{"action":"accept","content":{"c":"a","n":3,"b":true}}`},
	{Version20251125, "/$defs/InitializeResult", of[InitializeResult](),
		`{"protocolVersion":"2025-11-25","capabilities":{"completions":{},"tools":{"listChanged":true},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"s","title":"S","version":"1","description":"d","websiteUrl":"https://s","icons":[{"src":"https://s/i.png","mimeType":"image/png","sizes":["48x48"],"theme":"dark"}]},"instructions":"i"}`},
	{Version20251125, "/$defs/InitializeRequestParams", of[InitializeParams](),
		`{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{},"url":{}},"sampling":{"tools":{}},"tasks":{"requests":{"sampling":{"createMessage":{}}}}},"clientInfo":{"name":"c","version":"1"}}`},
	{Version20251125, "/$defs/Tool", of[Tool](),
		`{"name":"t","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"},"icons":[{"src":"data:image/png;base64,aGk="}]}`},
	{Version20251125, "/$defs/CallToolRequestParams", of[CallToolParams](),
		`{"_meta":{"progressToken":"p"},"name":"t","arguments":{"a":1},"task":{"ttl":1000}}`},
	{Version20251125, "/$defs/ElicitRequestURLParams", of[ElicitParams](),
		`{"mode":"url","message":"m","url":"https://x","elicitationId":"e"}`},
	{Version20251125, "/$defs/ElicitationCompleteNotification/properties/params", of[ElicitationCompleteParams](),
		`{"elicitationId":"e"}`},
	{Version20251125, "/$defs/CreateTaskResult", of[CreateTaskResult](),
		`{"task":{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b","ttl":null},"_meta":{"io.modelcontextprotocol/model-immediate-response":"soon"}}`},
	{Version20251125, "/$defs/ListTasksResult", of[ListTasksResult](),
		`{"tasks":[{"taskId":"t","status":"completed","createdAt":"a","lastUpdatedAt":"b","ttl":60000,"pollInterval":500}],"nextCursor":""}`},
	{Version20251125, "/$defs/SetLevelRequestParams", of[SetLevelParams](), `{"level":"debug"}`},
	{Version20251125, "/$defs/SubscribeRequestParams", of[SubscribeParams](), `{"uri":"file:///a"}`},
	{Version20251125, "/$defs/CancelledNotificationParams", of[CancelledParams](), `{"requestId":7,"reason":"r"}`},
	{Version20251125, "/$defs/EmptyResult", of[EmptyResult](), `{}`},
	{Version20251125, "/$defs/CreateMessageRequestParams", of[CreateMessageParams](),
		`{"messages":[{"role":"user","content":[{"type":"tool_result","toolUseId":"1","content":[],"isError":true}]}],"maxTokens":5,"toolChoice":{"mode":"none"},"task":{"ttl":1}}`},
}

// TestLegacyShapesRoundTrip: each hand-written value survives decoding and
// re-encoding. It needs no schema, so it runs everywhere.
func TestLegacyShapesRoundTrip(t *testing.T) {
	for _, c := range legacyCases {
		t.Run(c.rev+c.pointer, func(t *testing.T) {
			roundTrip(t, []byte(c.raw), c.new())
		})
	}
}

// TestLegacyShapesMatchTheirSchemas: each value, and its re-encoding, is
// valid in the official schema of its revision.
func TestLegacyShapesMatchTheirSchemas(t *testing.T) {
	wirecheck.Dir(t)
	for _, c := range legacyCases {
		t.Run(c.rev+c.pointer, func(t *testing.T) {
			validateAgainst(t, c.rev, c.pointer, []byte(c.raw))
			out := roundTrip(t, []byte(c.raw), c.new())
			validateAgainst(t, c.rev, c.pointer, out)
		})
	}
}
