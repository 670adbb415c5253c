package mcp

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Tool describes a tool a server offers.
type Tool struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitzero"`
	Description string `json:"description,omitzero"`
	Icons       []Icon `json:"icons,omitempty"`
	// InputSchema is the JSON Schema object of the arguments, kept raw so that
	// every 2020-12 keyword survives. It is required and must be an object;
	// {"type":"object","additionalProperties":false} suits a tool without arguments.
	InputSchema jsontext.Value `json:"inputSchema"`
	// OutputSchema optionally describes StructuredContent (2025-06-18+).
	OutputSchema jsontext.Value   `json:"outputSchema,omitzero"`
	Annotations  *ToolAnnotations `json:"annotations,omitzero"`
	// Execution describes task support (2025-11-25 only).
	Execution *ToolExecution `json:"execution,omitzero"`
	Meta      Meta           `json:"_meta,omitzero"`
}

// DisplayName returns the name to show a user: Title, then Annotations.Title,
// then Name.
func (t *Tool) DisplayName() string {
	switch {
	case t.Title != "":
		return t.Title
	case t.Annotations != nil && t.Annotations.Title != "":
		return t.Annotations.Title
	}
	return t.Name
}

// ToolAnnotations are untrusted hints about a tool's behavior (2025-03-26+).
// The hints are pointers because some default to true; the methods apply the
// defaults.
type ToolAnnotations struct {
	Title           string `json:"title,omitzero"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitzero"`
	DestructiveHint *bool  `json:"destructiveHint,omitzero"`
	IdempotentHint  *bool  `json:"idempotentHint,omitzero"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitzero"`
}

func hint(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// ReadOnly returns ReadOnlyHint, default false; nil-safe.
func (a *ToolAnnotations) ReadOnly() bool { return a != nil && hint(a.ReadOnlyHint, false) }

// Destructive returns DestructiveHint, default true; nil-safe.
func (a *ToolAnnotations) Destructive() bool { return a == nil || hint(a.DestructiveHint, true) }

// Idempotent returns IdempotentHint, default false; nil-safe.
func (a *ToolAnnotations) Idempotent() bool { return a != nil && hint(a.IdempotentHint, false) }

// OpenWorld returns OpenWorldHint, default true; nil-safe.
func (a *ToolAnnotations) OpenWorld() bool { return a == nil || hint(a.OpenWorldHint, true) }

// Task support levels of ToolExecution.TaskSupport.
const (
	TaskSupportForbidden = "forbidden"
	TaskSupportOptional  = "optional"
	TaskSupportRequired  = "required"
)

// ToolExecution describes how a tool may run (2025-11-25).
type ToolExecution struct {
	// TaskSupport is one of the TaskSupport constants; empty means forbidden.
	TaskSupport string `json:"taskSupport,omitzero"`
}

// ListToolsParams are the params of tools/list.
type ListToolsParams struct {
	Meta Meta `json:"_meta,omitzero"`
	// Cursor is the opaque position to continue from; nil asks for the first page.
	Cursor *string `json:"cursor,omitzero"`
}

// ListToolsResult is the result of tools/list.
type ListToolsResult struct {
	ResultType ResultType `json:"resultType,omitzero"`
	Tools      []Tool     `json:"tools"`
	// NextCursor is nil on the last page.
	NextCursor *string    `json:"nextCursor,omitzero"`
	TTLMs      *int64     `json:"ttlMs,omitzero"`
	CacheScope CacheScope `json:"cacheScope,omitzero"`
	Meta       Meta       `json:"_meta,omitzero"`
}

// CallToolParams are the params of tools/call. The MRTR fields are set only
// on a 2026 retry after an InputRequiredResult.
type CallToolParams struct {
	Meta Meta   `json:"_meta,omitzero"`
	Name string `json:"name"`
	// Arguments is the raw JSON object of arguments; nil means none.
	Arguments jsontext.Value `json:"arguments,omitzero"`
	// Task asks for task-augmented execution (2025-11-25).
	Task           *TaskMetadata  `json:"task,omitzero"`
	InputResponses InputResponses `json:"inputResponses,omitempty"`
	RequestState   string         `json:"requestState,omitzero"`
}

// CallToolResult is the final result of tools/call.
type CallToolResult struct {
	ResultType ResultType `json:"resultType,omitzero"`
	// Content is the unstructured result; it is always sent, empty if nil.
	Content Contents `json:"content"`
	// StructuredContent is the raw structured result (2025-06-18+): an object
	// in 2025, any JSON value in 2026.
	StructuredContent jsontext.Value `json:"structuredContent,omitzero"`
	// IsError reports a tool-level failure, visible to the model.
	IsError bool `json:"isError,omitzero"`
	Meta    Meta `json:"_meta,omitzero"`
}

// MarshalJSONTo writes the result field by field, as the reflective
// encoding of its struct tags would (it is the hottest result of all).
func (r CallToolResult) MarshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	if r.ResultType != "" {
		if err := writeMember(enc, "resultType", jsontext.String(string(r.ResultType))); err != nil {
			return err
		}
	}
	if err := enc.WriteToken(jsontext.String("content")); err != nil {
		return err
	}
	if err := r.Content.MarshalJSONTo(enc); err != nil {
		return err
	}
	if r.StructuredContent != nil {
		if err := enc.WriteToken(jsontext.String("structuredContent")); err != nil {
			return err
		}
		if err := enc.WriteValue(r.StructuredContent); err != nil {
			return err
		}
	}
	if r.IsError {
		if err := writeMember(enc, "isError", jsontext.True); err != nil {
			return err
		}
	}
	if r.Meta != nil {
		if err := enc.WriteToken(jsontext.String("_meta")); err != nil {
			return err
		}
		if err := json.MarshalEncode(enc, r.Meta); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// writeMember writes one object member whose value is a single token.
func writeMember(enc *jsontext.Encoder, name string, value jsontext.Token) error {
	if err := enc.WriteToken(jsontext.String(name)); err != nil {
		return err
	}
	return enc.WriteToken(value)
}
