package mcp

// ResultType tells a 2026 client how to read a result. Legacy results carry
// none; a missing value means ResultComplete.
type ResultType string

// Result types.
const (
	// ResultComplete marks a final result.
	ResultComplete ResultType = "complete"
	// ResultInputRequired marks an InputRequiredResult (MRTR).
	ResultInputRequired ResultType = "input_required"
	// ResultTask marks a task handle of the 2026 tasks extension.
	ResultTask ResultType = "task"
)

// IsComplete reports whether t is ResultComplete or absent.
func (t ResultType) IsComplete() bool { return t == "" || t == ResultComplete }

// CacheScope says who may share a cached 2026 result.
type CacheScope string

// Cache scopes.
const (
	// CachePublic results may be shared across authorization contexts.
	CachePublic CacheScope = "public"
	// CachePrivate results must stay within one authorization context.
	CachePrivate CacheScope = "private"
)

// RequestParams are the params of a request that carries only _meta, such as
// ping, server/discover and roots/list.
type RequestParams struct {
	Meta Meta `json:"_meta,omitzero"`
}

// NotificationParams are the params of a notification that carries only
// _meta, such as the list_changed notifications and notifications/initialized.
type NotificationParams struct {
	Meta Meta `json:"_meta,omitzero"`
}

// PaginatedParams are the params of a paginated list request without its own
// type, such as tasks/list.
type PaginatedParams struct {
	Meta Meta `json:"_meta,omitzero"`
	// Cursor is the opaque position to continue from; nil asks for the first
	// page. An empty string is a valid cursor.
	Cursor *string `json:"cursor,omitzero"`
}

// EmptyResult is a result with no content of its own, e.g. of ping,
// logging/setLevel, resources/subscribe or a closed subscriptions/listen.
type EmptyResult struct {
	ResultType ResultType `json:"resultType,omitzero"`
	Meta       Meta       `json:"_meta,omitzero"`
}
