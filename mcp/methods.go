package mcp

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

// span is the half-open range of revisions [since, until) that define a
// method on the wire; an empty until means "still defined".
type span struct{ since, until string }

var (
	everywhere = span{Version20241105, ""}
	legacyOnly = span{Version20241105, Version20260728}
	modernOnly = span{Version20260728, ""}
	only2511   = span{Version20251125, Version20260728}
)

// methodSpans lists the core methods and notifications of each revision.
// Tasks-extension methods are not core and are absent.
var methodSpans = map[string]span{
	MethodInitialize:                      legacyOnly,
	MethodPing:                            legacyOnly,
	MethodServerDiscover:                  modernOnly,
	MethodToolsList:                       everywhere,
	MethodToolsCall:                       everywhere,
	MethodResourcesList:                   everywhere,
	MethodResourcesTemplatesList:          everywhere,
	MethodResourcesRead:                   everywhere,
	MethodResourcesSubscribe:              legacyOnly,
	MethodResourcesUnsubscribe:            legacyOnly,
	MethodPromptsList:                     everywhere,
	MethodPromptsGet:                      everywhere,
	MethodCompletionComplete:              everywhere,
	MethodLoggingSetLevel:                 legacyOnly,
	MethodSamplingCreateMessage:           legacyOnly,
	MethodElicitationCreate:               {Version20250618, Version20260728},
	MethodRootsList:                       legacyOnly,
	MethodSubscriptionsListen:             modernOnly,
	MethodTasksGet:                        only2511,
	MethodTasksResult:                     only2511,
	MethodTasksList:                       only2511,
	MethodTasksCancel:                     only2511,
	NotificationInitialized:               legacyOnly,
	NotificationCancelled:                 everywhere,
	NotificationProgress:                  everywhere,
	NotificationMessage:                   everywhere,
	NotificationToolsListChanged:          everywhere,
	NotificationPromptsListChanged:        everywhere,
	NotificationResourcesListChanged:      everywhere,
	NotificationResourcesUpdated:          everywhere,
	NotificationRootsListChanged:          legacyOnly,
	NotificationElicitationComplete:       only2511,
	NotificationSubscriptionsAcknowledged: modernOnly,
	NotificationTasksStatus:               only2511,
}

// HasMethod reports whether revision v defines method (a request or
// notification name) as a JSON-RPC message in the core protocol. In 2026,
// sampling/createMessage, elicitation/create and roots/list exist only as
// embedded input requests, so HasMethod reports false for them.
func HasMethod(v, method string) bool {
	s, ok := methodSpans[method]
	return ok && isRevisionDate(v) && v >= s.since && (s.until == "" || v < s.until)
}

// IsMRTRMethod reports whether method may return an InputRequiredResult in
// 2026: tools/call, prompts/get and resources/read.
func IsMRTRMethod(method string) bool {
	return method == MethodToolsCall || method == MethodPromptsGet || method == MethodResourcesRead
}

// IsInputRequestMethod reports whether method may be embedded in an
// InputRequest: elicitation/create, sampling/createMessage and roots/list.
func IsInputRequestMethod(method string) bool {
	return method == MethodElicitationCreate || method == MethodSamplingCreateMessage || method == MethodRootsList
}
