package mcp

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
)

// exampleCase says how to check the official examples of one schema type.
type exampleCase struct {
	// new returns the Go value to decode into; nil means nothing to decode.
	new func() any
	// member is the dotted path of the part to decode ("" = whole document).
	member string
	// method is the expected "method" of request and notification examples.
	method string
	// code is the expected error code of error examples.
	code int64
}

func of[T any]() func() any { return func() any { return new(T) } }

func params[T any](method string) exampleCase {
	return exampleCase{new: of[T](), member: "params", method: method}
}

func result[T any]() exampleCase { return exampleCase{new: of[T](), member: "result"} }

var exampleCases = map[string]exampleCase{
	"AudioContent":                          {new: of[AudioContent]()},
	"BlobResourceContents":                  {new: of[BlobResourceContents]()},
	"BooleanSchema":                         {new: of[PrimitiveSchema]()},
	"CallToolRequest":                       params[CallToolParams](MethodToolsCall),
	"CallToolRequestParams":                 {new: of[CallToolParams]()},
	"CallToolResult":                        {new: of[CallToolResult]()},
	"CallToolResultResponse":                result[CallToolResult](),
	"CancelledNotification":                 params[CancelledParams](NotificationCancelled),
	"CancelledNotificationParams":           {new: of[CancelledParams]()},
	"ClientCapabilities":                    {new: of[ClientCapabilities]()},
	"CompleteRequest":                       params[CompleteParams](MethodCompletionComplete),
	"CompleteRequestParams":                 {new: of[CompleteParams]()},
	"CompleteResult":                        {new: of[CompleteResult]()},
	"CompleteResultResponse":                result[CompleteResult](),
	"CreateMessageRequest":                  params[CreateMessageParams](MethodSamplingCreateMessage),
	"CreateMessageRequestParams":            {new: of[CreateMessageParams]()},
	"CreateMessageResult":                   {new: of[CreateMessageResult]()},
	"DiscoverRequest":                       params[RequestParams](MethodServerDiscover),
	"DiscoverResult":                        {new: of[DiscoverResult]()},
	"DiscoverResultResponse":                result[DiscoverResult](),
	"ElicitRequest":                         params[ElicitParams](MethodElicitationCreate),
	"ElicitRequestFormParams":               {new: of[ElicitParams]()},
	"ElicitRequestURLParams":                {new: of[ElicitParams]()},
	"ElicitResult":                          {new: of[ElicitResult]()},
	"EmbeddedResource":                      {new: of[EmbeddedResource]()},
	"GetPromptRequest":                      params[GetPromptParams](MethodPromptsGet),
	"GetPromptRequestParams":                {new: of[GetPromptParams]()},
	"GetPromptResult":                       {new: of[GetPromptResult]()},
	"GetPromptResultResponse":               result[GetPromptResult](),
	"HeaderMismatchError":                   {code: CodeHeaderMismatch},
	"ImageContent":                          {new: of[ImageContent]()},
	"InputRequests":                         {new: of[InputRequests]()},
	"InputRequiredResult":                   {new: of[InputRequiredResult]()},
	"InputResponses":                        {new: of[InputResponses]()},
	"InternalError":                         {code: CodeInternalError},
	"InvalidParamsError":                    {code: CodeInvalidParams},
	"ListPromptsRequest":                    params[ListPromptsParams](MethodPromptsList),
	"ListPromptsResult":                     {new: of[ListPromptsResult]()},
	"ListPromptsResultResponse":             result[ListPromptsResult](),
	"ListResourceTemplatesRequest":          params[ListResourceTemplatesParams](MethodResourcesTemplatesList),
	"ListResourceTemplatesResult":           {new: of[ListResourceTemplatesResult]()},
	"ListResourceTemplatesResultResponse":   result[ListResourceTemplatesResult](),
	"ListResourcesRequest":                  params[ListResourcesParams](MethodResourcesList),
	"ListResourcesResult":                   {new: of[ListResourcesResult]()},
	"ListResourcesResultResponse":           result[ListResourcesResult](),
	"ListRootsRequest":                      params[RequestParams](MethodRootsList),
	"ListRootsResult":                       {new: of[ListRootsResult]()},
	"ListToolsRequest":                      params[ListToolsParams](MethodToolsList),
	"ListToolsResult":                       {new: of[ListToolsResult]()},
	"ListToolsResultResponse":               result[ListToolsResult](),
	"LoggingMessageNotification":            params[LoggingMessageParams](NotificationMessage),
	"LoggingMessageNotificationParams":      {new: of[LoggingMessageParams]()},
	"MethodNotFoundError":                   {code: CodeMethodNotFound},
	"MissingRequiredClientCapabilityError":  {new: of[MissingCapabilityData](), member: "error.data", code: CodeMissingRequiredClientCapability},
	"ModelPreferences":                      {new: of[ModelPreferences]()},
	"NumberSchema":                          {new: of[PrimitiveSchema]()},
	"PaginatedRequestParams":                {new: of[PaginatedParams]()},
	"ParseError":                            {code: CodeParseError},
	"ProgressNotification":                  params[ProgressParams](NotificationProgress),
	"ProgressNotificationParams":            {new: of[ProgressParams]()},
	"PromptListChangedNotification":         params[NotificationParams](NotificationPromptsListChanged),
	"ReadResourceRequest":                   params[ReadResourceParams](MethodResourcesRead),
	"ReadResourceResult":                    {new: of[ReadResourceResult]()},
	"ReadResourceResultResponse":            result[ReadResourceResult](),
	"Resource":                              {new: of[Resource]()},
	"ResourceLink":                          {new: of[ResourceLink]()},
	"ResourceListChangedNotification":       params[NotificationParams](NotificationResourcesListChanged),
	"ResourceUpdatedNotification":           params[ResourceUpdatedNotificationParams](NotificationResourcesUpdated),
	"ResourceUpdatedNotificationParams":     {new: of[ResourceUpdatedNotificationParams]()},
	"Root":                                  {new: of[Root]()},
	"SamplingMessage":                       {new: of[SamplingMessage]()},
	"ServerCapabilities":                    {new: of[ServerCapabilities]()},
	"StringSchema":                          {new: of[PrimitiveSchema]()},
	"SubscriptionsAcknowledgedNotification": params[SubscriptionsAcknowledgedParams](NotificationSubscriptionsAcknowledged),
	"SubscriptionsListenRequest":            params[SubscriptionsListenParams](MethodSubscriptionsListen),
	"SubscriptionsListenResult":             {new: of[EmptyResult]()},
	"SubscriptionsListenResultResponse":     result[EmptyResult](),
	"TextContent":                           {new: of[TextContent]()},
	"TextResourceContents":                  {new: of[TextResourceContents]()},
	"TitledMultiSelectEnumSchema":           {new: of[PrimitiveSchema]()},
	"TitledSingleSelectEnumSchema":          {new: of[PrimitiveSchema]()},
	"Tool":                                  {new: of[Tool]()},
	"ToolListChangedNotification":           params[NotificationParams](NotificationToolsListChanged),
	"ToolResultContent":                     {new: of[ToolResultContent]()},
	"ToolUseContent":                        {new: of[ToolUseContent]()},
	"UnsupportedProtocolVersionError":       {new: of[UnsupportedProtocolVersionData](), member: "error.data", code: CodeUnsupportedProtocolVersion},
	"UntitledMultiSelectEnumSchema":         {new: of[PrimitiveSchema]()},
	"UntitledSingleSelectEnumSchema":        {new: of[PrimitiveSchema]()},
}

func TestOfficialExamples(t *testing.T) {
	root := filepath.Join(wirecheck.Dir(t), Latest, "examples")
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, d := range dirs {
		c, ok := exampleCases[d.Name()]
		if !ok {
			t.Errorf("example type %s has no test case", d.Name())
			continue
		}
		paths, _ := filepath.Glob(filepath.Join(root, d.Name(), "*.json"))
		if len(paths) == 0 {
			t.Errorf("no examples in %s", d.Name())
		}
		for _, path := range paths {
			files++
			t.Run(d.Name()+"/"+filepath.Base(path), func(t *testing.T) {
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				checkExample(t, d.Name(), c, raw)
			})
		}
	}
	t.Logf("checked %d example files of %d types", files, len(dirs))
}

func checkExample(t *testing.T, typeName string, c exampleCase, raw []byte) {
	if c.method != "" {
		var env struct {
			Method string `json:"method"`
		}
		if err := json.Unmarshal(raw, &env); err != nil || env.Method != c.method {
			t.Errorf("method = %q, want %q (%v)", env.Method, c.method, err)
		}
	}
	if c.code != 0 {
		code, ok := member(t, raw, "code")
		if !ok {
			code, _ = member(t, raw, "error.code")
		}
		var n int64
		if err := json.Unmarshal(code, &n); err != nil || n != c.code {
			t.Errorf("code = %s, want %d", code, c.code)
		}
	}
	if c.new == nil {
		return
	}
	part := jsontext.Value(raw)
	if c.member != "" {
		var ok bool
		if part, ok = member(t, raw, c.member); !ok {
			if typeName == "ListRootsRequest" {
				return // roots/list carries no params
			}
			t.Fatalf("example has no %s", c.member)
		}
	}
	// A result of an MRTR method may be an InputRequiredResult instead.
	if c.member == "result" {
		if rt, _ := peekResultType(part); rt == ResultInputRequired {
			c.new = of[InputRequiredResult]()
		}
	}
	v := c.new()
	out := roundTrip(t, part, v)
	checkTyped(t, v, part, out)
	// The re-encoding must still be valid in the official schema.
	switch c.member {
	case "":
		validateAgainst(t, Latest, "/$defs/"+typeName, out)
	case "params", "result":
		validateAgainst(t, Latest, "/$defs/"+typeName+"/properties/"+c.member, out)
	}
}

// checkTyped runs the extra checks of types with raw or union members.
func checkTyped(t *testing.T, v any, in, out jsontext.Value) {
	switch v := v.(type) {
	case *Tool:
		checkToolSchemas(t, v, in, out)
	case *ListToolsResult:
		for i := range v.Tools {
			checkToolSchemas(t, &v.Tools[i], nil, nil)
		}
	case Content:
		c, err := DecodeContent(in)
		if err != nil || c.ContentType() != v.ContentType() {
			t.Errorf("DecodeContent = %T, %v; want %T", c, err, v)
		}
	case ResourceContents:
		c, err := DecodeResourceContents(in)
		if err != nil || fmt.Sprintf("%T", c) != fmt.Sprintf("%T", v) {
			t.Errorf("DecodeResourceContents = %T, %v; want %T", c, err, v)
		}
	case *InputRequests:
		checkInputRequests(t, *v)
	case *InputRequiredResult:
		if err := v.Validate(); err != nil {
			t.Error(err)
		}
		checkInputRequests(t, v.InputRequests)
	case *InputResponses:
		for key, raw := range *v {
			var probe map[string]jsontext.Value
			if err := json.Unmarshal(raw, &probe); err != nil {
				t.Fatal(err)
			}
			switch {
			case probe["action"] != nil:
				roundTrip(t, raw, new(ElicitResult))
			case probe["model"] != nil:
				roundTrip(t, raw, new(CreateMessageResult))
			case probe["roots"] != nil:
				roundTrip(t, raw, new(ListRootsResult))
			default:
				t.Errorf("input response %q has an unknown shape", key)
			}
		}
	case *ElicitParams:
		if v.RequestedSchema != nil {
			s, err := ParseElicitationSchema(v.RequestedSchema)
			if err != nil {
				t.Fatal(err)
			}
			roundTrip(t, v.RequestedSchema, s)
		}
	}
}

// checkInputRequests decodes every embedded request into its typed params.
func checkInputRequests(t *testing.T, reqs InputRequests) {
	t.Helper()
	for key, r := range reqs {
		var p any
		switch r.Method {
		case MethodElicitationCreate:
			p = new(ElicitParams)
		case MethodSamplingCreateMessage:
			p = new(CreateMessageParams)
		case MethodRootsList:
			p = new(RequestParams)
		default:
			t.Errorf("input request %q: unexpected method %q", key, r.Method)
			continue
		}
		if r.Params != nil {
			roundTrip(t, r.Params, p)
			checkTyped(t, p, r.Params, nil)
		}
	}
}

// checkToolSchemas checks that the schemas decode byte-exact from in and
// re-encode byte-exact, apart from insignificant whitespace, into out.
func checkToolSchemas(t *testing.T, tool *Tool, in, out jsontext.Value) {
	t.Helper()
	if !tool.InputSchema.IsValid() {
		t.Errorf("tool %s: invalid inputSchema", tool.Name)
	}
	if in == nil {
		return
	}
	for _, name := range []string{"inputSchema", "outputSchema"} {
		src, ok := member(t, in, name)
		got := map[string]jsontext.Value{"inputSchema": tool.InputSchema, "outputSchema": tool.OutputSchema}[name]
		if !ok {
			if got != nil {
				t.Errorf("%s appeared from nowhere", name)
			}
			continue
		}
		if !slices.Equal(got, src) {
			t.Errorf("decoded %s is not byte-exact:\nsrc: %s\ngot: %s", name, src, got)
		}
		enc, _ := member(t, out, name)
		if want := compactJSON(src); !slices.Equal(enc, want) {
			t.Errorf("encoded %s is not byte-exact:\nwant: %s\ngot:  %s", name, want, enc)
		}
	}
}
