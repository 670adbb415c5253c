package mcp

import "slices"

// Request method names.
const (
	MethodInitialize             = "initialize"      // legacy
	MethodPing                   = "ping"            // legacy
	MethodServerDiscover         = "server/discover" // 2026
	MethodToolsList              = "tools/list"
	MethodToolsCall              = "tools/call"
	MethodResourcesList          = "resources/list"
	MethodResourcesTemplatesList = "resources/templates/list"
	MethodResourcesRead          = "resources/read"
	MethodResourcesSubscribe     = "resources/subscribe"   // legacy
	MethodResourcesUnsubscribe   = "resources/unsubscribe" // legacy
	MethodPromptsList            = "prompts/list"
	MethodPromptsGet             = "prompts/get"
	MethodCompletionComplete     = "completion/complete"
	MethodLoggingSetLevel        = "logging/setLevel" // legacy
	MethodSamplingCreateMessage  = "sampling/createMessage"
	MethodElicitationCreate      = "elicitation/create"
	MethodRootsList              = "roots/list"
	MethodSubscriptionsListen    = "subscriptions/listen" // 2026
	MethodTasksGet               = "tasks/get"            // 2025-11-25; 2026 tasks extension
	MethodTasksResult            = "tasks/result"         // 2025-11-25
	MethodTasksList              = "tasks/list"           // 2025-11-25
	MethodTasksCancel            = "tasks/cancel"         // 2025-11-25; 2026 tasks extension
	MethodTasksUpdate            = "tasks/update"         // 2026 tasks extension
)

// Notification method names.
const (
	NotificationInitialized               = "notifications/initialized" // legacy
	NotificationCancelled                 = "notifications/cancelled"
	NotificationProgress                  = "notifications/progress"
	NotificationMessage                   = "notifications/message"
	NotificationToolsListChanged          = "notifications/tools/list_changed"
	NotificationPromptsListChanged        = "notifications/prompts/list_changed"
	NotificationResourcesListChanged      = "notifications/resources/list_changed"
	NotificationResourcesUpdated          = "notifications/resources/updated"
	NotificationRootsListChanged          = "notifications/roots/list_changed"         // legacy
	NotificationElicitationComplete       = "notifications/elicitation/complete"       // 2025-11-25
	NotificationSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged" // 2026
	NotificationTasksStatus               = "notifications/tasks/status"               // 2025-11-25
	NotificationTasks                     = "notifications/tasks"                      // 2026 tasks extension
)

// methodNames is every method name above, requests then notifications.
var methodNames = [...]string{
	MethodInitialize, MethodPing, MethodServerDiscover, MethodToolsList, MethodToolsCall,
	MethodResourcesList, MethodResourcesTemplatesList, MethodResourcesRead, MethodResourcesSubscribe,
	MethodResourcesUnsubscribe, MethodPromptsList, MethodPromptsGet, MethodCompletionComplete,
	MethodLoggingSetLevel, MethodSamplingCreateMessage, MethodElicitationCreate, MethodRootsList,
	MethodSubscriptionsListen, MethodTasksGet, MethodTasksResult, MethodTasksList,
	MethodTasksCancel, MethodTasksUpdate,
	NotificationInitialized, NotificationCancelled, NotificationProgress, NotificationMessage,
	NotificationToolsListChanged, NotificationPromptsListChanged, NotificationResourcesListChanged,
	NotificationResourcesUpdated, NotificationRootsListChanged, NotificationElicitationComplete,
	NotificationSubscriptionsAcknowledged, NotificationTasksStatus, NotificationTasks,
}

// MethodNames returns every request and notification method name MCP
// defines, of both eras, in a new slice.
func MethodNames() []string { return slices.Clone(methodNames[:]) }

// IsMethod reports whether name is a request or notification method MCP
// defines (one of MethodNames).
func IsMethod(name string) bool { return slices.Contains(methodNames[:], name) }

// isInputRequestMethod reports whether method may be embedded in an
// InputRequest: elicitation/create, sampling/createMessage and roots/list.
func isInputRequestMethod(method string) bool {
	return method == MethodElicitationCreate || method == MethodSamplingCreateMessage || method == MethodRootsList
}
