package mcp

// ProgressParams are the params of notifications/progress.
type ProgressParams struct {
	Meta Meta `json:"_meta,omitzero"`
	// ProgressToken echoes the token from the request's _meta.
	ProgressToken ID `json:"progressToken"`
	// Progress increases with every notification; it may be fractional.
	Progress float64 `json:"progress"`
	// Total is the expected final Progress, if known.
	Total *float64 `json:"total,omitzero"`
	// Message describes the current step (2025-03-26+).
	Message string `json:"message,omitzero"`
}

// CancelledParams are the params of notifications/cancelled.
type CancelledParams struct {
	Meta Meta `json:"_meta,omitzero"`
	// RequestID is the id of the request to cancel; required except for task
	// cancellation in 2025-11-25.
	RequestID ID `json:"requestId,omitzero"`
	// Reason is an optional human-readable explanation.
	Reason string `json:"reason,omitzero"`
}
