package servers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"

	"github.com/mcpkit/mcpkit/server/streamhttp"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// W5: the /mcp-nested endpoint is a session-less server with one typed
// tool, "nested", whose input has ten fields, among them a nested object
// and an array, validated against NestedSchema on every call.
const (
	PathNested = "/mcp-nested"
	NestedTool = "nested"
)

// NestedIn is the W5 tool's input: ten fields, one a nested object and
// one an array.
type NestedIn struct {
	ID       string      `json:"id"`
	Text     string      `json:"text"`
	Count    int         `json:"count"`
	Ratio    float64     `json:"ratio"`
	Enabled  bool        `json:"enabled"`
	Mode     string      `json:"mode"`
	Priority int         `json:"priority"`
	Tags     []string    `json:"tags"`
	Owner    NestedOwner `json:"owner"`
	Note     string      `json:"note,omitempty"`
}

// NestedOwner is the nested object of NestedIn.
type NestedOwner struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Age   int    `json:"age"`
}

// NestedOut is the W5 tool's output: the text and a sum over the decoded
// fields (NestedSum), so that an answer shows the whole input arrived.
type NestedOut struct {
	Text string `json:"text"`
	Sum  int    `json:"sum"`
}

// NestedSum is what the W5 tool returns as "sum".
func NestedSum(in NestedIn) int {
	return in.Count + 10*in.Priority + 100*len(in.Tags) + 1000*in.Owner.Age
}

// Nested is the W5 tool's body, the same on every server.
func Nested(in NestedIn) NestedOut { return NestedOut{Text: in.Text, Sum: NestedSum(in)} }

// NestedSchema is the W5 tool's input schema, given as it is to every
// SDK, so that all validate the same constraints: types, required
// members, no additional properties (at both levels), a pattern, string
// lengths, numeric ranges, an enum, and an array's items and length.
const NestedSchema = `{
 "type": "object",
 "properties": {
  "id": {"type": "string", "pattern": "^[a-z0-9-]{1,32}$"},
  "text": {"type": "string", "maxLength": 256},
  "count": {"type": "integer", "minimum": 0, "maximum": 1000},
  "ratio": {"type": "number", "minimum": 0, "maximum": 1},
  "enabled": {"type": "boolean"},
  "mode": {"type": "string", "enum": ["fast", "safe", "full"]},
  "priority": {"type": "integer", "minimum": 1, "maximum": 5},
  "tags": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 32}, "maxItems": 16},
  "owner": {
   "type": "object",
   "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 64},
    "email": {"type": "string", "maxLength": 254},
    "age": {"type": "integer", "minimum": 0, "maximum": 150}
   },
   "required": ["name", "email"],
   "additionalProperties": false
  },
  "note": {"type": "string", "maxLength": 1024}
 },
 "required": ["id", "text", "count", "ratio", "enabled", "mode", "priority", "tags", "owner"],
 "additionalProperties": false
}`

// MCPKitNested is mcpkit's W5 server: session-less, validating by default.
func MCPKitNested() *streamhttp.Handler {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "bench-mcpkit", Version: "1.0.0"}})
	server.AddTool(s, &mcp.Tool{Name: NestedTool, Description: "Validates a nested input", InputSchema: []byte(NestedSchema)},
		func(ctx context.Context, req *server.CallToolRequest, in NestedIn) (NestedOut, error) {
			return Nested(in), nil
		})
	return streamhttp.NewHandler(s, &streamhttp.Options{Stateless: true})
}

// GoSDKNested is go-sdk's W5 server: stateless, JSON answers; go-sdk
// validates typed tools' input (and output) by default.
func GoSDKNested() http.Handler {
	s := gosdk.NewServer(&gosdk.Implementation{Name: "bench-gosdk", Version: "1.0.0"}, nil)
	gosdk.AddTool(s, &gosdk.Tool{Name: NestedTool, Description: "Validates a nested input", InputSchema: json.RawMessage(NestedSchema)},
		func(ctx context.Context, req *gosdk.CallToolRequest, in NestedIn) (*gosdk.CallToolResult, NestedOut, error) {
			return nil, Nested(in), nil
		})
	return gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s },
		&gosdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}

// MCPGoNested is mcp-go's W5 server: stateless, no streaming, and
// WithInputSchemaValidation, without which mcp-go does not validate.
func MCPGoNested() http.Handler {
	s := mcpgoserver.NewMCPServer("bench-mcpgo", "1.0.0", mcpgoserver.WithToolCapabilities(false), mcpgoserver.WithInputSchemaValidation())
	tool := mcpgo.NewTool(NestedTool,
		mcpgo.WithDescription("Validates a nested input"),
		mcpgo.WithRawInputSchema(json.RawMessage(NestedSchema)),
		mcpgo.WithOutputSchema[NestedOut]())
	s.AddTool(tool, mcpgo.NewStructuredToolHandler(func(ctx context.Context, req mcpgo.CallToolRequest, in NestedIn) (NestedOut, error) {
		return Nested(in), nil
	}))
	return mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithStateLess(true), mcpgoserver.WithDisableStreaming(true))
}

var nestedID = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

// CheckNested is the raw ceiling's validation: NestedSchema's value
// constraints written out in Go. (Required members and unknown members
// are not checked: decoding into NestedIn cannot tell.)
func CheckNested(in *NestedIn) error {
	switch {
	case !nestedID.MatchString(in.ID):
		return errors.New("id: does not match the pattern")
	case len([]rune(in.Text)) > 256:
		return errors.New("text: too long")
	case in.Count < 0 || in.Count > 1000:
		return errors.New("count: out of range")
	case in.Ratio < 0 || in.Ratio > 1:
		return errors.New("ratio: out of range")
	case in.Mode != "fast" && in.Mode != "safe" && in.Mode != "full":
		return errors.New("mode: not one of fast, safe, full")
	case in.Priority < 1 || in.Priority > 5:
		return errors.New("priority: out of range")
	case len(in.Tags) > 16:
		return errors.New("tags: too many")
	case in.Owner.Name == "" || len([]rune(in.Owner.Name)) > 64:
		return errors.New("owner.name: missing or too long")
	case len([]rune(in.Owner.Email)) > 254:
		return errors.New("owner.email: too long")
	case in.Owner.Age < 0 || in.Owner.Age > 150:
		return errors.New("owner.age: out of range")
	case len([]rune(in.Note)) > 1024:
		return errors.New("note: too long")
	}
	for _, t := range in.Tags {
		if t == "" || len([]rune(t)) > 32 {
			return errors.New("tags: an item is empty or too long")
		}
	}
	return nil
}

type rawNestedRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string   `json:"name"`
		Arguments NestedIn `json:"arguments"`
	} `json:"params"`
}

type rawNestedResult struct {
	ResultType        string     `json:"resultType"`
	Content           []rawText  `json:"content"`
	StructuredContent *NestedOut `json:"structuredContent,omitempty"`
	IsError           bool       `json:"isError,omitempty"`
	Meta              rawMeta    `json:"_meta"`
}

// RawNested is the W5 ceiling: it decodes the 2026-07-28 call into
// NestedIn with encoding/json, checks it with CheckNested, and encodes
// the result. It checks no headers and answers only tools/call of
// "nested".
func RawNested() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req rawNestedRequest
		var resp struct {
			JSONRPC string           `json:"jsonrpc"`
			ID      json.RawMessage  `json:"id"`
			Result  *rawNestedResult `json:"result,omitempty"`
			Error   *rawError        `json:"error,omitempty"`
		}
		resp.JSONRPC = "2.0"
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<20)).Decode(&req); err != nil {
			resp.ID = json.RawMessage("null")
			resp.Error = &rawError{Code: -32602, Message: "Invalid params: " + err.Error()}
		} else if resp.ID = req.ID; req.Method != "tools/call" || req.Params.Name != NestedTool {
			resp.Error = &rawError{Code: -32601, Message: "Method not found"}
		} else {
			res := &rawNestedResult{ResultType: "complete"}
			res.Meta.ServerInfo.Name, res.Meta.ServerInfo.Version = "bench-raw", "1.0.0"
			if err := CheckNested(&req.Params.Arguments); err != nil {
				res.IsError = true
				res.Content = []rawText{{Type: "text", Text: err.Error()}}
			} else {
				o := Nested(req.Params.Arguments)
				res.StructuredContent = &o
				out, _ := json.Marshal(o)
				res.Content = []rawText{{Type: "text", Text: string(out)}}
			}
			resp.Result = res
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&resp)
	})
}
