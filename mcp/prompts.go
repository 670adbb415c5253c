package mcp

import (
	"errors"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Prompt describes a prompt template a server offers.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitzero"`
	Description string           `json:"description,omitzero"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Icons       []Icon           `json:"icons,omitempty"`
	Meta        Meta             `json:"_meta,omitzero"`
}

// PromptArgument describes one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitzero"`
	Description string `json:"description,omitzero"`
	Required    bool   `json:"required,omitzero"`
}

// PromptMessage is one message of a prompt; Content is a single block.
type PromptMessage struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
}

// MarshalJSONTo writes the message; Content must not be nil.
func (m PromptMessage) MarshalJSONTo(enc *jsontext.Encoder) error {
	if m.Content == nil {
		return errors.New("mcp: PromptMessage without Content")
	}
	type wire PromptMessage
	return json.MarshalEncode(enc, wire(m))
}

// UnmarshalJSONFrom reads the message, choosing the block type by "type".
func (m *PromptMessage) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var w struct {
		Role    Role           `json:"role"`
		Content jsontext.Value `json:"content"`
	}
	if err := json.UnmarshalDecode(dec, &w); err != nil {
		return err
	}
	if w.Content == nil {
		return errors.New(`mcp: prompt message without "content"`)
	}
	c, err := DecodeContent(w.Content)
	if err != nil {
		return err
	}
	*m = PromptMessage{Role: w.Role, Content: c}
	return nil
}

// ListPromptsParams are the params of prompts/list.
type ListPromptsParams struct {
	Meta Meta `json:"_meta,omitzero"`
	// Cursor is the opaque position to continue from; nil asks for the first page.
	Cursor *string `json:"cursor,omitzero"`
}

// ListPromptsResult is the result of prompts/list.
type ListPromptsResult struct {
	ResultType ResultType `json:"resultType,omitzero"`
	Prompts    []Prompt   `json:"prompts"`
	// NextCursor is nil on the last page.
	NextCursor *string    `json:"nextCursor,omitzero"`
	TTLMs      *int64     `json:"ttlMs,omitzero"`
	CacheScope CacheScope `json:"cacheScope,omitzero"`
	Meta       Meta       `json:"_meta,omitzero"`
}

// GetPromptParams are the params of prompts/get. The MRTR fields are set only
// on a 2026 retry after an InputRequiredResult.
type GetPromptParams struct {
	Meta           Meta              `json:"_meta,omitzero"`
	Name           string            `json:"name"`
	Arguments      map[string]string `json:"arguments,omitempty"`
	InputResponses InputResponses    `json:"inputResponses,omitempty"`
	RequestState   string            `json:"requestState,omitzero"`
}

// GetPromptResult is the final result of prompts/get.
type GetPromptResult struct {
	ResultType  ResultType      `json:"resultType,omitzero"`
	Description string          `json:"description,omitzero"`
	Messages    []PromptMessage `json:"messages"`
	Meta        Meta            `json:"_meta,omitzero"`
}
