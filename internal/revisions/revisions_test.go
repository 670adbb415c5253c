package revisions

import (
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
)

func TestFeaturePredicates(t *testing.T) {
	type row struct {
		name string
		f    func(string) bool
		want []bool // 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28
	}
	for _, r := range []row{
		{"audio", HasAudioContent, []bool{false, true, true, true, true}},
		{"annotations", HasToolAnnotations, []bool{false, true, true, true, true}},
		{"completions", HasCompletions, []bool{false, true, true, true, true}},
		{"batching", HasBatching, []bool{false, true, false, false, false}},
		{"structured", HasStructuredContent, []bool{false, false, true, true, true}},
		{"title", HasTitle, []bool{false, false, true, true, true}},
		{"elicitation", HasElicitation, []bool{false, false, true, true, true}},
		{"links", HasResourceLinks, []bool{false, false, true, true, true}},
		{"url", HasURLElicitation, []bool{false, false, false, true, true}},
		{"icons", HasIcons, []bool{false, false, false, true, true}},
		{"samplingTools", HasSamplingTools, []bool{false, false, false, true, true}},
		{"tasks", HasCoreTasks, []bool{false, false, false, true, false}},
	} {
		for i, v := range []string{mcp.Version20241105, mcp.Version20250326, mcp.Version20250618, mcp.Version20251125, mcp.Version20260728} {
			if got := r.f(v); got != r.want[i] {
				t.Errorf("%s(%s) = %v", r.name, v, got)
			}
		}
		if r.f("garbage") {
			t.Errorf("%s(garbage) = true", r.name)
		}
	}
}

func TestHasMethod(t *testing.T) {
	for _, tc := range []struct {
		v, method string
		want      bool
	}{
		{mcp.LatestLegacy, mcp.MethodInitialize, true},
		{mcp.Latest, mcp.MethodInitialize, false},
		{mcp.Latest, mcp.MethodPing, false},
		{mcp.Latest, mcp.MethodServerDiscover, true},
		{mcp.LatestLegacy, mcp.MethodServerDiscover, false},
		{mcp.Version20241105, mcp.MethodToolsCall, true},
		{mcp.Latest, mcp.MethodToolsCall, true},
		{mcp.Latest, mcp.MethodLoggingSetLevel, false},
		{mcp.Latest, mcp.MethodResourcesSubscribe, false},
		{mcp.Latest, mcp.MethodElicitationCreate, false},
		{mcp.Version20250326, mcp.MethodElicitationCreate, false},
		{mcp.Version20250618, mcp.MethodElicitationCreate, true},
		{mcp.Version20250618, mcp.NotificationElicitationComplete, false},
		{mcp.LatestLegacy, mcp.NotificationElicitationComplete, true},
		{mcp.LatestLegacy, mcp.MethodTasksResult, true},
		{mcp.Latest, mcp.MethodTasksGet, false},
		{mcp.Latest, mcp.NotificationSubscriptionsAcknowledged, true},
		{mcp.Latest, mcp.NotificationRootsListChanged, false},
		{mcp.Latest, "made/up", false},
	} {
		if got := HasMethod(tc.v, tc.method); got != tc.want {
			t.Errorf("HasMethod(%s, %s) = %v", tc.v, tc.method, got)
		}
	}
	if !IsMRTRMethod(mcp.MethodResourcesRead) || IsMRTRMethod(mcp.MethodToolsList) {
		t.Error("IsMRTRMethod")
	}
	if !IsInputRequestMethod(mcp.MethodRootsList) || IsInputRequestMethod(mcp.MethodToolsCall) {
		t.Error("IsInputRequestMethod")
	}
}
