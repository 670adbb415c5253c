package mcp

// SamplingMessage is one message of a sampling conversation.
type SamplingMessage struct {
	Role    Role            `json:"role"`
	Content SamplingContent `json:"content"`
	Meta    Meta            `json:"_meta,omitzero"`
}

// ModelHint suggests a model by (partial) name.
type ModelHint struct {
	Name string `json:"name,omitzero"`
}

// ModelPreferences guide the client's model choice. Priorities range from 0 to 1.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitzero"`
	SpeedPriority        *float64    `json:"speedPriority,omitzero"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitzero"`
}

// Tool choice modes of ToolChoice.Mode.
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceRequired = "required"
	ToolChoiceNone     = "none"
)

// ToolChoice controls tool use in sampling (2025-11-25+).
type ToolChoice struct {
	// Mode is one of the ToolChoice constants; empty means auto.
	Mode string `json:"mode,omitzero"`
}

// Values of CreateMessageParams.IncludeContext. Values other than
// IncludeContextNone are deprecated and need the sampling.context capability.
const (
	IncludeContextNone       = "none"
	IncludeContextThisServer = "thisServer"
	IncludeContextAllServers = "allServers"
)

// CreateMessageParams are the params of sampling/createMessage, sent as a
// request (2025) or embedded in an InputRequest (2026).
type CreateMessageParams struct {
	Meta             Meta              `json:"_meta,omitzero"`
	Messages         []SamplingMessage `json:"messages"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitzero"`
	SystemPrompt     string            `json:"systemPrompt,omitzero"`
	IncludeContext   string            `json:"includeContext,omitzero"`
	Temperature      *float64          `json:"temperature,omitzero"`
	MaxTokens        int64             `json:"maxTokens"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	// Metadata is passed through to the model provider.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Tools and ToolChoice need the sampling.tools capability (2025-11-25+).
	Tools      []Tool      `json:"tools,omitempty"`
	ToolChoice *ToolChoice `json:"toolChoice,omitzero"`
	// Task asks for task-augmented execution (2025-11-25).
	Task *TaskMetadata `json:"task,omitzero"`
}

// Common values of CreateMessageResult.StopReason; others are allowed.
const (
	StopReasonEndTurn      = "endTurn"
	StopReasonStopSequence = "stopSequence"
	StopReasonMaxTokens    = "maxTokens"
	StopReasonToolUse      = "toolUse"
)

// CreateMessageResult is the client's answer to sampling/createMessage.
type CreateMessageResult struct {
	Role    Role            `json:"role"`
	Content SamplingContent `json:"content"`
	// Model names the model that produced the message.
	Model      string `json:"model"`
	StopReason string `json:"stopReason,omitzero"`
	Meta       Meta   `json:"_meta,omitzero"`
}
