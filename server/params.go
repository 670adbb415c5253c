package server

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// wireParams is the params object of any client request, decoded once:
// every member a method may use, each kept raw or as a plain value, so
// that the era of the request (its _meta envelope), the SEP-2243 header
// checks and the method itself all read the same single decode. Nested
// values (arguments, capabilities, filters) stay raw until the code that
// knows their type decodes them.
type wireParams struct {
	Meta           mcp.Meta           `json:"_meta"`
	Name           string             `json:"name"`
	URI            string             `json:"uri"`
	Arguments      jsontext.Value     `json:"arguments"`
	Cursor         *string            `json:"cursor"`
	InputResponses mcp.InputResponses `json:"inputResponses"`
	RequestState   string             `json:"requestState"`
	Task           jsontext.Value     `json:"task"`
	TaskID         string             `json:"taskId"`
	Ref            jsontext.Value     `json:"ref"`
	Argument       jsontext.Value     `json:"argument"`
	Context        jsontext.Value     `json:"context"`
	Level          jsontext.Value     `json:"level"`
	Notifications  jsontext.Value     `json:"notifications"`
}

// decodeWire decodes params (absent: the empty object) once.
func decodeWire(raw jsontext.Value) (*wireParams, error) {
	wp := &wireParams{}
	if raw == nil {
		return wp, nil
	}
	if raw.Kind() != '{' {
		return nil, jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: params must be an object")
	}
	if err := json.Unmarshal(raw, wp); err != nil {
		return nil, jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: %s", shortErr(err))
	}
	return wp, nil
}

// decodeMember decodes one raw member into v; absent leaves v as it is.
func decodeMember(name string, raw jsontext.Value, v any) error {
	if raw == nil {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: %s: %s", name, shortErr(err))
	}
	return nil
}
