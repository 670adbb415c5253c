package mcp

import (
	"slices"
	"testing"
)

func TestVersions(t *testing.T) {
	all := Versions()
	if !slices.IsSortedFunc(all, func(a, b string) int { return CompareVersions(b, a) }) || all[0] != Latest {
		t.Errorf("Versions() = %v", all)
	}
	all[0] = "mutated"
	if Versions()[0] != Latest {
		t.Error("Versions returned shared storage")
	}
	legacy := LegacyVersions()
	if !slices.Equal(legacy, []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}) || legacy[0] != LatestLegacy {
		t.Errorf("LegacyVersions() = %v", legacy)
	}
	for _, v := range all[1:] {
		if !IsKnown(v) || IsModern(v) || !IsLegacy(v) {
			t.Errorf("%s misclassified", v)
		}
	}
	if !IsModern(Latest) || IsLegacy(Latest) || !IsModern("2027-01-01") || IsKnown("2027-01-01") {
		t.Error("modern classification")
	}
	for _, v := range []string{"", "1.0.0", "2026-7-28", "zzzz-zz-zz", "2026-07-28x"} {
		if IsKnown(v) || IsModern(v) || IsLegacy(v) {
			t.Errorf("%q classified", v)
		}
	}
	if CompareVersions(Version20250326, Version20250618) != -1 || CompareVersions(Latest, Latest) != 0 || CompareVersions(Latest, LatestLegacy) != 1 {
		t.Error("CompareVersions")
	}
}

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
		for i, v := range []string{Version20241105, Version20250326, Version20250618, Version20251125, Version20260728} {
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
		{LatestLegacy, MethodInitialize, true},
		{Latest, MethodInitialize, false},
		{Latest, MethodPing, false},
		{Latest, MethodServerDiscover, true},
		{LatestLegacy, MethodServerDiscover, false},
		{Version20241105, MethodToolsCall, true},
		{Latest, MethodToolsCall, true},
		{Latest, MethodLoggingSetLevel, false},
		{Latest, MethodResourcesSubscribe, false},
		{Latest, MethodElicitationCreate, false},
		{Version20250326, MethodElicitationCreate, false},
		{Version20250618, MethodElicitationCreate, true},
		{Version20250618, NotificationElicitationComplete, false},
		{LatestLegacy, NotificationElicitationComplete, true},
		{LatestLegacy, MethodTasksResult, true},
		{Latest, MethodTasksGet, false},
		{Latest, NotificationSubscriptionsAcknowledged, true},
		{Latest, NotificationRootsListChanged, false},
		{Latest, "made/up", false},
	} {
		if got := HasMethod(tc.v, tc.method); got != tc.want {
			t.Errorf("HasMethod(%s, %s) = %v", tc.v, tc.method, got)
		}
	}
	if !IsMRTRMethod(MethodResourcesRead) || IsMRTRMethod(MethodToolsList) {
		t.Error("IsMRTRMethod")
	}
	if !IsInputRequestMethod(MethodRootsList) || IsInputRequestMethod(MethodToolsCall) {
		t.Error("IsInputRequestMethod")
	}
}

func TestLoggingLevels(t *testing.T) {
	order := []LoggingLevel{LevelDebug, LevelInfo, LevelNotice, LevelWarning, LevelError, LevelCritical, LevelAlert, LevelEmergency}
	for i, l := range order {
		if !l.Valid() || l.Severity() != i {
			t.Errorf("%s: valid=%v severity=%d", l, l.Valid(), l.Severity())
		}
		for j, threshold := range order {
			if got := l.AtLeast(threshold); got != (i >= j) {
				t.Errorf("%s.AtLeast(%s) = %v", l, threshold, got)
			}
		}
	}
	for _, bad := range []LoggingLevel{"", "warn", "DEBUG", "fatal"} {
		if bad.Valid() || bad.Severity() != -1 || bad.AtLeast(LevelDebug) || LevelEmergency.AtLeast(bad) {
			t.Errorf("invalid level %q accepted", bad)
		}
	}
}
