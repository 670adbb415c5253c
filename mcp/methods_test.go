package mcp

import (
	"slices"
	"testing"
)

func TestMethodNames(t *testing.T) {
	names := MethodNames()
	if !IsMethod(MethodToolsCall) || !IsMethod(NotificationTasks) || IsMethod("tools/nosuch") || IsMethod("") {
		t.Fatal("IsMethod disagrees with the constants")
	}
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(names) {
		t.Fatalf("MethodNames lists a name twice: %v", names)
	}
	names[0] = "changed"
	if MethodNames()[0] != MethodInitialize {
		t.Fatal("MethodNames shares its slice with the caller")
	}
}
