// Package revisions holds what the SDK itself asks of a protocol
// revision: which features and core methods it has, and which methods
// take part in the 2026 multi round-trip requests. Users need none of it:
// the server and client apply these rules for them.
package revisions

import "github.com/mcpkit/mcpkit/mcp"

// isRevisionDate reports whether v has the YYYY-MM-DD shape of a revision.
func isRevisionDate(v string) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if i != 4 && i != 7 && (v[i] < '0' || v[i] > '9') {
			return false
		}
	}
	return true
}

// atLeast reports whether v is a revision at or after since.
func atLeast(v, since string) bool { return isRevisionDate(v) && v >= since }

// HasAudioContent reports whether revision v knows audio content blocks.
func HasAudioContent(v string) bool { return atLeast(v, mcp.Version20250326) }

// HasToolAnnotations reports whether revision v knows Tool.Annotations.
func HasToolAnnotations(v string) bool { return atLeast(v, mcp.Version20250326) }

// HasCompletions reports whether revision v knows the completions server capability.
func HasCompletions(v string) bool { return atLeast(v, mcp.Version20250326) }

// HasBatching reports whether revision v allows JSON-RPC batches (2025-03-26 only).
func HasBatching(v string) bool { return v == mcp.Version20250326 }

// HasStructuredContent reports whether revision v knows Tool.OutputSchema and
// CallToolResult.StructuredContent.
func HasStructuredContent(v string) bool { return atLeast(v, mcp.Version20250618) }

// HasTitle reports whether revision v knows the title field of tools, prompts,
// resources and implementations.
func HasTitle(v string) bool { return atLeast(v, mcp.Version20250618) }

// HasElicitation reports whether revision v knows elicitation/create.
func HasElicitation(v string) bool { return atLeast(v, mcp.Version20250618) }

// HasResourceLinks reports whether revision v knows resource_link content blocks.
func HasResourceLinks(v string) bool { return atLeast(v, mcp.Version20250618) }

// HasURLElicitation reports whether revision v knows URL-mode elicitation.
func HasURLElicitation(v string) bool { return atLeast(v, mcp.Version20251125) }

// HasIcons reports whether revision v knows icons on implementations, tools,
// prompts and resources.
func HasIcons(v string) bool { return atLeast(v, mcp.Version20251125) }

// HasSamplingTools reports whether revision v allows tools in sampling requests.
func HasSamplingTools(v string) bool { return atLeast(v, mcp.Version20251125) }

// HasCoreTasks reports whether revision v has tasks in the core protocol
// (2025-11-25 only; later revisions move them to an extension).
func HasCoreTasks(v string) bool { return v == mcp.Version20251125 }

// span is the half-open range of revisions [since, until) that define a
// method on the wire; an empty until means "still defined".
type span struct{ since, until string }

var (
	everywhere = span{mcp.Version20241105, ""}
	legacyOnly = span{mcp.Version20241105, mcp.Version20260728}
	modernOnly = span{mcp.Version20260728, ""}
	only2511   = span{mcp.Version20251125, mcp.Version20260728}
)

// methodSpans lists the core methods and notifications of each revision.
// Tasks-extension methods are not core and are absent.
var methodSpans = map[string]span{
	mcp.MethodInitialize:                      legacyOnly,
	mcp.MethodPing:                            legacyOnly,
	mcp.MethodServerDiscover:                  modernOnly,
	mcp.MethodToolsList:                       everywhere,
	mcp.MethodToolsCall:                       everywhere,
	mcp.MethodResourcesList:                   everywhere,
	mcp.MethodResourcesTemplatesList:          everywhere,
	mcp.MethodResourcesRead:                   everywhere,
	mcp.MethodResourcesSubscribe:              legacyOnly,
	mcp.MethodResourcesUnsubscribe:            legacyOnly,
	mcp.MethodPromptsList:                     everywhere,
	mcp.MethodPromptsGet:                      everywhere,
	mcp.MethodCompletionComplete:              everywhere,
	mcp.MethodLoggingSetLevel:                 legacyOnly,
	mcp.MethodSamplingCreateMessage:           legacyOnly,
	mcp.MethodElicitationCreate:               {mcp.Version20250618, mcp.Version20260728},
	mcp.MethodRootsList:                       legacyOnly,
	mcp.MethodSubscriptionsListen:             modernOnly,
	mcp.MethodTasksGet:                        only2511,
	mcp.MethodTasksResult:                     only2511,
	mcp.MethodTasksList:                       only2511,
	mcp.MethodTasksCancel:                     only2511,
	mcp.NotificationInitialized:               legacyOnly,
	mcp.NotificationCancelled:                 everywhere,
	mcp.NotificationProgress:                  everywhere,
	mcp.NotificationMessage:                   everywhere,
	mcp.NotificationToolsListChanged:          everywhere,
	mcp.NotificationPromptsListChanged:        everywhere,
	mcp.NotificationResourcesListChanged:      everywhere,
	mcp.NotificationResourcesUpdated:          everywhere,
	mcp.NotificationRootsListChanged:          legacyOnly,
	mcp.NotificationElicitationComplete:       only2511,
	mcp.NotificationSubscriptionsAcknowledged: modernOnly,
	mcp.NotificationTasksStatus:               only2511,
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
	return method == mcp.MethodToolsCall || method == mcp.MethodPromptsGet || method == mcp.MethodResourcesRead
}

// IsInputRequestMethod reports whether method may be embedded in an
// InputRequest: elicitation/create, sampling/createMessage and roots/list.
func IsInputRequestMethod(method string) bool {
	return method == mcp.MethodElicitationCreate || method == mcp.MethodSamplingCreateMessage || method == mcp.MethodRootsList
}
