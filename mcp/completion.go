package mcp

// Reference types of CompleteReference.Type.
const (
	RefPrompt   = "ref/prompt"
	RefResource = "ref/resource"
)

// CompleteReference names what is being completed: a prompt (Type RefPrompt,
// Name set) or a resource template (Type RefResource, URI set). It covers the
// schemas' PromptReference, ResourceReference and ResourceTemplateReference.
type CompleteReference struct {
	Type string `json:"type"`
	// Name is the prompt name, for RefPrompt.
	Name string `json:"name,omitzero"`
	// Title is an optional display name, for RefPrompt (2025-06-18+).
	Title string `json:"title,omitzero"`
	// URI is the resource URI or URI template, for RefResource.
	URI string `json:"uri,omitzero"`
}

// CompleteArgument is the argument being completed and its partial value.
type CompleteArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompleteContext carries already-resolved arguments (2025-06-18+).
type CompleteContext struct {
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompleteParams are the params of completion/complete.
type CompleteParams struct {
	Meta     Meta              `json:"_meta,omitzero"`
	Ref      CompleteReference `json:"ref"`
	Argument CompleteArgument  `json:"argument"`
	Context  *CompleteContext  `json:"context,omitzero"`
}

// Completion holds completion values.
type Completion struct {
	// Values holds at most 100 suggestions; it is always sent.
	Values []string `json:"values"`
	// Total is the number of available values, if known.
	Total *int64 `json:"total,omitzero"`
	// HasMore reports that more values exist than were returned.
	HasMore bool `json:"hasMore,omitzero"`
}

// CompleteResult is the result of completion/complete.
type CompleteResult struct {
	ResultType ResultType `json:"resultType,omitzero"`
	Completion Completion `json:"completion"`
	Meta       Meta       `json:"_meta,omitzero"`
}
