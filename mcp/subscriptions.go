package mcp

// SubscriptionFilter selects the change notifications of a 2026
// subscriptions/listen stream. In the acknowledgement it lists what the
// server agreed to.
type SubscriptionFilter struct {
	ToolsListChanged     bool `json:"toolsListChanged,omitzero"`
	PromptsListChanged   bool `json:"promptsListChanged,omitzero"`
	ResourcesListChanged bool `json:"resourcesListChanged,omitzero"`
	// ResourceSubscriptions lists resource URIs to watch for updates.
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	// TaskIDs lists tasks to watch (tasks extension).
	TaskIDs []string `json:"taskIds,omitempty"`
}

// SubscriptionsListenParams are the params of subscriptions/listen (2026).
// Its result, sent only on a graceful close, is an EmptyResult whose Meta
// carries MetaKeySubscriptionID.
type SubscriptionsListenParams struct {
	Meta          Meta               `json:"_meta,omitzero"`
	Notifications SubscriptionFilter `json:"notifications"`
}

// SubscriptionsAcknowledgedParams are the params of
// notifications/subscriptions/acknowledged (2026), the first message of a
// listen stream.
type SubscriptionsAcknowledgedParams struct {
	Meta          Meta               `json:"_meta,omitzero"`
	Notifications SubscriptionFilter `json:"notifications"`
}
