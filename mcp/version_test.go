package mcp

import (
	"cmp"
	"slices"
	"testing"
)

func TestVersions(t *testing.T) {
	all := Versions()
	if !slices.IsSortedFunc(all, func(a, b string) int { return cmp.Compare(b, a) }) || all[0] != Latest {
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

// TestValidSessionID: visible ASCII only, and not empty.
func TestValidSessionID(t *testing.T) {
	for id, want := range map[string]bool{"abc-123_~!": true, "": false, "a b": false, "a\x7f": false, "é": false, "a\tb": false} {
		if got := ValidSessionID(id); got != want {
			t.Errorf("ValidSessionID(%q) = %v, want %v", id, got, want)
		}
	}
}
